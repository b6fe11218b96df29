// experiments/xy_table_study/xy_table_monte_carlo — the study's Monte Carlo (see
// xy_table_monte_carlo.h).
#include "experiments/xy_table_study/xy_table_monte_carlo.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/xy_table_study/xy_table_case.h"
#include "experiments/xy_table_study/xy_table_flags.h"
#include "experiments/xy_table_study/xy_table_record.h"
#include "experiments/xy_table_study/xy_table_stages.h"

namespace dynid::xy_table_study {
namespace {

const char* const kParameterNames[5] = {"J1", "J2", "w1", "w2", "k"};

// What a run records beside its estimates, as measures (MonteCarloEstimate::measure, journalled
// with the run): the true system's clamped mode frequencies (Hz) at the start of the interval.
const char* const kTrueSystem = "true_system";
const char* const kModeNames[2] = {"spindle_mode_hz", "belt_mode_hz"};
// ... and per stage and parameter the HAC σ over its white-noise reference.
const char* const kHacExcessSuffix = "_hac_excess";

// The true [J1, J2, w1, w2, k_s] of a simulated system.
Eigen::VectorXd TrueTheta(const XyTableTrueSystem& system) {
  Eigen::VectorXd theta(5);
  theta << system.table.inertia1_kg_m2, system.table.inertia2_kg_m2, system.table.friction1_nm,
      system.table.friction2_nm, system.spindle_stiffness_nm_per_rad;
  return theta;
}

// The estimator name of stage 3 at an extra acceleration weight.
std::string ExtraWeightEstimator(double weight) {
  char name[80];
  std::snprintf(name, sizeof(name), "%s_w%g", XyStageName(XyStage::kFlexibleWithAccelerations),
                weight);
  return name;
}

// The estimates of one stage result under the estimator name `estimator`.
void AddEstimates(const StageResult& stage, const std::string& estimator,
                  const Eigen::VectorXd& truth, std::vector<solvers::MonteCarloEstimate>* out) {
  for (int i = 0; i < stage.theta.size(); ++i) {
    solvers::MonteCarloEstimate e;
    e.estimator = estimator;
    e.parameter = kParameterNames[i];
    e.truth = truth(i);
    e.estimate = stage.theta(i);
    if (i < stage.sd.size()) {
      e.reported_std = stage.sd(i);
      e.lower = e.estimate - stage.critical_value_95 * e.reported_std;
      e.upper = e.estimate + stage.critical_value_95 * e.reported_std;
    }
    e.converged = stage.summary.converged;
    out->push_back(e);
  }
  // With the HAC form reported, the white sandwich beside it (estimator "<stage>_sandwich"), and
  // the HAC σ over its white-noise reference as a measure ("<parameter>_hac_excess").
  const Eigen::VectorXd& white = stage.sandwich.standard_deviation;
  if (stage.covariance != solvers::CovarianceScaling::kHac || white.size() != stage.theta.size()) {
    return;
  }
  for (int i = 0; i < stage.sandwich.hac_excess.size(); ++i) {
    solvers::MonteCarloEstimate e;
    e.estimator = estimator;
    e.parameter = std::string(kParameterNames[i]) + kHacExcessSuffix;
    e.estimate = stage.sandwich.hac_excess(i);
    e.converged = stage.summary.converged;
    e.measure = true;
    out->push_back(e);
  }
  for (int i = 0; i < stage.theta.size(); ++i) {
    solvers::MonteCarloEstimate e;
    e.estimator = estimator + "_sandwich";
    e.parameter = kParameterNames[i];
    e.truth = truth(i);
    e.estimate = stage.theta(i);
    e.reported_std = white(i);
    e.converged = stage.summary.converged;
    out->push_back(e);
  }
}

// One seed: the record (to the end of the interval), the three stages and stage 3 at the extra
// weights, their estimates.
bool Trial(std::uint64_t seed, const std::vector<double>& extra_weights,
           std::vector<solvers::MonteCarloEstimate>* out, std::string* error) {
  const XyTableCaseOptions case_options =
      SimulationCaseOptions(static_cast<unsigned>(seed), TruthSeedOfRun(seed));
  const double duration_s =
      std::min(FLAGS_duration_s, FLAGS_interval_end_s + 2.0 * FLAGS_sample_period_s);
  Record record;
  if (!SimulateRecord(case_options, duration_s, &record, error)) return false;
  const Eigen::VectorXd q0 = record.simulation.positions.row(record.first).transpose();
  const Eigen::VectorXd modes = XyTableClampedFrequencies(case_options.system, q0);
  for (int i = 0; i < 2 && i < modes.size(); ++i) {
    solvers::MonteCarloEstimate mode;
    mode.estimator = kTrueSystem;
    mode.parameter = kModeNames[i];
    mode.estimate = modes(i);
    mode.measure = true;
    out->push_back(mode);
  }
  std::vector<StageResult> stages;
  std::vector<problems::WeightedResidualWeights> weights;
  if (!RunIdentificationStages(record, &stages, &weights, error)) {
    *error = "seed " + std::to_string(seed) + ": " + *error;
    return false;
  }
  const Eigen::VectorXd truth = TrueTheta(case_options.system);
  for (const StageResult& stage : stages) AddEstimates(stage, XyStageName(stage.stage), truth, out);
  // Stage 3 at the extra weights, from the start of stages 2 and 3 (rigid estimates, thesis k0).
  const models::XyTableFlexible flexible(record.parameters);
  Eigen::VectorXd theta0 = XyTableThesisInitialGuess(true);
  theta0.head<4>() = stages[0].theta;
  for (double weight : extra_weights) {
    XyTableWeightOptions weight_options = record.case_options.weights;
    weight_options.acceleration_weight = weight;
    const problems::WeightedResidualWeights w = XyTableWeights(
        XyStage::kFlexibleWithAccelerations, record.d, record.parameters, weight_options);
    StageResult result;
    if (!RunStage(flexible, XyStage::kFlexibleWithAccelerations, record.d, w, record.parameters,
                  theta0, problems::ParameterMode::kConstant, &result, error)) {
      *error = "seed " + std::to_string(seed) + ", acceleration weight " + std::to_string(weight) +
               ": " + *error;
      return false;
    }
    AddEstimates(result, ExtraWeightEstimator(weight), truth, out);
  }
  return true;
}

// The q-quantile of x (linear interpolation between order statistics); NaN for no values.
double Quantile(std::vector<double> x, double q) {
  if (x.empty()) return std::nan("");
  std::sort(x.begin(), x.end());
  const double position = q * static_cast<double>(x.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, x.size() - 1);
  return x[below] + (position - static_cast<double>(below)) * (x[above] - x[below]);
}

// Median, 10 % and 90 % quantiles, min and max of x as JSON and as "median [p10, p90]" text.
nlohmann::json Spread(const std::vector<double>& x) {
  return {{"runs", x.size()},        {"median", Quantile(x, 0.5)}, {"p10", Quantile(x, 0.1)},
          {"p90", Quantile(x, 0.9)}, {"min", Quantile(x, 0.0)},    {"max", Quantile(x, 1.0)}};
}

std::string SpreadText(const nlohmann::json& s, const char* format) {
  if (s["runs"].get<std::size_t>() == 0) return "- (no converged run)";
  char text[160];
  const std::string f = std::string(format) + " [" + format + ", " + format + "]";
  std::snprintf(text, sizeof(text), f.c_str(), s["median"].get<double>(), s["p10"].get<double>(),
                s["p90"].get<double>());
  return text;
}

}  // namespace

bool RunMonteCarloStudy(const std::vector<double>& extra_weights, std::string* error) {
  // A run depends on its seed and the flags only (the drawn truth too: TruthSeedOfRun), so the
  // runs are journalled and resumable, and shared out over MPI ranks by xy_table_study_mpi.
  const solvers::MonteCarloTrial trial =
      [&extra_weights](int, std::uint64_t seed, std::vector<solvers::MonteCarloEstimate>* out,
                       std::string* why) { return Trial(seed, extra_weights, out, why); };
  cli::MonteCarloJob job;
  if (!cli::RunMonteCarloFromFlags(FLAGS_out_dir, static_cast<std::uint64_t>(FLAGS_seed), 1, trial,
                                   &job, error)) {
    return false;
  }
  if (!job.reporting) return true;
  const std::vector<solvers::MonteCarloRun>& runs = job.runs;

  // Relative errors (θ̂ − θ)/θ per estimator and parameter; the acceleration effect: the
  // relative change of each parameter from stage 2 (flexible) to stage 3 (with accelerations) in
  // the same run, both converged.
  // The estimators with accelerations: stage 3 at --acceleration_weight and at the extra weights.
  std::vector<std::pair<std::string, double>> with_accelerations = {
      {XyStageName(XyStage::kFlexibleWithAccelerations), FLAGS_acceleration_weight}};
  for (double weight : extra_weights) {
    with_accelerations.emplace_back(ExtraWeightEstimator(weight), weight);
  }
  std::map<std::string, std::vector<double>> relative_error;
  std::map<std::string, std::map<std::string, std::vector<double>>> acceleration_effect;
  for (const solvers::MonteCarloRun& run : runs) {
    std::map<std::string, std::map<std::string, double>> converged;  // estimator → parameter
    for (const solvers::MonteCarloEstimate& e : run.estimates) {
      if (e.measure || !e.converged || !std::isfinite(e.estimate)) continue;
      const std::string key = e.estimator + " " + e.parameter;
      relative_error[key].push_back(100.0 * (e.estimate - e.truth) / e.truth);
      converged[e.estimator][e.parameter] = e.estimate;
    }
    const auto& flexible = converged[XyStageName(XyStage::kFlexible)];
    for (const auto& [estimator, weight] : with_accelerations) {
      for (const auto& [name, value] : flexible) {
        const auto it = converged[estimator].find(name);
        if (it == converged[estimator].end()) continue;
        acceleration_effect[estimator][name].push_back(100.0 * (it->second - value) / value);
      }
    }
  }
  std::vector<double> belt_mode_hz, spindle_mode_hz;
  for (const solvers::MonteCarloRun& run : runs) {
    for (const solvers::MonteCarloEstimate& e : run.estimates) {
      if (!e.measure || e.estimator != kTrueSystem) continue;
      if (e.parameter == kModeNames[0]) spindle_mode_hz.push_back(e.estimate);
      if (e.parameter == kModeNames[1]) belt_mode_hz.push_back(e.estimate);
    }
  }

  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  const std::string mismatch = ModelMismatchDescription();
  char title[240];
  std::snprintf(title, sizeof(title), "xy-table stages: %d seeds from %d, truth %s%s%s",
                FLAGS_monte_carlo, FLAGS_seed, FLAGS_truth == "drawn" ? "drawn" : "thesis",
                mismatch.empty() ? "" : ", ", mismatch.c_str());
  // With drawn truths every run has its own truth, by design: the statistics use each run's
  // truth, and the summary's per-row warning about differing truths is not shown.
  const int log_level = FLAGS_minloglevel;
  if (FLAGS_truth == "drawn") FLAGS_minloglevel = std::max(log_level, 2);
  const bool written =
      stage.Open(FLAGS_out_dir, error) &&
      solvers::WriteCoverageOutputs(runs, {MismatchScenarioName()}, title, FLAGS_figures, &stage,
                                    &rows, error, cli::MonteCarloSettings());
  FLAGS_minloglevel = log_level;
  if (!written) return false;
  std::printf("xy_table_study Monte Carlo: %d seeds (noise --seed %d + 0 .. %d), truth %s",
              FLAGS_monte_carlo, FLAGS_seed, FLAGS_monte_carlo - 1, FLAGS_truth.c_str());
  if (FLAGS_truth == "drawn") {
    std::printf(
        " (table of noise seed s drawn with --truth_seed %d + s - %u, factors uniform "
        "within +-%g)",
        FLAGS_truth_seed, kDefaultNoiseSeed, FLAGS_truth_spread);
  }
  std::printf("\nmodel mismatch: %s\n",
              ModelMismatchJson()["description"].get<std::string>().c_str());
  std::printf(
      "intervals: %s; truth of k = the spindle's k_s (the estimate is spindle and belts in "
      "series)%s\n",
      CovarianceDescription(SolveSettingsFromFlags().covariance).c_str(),
      FLAGS_truth == "drawn" ? "; bias, spread and coverage use each run's own truth" : "");
  std::printf("%s", solvers::FormatCoverageTable(rows).c_str());
  nlohmann::json relative = nlohmann::json::object();
  std::printf("relative error (estimate − truth)/truth [%%], median [10 %%, 90 %%]:\n");
  for (const solvers::CoverageRow& row : rows) {  // the coverage table's order
    const std::string key = row.estimator + " " + row.parameter;
    relative[key] = Spread(relative_error[key]);
    std::printf("  %-40s %s\n", key.c_str(), SpreadText(relative[key], "%+.2f").c_str());
  }
  // The thesis's change from its flexible to its flexible-with-accelerations estimates.
  const Eigen::VectorXd thesis2 = XyTablePublishedEstimate(XyStage::kFlexible);
  const Eigen::VectorXd thesis3 = XyTablePublishedEstimate(XyStage::kFlexibleWithAccelerations);
  nlohmann::json effect = nlohmann::json::array();
  std::printf(
      "acceleration measurements: change flexible -> with accelerations [%%], median "
      "[10 %%, 90 %%] over the runs where both converged (thesis: its flexible -> "
      "flexible with accelerations at weight 2.5e-5)\n  %-44s",
      "estimator (acceleration weight)");
  for (const char* name : kParameterNames) std::printf(" %-26s", name);
  std::printf("\n");
  for (const auto& [estimator, weight] : with_accelerations) {
    nlohmann::json entry = {{"estimator", estimator}, {"acceleration_weight", weight}};
    char label[120];
    std::snprintf(label, sizeof(label), "%s (%g)", estimator.c_str(), weight);
    std::printf("  %-44s", label);
    for (int i = 0; i < 5; ++i) {
      const std::string name = kParameterNames[i];
      entry[name] = Spread(acceleration_effect[estimator][name]);
      std::printf(" %-26s", SpreadText(entry[name], "%+.3f").c_str());
    }
    std::printf("\n");
    effect.push_back(entry);
  }
  nlohmann::json thesis_effect;
  std::printf("  %-44s", "thesis (2.5e-5, real data)");
  for (int i = 0; i < 5; ++i) {
    const double thesis = 100.0 * (thesis3(i) - thesis2(i)) / thesis2(i);
    thesis_effect[kParameterNames[i]] = thesis;
    char cell[32];
    std::snprintf(cell, sizeof(cell), "%+.1f", thesis);
    std::printf(" %-26s", cell);
  }
  std::printf("\n");
  nlohmann::json modes = {{"spindle_mode_hz", Spread(spindle_mode_hz)},
                          {"belt_mode_hz", Spread(belt_mode_hz)}};
  if (!belt_mode_hz.empty()) {
    std::printf(
        "true clamped modes at the interval start [Hz], median [10 %%, 90 %%]: spindle %s, "
        "belt %s\n",
        SpreadText(modes["spindle_mode_hz"], "%.2f").c_str(),
        SpreadText(modes["belt_mode_hz"], "%.2f").c_str());
  }
  // How much of the HAC intervals' width the fit alone gives: HAC σ over the HAC σ of white
  // errors with the terms' variances through the same fit (converged runs).
  nlohmann::json excess = nlohmann::json::object();
  for (const solvers::CoverageRow& row : rows) {
    const nlohmann::json spread =
        cli::MeasureSpread(runs, row.estimator, row.parameter + kHacExcessSuffix);
    if (spread["runs"].get<std::size_t>() == 0) continue;
    if (excess.empty()) {
      std::printf(
          "HAC sigma / its white-noise reference (about 1: the width is the fit's own; above 1: "
          "persistent error in the residuals), median [10 %%, 90 %%]:\n");
    }
    const std::string key = row.estimator + " " + row.parameter;
    excess[key] = spread;
    std::printf("  %-40s %s\n", key.c_str(), cli::MeasureSpreadText(spread, "%.2f").c_str());
  }
  std::printf("%s\n", cli::MonteCarloJobLine(job).c_str());
  nlohmann::json summary;
  summary["flags"] = FlagsJson(true);
  summary["model_mismatch"] = ModelMismatchJson();
  nlohmann::json& monte_carlo = summary["monte_carlo"] = cli::MonteCarloJobJson(job, FLAGS_out_dir);
  monte_carlo.update(
      {{"truth", FLAGS_truth},
       {"first_truth_seed", TruthSeedOfRun(static_cast<std::uint64_t>(FLAGS_seed))},
       {"interval_note", CovarianceDescription(SolveSettingsFromFlags().covariance) +
                             "; truth of k is the spindle's k_s; rows with calibrated = false "
                             "are NOT calibrated"},
       {"coverage", solvers::CoverageJson(rows)},
       {"relative_error_percent", relative},
       {"acceleration_effect_percent", effect},
       {"thesis_acceleration_effect_percent", thesis_effect},
       {"true_clamped_modes", modes},
       {"hac_excess", excess}});
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

}  // namespace dynid::xy_table_study
