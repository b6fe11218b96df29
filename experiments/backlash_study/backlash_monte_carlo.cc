// experiments/backlash_study/backlash_monte_carlo — the study's Monte Carlo (see
// backlash_monte_carlo.h).
#include "experiments/backlash_study/backlash_monte_carlo.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/data/parallel_for.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/common/progress.h"
#include "experiments/backlash_study/backlash_case.h"
#include "experiments/backlash_study/backlash_estimators.h"
#include "experiments/backlash_study/backlash_flags.h"

namespace dynid::backlash_study {
namespace {

// b and K of one estimator of one run.
void AddEstimates(const Case& config, const std::string& estimator, const solvers::DeadZoneFit& fit,
                  bool converged, std::vector<solvers::MonteCarloEstimate>* out) {
  solvers::MonteCarloEstimate b;
  b.estimator = estimator;
  b.parameter = "b_rad";
  b.truth = TrueBacklash(config);
  b.estimate = fit.backlash_rad;
  b.reported_std = fit.backlash_std;
  b.lower = fit.backlash_lower;
  b.upper = fit.backlash_upper;
  b.converged = converged;
  out->push_back(b);
  solvers::MonteCarloEstimate k = b;
  k.parameter = "K_nm_per_rad";
  k.truth = config.parameters.stiffness_nm_per_rad;
  k.estimate = fit.stiffness_nm_per_rad;
  k.reported_std = fit.stiffness_std;
  k.lower = fit.stiffness_lower;
  k.upper = fit.stiffness_upper;
  out->push_back(k);
}

bool Trial(const Case& config, std::uint64_t seed, std::vector<solvers::MonteCarloEstimate>* out,
           std::string* error) {
  const int samples = FLAGS_samples > 0 ? FLAGS_samples : config.default_samples;
  CaseRun run;
  if (!RunCase(config, samples, config.tau_noise_intensity, NoiseSeed(config.name, seed), &run,
               error)) {
    *error = config.name + ": " + *error;
    return false;
  }
  for (const auto& [label, outcome] : run.Outcomes()) {
    AddEstimates(config, label, outcome->fit, outcome->converged, out);
  }
  return true;
}

}  // namespace

bool RunMonteCarloStudy(const std::vector<Case>& cases, std::string* error) {
  solvers::MonteCarloOptions options;
  options.num_seeds = FLAGS_monte_carlo;
  options.first_seed = FLAGS_seed;
  options.num_threads = FLAGS_monte_carlo_threads;
  // Progress through the programs' shared stage display (--progress).
  cli::Stage progress("Monte Carlo runs");
  options.on_run = [&progress](const solvers::MonteCarloRun&, int finished, int total) {
    progress.SetTotal(total);
    progress.Set(finished);
  };
  std::vector<std::string> names;
  for (const Case& c : cases) names.push_back(c.name);
  const solvers::MonteCarloTrial trial =
      [&cases](int scenario, std::uint64_t seed, std::vector<solvers::MonteCarloEstimate>* out,
               std::string* why) { return Trial(cases[scenario], seed, out, why); };
  const auto start = std::chrono::steady_clock::now();
  std::vector<solvers::MonteCarloRun> runs;
  if (!solvers::RunMonteCarlo(static_cast<int>(cases.size()), trial, options, &runs, error)) {
    return false;
  }
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  const std::string mismatch = ModelMismatchDescription();
  char title[160];
  std::snprintf(title, sizeof(title), "backlash and stiffness: %d noise seeds from %llu%s",
                FLAGS_monte_carlo, static_cast<unsigned long long>(FLAGS_seed),
                mismatch.empty() ? "" : " (model mismatch)");
  if (!stage.Open(FLAGS_out_dir, error) ||
      !solvers::WriteCoverageOutputs(runs, names, title, FLAGS_figures, &stage, &rows, error)) {
    return false;
  }
  const int threads =
      data::ParallelForThreads(FLAGS_monte_carlo_threads, static_cast<int>(runs.size()));
  std::printf("backlash_study Monte Carlo: %d seeds per case (--seed %llu + 0 .. %d)\n",
              FLAGS_monte_carlo, static_cast<unsigned long long>(FLAGS_seed),
              FLAGS_monte_carlo - 1);
  std::printf("model mismatch: %s\n",
              ModelMismatchJson()["description"].get<std::string>().c_str());
  std::printf("%s", solvers::FormatCoverageTable(rows).c_str());
  std::printf("elapsed %.1f s on %d thread(s)\n", elapsed_s, threads);
  nlohmann::json summary;
  summary["flags"] = FlagsJson();
  summary["model_mismatch"] = ModelMismatchJson();
  summary["monte_carlo"] = {{"seeds", FLAGS_monte_carlo},
                            {"first_seed", FLAGS_seed},
                            {"threads", threads},
                            {"coverage", solvers::CoverageJson(rows)},
                            {"elapsed_s", elapsed_s}};
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

}  // namespace dynid::backlash_study
