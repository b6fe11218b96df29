// Writing results without ever leaving half of them behind.
//
// WriteFileAtomically writes one file through a temporary name in the same directory and a
// rename. OutputStage does the same for a whole result set: an experiment writes every output
// into a hidden staging folder inside --out_dir and Commit() moves them into place only after
// all of them were written; if the program fails (or the stage is destroyed uncommitted), the
// staging folder is removed and the out_dir is left as it was. The staging folder is also removed
// when the program is ended by SIGINT, SIGTERM or SIGHUP (InstallStagingCleanupHandlers), so an
// interrupted run leaves no `.staging-<pid>` folder behind.
//
// A committed run replaces the previous run's results as a set: the out_dir keeps a manifest
// (kOutputManifest) of the files the last commit wrote, and a commit removes those of them that
// the new run did not write. Files that no dynid commit wrote are never touched.
#ifndef DYNID_DATA_OUTPUT_H_
#define DYNID_DATA_OUTPUT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dynid::data {

// Writes `contents` to `path` via "<path>.tmp-<pid>" + rename.
bool WriteFileAtomically(const std::string& path, const std::string& contents, std::string* error);

// The same for output produced piece by piece (large files never held whole in memory): Open
// creates "<path>.tmp-<pid>", Write appends, Commit renames it to `path`; without Commit (an
// error, or the writer destroyed first) the temporary file is removed. Errors name `path`.
class AtomicFileWriter {
 public:
  AtomicFileWriter() = default;
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  bool Open(const std::string& path, std::string* error);
  bool Write(const char* data, size_t size, std::string* error);
  bool Commit(std::string* error);

 private:
  void Discard();
  std::string path_;
  std::string temporary_;
  int fd_ = -1;
};

// Writes JSON (indented by 2) atomically.
bool WriteJson(const std::string& path, const nlohmann::json& json, std::string* error);

// Creates a directory and its parents ("mkdir -p"); true if it exists afterwards.
bool MakeDirectories(const std::string& path, std::string* error);

// Checks, without creating anything, that `out_dir` is (or can become) a writable folder: it is
// not empty, it is not an existing non-folder, and it (or its nearest existing ancestor) is a
// writable folder. Lets a program reject a bad --out_dir before it spends time computing.
bool CheckOutputDirectory(const std::string& out_dir, std::string* error);

// Name of the manifest file inside an out_dir: the committed file names, one per line.
inline constexpr char kOutputManifest[] = ".dynid_outputs";

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove every open staging folder and then
// end the process by the same signal (exit status 128 + signal in a shell). Idempotent.
void InstallStagingCleanupHandlers();

class OutputStage {
 public:
  OutputStage() = default;
  // Without a Commit(): removes the staging folder, and the folders Open() created for out_dir
  // if they are still empty (a failed run leaves no trace of its output folder).
  ~OutputStage();
  OutputStage(const OutputStage&) = delete;
  OutputStage& operator=(const OutputStage&) = delete;

  // Creates out_dir (if needed) and a staging folder inside it.
  bool Open(const std::string& out_dir, std::string* error);

  // Path of `name` inside the staging folder (write there, then Commit).
  std::string Path(const std::string& name) const;

  bool WriteText(const std::string& name, const std::string& contents, std::string* error);
  bool WriteJson(const std::string& name, const nlohmann::json& json, std::string* error);

  // Moves every file of the staging folder into out_dir (replacing older ones), removes the
  // files of the previous commit that this one did not write (see kOutputManifest), records the
  // new set in the manifest and removes the staging folder. Returns the paths moved in
  // `committed` if non-null.
  bool Commit(std::string* error, std::vector<std::string>* committed = nullptr);

  const std::string& out_dir() const { return out_dir_; }

 private:
  void RemoveStaging();
  std::string out_dir_;
  std::string created_dir_;  // the outermost folder Open() created for out_dir ("" if none)
  bool committed_ = false;
  std::string staging_dir_;
  int slot_ = -1;  // registration for the signal handlers (-1: none)
};

}  // namespace dynid::data

#endif  // DYNID_DATA_OUTPUT_H_
