// experiments/weight_sweep/weight_sweep_run — see weight_sweep_run.h.
#include "experiments/weight_sweep/weight_sweep_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>
#include <utility>

#include "dynid/data/run_journal.h"
#include "experiments/common/mpi_job.h"
#include "experiments/common/progress.h"
#include "experiments/weight_sweep/grid_journal.h"
#include "experiments/weight_sweep/grid_text.h"

namespace dynid::experiments {
namespace {

// The configuration signature of the journal: everything that changes a point's result.
std::string Signature(const SweepSetup& setup) {
  std::ostringstream config;
  config.precision(17);
  config << setup.grid_case->name() << " nodes=" << setup.grid_case->num_nodes()
         << " relative=" << FLAGS_relative << " seeds=" << setup.num_seeds
         << " first_seed=" << FLAGS_first_seed << " noise=" << setup.settings.noise_scale
         << " start=" << setup.settings.theta_start_factor
         << " iterations=" << setup.settings.max_iterations
         << " tol=" << setup.settings.function_tolerance << " transcription="
         << FLAGS_transcription
         // A record holds the sandwich's σ and its HAC form's: journals written before have other
         // records.
         << " record=with_hac_sd";
  if (setup.settings.trust_region !=
      solvers::WeightedResidualSmootherOptions::TrustRegion::kLevenbergMarquardt) {
    config << " trust_region=dogleg";
  }
  for (const solvers::WeightAxis& a : setup.axes) {
    config << " " << a.entry.name << ":" << a.low << ":" << a.high << ":" << a.count;
  }
  return data::HashHex(config.str());
}

}  // namespace

bool RunSweep(const SweepSetup& setup, const Ranks& ranks, SweepRun* run, int* exit_code,
              std::string* error) {
  const models::ModelInfo& info = setup.grid_case->info();
  const int p = static_cast<int>(info.parameters.size());
  const int num_zeta = static_cast<int>(info.equations.size() + info.measurements.size());
  const int num_xi = 2 * static_cast<int>(info.positions.size());
  const int num_seeds = setup.num_seeds;
  run->signature = Signature(setup);
  run->journal_dir = FLAGS_out_dir + "/.weight_sweep_journal";

  // Resume: load what earlier runs finished.
  *exit_code = 2;
  GridJournal journal;
  if (!journal.Load(run->journal_dir, run->signature, p, num_zeta, num_xi, error)) return false;
  *exit_code = 1;
  std::vector<int> pending;
  for (int task = 0; task < setup.num_tasks; ++task) {
    if (!journal.loaded().count({task / num_seeds, task % num_seeds})) pending.push_back(task);
  }
  run->resumed = journal.loaded().size();
  run->skipped_lines = journal.skipped_lines();
  run->computed = pending.size();
  if (ranks.rank == 0 && !journal.loaded().empty()) {
    std::fprintf(stderr,
                 "weight_sweep: resuming: %zu of %lld points already done (%d cut-short "
                 "journal lines skipped)\n",
                 journal.loaded().size(), setup.num_tasks, journal.skipped_lines());
  }
  std::vector<int> my_tasks;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (static_cast<int>(i % ranks.size) == ranks.rank) my_tasks.push_back(pending[i]);
  }
  cli::MpiJob::Barrier();  // every rank has read the journals before any appends
  if (!journal.OpenForAppend(run->journal_dir, run->signature, ranks.rank, error)) return false;

  // Run, journalling every estimate as it finishes; rank 0 draws the progress bar.
  std::vector<solvers::GridPointResult> results(setup.num_tasks);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int done_count = 0;
  double last_bar = -1.0;
  const bool show_progress = dynid::cli::ProgressEnabled() && ranks.rank == 0;
  auto on_result = [&](const solvers::GridPointResult& r, std::string* why) {
    if (!journal.Append(r, why)) return false;
    ++done_count;
    const double now = elapsed();
    if (show_progress &&
        (now - last_bar > 0.25 || done_count == static_cast<int>(my_tasks.size()))) {
      last_bar = now;
      std::fprintf(stderr, "\r%s%s", ranks.size > 1 ? "rank 0: " : "",
                   ProgressBar(done_count, static_cast<int>(my_tasks.size()), now).c_str());
      std::fflush(stderr);
    }
    return true;
  };
  solvers::WeightGridOptions grid_options;
  grid_options.relative = FLAGS_relative;
  grid_options.num_seeds = num_seeds;
  grid_options.first_seed = FLAGS_first_seed;
  grid_options.num_threads = setup.threads;
  grid_options.settings = setup.settings;
  bool ok = solvers::EvaluateWeightGrid(*setup.grid_case, setup.axes, grid_options, my_tasks,
                                        on_result, &results, error);
  if (show_progress && !my_tasks.empty()) std::fprintf(stderr, "\n");
  journal.Close();
  run->compute_s = elapsed();

  // Merge: journal records + this run's results (+ the other ranks' results over MPI).
  std::vector<solvers::GridPointResult>& merged = run->results;
  merged.clear();
  std::set<std::pair<int, int>> have;
  for (const auto& [key, r] : journal.loaded()) {
    merged.push_back(r);
    have.insert(key);
  }
  std::string lines;
  if (ok) {
    for (int task : my_tasks) lines += FormatJournalBody(results[task]) + "\n";
  }
  if (!cli::MpiJob::Gather(ok, &lines, error)) return false;
  if (ranks.rank != 0) return true;
  std::istringstream in(lines);
  std::string line;
  while (std::getline(in, line)) {
    solvers::GridPointResult r;
    if (!ParseJournalBody(line, p, num_zeta, num_xi, &r)) {
      *error = "internal: a result line did not parse back";
      return false;
    }
    if (have.insert({r.point, r.seed_index}).second) merged.push_back(r);
  }
  if (static_cast<long long>(merged.size()) != setup.num_tasks) {
    *error = "merged table has " + std::to_string(merged.size()) + " of " +
             std::to_string(setup.num_tasks) + " points";
    return false;
  }
  std::sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.point, a.seed_index) < std::make_pair(b.point, b.seed_index);
  });
  return true;
}

}  // namespace dynid::experiments
