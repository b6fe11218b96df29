#include "experiments/weight_sweep/grid_journal.h"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace dynid::experiments {

namespace fs = std::filesystem;

std::string HashHex(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

namespace {

std::vector<double> Flatten(const solvers::GridPointResult& r) {
  std::vector<double> v = {static_cast<double>(r.seed),
                           r.converged ? 1.0 : 0.0,
                           static_cast<double>(r.iterations),
                           r.initial_cost,
                           r.final_cost,
                           r.time_s,
                           r.identifiable ? 1.0 : 0.0,
                           r.condition_number};
  for (const Eigen::VectorXd* x :
       {&r.theta, &r.standard_deviation, &r.scaled_standard_deviation, &r.zeta_rms, &r.xi_rms}) {
    v.insert(v.end(), x->data(), x->data() + x->size());
  }
  return v;
}

constexpr int kScalarFields = 8;

}  // namespace

std::string FormatJournalLine(const solvers::GridPointResult& result) {
  const std::vector<double> values = Flatten(result);
  std::ostringstream out;
  out << "P " << result.point << " " << result.seed_index << " " << values.size();
  char buffer[40];
  for (double x : values) {
    std::snprintf(buffer, sizeof(buffer), " %.17g", x);
    out << buffer;
  }
  const std::string body = out.str();
  return body + " " + HashHex(body);
}

bool ParseJournalLine(const std::string& line, int p, int num_zeta, int num_xi,
                      solvers::GridPointResult* result) {
  const size_t last = line.rfind(' ');
  if (line.size() < 2 || line[0] != 'P' || last == std::string::npos) return false;
  const std::string body = line.substr(0, last);
  if (line.substr(last + 1) != HashHex(body)) return false;
  std::istringstream in(body.substr(1));
  int point = -1, seed_index = -1, count = -1;
  if (!(in >> point >> seed_index >> count)) return false;
  const int expected = kScalarFields + 3 * p + num_zeta + num_xi;
  if (count != expected || point < 0 || seed_index < 0) return false;
  std::vector<double> values(count);
  for (double& x : values) {
    std::string token;
    if (!(in >> token)) return false;
    char* end = nullptr;
    x = std::strtod(token.c_str(), &end);
    if (*end != '\0') return false;
  }
  std::string extra;
  if (in >> extra) return false;
  solvers::GridPointResult r;
  r.point = point;
  r.seed_index = seed_index;
  r.seed = static_cast<int>(values[0]);
  r.converged = values[1] != 0.0;
  r.iterations = static_cast<int>(values[2]);
  r.initial_cost = values[3];
  r.final_cost = values[4];
  r.time_s = values[5];
  r.identifiable = values[6] != 0.0;
  r.condition_number = values[7];
  int offset = kScalarFields;
  auto take = [&](int size, Eigen::VectorXd* x) {
    *x = Eigen::Map<const Eigen::VectorXd>(values.data() + offset, size);
    offset += size;
  };
  take(p, &r.theta);
  take(p, &r.standard_deviation);
  take(p, &r.scaled_standard_deviation);
  take(num_zeta, &r.zeta_rms);
  take(num_xi, &r.xi_rms);
  *result = r;
  return true;
}

bool GridJournal::Load(const std::string& directory, const std::string& signature, int p,
                       int num_zeta, int num_xi, std::string* error) {
  loaded_.clear();
  skipped_lines_ = 0;
  std::error_code code;
  if (!fs::exists(directory, code)) return true;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory, code)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("journal-", 0) == 0 && entry.path().extension() == ".txt") {
      files.push_back(entry.path());
    }
  }
  if (code) {
    *error = directory + ": cannot list journal files (" + code.message() + ")";
    return false;
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string line;
    if (!std::getline(in, line)) continue;  // empty file: a process that died at once
    if (line != "# weight_sweep journal " + signature) {
      *error = file.string() + ":1: journal of a different sweep configuration (" + line +
               "); use another --out_dir or delete " + directory;
      return false;
    }
    // A line cut short by a kill has no newline and fails its checksum; skip it.
    while (std::getline(in, line)) {
      solvers::GridPointResult r;
      if (!ParseJournalLine(line, p, num_zeta, num_xi, &r)) {
        ++skipped_lines_;
        continue;
      }
      loaded_.emplace(std::make_pair(r.point, r.seed_index), r);
    }
  }
  return true;
}

bool GridJournal::OpenForAppend(const std::string& directory, const std::string& signature,
                                int rank, std::string* error) {
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
    // Terminate a line cut short by a kill so that the next record starts on its own line.
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
  if (fresh) std::fprintf(file_, "# weight_sweep journal %s\n", signature.c_str());
  if (needs_newline) std::fputc('\n', file_);
  std::fflush(file_);
  return true;
}

bool GridJournal::Append(const solvers::GridPointResult& result, std::string* error) {
  CHECK(file_ != nullptr) << "GridJournal::Append before OpenForAppend";
  const std::string line = FormatJournalLine(result) + "\n";
  // One fwrite + flush + fsync: the line is either complete on disk or detectably cut.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    *error = path_ + ": cannot append to journal";
    return false;
  }
  fsync(fileno(file_));
  return true;
}

void GridJournal::Close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace dynid::experiments
