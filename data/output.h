// Writing results without ever leaving half of them behind.
//
// WriteFileAtomically writes one file through a temporary name in the same directory and a
// rename. OutputStage does the same for a whole result set: an experiment writes every output
// into a hidden staging folder inside --out_dir and Commit() moves them into place only after
// all of them were written; if the program fails (or the stage is destroyed uncommitted), the
// staging folder is removed and the out_dir is left as it was.
#ifndef DYNID_DATA_OUTPUT_H_
#define DYNID_DATA_OUTPUT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dynid::data {

// Writes `contents` to `path` via "<path>.tmp-<pid>" + rename.
bool WriteFileAtomically(const std::string& path, const std::string& contents,
                         std::string* error);

// Writes JSON (indented by 2) atomically.
bool WriteJson(const std::string& path, const nlohmann::json& json, std::string* error);

// Creates a directory and its parents ("mkdir -p"); true if it exists afterwards.
bool MakeDirectories(const std::string& path, std::string* error);

class OutputStage {
 public:
  OutputStage() = default;
  ~OutputStage();  // removes the staging folder if Commit() was not reached
  OutputStage(const OutputStage&) = delete;
  OutputStage& operator=(const OutputStage&) = delete;

  // Creates out_dir (if needed) and a staging folder inside it.
  bool Open(const std::string& out_dir, std::string* error);

  // Path of `name` inside the staging folder (write there, then Commit).
  std::string Path(const std::string& name) const;

  bool WriteText(const std::string& name, const std::string& contents, std::string* error);
  bool WriteJson(const std::string& name, const nlohmann::json& json, std::string* error);

  // Moves every file of the staging folder into out_dir (replacing older ones) and removes
  // the staging folder. Returns the names moved in `committed` if non-null.
  bool Commit(std::string* error, std::vector<std::string>* committed = nullptr);

  const std::string& out_dir() const { return out_dir_; }

 private:
  void RemoveStaging();
  std::string out_dir_;
  std::string staging_dir_;
};

}  // namespace dynid::data

#endif  // DYNID_DATA_OUTPUT_H_
