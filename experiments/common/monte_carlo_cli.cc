#include "experiments/common/monte_carlo_cli.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <utility>

#include "dynid/data/parallel_for.h"
#include "dynid/data/run_journal.h"
#include "experiments/common/cli.h"
#include "experiments/common/progress.h"

DEFINE_int32(monte_carlo, 0,
             "run the simulation and its estimators over N noise seeds (--seed, --seed + 1, ...) "
             "instead of the single run, and write coverage.csv, monte_carlo_runs.csv, "
             "coverage.png (and coverage_map.png for several estimators) and summary.json (0 = "
             "the single run)");
DEFINE_int32(monte_carlo_threads, 0, "worker threads of --monte_carlo (0 = all cores)");
DEFINE_bool(monte_carlo_resume, false,
            "with --monte_carlo: reuse the runs journalled in OUT_DIR/.monte_carlo_journal by an "
            "earlier Monte Carlo with the same settings (killed, or with fewer seeds) instead of "
            "starting afresh");

namespace dynid::cli {
namespace {

struct Ranks {
  int rank = 0;
  int size = 1;
  std::function<void()> barrier;
  std::function<bool(bool, std::string*, std::string*)> gather;
};

Ranks& TheRanks() {
  static Ranks ranks;
  return ranks;
}

// RecordFlagsAlways's names.
std::vector<std::string>& RecordedAlways() {
  static std::vector<std::string> names;
  return names;
}

bool IsRecordedAlways(const std::string& name) {
  const std::vector<std::string>& names = RecordedAlways();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string JournalDirectory(const std::string& out_dir) {
  return out_dir + "/.monte_carlo_journal";
}

// Flags that never change a run: the output folder, the seeds, figures, progress display,
// thread counts (by the Monte Carlo's determinism contract) and the quoted coverage file.
bool NeverChangesARun(const std::string& name) {
  static const std::vector<std::string> kNames = {
      "out_dir", "seed", "monte_carlo", "monte_carlo_resume", "figures", "coverage_csv"};
  const bool threads = name.size() >= 7 && name.compare(name.size() - 7, 7, "threads") == 0;
  // weight_sweep's first seed is --first_seed.
  const bool first_seed = name == "first_seed";
  return threads || first_seed || name.find("progress") != std::string::npos ||
         std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

// Everything that changes a run except its seed (and the number of seeds).
std::string Signature() {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::vector<std::string> excluded;
  for (const auto& flag : flags) {
    if (NeverChangesARun(flag.name)) excluded.push_back(flag.name);
  }
  return ProgramFlagsSignature(excluded);
}

// The program's name without the MPI build's suffix.
std::string ProgramBaseName() {
  const std::string& name = ProgramName();
  const std::string suffix = "_mpi";
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return name.substr(0, name.size() - suffix.size());
  }
  return name;
}

// What a settings line records of a file a flag names, after its path: "#bytes=N,fnv1a64=H"
// (the size and data::HashHex of the content), so that a single run compares the data it reads
// rather than the path it was given (relative paths depend on the working folder).
const std::string kContentTag = "#bytes=";

// The content tag of the regular file `path` ("" when it is not one or cannot be read).
std::string FileContentTag(const std::string& path) {
  std::error_code code;
  if (path.empty() || !std::filesystem::is_regular_file(path, code)) return "";
  std::string hash;
  std::uintmax_t bytes = 0;
  if (!data::FileHashHex(path, &hash, &bytes)) return "";
  return kContentTag + std::to_string(bytes) + ",fnv1a64=" + hash;
}

// "--name=value" of every flag of the program (own and shared) that may change a run and whose
// value differs from its default or that is recorded always, except `ignored`; sorted. A string
// flag naming a regular file has the file's content tag appended to its value
// ("--data=log.csv#bytes=...,fnv1a64=...").
std::vector<std::string> RunChangingFlags(const std::vector<std::string>& ignored) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::vector<std::string> settings;
  for (const auto& flag : flags) {
    if (!IsProgramFlag(flag.filename) || NeverChangesARun(flag.name) ||
        (flag.current_value == flag.default_value && !IsRecordedAlways(flag.name)) ||
        std::find(ignored.begin(), ignored.end(), flag.name) != ignored.end()) {
      continue;
    }
    settings.push_back("--" + flag.name + "=" + flag.current_value +
                       (flag.type == "string" ? FileContentTag(flag.current_value) : ""));
  }
  std::sort(settings.begin(), settings.end());
  return settings;
}

// One "--name=value[#bytes=...]" of a settings line, split.
struct SettingsFlag {
  std::string name, value, content;  // content: the tag, empty for other flags and older lines
};

SettingsFlag SplitSettingsFlag(const std::string& flag) {
  SettingsFlag split;
  const size_t equals = flag.find('=');
  split.name = flag.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
  split.value = equals == std::string::npos ? "" : flag.substr(equals + 1);
  const size_t tag = split.value.rfind(kContentTag);
  if (tag != std::string::npos) {
    split.content = split.value.substr(tag);
    split.value.erase(tag);
  }
  return split;
}

// Whether the flags `measured` (of a settings line) and `current` (of this run) describe the
// same runs: the same flags, with equal values, except that a file named by both with a content
// tag is compared by its content (size and checksum) and not by its path. A line written before
// files were tagged compares the path as given.
bool SameRunFlags(const std::vector<std::string>& measured,
                  const std::vector<std::string>& current) {
  if (measured.size() != current.size()) return false;
  std::map<std::string, SettingsFlag> by_name;
  for (const std::string& flag : measured) {
    const SettingsFlag split = SplitSettingsFlag(flag);
    by_name[split.name] = split;
  }
  for (const std::string& flag : current) {
    const SettingsFlag now = SplitSettingsFlag(flag);
    const auto found = by_name.find(now.name);
    if (found == by_name.end()) return false;
    const SettingsFlag& then = found->second;
    const bool same = !then.content.empty() && !now.content.empty() ? then.content == now.content
                                                                    : then.value == now.value;
    if (!same) return false;
  }
  return true;
}

std::string Join(const std::vector<std::string>& items) {
  if (items.empty()) return "the defaults";
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : " ") + item;
  return text;
}

}  // namespace

