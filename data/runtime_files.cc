#include "dynid/data/runtime_files.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace dynid::data {

std::string RuntimeFilesDirectory() {
  namespace fs = std::filesystem;
  const char* override_directory = std::getenv("DYNID_SHARE_DIR");
  if (override_directory != nullptr && *override_directory != '\0') return override_directory;
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  const fs::path bin = error ? fs::current_path(error) : executable.parent_path();
  return (bin.parent_path() / "share" / "dynid").lexically_normal().string();
}

bool FindRuntimeFile(const std::string& relative_path, std::string* path, std::string* error) {
  const std::filesystem::path candidate =
      std::filesystem::path(RuntimeFilesDirectory()) / relative_path;
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(candidate, ignored)) {
    *error = "runtime file '" + relative_path + "' not found at " + candidate.string() +
             " (install dynid, or set DYNID_SHARE_DIR to its share/dynid folder)";
    return false;
  }
  *path = candidate.string();
  return true;
}

}  // namespace dynid::data
