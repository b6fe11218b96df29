#include "dynid/data/output.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <glog/logging.h>

namespace dynid::data {

namespace fs = std::filesystem;

bool WriteFileAtomically(const std::string& path, const std::string& contents,
                         std::string* error) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) {
      *error = path + ": cannot create file (" + std::strerror(errno) + ")";
      return false;
    }
    file.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    file.flush();
    if (!file) {
      *error = path + ": write failed (" + std::strerror(errno) + ")";
      file.close();
      std::remove(temporary.c_str());
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    *error = path + ": cannot rename temporary file (" + std::strerror(errno) + ")";
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

bool WriteJson(const std::string& path, const nlohmann::json& json, std::string* error) {
  return WriteFileAtomically(path, json.dump(2) + "\n", error);
}

bool MakeDirectories(const std::string& path, std::string* error) {
  std::error_code code;
  fs::create_directories(path, code);
  if (fs::is_directory(path, code)) return true;
  *error = path + ": cannot create output directory" +
           (code ? " (" + code.message() + ")" : std::string(" (a file of that name exists?)"));
  return false;
}

OutputStage::~OutputStage() { RemoveStaging(); }

void OutputStage::RemoveStaging() {
  if (staging_dir_.empty()) return;
  std::error_code code;
  fs::remove_all(staging_dir_, code);
  staging_dir_.clear();
}

bool OutputStage::Open(const std::string& out_dir, std::string* error) {
  CHECK(staging_dir_.empty()) << "OutputStage::Open called twice";
  if (out_dir.empty()) {
    *error = "--out_dir must not be empty";
    return false;
  }
  if (!MakeDirectories(out_dir, error)) return false;
  out_dir_ = out_dir;
  staging_dir_ = (fs::path(out_dir) / (".staging-" + std::to_string(::getpid()))).string();
  std::error_code code;
  fs::remove_all(staging_dir_, code);
  if (!fs::create_directory(staging_dir_, code)) {
    *error = staging_dir_ + ": cannot create staging directory (" + code.message() + ")";
    staging_dir_.clear();
    return false;
  }
  return true;
}

std::string OutputStage::Path(const std::string& name) const {
  CHECK(!staging_dir_.empty()) << "OutputStage used before Open()";
  return (fs::path(staging_dir_) / name).string();
}

bool OutputStage::WriteText(const std::string& name, const std::string& contents,
                            std::string* error) {
  return WriteFileAtomically(Path(name), contents, error);
}

bool OutputStage::WriteJson(const std::string& name, const nlohmann::json& json,
                            std::string* error) {
  return data::WriteJson(Path(name), json, error);
}

bool OutputStage::Commit(std::string* error, std::vector<std::string>* committed) {
  CHECK(!staging_dir_.empty()) << "OutputStage::Commit before Open()";
  std::error_code code;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(staging_dir_, code)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  if (code) {
    *error = staging_dir_ + ": cannot list staged outputs (" + code.message() + ")";
    return false;
  }
  for (const fs::path& file : files) {
    const fs::path target = fs::path(out_dir_) / file.filename();
    fs::rename(file, target, code);
    if (code) {
      *error = target.string() + ": cannot move output into place (" + code.message() + ")";
      return false;
    }
    if (committed) committed->push_back(target.string());
  }
  RemoveStaging();
  return true;
}

}  // namespace dynid::data
