// experiments/scara_study/scara_monte_carlo — the study's Monte Carlo (see scara_monte_carlo.h).
#include "experiments/scara_study/scara_monte_carlo.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/models/scara3.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/scara_study/scara_estimators.h"
#include "experiments/scara_study/scara_flags.h"
#include "experiments/scara_study/scara_published.h"
#include "experiments/scara_study/scara_record.h"

namespace dynid::scara_study {
namespace {

// The four parameters of one estimate; `std` the reported σ per parameter (NaN: none), the
// interval ± c σ (without c, the normal quantile's).
void AddEstimate(const std::string& estimator, const Eigen::Vector4d& truth,
                 const Eigen::Vector4d& p, const Eigen::Vector4d& std, bool converged,
                 std::vector<solvers::MonteCarloEstimate>* out, double c = std::nan("")) {
  for (int i = 0; i < 4; ++i) {
    solvers::MonteCarloEstimate e;
    e.estimator = estimator;
    e.parameter = kParamNames[i];
    e.truth = truth(i);
    e.estimate = p(i);
    e.reported_std = std(i);
    if (std::isfinite(c)) {
      e.lower = e.estimate - c * e.reported_std;
      e.upper = e.estimate + c * e.reported_std;
    }
    e.converged = converged;
    out->push_back(e);
  }
}

// One seed: the record, every estimator on it; the estimates of the four parameters.
bool Trial(const Eigen::Vector3d& torque_noise, std::uint64_t seed,
           std::vector<solvers::MonteCarloEstimate>* out, std::string* error) {
  const MultisineReference reference(FLAGS_duration_s);
  Record record;
  if (!SimulateRecord(reference, torque_noise, seed, &record, error)) return false;
  EstimatorRuns runs(record);
  Results results;
  if (!RunEstimators(record, &runs, &results, error)) {
    *error = "seed " + std::to_string(seed) + ": " + *error;
    return false;
  }
  const double nan = std::nan("");
  for (const Estimate& e : results.estimates) {
    Eigen::Vector4d std = Eigen::Vector4d::Constant(nan);
    if (e.has_cov) std = e.cov.diagonal().cwiseMax(0.0).cwiseSqrt();
    bool converged = true;
    if (e.method == "WR_smoother") {
      const nlohmann::json& wr = results.summary["wr_smoother"];
      converged = wr["converged"].get<bool>();
      AddEstimate(e.method, record.truth, e.p, std, converged, out);
      // The same estimate with the other reported σ: one variance factor, the metric of the
      // weights alone, and the sandwich's HAC form (interval ± its fixed-b c).
      struct OtherStd {
        const char* name;
        const char* key;
        double c;
      };
      for (const OtherStd& other :
           {OtherStd{"WR_smoother_variance_factor", "std_variance_factor", nan},
            OtherStd{"WR_smoother_weights_sd", "std_in_metric_of_weights", nan},
            OtherStd{"WR_smoother_hac", "std_hac", wr["hac_critical_value_95"].get<double>()}}) {
        Eigen::Vector4d other_std = Eigen::Vector4d::Constant(nan);
        if (wr[other.key].is_object()) {
          for (int i = 0; i < 4; ++i) other_std(i) = wr[other.key][kParamNames[i]].get<double>();
        }
        AddEstimate(other.name, record.truth, e.p, other_std, converged, out, other.c);
      }
      // The HAC σ over its white-noise reference, as a measure (summarised by the study).
      if (wr["hac"].is_object() && wr["hac"]["excess"].is_object()) {
        for (int i = 0; i < 4; ++i) {
          solvers::MonteCarloEstimate excess;
          excess.estimator = "WR_smoother_hac";
          excess.parameter = std::string(kParamNames[i]) + "_excess";
          excess.estimate = wr["hac"]["excess"][kParamNames[i]].get<double>();
          excess.converged = converged;
          excess.measure = true;
          out->push_back(excess);
        }
      }
      continue;
    }
    AddEstimate(e.method, record.truth, e.p, std, converged, out);
  }
  return true;
}

// The scenario column of coverage.csv: empty for the ideal model, "mismatch_<name>" with
// --mismatch=<name>.
std::string ScenarioName() { return FLAGS_mismatch == "none" ? "" : "mismatch_" + FLAGS_mismatch; }

}  // namespace

bool RunMonteCarloStudy(const Eigen::Vector3d& torque_noise, std::string* error) {
  cli::MonteCarloJob job;
  const solvers::MonteCarloTrial trial =
      [&torque_noise](int, std::uint64_t seed, std::vector<solvers::MonteCarloEstimate>* out,
                      std::string* why) { return Trial(torque_noise, seed, out, why); };
  if (!cli::RunMonteCarloFromFlags(FLAGS_out_dir, FLAGS_seed, 1, trial, &job, error)) {
    return false;
  }
  if (!job.reporting) return true;
  const std::vector<solvers::MonteCarloRun>& runs = job.runs;

  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  char title[200];
  std::snprintf(title, sizeof(title),
                "SCARA estimators: %d noise seeds from %llu, %g s record, noise scale %g%s",
                FLAGS_monte_carlo, static_cast<unsigned long long>(FLAGS_seed), FLAGS_duration_s,
                FLAGS_noise_scale,
                FLAGS_mismatch == "gravity"    ? ", estimators' g +10 %"
                : FLAGS_mismatch == "friction" ? ", unmodelled viscous friction"
                                               : "");
  if (!stage.Open(FLAGS_out_dir, error) ||
      !solvers::WriteCoverageOutputs(runs, {ScenarioName()}, title, FLAGS_figures, &stage, &rows,
                                     error, job.settings)) {
    return false;
  }
  std::printf("SCARA Monte Carlo: %s; %g s record, noise scale %g\n",
              cli::MonteCarloJobLine(job).c_str(), FLAGS_duration_s, FLAGS_noise_scale);
  std::printf("%s", solvers::FormatCoverageTable(rows).c_str());
  // The smoother's HAC σ over their white-noise reference, per parameter over the converged runs.
  nlohmann::json excess = nlohmann::json::object();
  std::string excess_line;
  for (const char* name : kParamNames) {
    const nlohmann::json spread =
        cli::MeasureSpread(runs, "WR_smoother_hac", std::string(name) + "_excess");
    if (spread["runs"].get<std::size_t>() == 0) continue;
    excess[name] = spread;
    excess_line += std::string(" ") + name + " " + cli::MeasureSpreadText(spread, "%.2f");
  }
  if (!excess_line.empty()) {
    std::printf(
        "WR_smoother_hac: HAC sigma / its white-noise reference, median [10 %%, 90 %%] (about 1: "
        "the width is the fit's own):%s\n",
        excess_line.c_str());
  }
  nlohmann::json summary;
  summary["flags"] = EstimatorFlags();
  summary["flags"]["duration_s"] = FLAGS_duration_s;
  summary["flags"]["dt"] = FLAGS_dt;
  summary["flags"]["pid_bandwidth_hz"] = FLAGS_pid_bandwidth_hz;
  summary["flags"]["wr_smoother"] = FLAGS_wr_smoother;
  // The simulated robot's base parameters (SimulateRecord; --mismatch never changes them).
  const Eigen::Vector4d truth = models::Scara3BaseParametersFromLinks().AsVector();
  nlohmann::json true_parameters;
  for (int i = 0; i < 4; ++i) true_parameters[kParamNames[i]] = truth(i);
  summary["monte_carlo"] = cli::MonteCarloJobJson(job, FLAGS_out_dir);
  summary["monte_carlo"]["true_parameters"] = true_parameters;
  summary["monte_carlo"]["coverage"] = solvers::CoverageJson(rows);
  summary["monte_carlo"]["wr_smoother_hac_excess"] = excess;
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

}  // namespace dynid::scara_study