void SetMonteCarloRanks(int rank, int size, std::function<void()> barrier,
                        std::function<bool(bool, std::string*, std::string*)> gather) {
  TheRanks() = Ranks{rank, size, std::move(barrier), std::move(gather)};
}

void RecordFlagsAlways(const std::vector<std::string>& names) { RecordedAlways() = names; }

int MonteCarloRank() { return TheRanks().rank; }
int MonteCarloRanks() { return TheRanks().size; }

bool ValidateMonteCarloFlags(const std::string& out_dir, std::string* error,
                             const std::string& not_resumable) {
  if (FLAGS_monte_carlo < 0) {
    *error =
        "--monte_carlo must be >= 0 (0 = the single run), got " + std::to_string(FLAGS_monte_carlo);
    return false;
  }
  if (FLAGS_monte_carlo_threads < 0) {
    *error = "--monte_carlo_threads must be >= 0 (0 = all cores), got " +
             std::to_string(FLAGS_monte_carlo_threads);
    return false;
  }
  if (FLAGS_monte_carlo_resume && !not_resumable.empty()) {
    *error = "--monte_carlo_resume: " + ProgramName() + "'s Monte Carlo is not journalled (" +
             not_resumable + ")";
    return false;
  }
  if (FLAGS_monte_carlo_resume && FLAGS_monte_carlo == 0) {
    *error = "--monte_carlo_resume needs --monte_carlo=N";
    return false;
  }
  if (MonteCarloRanks() > 1 && FLAGS_monte_carlo == 0) {
    *error = "an MPI job of " + std::to_string(MonteCarloRanks()) +
             " ranks shares out --monte_carlo runs; give --monte_carlo=N (the single run needs "
             "no MPI)";
    return false;
  }
  if (FLAGS_monte_carlo_resume) {
    data::RunJournal journal("monte_carlo");
    std::string why;
    if (!journal.Load(
            JournalDirectory(out_dir), Signature(), [](const std::string&) { return true; },
            &why)) {
      *error = "--monte_carlo_resume: " + why;
      return false;
    }
  }
  return true;
}

