#include "dynid/solvers/weight_sweep.h"

#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "dynid/data/parallel_for.h"

namespace dynid::solvers {

namespace fs = std::filesystem;

std::vector<WeightEntry> ListWeightEntries(const models::ModelInfo& info) {
  std::vector<WeightEntry> entries;
  auto add = [&](WeightMatrix matrix, const std::string& name) {
    int index = 0;
    for (const WeightEntry& e : entries) index += e.matrix == matrix ? 1 : 0;
    entries.push_back({matrix, index, name});
  };
  for (const auto& q : info.positions) add(WeightMatrix::kKinematic, "W.s." + q.name);
  for (const auto& q : info.positions) add(WeightMatrix::kKinematic, "W.v." + q.name);
  for (const auto& q : info.equations) add(WeightMatrix::kResidual, "V.eom." + q.name);
  for (const auto& q : info.measurements) add(WeightMatrix::kResidual, "V.z." + q.name);
  for (const auto& q : info.positions) add(WeightMatrix::kInitial, "R0.s." + q.name);
  for (const auto& q : info.positions) add(WeightMatrix::kInitial, "R0.v." + q.name);
  for (const auto& q : info.parameters) add(WeightMatrix::kInitial, "R0.theta." + q.name);
  return entries;
}

bool ParseWeightEntry(const std::string& text, const models::ModelInfo& info, WeightEntry* entry,
                      std::string* error) {
  const std::vector<WeightEntry> entries = ListWeightEntries(info);
  for (const WeightEntry& e : entries) {
    if (e.name == text) {
      *entry = e;
      return true;
    }
  }
  // Index form.
  const size_t open = text.find('[');
  if (open != std::string::npos && !text.empty() && text.back() == ']') {
    const std::string matrix = text.substr(0, open);
    const std::string number = text.substr(open + 1, text.size() - open - 2);
    char* end = nullptr;
    const long index = std::strtol(number.c_str(), &end, 10);
    WeightMatrix which;
    bool known = true;
    if (matrix == "W") {
      which = WeightMatrix::kKinematic;
    } else if (matrix == "V") {
      which = WeightMatrix::kResidual;
    } else if (matrix == "R0") {
      which = WeightMatrix::kInitial;
    } else {
      known = false;
    }
    if (known && !number.empty() && end != nullptr && *end == '\0') {
      for (const WeightEntry& e : entries) {
        if (e.matrix == which && e.index == index) {
          *entry = e;
          return true;
        }
      }
    }
  }
  std::ostringstream out;
  out << "unknown weight '" << text << "' for model " << info.name << "; valid names:";
  for (const WeightEntry& e : entries) out << " " << e.name;
  out << " (or W[i], V[i], R0[i])";
  *error = out.str();
  return false;
}

std::vector<double> SweepAxis::Values() const {
  std::vector<double> values(count);
  for (int i = 0; i < count; ++i) {
    const double f = count == 1 ? 0.0 : static_cast<double>(i) / (count - 1);
    values[i] = std::pow(10.0, std::log10(low) + f * (std::log10(high) - std::log10(low)));
  }
  if (count > 1) values.back() = high;
  if (count >= 1) values.front() = low;
  return values;
}

namespace {

bool ParsePositiveNumber(const std::string& text, double* value) {
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return !text.empty() && end != nullptr && *end == '\0' && std::isfinite(*value) && *value > 0;
}

}  // namespace

bool ParseSweepGrid(const std::string& text, const models::ModelInfo& info, const std::string& what,
                    std::vector<SweepAxis>* axes, std::string* error) {
  axes->clear();
  if (text.empty()) {
    *error = what + ": empty grid; give at least one NAME:LOW:HIGH:COUNT";
    return false;
  }
  std::stringstream in(text);
  std::string item;
  std::set<std::string> seen;
  long long total = 1;
  while (std::getline(in, item, ',')) {
    std::vector<std::string> parts;
    std::stringstream fields(item);
    std::string field;
    while (std::getline(fields, field, ':')) parts.push_back(field);
    if (parts.size() != 4) {
      *error = what + ": '" + item + "' is not NAME:LOW:HIGH:COUNT";
      return false;
    }
    SweepAxis axis;
    std::string why;
    if (!ParseWeightEntry(parts[0], info, &axis.entry, &why)) {
      *error = what + ": " + why;
      return false;
    }
    if (!seen.insert(axis.entry.name).second) {
      *error = what + ": weight '" + axis.entry.name + "' appears twice";
      return false;
    }
    if (!ParsePositiveNumber(parts[1], &axis.low) || !ParsePositiveNumber(parts[2], &axis.high)) {
      *error = what + ": '" + item + "': LOW and HIGH must be positive numbers";
      return false;
    }
    char* end = nullptr;
    const long count = std::strtol(parts[3].c_str(), &end, 10);
    if (parts[3].empty() || *end != '\0' || count < 1 || count > 10000) {
      *error = what + ": '" + item + "': COUNT must be an integer in [1, 10000]";
      return false;
    }
    axis.count = static_cast<int>(count);
    total *= count;
    if (total > 1000000) {
      *error = what + ": more than 1e6 grid points";
      return false;
    }
    axes->push_back(axis);
  }
  if (axes->empty()) {
    *error = what + ": empty grid; give at least one NAME:LOW:HIGH:COUNT";
    return false;
  }
  return true;
}

int NumGridPoints(const std::vector<SweepAxis>& axes) {
  int total = 1;
  for (const SweepAxis& a : axes) total *= a.count;
  return total;
}

std::vector<double> GridPointValues(const std::vector<SweepAxis>& axes, int index) {
  CHECK(index >= 0 && index < NumGridPoints(axes)) << "grid point " << index << " out of range";
  std::vector<double> values(axes.size());
  for (int d = static_cast<int>(axes.size()) - 1; d >= 0; --d) {
    values[d] = axes[d].Values()[index % axes[d].count];
    index /= axes[d].count;
  }
  return values;
}

bool ApplyGridPoint(const std::vector<SweepAxis>& axes, const std::vector<double>& values,
                    bool relative, int num_parameters, problems::WeightedResidualWeights* weights,
                    std::string* error) {
  CHECK_EQ(axes.size(), values.size()) << "expected one value per axis";
  const int two_n = static_cast<int>(weights->kinematic.rows());
  for (size_t d = 0; d < axes.size(); ++d) {
    Eigen::MatrixXd* matrix = nullptr;
    switch (axes[d].entry.matrix) {
      case WeightMatrix::kKinematic:
        matrix = &weights->kinematic;
        break;
      case WeightMatrix::kResidual:
        matrix = &weights->residual;
        break;
      case WeightMatrix::kInitial:
        if (weights->initial.size() == 0) {
          weights->initial = Eigen::MatrixXd::Zero(two_n + num_parameters, two_n + num_parameters);
          weights->initial_guess = Eigen::VectorXd::Zero(two_n + num_parameters);
        }
        matrix = &weights->initial;
        break;
    }
    const int i = axes[d].entry.index;
    CHECK_LT(i, matrix->rows()) << axes[d].entry.name << " outside its matrix";
    if (relative) {
      if ((*matrix)(i, i) == 0.0) {
        *error = "relative grid on " + axes[d].entry.name + ", whose base weight is 0";
        return false;
      }
      (*matrix)(i, i) *= values[d];
    } else {
      (*matrix)(i, i) = values[d];
    }
  }
  return true;
}

bool SweepSolverSettings::IsValid(std::string* why) const {
  std::ostringstream out;
  if (max_iterations < 1)
    out << "max_iterations must be >= 1, got " << max_iterations;
  else if (!(function_tolerance > 0.0))
    out << "function_tolerance must be > 0";
  else if (!(theta_start_factor > 0.0))
    out << "theta_start_factor must be > 0";
  else if (!(noise_scale >= 0.0))
    out << "noise_scale must be >= 0";
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

// ---------------------------------------------------------------------------- journal lines

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

std::vector<double> Flatten(const PointResult& r) {
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

std::string FormatJournalLine(const PointResult& result) {
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
                      PointResult* result) {
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
  PointResult r;
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

// ---------------------------------------------------------------------------- journal files

bool SweepJournal::Load(const std::string& directory, const std::string& signature, int p,
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
      PointResult r;
      if (!ParseJournalLine(line, p, num_zeta, num_xi, &r)) {
        ++skipped_lines_;
        continue;
      }
      loaded_.emplace(std::make_pair(r.point, r.seed_index), r);
    }
  }
  return true;
}

bool SweepJournal::OpenForAppend(const std::string& directory, const std::string& signature,
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

bool SweepJournal::Append(const PointResult& result, std::string* error) {
  CHECK(file_ != nullptr) << "SweepJournal::Append before OpenForAppend";
  const std::string line = FormatJournalLine(result) + "\n";
  // One fwrite + flush + fsync: the line is either complete on disk or detectably cut.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    *error = path_ + ": cannot append to journal";
    return false;
  }
  fsync(fileno(file_));
  return true;
}

void SweepJournal::Close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

// ---------------------------------------------------------------------------- thread pool

bool RunSweepTasks(const std::vector<int>& tasks, int num_threads,
                   const std::function<bool(int task, std::string* error)>& run,
                   const std::function<void(int task)>& done, std::string* error) {
  CHECK_GE(num_threads, 1) << "expected at least one thread";
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string first_error;
  // After a failure the remaining tasks are skipped.
  data::ParallelFor(0, static_cast<int>(tasks.size()), num_threads, [&](int i) {
    if (failed) return;
    std::string why;
    if (!run(tasks[i], &why)) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failed) first_error = why;
      failed = true;
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    done(tasks[i]);
  });
  if (failed) *error = first_error;
  return !failed;
}

std::string ProgressBar(int done, int total, double elapsed_s) {
  constexpr int kWidth = 30;
  const int filled = total > 0 ? static_cast<int>(static_cast<double>(kWidth) * done / total) : 0;
  std::string bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]";
  char text[160];
  if (done > 0 && done < total) {
    const double eta = elapsed_s / done * (total - done);
    std::snprintf(text, sizeof(text), " %d/%d points, %.0f s, ETA %.0f s", done, total, elapsed_s,
                  eta);
  } else {
    std::snprintf(text, sizeof(text), " %d/%d points, %.0f s", done, total, elapsed_s);
  }
  return bar + text;
}

