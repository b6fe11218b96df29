#include "dynid/data/run_journal.h"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

namespace dynid::data {

namespace fs = std::filesystem;

namespace {

// The journal files of `directory` in name order (none when it does not exist).
bool JournalFiles(const std::string& directory, std::vector<fs::path>* files, std::string* error) {
  files->clear();
  std::error_code code;
  if (!fs::exists(directory, code)) return true;
  for (const auto& entry : fs::directory_iterator(directory, code)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("journal-", 0) == 0 && entry.path().extension() == ".txt") {
      files->push_back(entry.path());
    }
  }
  if (code) {
    *error = directory + ": cannot list journal files (" + code.message() + ")";
    return false;
  }
  std::sort(files->begin(), files->end());
  return true;
}

}  // namespace

namespace {

constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ull;  // FNV-1a, 64 bits
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t Fnv1a(const char* bytes, size_t size, uint64_t hash) {
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(bytes[i]);
    hash *= kFnvPrime;
  }
  return hash;
}

std::string Hex(uint64_t hash) {
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

}  // namespace

std::string HashHex(const std::string& text) {
  return Hex(Fnv1a(text.data(), text.size(), kFnvOffsetBasis));
}

bool FileHashHex(const std::string& path, std::string* hash, std::uintmax_t* bytes) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  std::vector<char> piece(1 << 20);
  uint64_t value = kFnvOffsetBasis;
  *bytes = 0;
  size_t read = 0;
  while ((read = std::fread(piece.data(), 1, piece.size(), file)) > 0) {
    value = Fnv1a(piece.data(), read, value);
    *bytes += read;
  }
  const bool ok = std::ferror(file) == 0;
  std::fclose(file);
  if (ok) *hash = Hex(value);
  return ok;
}

std::string JournalRecord(const std::string& body) {
  CHECK(body.find('\n') == std::string::npos) << "journal record with a line break";
  return body + " " + HashHex(body);
}

bool JournalRecordBody(const std::string& line, std::string* body) {
  const size_t last = line.rfind(' ');
  if (last == std::string::npos || last == 0) return false;
  if (line.compare(last + 1, std::string::npos, HashHex(line.substr(0, last))) != 0) return false;
  *body = line.substr(0, last);
  return true;
}

std::string RunJournal::Header(const std::string& signature) const {
  return "# " + kind_ + " journal " + signature;
}

bool RunJournal::Load(const std::string& directory, const std::string& signature,
                      const std::function<bool(const std::string& body)>& accept,
                      std::string* error) {
  skipped_lines_ = 0;
  std::vector<fs::path> files;
  if (!JournalFiles(directory, &files, error)) return false;
  const std::string header = Header(signature);
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string line;
    if (!std::getline(in, line)) continue;  // empty file: a process that died at once
    if (line != header) {
      *error = file.string() + ":1: journal of other settings (" + line + ", expected " + header +
               "); use another --out_dir or delete " + directory;
      return false;
    }
    std::string body;
    while (std::getline(in, line)) {
      if (!JournalRecordBody(line, &body) || !accept(body)) ++skipped_lines_;
    }
  }
  return true;
}

bool RunJournal::OpenForAppend(const std::string& directory, const std::string& signature, int rank,
                               std::string* error) {
  Close();
  std::error_code code;
  fs::create_directories(directory, code);
  if (code) {
    *error = directory + ": cannot create journal folder (" + code.message() + ")";
    return false;
  }
  path_ = (fs::path(directory) / ("journal-" + std::to_string(rank) + ".txt")).string();
  const bool fresh = !fs::exists(path_, code) || fs::file_size(path_, code) == 0;
  bool needs_newline = false;
  if (!fresh) {
    // End a line cut short by a kill so that the next record starts on its own line.
    std::ifstream in(path_, std::ios::binary);
    in.seekg(-1, std::ios::end);
    char last = '\n';
    in.get(last);
    needs_newline = last != '\n';
  }
  file_ = std::fopen(path_.c_str(), "a");
  if (file_ == nullptr) {
    *error = path_ + ": cannot open journal for appending";
    return false;
  }
  if (fresh) std::fprintf(file_, "%s\n", Header(signature).c_str());
  if (needs_newline) std::fputc('\n', file_);
  std::fflush(file_);
  return true;
}

bool RunJournal::Append(const std::string& body, std::string* error) {
  const std::string line = JournalRecord(body) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  CHECK(file_ != nullptr) << "RunJournal::Append before OpenForAppend";
  // One fwrite + flush + fsync: the line is either complete on disk or detectably cut.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    *error = path_ + ": cannot append to journal";
    return false;
  }
  fsync(fileno(file_));
  return true;
}

void RunJournal::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

bool RunJournal::Discard(const std::string& directory, std::string* error) {
  std::vector<fs::path> files;
  if (!JournalFiles(directory, &files, error)) return false;
  for (const fs::path& file : files) {
    std::error_code code;
    if (!fs::remove(file, code) && code) {
      *error = file.string() + ": cannot remove old journal (" + code.message() + ")";
      return false;
    }
  }
  return true;
}

}  // namespace dynid::data