bool RunMonteCarloFromFlags(const std::string& out_dir, std::uint64_t first_seed, int num_scenarios,
                            const solvers::MonteCarloTrial& trial, MonteCarloJob* job,
                            std::string* error, bool journalled) {
  const Ranks& ranks = TheRanks();
  CHECK(journalled || ranks.size == 1) << "a Monte Carlo without a journal runs on one rank";
  solvers::MonteCarloOptions options;
  options.num_seeds = FLAGS_monte_carlo;
  options.first_seed = first_seed;
  options.num_threads = FLAGS_monte_carlo_threads;
  if (journalled) {
    options.journal_dir = JournalDirectory(out_dir);
    options.signature = Signature();
  }
  options.rank = ranks.rank;
  options.num_ranks = ranks.size;
  options.barrier = ranks.barrier;
  options.gather = ranks.gather;
  // A fresh Monte Carlo removes the old journal (rank 0, before any rank reads it).
  if (journalled && !FLAGS_monte_carlo_resume && ranks.rank == 0 &&
      !data::RunJournal::Discard(options.journal_dir, error)) {
    return false;
  }
  if (ranks.size > 1) ranks.barrier();
  Stage progress(ranks.size > 1 ? "Monte Carlo runs of rank 0" : "Monte Carlo runs");
  if (ranks.rank == 0) {
    options.on_run = [&progress](const solvers::MonteCarloRun&, int finished, int total) {
      progress.SetTotal(total);
      progress.Set(finished);
    };
  }
  const auto start = std::chrono::steady_clock::now();
  const bool ok =
      solvers::RunMonteCarlo(num_scenarios, trial, options, &job->runs, error, &job->tally);
  progress.End();
  job->elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  job->first_seed = first_seed;
  job->threads =
      data::ParallelForThreads(FLAGS_monte_carlo_threads, num_scenarios * FLAGS_monte_carlo);
  job->ranks = ranks.size;
  job->reporting = ranks.rank == 0;
  job->settings = MonteCarloSettings();
  return ok;
}

std::string MonteCarloSettings() {
  std::string settings = ProgramBaseName() + " --monte_carlo=" + std::to_string(FLAGS_monte_carlo);
  gflags::CommandLineFlagInfo seed;
  if (gflags::GetCommandLineFlagInfo("seed", &seed)) settings += " --seed=" + seed.current_value;
  if (gflags::GetCommandLineFlagInfo("first_seed", &seed)) {
    settings += " --first_seed=" + seed.current_value;
  }
  for (const std::string& flag : RunChangingFlags({})) settings += " " + flag;
  return settings;
}

bool SameMonteCarloSettings(const std::vector<std::string>& settings,
                            const std::vector<std::string>& ignored, std::string* difference) {
  difference->clear();
  if (settings.empty()) {
    *difference = "the coverage file does not record the settings it was measured at";
    return false;
  }
  const std::vector<std::string> current = RunChangingFlags(ignored);
  for (const std::string& line : settings) {
    // The line's flags that may change a run (its first word is the program).
    std::vector<std::string> measured;
    size_t start = line.find(" --");
    while (start != std::string::npos) {
      const size_t end = line.find(" --", start + 3);
      const std::string flag =
          line.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
      const size_t equals = flag.find('=');
      const std::string name =
          flag.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
      if (!NeverChangesARun(name) &&
          std::find(ignored.begin(), ignored.end(), name) == ignored.end()) {
        measured.push_back(flag);
      }
      start = end;
    }
    std::sort(measured.begin(), measured.end());
    const std::string program = line.substr(0, line.find(' '));
    if (program == ProgramBaseName() && SameRunFlags(measured, current)) {
      difference->clear();  // an earlier line of a joined file may have differed
      return true;
    }
    // The flags recorded always that the line lacks (written before they were).
    std::string unrecorded;
    for (const std::string& flag : current) {
      const std::string name = SplitSettingsFlag(flag).name;
      const bool in_line =
          std::any_of(measured.begin(), measured.end(), [&name](const std::string& recorded) {
            return SplitSettingsFlag(recorded).name == name;
          });
      if (IsRecordedAlways(name) && !in_line) {
        unrecorded += (unrecorded.empty() ? " without a recorded --" : ", --") + name;
      }
    }
    const std::string described = "measured by " + program + " at " + Join(measured) + unrecorded;
    if (difference->find(described) == std::string::npos) {
      *difference += std::string(difference->empty() ? "" : "; ") + described;
    }
  }
  *difference += ", this run at " + Join(current);
  return false;
}

