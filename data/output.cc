#include "dynid/data/output.h"

#include <dirent.h>
#include <fcntl.h>
#include <glog/logging.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace dynid::data {

namespace fs = std::filesystem;

namespace {

// Open staging folders, readable from a signal handler: fixed slots of plain characters, a slot
// being in use while its flag is set (set after the path is written, cleared before reuse).
constexpr int kMaxStagingFolders = 16;
constexpr int kMaxStagingPath = 4096;
char g_staging_paths[kMaxStagingFolders][kMaxStagingPath];
std::atomic<bool> g_staging_used[kMaxStagingFolders];

int RegisterStaging(const std::string& path) {
  if (path.size() >= kMaxStagingPath) return -1;
  for (int i = 0; i < kMaxStagingFolders; ++i) {
    bool expected = false;
    if (g_staging_used[i].load() || !g_staging_used[i].compare_exchange_strong(expected, true)) {
      continue;
    }
    // The handler skips a slot whose path starts empty: write the first character last.
    g_staging_paths[i][0] = '\0';
    std::memcpy(g_staging_paths[i] + 1, path.c_str() + 1, path.size());
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_staging_paths[i][0] = path[0];
    return i;
  }
  return -1;
}

void UnregisterStaging(int slot) {
  if (slot < 0) return;
  g_staging_paths[slot][0] = '\0';
  g_staging_used[slot].store(false);
}

// Removes the contents of the folder open as `dir_fd` and closes it, using only system calls
// that are safe in a signal handler (no allocation). Depth-limited: staging folders are flat.
void RemoveContentsSignalSafe(int dir_fd, int depth) {
  alignas(8) char buffer[4096];
  for (;;) {
    const long bytes = ::syscall(SYS_getdents64, dir_fd, buffer, sizeof(buffer));
    if (bytes <= 0) break;
    for (long offset = 0; offset < bytes;) {
      struct Entry {
        unsigned long long inode;
        long long next;
        unsigned short length;
        unsigned char type;
        char name[1];
      };
      const Entry* entry = reinterpret_cast<const Entry*>(buffer + offset);
      offset += entry->length;
      const char* name = entry->name;
      if ((name[0] == '.' && name[1] == '\0') ||
          (name[0] == '.' && name[1] == '.' && name[2] == '\0')) {
        continue;
      }
      if (::unlinkat(dir_fd, name, 0) == 0) continue;
      if (depth < 4) {
        const int child = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (child >= 0) RemoveContentsSignalSafe(child, depth + 1);
        ::unlinkat(dir_fd, name, AT_REMOVEDIR);
      }
    }
  }
  ::close(dir_fd);
}

void RemoveStagingFoldersAndReraise(int signal_number) {
  for (int i = 0; i < kMaxStagingFolders; ++i) {
    if (!g_staging_used[i].load() || g_staging_paths[i][0] == '\0') continue;
    const int fd = ::open(g_staging_paths[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd >= 0) RemoveContentsSignalSafe(fd, 0);
    ::rmdir(g_staging_paths[i]);
  }
  // End the process the way the signal would have, so the caller sees it was interrupted.
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

std::set<std::string> ReadManifest(const std::string& out_dir) {
  std::set<std::string> names;
  std::ifstream file((fs::path(out_dir) / kOutputManifest).string());
  std::string line;
  while (std::getline(file, line)) {
    // Only plain names inside out_dir: a damaged manifest must not reach outside of it.
    if (line.empty() || line == "." || line == ".." || line.find('/') != std::string::npos) {
      continue;
    }
    names.insert(line);
  }
  return names;
}

}  // namespace

void InstallStagingCleanupHandlers() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = RemoveStagingFoldersAndReraise;
    sigemptyset(&action.sa_mask);
    ::sigaction(signal_number, &action, nullptr);
  }
}

bool CheckOutputDirectory(const std::string& out_dir, std::string* error) {
  if (out_dir.empty()) {
    *error = "--out_dir must not be empty";
    return false;
  }
  std::error_code code;
  fs::path path(out_dir);
  const fs::file_status status = fs::status(path, code);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) {
      *error = "--out_dir: '" + out_dir + "' exists and is not a folder";
      return false;
    }
    if (::access(out_dir.c_str(), W_OK | X_OK) != 0) {
      *error = "--out_dir: '" + out_dir + "' is not writable (" + std::strerror(errno) + ")";
      return false;
    }
    return true;
  }
  // The folder will be created: its nearest existing ancestor must be a writable folder.
  fs::path ancestor = fs::absolute(path, code).parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, code)) {
    if (ancestor == ancestor.parent_path()) break;
    ancestor = ancestor.parent_path();
  }
  if (!fs::is_directory(ancestor, code)) {
    *error =
        "--out_dir: cannot create '" + out_dir + "' ('" + ancestor.string() + "' is not a folder)";
    return false;
  }
  if (::access(ancestor.c_str(), W_OK | X_OK) != 0) {
    *error =
        "--out_dir: cannot create '" + out_dir + "' ('" + ancestor.string() + "' is not writable)";
    return false;
  }
  return true;
}

