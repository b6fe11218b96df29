// experiments/weight_sweep/weight_sweep_monte_carlo — see weight_sweep_monte_carlo.h.
#include "experiments/weight_sweep/weight_sweep_monte_carlo.h"

#include <gflags/gflags.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/common/monte_carlo_cli.h"

DECLARE_string(coverage_csv);

namespace dynid::experiments {

std::string GridPointName(const std::vector<solvers::WeightAxis>& axes, int point) {
  if (axes.empty()) return "base_weights";
  const std::vector<double> values = solvers::GridPointValues(axes, point);
  std::string name;
  for (size_t d = 0; d < axes.size(); ++d) {
    char value[32];
    std::snprintf(value, sizeof(value), "%.6g", values[d]);
    name += (d ? ";" : "") + axes[d].entry.name + "=" + value;
  }
  return name;
}

bool RunWeightMonteCarlo(const SweepSetup& setup, std::string* error) {
  const solvers::WeightGridCase& grid_case = *setup.grid_case;
  const models::ModelInfo& info = grid_case.info();
  const int p = static_cast<int>(info.parameters.size());
  const Eigen::VectorXd& truth = grid_case.true_parameters();
  // A run: the case's experiment with noise seed `seed`, estimated at grid point `point`'s
  // weights (the sweep's estimate of that point and seed).
  const solvers::MonteCarloTrial trial = [&](int point, std::uint64_t seed,
                                             std::vector<solvers::MonteCarloEstimate>* out,
                                             std::string* why) {
    problems::WeightedResidualWeights weights = grid_case.base_weights();
    if (!solvers::ApplyGridPoint(setup.axes, solvers::GridPointValues(setup.axes, point),
                                 FLAGS_relative, p, &weights, why)) {
      return false;
    }
    solvers::GridPointResult result;
    if (!grid_case.Run(weights, static_cast<int>(seed), setup.settings, &result, why)) {
      *why = GridPointName(setup.axes, point) + ", seed " + std::to_string(seed) + ": " + *why;
      return false;
    }
    // Each estimator's σ and the c of its interval ± c σ (NaN: the normal quantile's).
    const double normal = std::nan("");
    const std::tuple<const char*, const Eigen::VectorXd*, double> estimators[] = {
        {"smoother", &result.standard_deviation, normal},
        {kScaledEstimator, &result.scaled_standard_deviation, normal},
        {kSandwichEstimator, &result.sandwich_standard_deviation, normal},
        {kHacEstimator, &result.hac_standard_deviation, result.hac_critical_value_95}};
    for (const auto& [estimator, standard_deviation, c] : estimators) {
      for (int j = 0; j < p; ++j) {
        solvers::MonteCarloEstimate e;
        e.estimator = estimator;
        e.parameter = info.parameters[j].name;
        e.truth = truth(j);
        e.estimate = result.theta(j);
        e.reported_std = (*standard_deviation)(j);
        if (!std::isnan(c)) {
          e.lower = e.estimate - c * e.reported_std;
          e.upper = e.estimate + c * e.reported_std;
        }
        e.converged = result.converged;
        out->push_back(e);
      }
    }
    // The solver's iterations, kept with the run outside the coverage statistics.
    solvers::MonteCarloEstimate iterations;
    iterations.estimator = "smoother";
    iterations.parameter = "iterations";
    iterations.estimate = result.iterations;
    iterations.converged = result.converged;
    iterations.measure = true;
    out->push_back(iterations);
    return true;
  };
  cli::MonteCarloJob job;
  if (!cli::RunMonteCarloFromFlags(FLAGS_out_dir, static_cast<std::uint64_t>(FLAGS_first_seed),
                                   setup.num_points, trial, &job, error)) {
    return false;
  }
  if (!job.reporting) return true;

  std::vector<std::string> names;
  for (int point = 0; point < setup.num_points; ++point) {
    names.push_back(GridPointName(setup.axes, point));
  }
  const std::string where = setup.axes.empty() ? std::string("the base weights")
                                               : std::to_string(setup.num_points) + " grid points";
  const std::string title = "weight_sweep " + grid_case.name() + ": " +
                            std::to_string(FLAGS_monte_carlo) + " seeds from " +
                            std::to_string(FLAGS_first_seed) + " at " + where;
  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  if (!stage.Open(FLAGS_out_dir, error) ||
      !solvers::WriteCoverageOutputs(job.runs, names, title, FLAGS_figures, &stage, &rows, error,
                                     job.settings)) {
    return false;
  }
  std::printf(
      "weight_sweep Monte Carlo: case %s (%s), %d nodes, at %s; smoother: σ = sqrt(diag S⁻¹) "
      "(weights as inverse variances), smoother_scaled: × sqrt(residual variance factor), the "
      "sweep's predicted sd, smoother_sandwich: the sandwich with a variance factor per term, "
      "smoother_hac: its HAC form (± fixed-b c σ)\n",
      grid_case.name().c_str(), grid_case.description().c_str(), grid_case.num_nodes(),
      where.c_str());
  std::printf("%s", solvers::FormatCoverageTable(rows).c_str());
  std::printf("%s\n", cli::MonteCarloJobLine(job).c_str());

  nlohmann::json summary;
  summary["flags"] = FlagsJson(job.threads, job.ranks);
  summary["case"] = {{"name", grid_case.name()},
                     {"description", grid_case.description()},
                     {"model", info.name},
                     {"num_nodes", grid_case.num_nodes()}};
  nlohmann::json& monte_carlo = summary["monte_carlo"] = cli::MonteCarloJobJson(job, FLAGS_out_dir);
  monte_carlo["scenarios"] = names;
  monte_carlo["estimators"] = {
      {"smoother", "sigma = sqrt(diag S^-1), the weights read as inverse variances"},
      {kScaledEstimator,
       "the same sigma x sqrt(residual variance factor): the sweep's predicted sd"},
      {kSandwichEstimator,
       "the sandwich covariance with a variance factor per term of the functional, each "
       "estimated from its residuals and redundancy"},
      {kHacEstimator,
       "the sandwich's HAC form: the terms' residual scores summed per sample, Bartlett "
       "weights, interval +- the fixed-b critical value times sigma"}};
  monte_carlo["coverage"] = solvers::CoverageJson(rows);
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

bool LoadSweepCoverage(QuotedCoverage* coverage, std::string* error) {
  coverage->rows.clear();
  coverage->withheld.clear();
  // The grid selects rows by their scenario name; the seeds, the observability analysis and the
  // sweep's threads do not change a run.
  std::string difference;
  if (!cli::LoadQuotedCoverage(FLAGS_coverage_csv, "weight_sweep/coverage.csv",
                               {"grid", "seeds", "first_seed", "observability", "list_weights"},
                               &coverage->rows, &coverage->source, &difference, error)) {
    return false;
  }
  if (!difference.empty()) {
    coverage->withheld = "coverage not measured for this setting (" + difference + ")";
    coverage->rows.clear();
  }
  return true;
}

}  // namespace dynid::experiments
