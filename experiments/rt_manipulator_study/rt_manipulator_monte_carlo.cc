// experiments/rt_manipulator_study/rt_manipulator_monte_carlo — the study's Monte Carlo (see
// rt_manipulator_monte_carlo.h).
#include "experiments/rt_manipulator_study/rt_manipulator_monte_carlo.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/data/parallel_for.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/common/progress.h"
#include "experiments/rt_manipulator_study/rt_manipulator_estimates.h"
#include "experiments/rt_manipulator_study/rt_manipulator_flags.h"
#include "experiments/rt_manipulator_study/rt_manipulator_record.h"

namespace dynid::rt_manipulator_study {
namespace {

// One seed: the record, both weightings, filter and smoother; the payload estimates.
bool Trial(const models::RtManipulatorParameters& parameters, std::uint64_t seed,
           std::vector<solvers::MonteCarloEstimate>* out, std::string* error) {
  const Record record = SimulateRecord(parameters, static_cast<int>(seed));
  const models::RtManipulatorRigid model(parameters);
  Weightings weightings;
  std::vector<Estimate> estimates;
  if (!MakeWeightings(model, record.data, &weightings, error) ||
      !RunEstimates(model, record.data, weightings, &estimates, error)) {
    return false;
  }
  const int num_nodes = static_cast<int>(record.data.time.size());
  for (const Estimate& e : estimates) {
    solvers::MonteCarloEstimate smoother;
    smoother.estimator = "smoother_" + e.name;
    smoother.parameter = "payload_kg";
    smoother.truth = parameters.payload_mass_kg;
    smoother.estimate = e.mass_smoother;
    smoother.reported_std = e.mass_smoother_sd;
    smoother.converged = e.smoother_summary.converged;
    out->push_back(smoother);
    solvers::MonteCarloEstimate unscaled = smoother;
    unscaled.estimator += "_weights_sd";
    unscaled.reported_std = e.mass_smoother_sd_weights;
    out->push_back(unscaled);
    solvers::MonteCarloEstimate filter;
    filter.estimator = "filter_" + e.name;
    filter.parameter = "payload_kg";
    filter.truth = parameters.payload_mass_kg;
    filter.estimate = e.mass_filter(num_nodes - 1);
    out->push_back(filter);
  }
  return true;
}

}  // namespace

bool RunMonteCarloStudy(const models::RtManipulatorParameters& parameters, std::string* error) {
  solvers::MonteCarloOptions options;
  options.num_seeds = FLAGS_monte_carlo;
  options.first_seed = static_cast<std::uint64_t>(FLAGS_seed);
  options.num_threads = FLAGS_monte_carlo_threads;
  // Progress through the programs' shared stage display (--progress).
  cli::Stage progress("Monte Carlo runs");
  options.on_run = [&progress](const solvers::MonteCarloRun&, int finished, int total) {
    progress.SetTotal(total);
    progress.Set(finished);
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<solvers::MonteCarloRun> runs;
  const solvers::MonteCarloTrial trial =
      [&parameters](int, std::uint64_t seed, std::vector<solvers::MonteCarloEstimate>* out,
                    std::string* why) { return Trial(parameters, seed, out, why); };
  if (!solvers::RunMonteCarlo(1, trial, options, &runs, error)) return false;
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  char title[160];
  std::snprintf(title, sizeof(title),
                "RT manipulator payload: %d noise seeds from %d, noise scale %g", FLAGS_monte_carlo,
                FLAGS_seed, FLAGS_noise_scale);
  if (!stage.Open(FLAGS_out_dir, error) ||
      !solvers::WriteCoverageOutputs(runs, {""}, title, FLAGS_figures, &stage, &rows, error)) {
    return false;
  }
  std::printf("RT manipulator Monte Carlo: true payload %g kg, %d seeds (%d..%d), noise scale %g\n",
              parameters.payload_mass_kg, FLAGS_monte_carlo, FLAGS_seed,
              FLAGS_seed + FLAGS_monte_carlo - 1, FLAGS_noise_scale);
  std::printf("%s", solvers::FormatCoverageTable(rows).c_str());
  std::printf("elapsed %.1f s on %d thread(s)\n", elapsed_s,
              data::ParallelForThreads(FLAGS_monte_carlo_threads, FLAGS_monte_carlo));
  nlohmann::json summary;
  summary["flags"] = FlagsJson();
  summary["monte_carlo"] = {{"seeds", FLAGS_monte_carlo},
                            {"first_seed", FLAGS_seed},
                            {"threads", FLAGS_monte_carlo_threads},
                            {"true_payload_kg", parameters.payload_mass_kg},
                            {"coverage", solvers::CoverageJson(rows)},
                            {"elapsed_s", elapsed_s}};
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

}  // namespace dynid::rt_manipulator_study