AtomicFileWriter::~AtomicFileWriter() { Discard(); }

void AtomicFileWriter::Discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) std::remove(temporary_.c_str());
  temporary_.clear();
}

bool AtomicFileWriter::Open(const std::string& path, std::string* error) {
  Discard();
  path_ = path;
  temporary_ = path + ".tmp-" + std::to_string(::getpid());
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    *error = path + ": cannot create file (" + std::strerror(errno) + ")";
    temporary_.clear();
    return false;
  }
  return true;
}

bool AtomicFileWriter::Write(const char* data, size_t size, std::string* error) {
  CHECK_GE(fd_, 0) << "AtomicFileWriter::Write without Open";
  while (size > 0) {
    const ssize_t written = ::write(fd_, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      *error = path_ + ": write failed (" + std::strerror(written < 0 ? errno : EIO) + ")";
      Discard();
      return false;
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

bool AtomicFileWriter::Commit(std::string* error) {
  CHECK_GE(fd_, 0) << "AtomicFileWriter::Commit without Open";
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) {
    *error = path_ + ": write failed (" + std::strerror(errno) + ")";
    Discard();
    return false;
  }
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    *error = path_ + ": cannot rename temporary file (" + std::strerror(errno) + ")";
    Discard();
    return false;
  }
  temporary_.clear();
  return true;
}

bool WriteFileAtomically(const std::string& path, const std::string& contents, std::string* error) {
  AtomicFileWriter writer;
  return writer.Open(path, error) && writer.Write(contents.data(), contents.size(), error) &&
         writer.Commit(error);
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

namespace {

// `path` without "." or ".." steps and without a trailing separator.
fs::path CleanPath(const std::string& path) {
  fs::path clean = fs::path(path).lexically_normal();
  if (!clean.has_filename() && clean.has_parent_path()) clean = clean.parent_path();
  return clean;
}

}  // namespace

OutputStage::~OutputStage() {
  RemoveStaging();
  if (committed_ || created_dir_.empty()) return;
  // Empty folders only, innermost first: fs::remove fails on a folder that holds anything.
  std::error_code code;
  for (fs::path dir = CleanPath(out_dir_);; dir = dir.parent_path()) {
    if (!fs::remove(dir, code) || dir == fs::path(created_dir_) || !dir.has_parent_path()) break;
  }
}

void OutputStage::RemoveStaging() {
  if (staging_dir_.empty()) return;
  std::error_code code;
  fs::remove_all(staging_dir_, code);
  UnregisterStaging(slot_);
  slot_ = -1;
  staging_dir_.clear();
}

bool OutputStage::Open(const std::string& out_dir, std::string* error) {
  CHECK(staging_dir_.empty()) << "OutputStage::Open called twice";
  if (out_dir.empty()) {
    *error = "--out_dir must not be empty";
    return false;
  }
  if (!CheckOutputDirectory(out_dir, error)) return false;
  // The outermost missing folder of out_dir: what a run that fails would have to remove.
  std::error_code exists;
  std::string created;
  for (fs::path dir = CleanPath(out_dir); !dir.empty() && !fs::exists(dir, exists);
       dir = dir.parent_path()) {
    created = dir.string();
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
  }
  if (!MakeDirectories(out_dir, error)) return false;
  out_dir_ = out_dir;
  created_dir_ = created;
  staging_dir_ = (fs::path(out_dir) / (".staging-" + std::to_string(::getpid()))).string();
  std::error_code code;
  fs::remove_all(staging_dir_, code);
  if (!fs::create_directory(staging_dir_, code)) {
    *error = staging_dir_ + ": cannot create staging directory (" + code.message() + ")";
    staging_dir_.clear();
    return false;
  }
  slot_ = RegisterStaging(staging_dir_);
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
  // The previous run's files that this run did not write would otherwise be mistaken for
  // results of this run.
  std::set<std::string> written;
  for (const fs::path& file : files) written.insert(file.filename().string());
  for (const std::string& name : ReadManifest(out_dir_)) {
    if (written.count(name)) continue;
    const fs::path stale = fs::path(out_dir_) / name;
    if (fs::is_regular_file(fs::symlink_status(stale, code))) fs::remove(stale, code);
  }
  std::ostringstream manifest;
  for (const std::string& name : written) manifest << name << "\n";
  if (!WriteFileAtomically((fs::path(out_dir_) / kOutputManifest).string(), manifest.str(),
                           error)) {
    return false;
  }
  RemoveStaging();
  committed_ = true;
  return true;
}

}  // namespace dynid::data
