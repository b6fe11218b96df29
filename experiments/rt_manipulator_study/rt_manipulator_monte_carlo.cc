// experiments/rt_manipulator_study/rt_manipulator_monte_carlo — the study's Monte Carlo (see
// rt_manipulator_monte_carlo.h).
#include "experiments/rt_manipulator_study/rt_manipulator_monte_carlo.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/rt_manipulator_study/rt_manipulator_estimates.h"
#include "experiments/rt_manipulator_study/rt_manipulator_flags.h"
#include "experiments/rt_manipulator_study/rt_manipulator_record.h"

namespace dynid::rt_manipulator_study {
namespace {

// One seed: the record, both weightings, filter and smoother; the payload estimates.
bool Trial(const models::RtManipulatorParameters& parameters, std::uint64_t seed,
           std::vector<solvers::MonteCarloEstimate>* out, std::string* error) {
  const Record record = SimulateRecord(parameters, static_cast<int>(seed));
  const models::RtManipulatorRigid model(EstimatorParameters(parameters));
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
    smoother.converged = e.smoother_summary.converged;
    solvers::MonteCarloEstimate unscaled = smoother;
    unscaled.estimator += "_weights_sd";
    unscaled.reported_std = e.mass_smoother_sd_weights;
    // The reported covariance form under the estimator's name, the other two beside it
    // ("smoother_<weighting>_<form>"); the HAC form's interval is ± c σ (fixed-b c).
    const auto add = [&](solvers::CovarianceScaling form, const std::string& name) {
      solvers::MonteCarloEstimate row = smoother;
      row.estimator = name;
      row.reported_std = ReportedSd(e, form);
      if (form == solvers::CovarianceScaling::kHac) {
        row.lower = row.estimate - e.mass_smoother_hac_c * row.reported_std;
        row.upper = row.estimate + e.mass_smoother_hac_c * row.reported_std;
      }
      out->push_back(row);
    };
    add(e.covariance, smoother.estimator);
    for (const solvers::CovarianceScaling form :
         {solvers::CovarianceScaling::kHac, solvers::CovarianceScaling::kSandwich,
          solvers::CovarianceScaling::kVarianceFactor}) {
      if (form != e.covariance) {
        add(form, smoother.estimator + "_" + solvers::CovarianceScalingName(form));
      }
    }
    out->push_back(unscaled);
    // The HAC σ over its white-noise reference, as a measure.
    solvers::MonteCarloEstimate excess = smoother;
    excess.parameter = "payload_hac_excess";
    excess.truth = NAN;
    excess.estimate = e.mass_smoother_hac_excess;
    excess.measure = true;
    out->push_back(excess);
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
  const solvers::MonteCarloTrial trial =
      [&parameters](int, std::uint64_t seed, std::vector<solvers::MonteCarloEstimate>* out,
                    std::string* why) { return Trial(parameters, seed, out, why); };
  cli::MonteCarloJob job;
  if (!cli::RunMonteCarloFromFlags(FLAGS_out_dir, static_cast<std::uint64_t>(FLAGS_seed), 1, trial,
                                   &job, error)) {
    return false;
  }
  if (!job.reporting) return true;
  const std::vector<solvers::MonteCarloRun>& runs = job.runs;

  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  char title[160];
  std::snprintf(title, sizeof(title),
                "RT manipulator payload: %d noise seeds from %d, noise scale %g", FLAGS_monte_carlo,
                FLAGS_seed, FLAGS_noise_scale);
  if (!stage.Open(FLAGS_out_dir, error) ||
      !solvers::WriteCoverageOutputs(runs, {""}, title, FLAGS_figures, &stage, &rows, error,
                                     job.settings)) {
    return false;
  }
  std::printf("RT manipulator Monte Carlo: true payload %g kg, %s; noise scale %g\n",
              parameters.payload_mass_kg, cli::MonteCarloJobLine(job).c_str(), FLAGS_noise_scale);
  if (!ModelMismatchDescription().empty()) {
    std::printf("MODEL MISMATCH (the simulator keeps the truth): %s\n",
                ModelMismatchDescription().c_str());
  }
  std::printf("%s", solvers::FormatCoverageTable(rows).c_str());
  // Per weighting, the smoother's HAC σ over its white-noise reference.
  nlohmann::json excess = nlohmann::json::object();
  for (const solvers::CoverageRow& row : rows) {
    if (excess.contains(row.estimator)) continue;
    const nlohmann::json spread = cli::MeasureSpread(runs, row.estimator, "payload_hac_excess");
    if (spread["runs"].get<std::size_t>() == 0) continue;
    excess[row.estimator] = spread;
    std::printf(
        "%s: HAC sigma / its white-noise reference %s (median [10 %%, 90 %%]; about 1: the width "
        "is the fit's own)\n",
        row.estimator.c_str(), cli::MeasureSpreadText(spread, "%.2f").c_str());
  }
  nlohmann::json summary;
  summary["flags"] = FlagsJson();
  summary["monte_carlo"] = cli::MonteCarloJobJson(job, FLAGS_out_dir);
  summary["monte_carlo"]["true_payload_kg"] = parameters.payload_mass_kg;
  summary["monte_carlo"]["coverage"] = solvers::CoverageJson(rows);
  summary["monte_carlo"]["smoother_hac_excess"] = excess;
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

}  // namespace dynid::rt_manipulator_study