bool LoadQuotedCoverage(const std::string& given_path, const std::string& shipped_relative_path,
                        const std::vector<std::string>& ignored,
                        std::vector<solvers::CoverageRow>* rows, std::string* source,
                        std::string* other_settings, std::string* error) {
  other_settings->clear();
  std::vector<std::string> settings;
  if (!solvers::LoadMeasuredCoverage(given_path, shipped_relative_path, rows, source, error,
                                     &settings)) {
    *error = "--coverage_csv: " + *error;
    return false;
  }
  if (!source->empty()) SameMonteCarloSettings(settings, ignored, other_settings);
  return true;
}

std::string MonteCarloJobLine(const MonteCarloJob& job) {
  char line[300];
  std::snprintf(line, sizeof(line), "%d seeds (%llu..%llu), elapsed %.1f s on %d thread(s)",
                FLAGS_monte_carlo, static_cast<unsigned long long>(job.first_seed),
                static_cast<unsigned long long>(job.first_seed + FLAGS_monte_carlo - 1),
                job.elapsed_s, job.threads);
  std::string text = line;
  if (job.ranks > 1) text += " × " + std::to_string(job.ranks) + " rank(s)";
  if (job.tally.resumed > 0) {
    text += "; " + std::to_string(job.tally.resumed) + " runs resumed from the journal";
  }
  if (job.tally.skipped_lines > 0) {
    text += " (" + std::to_string(job.tally.skipped_lines) + " cut-short lines skipped)";
  }
  return text;
}

nlohmann::json MonteCarloJobJson(const MonteCarloJob& job, const std::string& out_dir) {
  return {{"seeds", FLAGS_monte_carlo},
          {"first_seed", job.first_seed},
          {"threads", job.threads},
          {"ranks", job.ranks},
          {"elapsed_s", job.elapsed_s},
          {"resumed_runs", job.tally.resumed},
          {"computed_runs", job.tally.computed},
          {"journal", JournalDirectory(out_dir)}};
}

nlohmann::json MeasureSpread(const std::vector<solvers::MonteCarloRun>& runs,
                             const std::string& estimator, const std::string& parameter) {
  std::vector<double> x;
  for (const solvers::MonteCarloRun& run : runs) {
    for (const solvers::MonteCarloEstimate& e : run.estimates) {
      if (e.measure && e.converged && std::isfinite(e.estimate) && e.estimator == estimator &&
          e.parameter == parameter) {
        x.push_back(e.estimate);
      }
    }
  }
  if (x.empty()) return {{"runs", 0}};
  std::sort(x.begin(), x.end());
  const auto quantile = [&x](double q) {
    const double position = q * static_cast<double>(x.size() - 1);
    const std::size_t below = static_cast<std::size_t>(std::floor(position));
    const std::size_t above = std::min(below + 1, x.size() - 1);
    return x[below] + (position - static_cast<double>(below)) * (x[above] - x[below]);
  };
  return {{"runs", x.size()},     {"median", quantile(0.5)}, {"p10", quantile(0.1)},
          {"p90", quantile(0.9)}, {"min", x.front()},        {"max", x.back()}};
}

std::string MeasureSpreadText(const nlohmann::json& spread, const char* format) {
  if (spread.value("runs", 0) == 0) return "- (no converged run)";
  const std::string f = std::string(format) + " [" + format + ", " + format + "]";
  char text[160];
  std::snprintf(text, sizeof(text), f.c_str(), spread["median"].get<double>(),
                spread["p10"].get<double>(), spread["p90"].get<double>());
  return text;
}

}  // namespace dynid::cli