std::vector<PointSummary> SummarizeSweep(const std::vector<PointResult>& results, int num_points,
                                         const Eigen::VectorXd& truth) {
  const int p = static_cast<int>(truth.size());
  const Eigen::VectorXd scale =
      truth.cwiseAbs().unaryExpr([](double x) { return x > 0 ? x : 1.0; });
  std::vector<PointSummary> summaries(num_points);
  std::vector<std::vector<Eigen::VectorXd>> errors(num_points);
  for (int i = 0; i < num_points; ++i) {
    summaries[i].point = i;
    summaries[i].bias = summaries[i].spread = summaries[i].rms_error = summaries[i].predicted_rsd =
        Eigen::VectorXd::Zero(p);
  }
  for (const PointResult& r : results) {
    CHECK(r.point >= 0 && r.point < num_points) << "point " << r.point << " out of range";
    PointSummary& s = summaries[r.point];
    ++s.num_seeds;
    s.num_converged += r.converged ? 1 : 0;
    s.mean_final_cost += r.final_cost;
    s.mean_time_s += r.time_s;
    s.predicted_rsd += r.scaled_standard_deviation.cwiseQuotient(scale);
    errors[r.point].push_back((r.theta - truth).cwiseQuotient(scale));
  }
  for (int i = 0; i < num_points; ++i) {
    PointSummary& s = summaries[i];
    if (s.num_seeds == 0) continue;
    s.mean_final_cost /= s.num_seeds;
    s.mean_time_s /= s.num_seeds;
    s.predicted_rsd /= s.num_seeds;
    for (const Eigen::VectorXd& e : errors[i]) {
      s.bias += e / s.num_seeds;
      s.rms_error += e.cwiseAbs2() / s.num_seeds;
    }
    s.rms_error = s.rms_error.cwiseSqrt();
    if (s.num_seeds > 1) {
      for (const Eigen::VectorXd& e : errors[i]) {
        s.spread += (e - s.bias).cwiseAbs2() / (s.num_seeds - 1);
      }
      s.spread = s.spread.cwiseSqrt();
    }
  }
  return summaries;
}

}  // namespace dynid::solvers
