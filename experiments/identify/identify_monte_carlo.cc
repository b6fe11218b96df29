// experiments/identify/identify_monte_carlo — the parametric bootstrap of a real record (see
// identify_monte_carlo.h).
#include "experiments/identify/identify_monte_carlo.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>

#include "dynid/data/output.h"
#include "dynid/solvers/block_bootstrap.h"
#include "dynid/solvers/idim.h"
#include "dynid/solvers/residual_analysis.h"
#include "experiments/common/monte_carlo_cli.h"

namespace dynid::identify {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Relative σ at or below which a parameter counts as determined by the record (the report's
// "what the record determines" uses the same 10 %).
constexpr double kDeterminedRelativeStd = 0.10;

bool Determined(const BootstrapRecord& record, int i) {
  return std::isfinite(record.truth_std[i]) &&
         record.truth_std[i] <= kDeterminedRelativeStd * std::abs(record.truth[i]);
}

// critical_value > 0: the interval is estimate ± critical_value σ (else ± 1.96 σ).
void AppendMethod(const std::string& estimator, const Eigen::VectorXd& estimate,
                  const Eigen::VectorXd& std, bool converged, const BootstrapRecord& record,
                  std::vector<solvers::MonteCarloEstimate>* out, double critical_value = 0.0) {
  for (int i = 0; i < static_cast<int>(record.names.size()); ++i) {
    solvers::MonteCarloEstimate e;
    e.estimator = estimator;
    e.parameter = record.names[i];
    e.truth = record.truth[i];
    e.estimate = i < estimate.size() ? estimate[i] : kNaN;
    e.reported_std = i < std.size() ? std[i] : kNaN;
    if (critical_value > 0.0) {
      e.lower = e.estimate - critical_value * e.reported_std;
      e.upper = e.estimate + critical_value * e.reported_std;
    }
    e.converged = converged;
    out->push_back(e);
  }
}

// Median of the finite values (NaN for none).
double Median(std::vector<double> x) {
  x.erase(std::remove_if(x.begin(), x.end(), [](double v) { return !std::isfinite(v); }), x.end());
  if (x.empty()) return kNaN;
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 == 1 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

}  // namespace

bool MakeBootstrapRecord(const models::SerialRobot& robot, const JointLog& log,
                         const IdentifyResults& results, const BootstrapOptions& bootstrap,
                         BootstrapRecord* record, std::string* error) {
  const MethodEstimate& ls = results.Estimate(Method::kLs);
  if (!ls.available) {
    *error = "the bootstrap's truth is the record's IDIM-LS estimate, which is not available: " +
             ls.message;
    return false;
  }
  solvers::IdimModel model;
  if (!solvers::IdimModel::Create(robot, results.base, {}, &model, error)) return false;
  const solvers::IdimSystem& system = results.system;
  const int ns = log.num_samples(), n = robot.num_joints();
  if (system.q.rows() != ns || system.qd.rows() != ns || system.qdd.rows() != ns) {
    *error = "the identification's differentiated states do not cover the record's samples";
    return false;
  }
  record->names = results.base.names;
  record->truth = ls.base;
  record->truth_std = ls.base_std;
  Eigen::MatrixXd x;
  model.Regressor(system.q, system.qd, system.qdd, &x);
  const Eigen::VectorXd stacked = x * record->truth;  // joint-major: row j·Ns + k
  record->fitted.resize(ns, n);
  record->residual.resize(ns, n);
  record->residual_rms = Eigen::VectorXd::Constant(n, kNaN);
  Eigen::MatrixXd measured_residual(ns, 0);
  for (int j = 0; j < n; ++j) {
    if (!log.measured[j]) {
      record->fitted.col(j).setConstant(kNaN);
      record->residual.col(j).setConstant(kNaN);
      continue;
    }
    record->fitted.col(j) = stacked.segment(static_cast<Eigen::Index>(j) * ns, ns);
    record->residual.col(j) = log.tau.col(j) - record->fitted.col(j);
    record->residual_rms[j] = std::sqrt(record->residual.col(j).squaredNorm() / ns);
    measured_residual.conservativeResize(ns, measured_residual.cols() + 1);
    measured_residual.rightCols(1) = record->residual.col(j);
  }
  if (!measured_residual.allFinite()) {
    *error = "the residual of the IDIM-LS estimate is not finite on every sample";
    return false;
  }
  record->rho = solvers::MeanLagOneAutocorrelation(measured_residual);
  record->ar1_block_length = solvers::MovingBlockLength(measured_residual);
  record->politis_white_block_length = solvers::PolitisWhiteBlockLength(measured_residual);
  record->block_length = bootstrap.block_length > 0 ? std::min(bootstrap.block_length, ns)
                                                    : record->politis_white_block_length;
  return true;
}

JointLog BootstrapLog(const JointLog& log, const BootstrapRecord& record,
                      const BootstrapOptions& bootstrap, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  JointLog out = log;
  out.tau =
      record.fitted + solvers::MovingBlockResample(record.residual, record.block_length, &rng);
  if (bootstrap.encoder_step > 0.0) {
    // 53 random bits → [0, 1): the same draws on every standard library.
    for (Eigen::Index k = 0; k < out.q.rows(); ++k) {
      for (Eigen::Index j = 0; j < out.q.cols(); ++j) {
        const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
        out.q(k, j) += (u - 0.5) * bootstrap.encoder_step;
      }
    }
  }
  out.findings.clear();
  return out;
}

void AppendEstimates(const IdentifyResults& r, const BootstrapRecord& record,
                     solvers::HacCriticalValue hac_critical_value,
                     std::vector<solvers::MonteCarloEstimate>* estimates) {
  const Eigen::VectorXd none;
  for (Method method : {Method::kLs, Method::kWls, Method::kIv}) {
    const MethodEstimate& e = r.Estimate(method);
    if (!e.available) continue;
    const solvers::IdimResult& result =
        method == Method::kLs ? r.ls : (method == Method::kWls ? r.wls : r.iv);
    const std::string name = MethodName(method);
    AppendMethod(name, e.base, e.base_std, result.converged, record, estimates);
    const solvers::HacCovariance* hac = r.Hac(method);
    AppendMethod(name + "_hac", e.base, hac != nullptr ? hac->standard_deviation : none,
                 result.converged, record, estimates,
                 hac != nullptr ? solvers::HacCriticalValue95(*hac, hac_critical_value) : 0.0);
  }
  const MethodEstimate& pc = r.Estimate(Method::kPc);
  if (pc.available) {
    AppendMethod("pc", pc.base, pc.base_std, r.pc.solver.converged, record, estimates);
    const solvers::HacCovariance* hac = r.Hac(Method::kPc);
    AppendMethod("pc_hac", pc.base, hac != nullptr ? hac->standard_deviation : none,
                 r.pc.solver.converged, record, estimates,
                 hac != nullptr ? solvers::HacCriticalValue95(*hac, hac_critical_value) : 0.0);
  } else {
    AppendMethod("pc", none, none, false, record, estimates);
    AppendMethod("pc_hac", none, none, false, record, estimates);
  }
}

bool BootstrapTrial(const models::SerialRobot& robot, const JointLog& log,
                    const BootstrapRecord& record, const BootstrapOptions& bootstrap,
                    const IdentifyOptions& options, std::uint64_t seed,
                    std::vector<solvers::MonteCarloEstimate>* estimates, std::string* error) {
  const JointLog run = BootstrapLog(log, record, bootstrap, seed);
  IdentifyOptions run_options = options;
  run_options.essential = false;
  run_options.num_threads = 1;  // the runs are the parallel unit; results thread-independent
  IdentifyResults results;
  if (!RunIdentify(robot, run, JointLog(), run_options, &results, error)) {
    *error = "bootstrap run " + std::to_string(seed) + ": " + *error;
    return false;
  }
  if (results.base.names != record.names) {
    *error = "bootstrap run " + std::to_string(seed) + ": other base parameters than the record's";
    return false;
  }
  AppendEstimates(results, record, options.hac_critical_value, estimates);
  return true;
}

std::string BootstrapDescription(const BootstrapRecord& record, const BootstrapOptions& bootstrap) {
  char head[600];
  std::snprintf(
      head, sizeof(head),
      "parametric bootstrap of the record: truth = its IDIM-LS estimate; each run keeps the "
      "measured positions%s and takes the torques Phi(q, q', q'') theta + e*, e* a moving-block "
      "resample of the record's LS residual (blocks of %d samples of all measured joints "
      "together, %s; Politis-White length %d, AR(1) plug-in length %d, residual lag-1 "
      "autocorrelation %.3f), identified by the same pipeline. ",
      bootstrap.encoder_step > 0.0 ? " plus a quantisation error (uniform, +- step / 2)" : "",
      record.block_length, bootstrap.block_length > 0 ? "given" : "Politis-White automatic",
      record.politis_white_block_length, record.ar1_block_length, record.rho);
  return std::string(head) +
         "Covers: the torque disturbance with its colour and cross-joint correlation" +
         (bootstrap.encoder_step > 0.0 ? " and the given position quantisation" : "") +
         ". Does NOT cover: model error (the residual is resampled as noise around a model taken "
         "as right), errors in the positions and their derivatives" +
         (bootstrap.encoder_step > 0.0 ? " beyond the quantisation" : "") +
         " (the regressor is otherwise the record's in every run), the variability of the "
         "trajectory.";
}

bool RunIdentifyMonteCarlo(const models::SerialRobot& robot, const JointLog& log,
                           const IdentifyOptions& options, const BootstrapOptions& bootstrap,
                           const std::string& out_dir, std::uint64_t first_seed, bool figures,
                           std::string* error) {
  // The record identified once: the truth and the residual every run resamples.
  IdentifyOptions record_options = options;
  record_options.essential = false;
  IdentifyResults results;
  if (!RunIdentify(robot, log, JointLog(), record_options, &results, error)) return false;
  BootstrapRecord record;
  if (!MakeBootstrapRecord(robot, log, results, bootstrap, &record, error)) return false;
  const std::string description = BootstrapDescription(record, bootstrap);
  // A run depends on its seed and the flags only: journalled, resumable, shared over MPI ranks.
  const solvers::MonteCarloTrial trial = [&](int, std::uint64_t seed,
                                             std::vector<solvers::MonteCarloEstimate>* out,
                                             std::string* why) {
    return BootstrapTrial(robot, log, record, bootstrap, options, seed, out, why);
  };
  cli::MonteCarloJob job;
  if (!cli::RunMonteCarloFromFlags(out_dir, first_seed, 1, trial, &job, error)) return false;
  if (!job.reporting) return true;

  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  char title[200];
  std::snprintf(title, sizeof(title),
                "identify: parametric block bootstrap, %d runs from seed %llu", FLAGS_monte_carlo,
                static_cast<unsigned long long>(first_seed));
  if (!stage.Open(out_dir, error) ||
      !solvers::WriteCoverageOutputs(job.runs, {""}, title, figures, &stage, &rows, error,
                                     cli::MonteCarloSettings())) {
    return false;
  }
  std::printf("identify Monte Carlo: %d bootstrap runs (seeds %llu..%llu)\n%s\n", FLAGS_monte_carlo,
              static_cast<unsigned long long>(first_seed),
              static_cast<unsigned long long>(first_seed + FLAGS_monte_carlo - 1),
              description.c_str());
  // Per estimator: intervals calibrated, median coverage and median spread / mean σ, over all
  // parameters with an interval and over the determined ones (LS relative σ <= 10 % on the
  // record).
  std::map<std::string, int> position;
  for (std::size_t i = 0; i < record.names.size(); ++i) position[record.names[i]] = i;
  std::vector<std::string> estimators;
  for (const solvers::CoverageRow& row : rows) {
    if (std::find(estimators.begin(), estimators.end(), row.estimator) == estimators.end()) {
      estimators.push_back(row.estimator);
    }
  }
  nlohmann::json per_estimator = nlohmann::json::object();
  std::printf(
      "95 %% intervals per estimator: parameters calibrated, median coverage, median spread / "
      "mean reported σ\n%-9s %-32s %-32s %s\n",
      "", "all parameters with an interval", "determined (LS rel. σ <= 10 %)", "non-converged");
  std::printf("%-9s %-32s %-32s %s\n", "estimator", "calibrated  coverage  spread/σ",
              "calibrated  coverage  spread/σ", "runs");
  for (const std::string& estimator : estimators) {
    nlohmann::json entry;
    std::string cells;
    int non_converged = 0;
    for (bool determined_only : {false, true}) {
      int with_interval = 0, calibrated = 0;
      std::vector<double> coverage, ratio;
      for (const solvers::CoverageRow& row : rows) {
        if (row.estimator != estimator) continue;
        non_converged = std::max(non_converged, row.non_converged);
        if (determined_only && !Determined(record, position[row.parameter])) continue;
        if (row.with_interval == 0) continue;
        ++with_interval;
        calibrated += row.calibrated ? 1 : 0;
        coverage.push_back(row.coverage_95);
        ratio.push_back(row.spread / row.mean_reported_std);
      }
      char cell[80];
      std::snprintf(cell, sizeof(cell), "%3d of %-3d %8.2f  %8.2f      ", calibrated, with_interval,
                    Median(coverage), Median(ratio));
      cells += cell;
      entry[determined_only ? "determined" : "all"] = {
          {"parameters_with_interval", with_interval},
          {"calibrated", calibrated},
          {"median_coverage_95",
           std::isfinite(Median(coverage)) ? nlohmann::json(Median(coverage)) : nlohmann::json()},
          {"median_spread_over_reported_std",
           std::isfinite(Median(ratio)) ? nlohmann::json(Median(ratio)) : nlohmann::json()}};
    }
    entry["non_converged_runs"] = non_converged;
    per_estimator[estimator] = entry;
    std::printf("%-9s %s%d\n", estimator.c_str(), cells.c_str(), non_converged);
  }
  // The determined parameters' rows in full (every row is in coverage.csv).
  std::vector<solvers::CoverageRow> determined;
  for (const solvers::CoverageRow& row : rows) {
    if (Determined(record, position[row.parameter])) determined.push_back(row);
  }
  std::printf("determined parameters (all %zu rows in %s/coverage.csv):\n%s", rows.size(),
              out_dir.c_str(), solvers::FormatCoverageTable(determined).c_str());
  std::printf("%s\n", cli::MonteCarloJobLine(job).c_str());

  nlohmann::json summary;
  summary["program"] = "identify";
  nlohmann::json& mc = summary["monte_carlo"] = cli::MonteCarloJobJson(job, out_dir);
  nlohmann::json truth = nlohmann::json::object();
  for (std::size_t i = 0; i < record.names.size(); ++i) {
    truth[record.names[i]] = {
        {"value", record.truth[i]},
        {"ls_std", std::isfinite(record.truth_std[i]) ? nlohmann::json(record.truth_std[i])
                                                      : nlohmann::json()},
        {"determined", Determined(record, i)}};
  }
  nlohmann::json rms = nlohmann::json::object();
  for (int j = 0; j < record.residual_rms.size(); ++j) {
    if (std::isfinite(record.residual_rms[j])) rms[results.joint_names[j]] = record.residual_rms[j];
  }
  mc.update({{"bootstrap", description},
             {"block_length_samples", record.block_length},
             {"block_length_given", bootstrap.block_length > 0},
             {"politis_white_block_length", record.politis_white_block_length},
             {"ar1_plug_in_block_length", record.ar1_block_length},
             {"residual_lag1_autocorrelation", record.rho},
             {"residual_rms", rms},
             {"encoder_step", bootstrap.encoder_step},
             {"identification_samples", log.num_samples()},
             {"truth", truth},
             {"hac_bandwidth", solvers::HacBandwidthName(options.hac_bandwidth)},
             {"hac_critical", solvers::HacCriticalValueName(options.hac_critical_value)},
             {"interval_note",
              std::string("estimate +- 1.96 sigma; ls/wls/iv: classical sigma, *_hac: Newey-West "
                          "HAC sigma of the same estimate (bandwidth rule ") +
                  solvers::HacBandwidthName(options.hac_bandwidth) + ", estimate +- c sigma, c " +
                  (options.hac_critical_value == solvers::HacCriticalValue::kFixedB
                       ? "Kiefer & Vogelsang's fixed-b critical value"
                       : "= 1.96") +
                  "), pc: the physically consistent fit's delta-method sigma; rows with "
                  "calibrated = false "
                  "are NOT calibrated"},
             {"per_estimator", per_estimator},
             {"coverage", solvers::CoverageJson(rows)}});
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

bool LoadIdentifyCoverage(const std::string& path, QuotedCoverage* coverage, std::string* error) {
  *coverage = QuotedCoverage();
  if (path.empty()) return true;
  // Flags of a single run that do not change the Monte Carlo's runs: the method written to
  // parameters.csv (every method runs), the essential selection, the validation file (the runs
  // have none), the bootstrap's own design.
  std::string difference;
  if (!cli::LoadQuotedCoverage(path, "",
                               {"method", "essential", "essential_max_error_increase",
                                "validation_data", "monte_carlo_block", "monte_carlo_encoder_step"},
                               &coverage->rows, &coverage->source, &difference, error)) {
    return false;
  }
  if (!difference.empty()) {
    coverage->withheld = "coverage of " + coverage->source +
                         " not quoted: not measured for this setting (" + difference + ")";
    coverage->rows.clear();
    coverage->source.clear();
  }
  return true;
}

const solvers::CoverageRow* QuotedRow(const QuotedCoverage& coverage, const std::string& estimator,
                                      const std::string& parameter) {
  return solvers::FindCoverageRow(coverage.rows, "", estimator, parameter);
}

std::string IntervalLabel(const solvers::CoverageRow* row) {
  if (row == nullptr) return "coverage not measured";
  char text[96];
  if (row->with_interval == 0) {
    std::snprintf(text, sizeof(text), "no interval (%d runs; %d not converged)", row->runs,
                  row->non_converged);
  } else if (row->with_interval < solvers::kMinCalibrationRuns) {
    std::snprintf(text, sizeof(text), "too few runs (coverage %.2f over %d)", row->coverage_95,
                  row->with_interval);
  } else {
    std::snprintf(text, sizeof(text), "%s (coverage %.2f)",
                  row->calibrated ? "calibrated" : "NOT calibrated", row->coverage_95);
  }
  return text;
}

EstimatorCoverage SummarizeQuotedCoverage(const QuotedCoverage& coverage,
                                          const std::string& estimator,
                                          const std::vector<std::string>& parameters,
                                          int max_worst) {
  EstimatorCoverage summary;
  summary.estimator = estimator;
  std::vector<double> coverages;
  std::vector<std::pair<double, std::string>> not_calibrated;  // coverage, parameter
  for (const std::string& parameter : parameters) {
    const solvers::CoverageRow* row = QuotedRow(coverage, estimator, parameter);
    if (row == nullptr || row->with_interval == 0) continue;
    ++summary.with_interval;
    coverages.push_back(row->coverage_95);
    summary.cover_every_run += row->covered == row->with_interval;
    summary.cover_every_run_expected += std::pow(0.95, row->with_interval);
    if (row->calibrated) {
      ++summary.calibrated;
    } else {
      if (row->with_interval < solvers::kMinCalibrationRuns) ++summary.too_few_runs;
      not_calibrated.emplace_back(row->coverage_95, parameter);
    }
  }
  summary.median_coverage = Median(coverages);
  // The lowest coverages first; equal ones in the parameters' order.
  std::stable_sort(not_calibrated.begin(), not_calibrated.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (int i = 0; i < static_cast<int>(not_calibrated.size()) && i < max_worst; ++i) {
    summary.worst.push_back(not_calibrated[i].second);
    summary.worst_coverage.push_back(not_calibrated[i].first);
  }
  return summary;
}

std::string CoverageConsoleLines(const QuotedCoverage& coverage,
                                 const std::vector<std::string>& parameters,
                                 const std::string& out_dir) {
  if (!coverage.withheld.empty()) return "  " + coverage.withheld + "\n";
  if (coverage.source.empty()) return "";
  std::string out = "measured coverage of the 95 % intervals (" + coverage.source + "):\n";
  for (const char* estimator : kQuotedEstimators) {
    const EstimatorCoverage summary =
        SummarizeQuotedCoverage(coverage, estimator, parameters, kConsoleWorstIntervals);
    if (summary.with_interval == 0) continue;
    char line[160];
    std::snprintf(line, sizeof(line), "  %-7s %d of %d calibrated, median coverage %.2f", estimator,
                  summary.calibrated, summary.with_interval, summary.median_coverage);
    out += line;
    if (summary.cover_every_run > 0) {
      std::snprintf(line, sizeof(line), ", %d cover in every run (%.1f expected)",
                    summary.cover_every_run, summary.cover_every_run_expected);
      out += line;
    }
    if (summary.too_few_runs > 0) {
      out += " (" + std::to_string(summary.too_few_runs) + " over too few runs to judge)";
    }
    if (!summary.worst.empty()) {
      out += "; lowest:";
      for (std::size_t i = 0; i < summary.worst.size(); ++i) {
        char cell[80];
        std::snprintf(cell, sizeof(cell), "%s %s %.2f", i == 0 ? "" : ",", summary.worst[i].c_str(),
                      summary.worst_coverage[i]);
        out += cell;
      }
      const int others =
          summary.with_interval - summary.calibrated - static_cast<int>(summary.worst.size());
      if (others > 0) out += " (+" + std::to_string(others) + " more NOT calibrated)";
    }
    out += "\n";
  }
  out += "  every interval's label: " + out_dir + "/parameters.csv (coverage_label columns), " +
         out_dir + "/summary.json (coverage)\n";
  return out;
}

nlohmann::json CoverageSummaryJson(const QuotedCoverage& coverage,
                                   const std::vector<std::string>& parameters) {
  nlohmann::json out;
  out["source"] = coverage.source;
  if (!coverage.withheld.empty()) out["note"] = coverage.withheld;
  if (coverage.source.empty()) return out;
  nlohmann::json estimators = nlohmann::json::object();
  nlohmann::json per_estimator = nlohmann::json::object();
  for (const char* estimator : kQuotedEstimators) {
    nlohmann::json entry = nlohmann::json::object();
    for (const std::string& parameter : parameters) {
      const solvers::CoverageRow* row = QuotedRow(coverage, estimator, parameter);
      if (row == nullptr) continue;
      nlohmann::json item = solvers::CoverageJson({*row})[0];
      item["label"] = IntervalLabel(row);
      entry[parameter] = item;
    }
    if (!entry.empty()) estimators[estimator] = entry;
    const EstimatorCoverage summary = SummarizeQuotedCoverage(coverage, estimator, parameters,
                                                              static_cast<int>(parameters.size()));
    if (summary.with_interval == 0) continue;
    nlohmann::json worst = nlohmann::json::array();
    for (std::size_t i = 0; i < summary.worst.size(); ++i) {
      worst.push_back({{"parameter", summary.worst[i]},
                       {"coverage_95", std::isfinite(summary.worst_coverage[i])
                                           ? nlohmann::json(summary.worst_coverage[i])
                                           : nlohmann::json()}});
    }
    per_estimator[estimator] = {{"parameters_with_interval", summary.with_interval},
                                {"calibrated", summary.calibrated},
                                {"too_few_runs", summary.too_few_runs},
                                {"cover_every_run", summary.cover_every_run},
                                {"cover_every_run_expected", summary.cover_every_run_expected},
                                {"median_coverage_95", std::isfinite(summary.median_coverage)
                                                           ? nlohmann::json(summary.median_coverage)
                                                           : nlohmann::json()},
                                {"not_calibrated_lowest_first", worst}};
  }
  out["estimators"] = estimators;
  out["per_estimator"] = per_estimator;
  return out;
}

}  // namespace dynid::identify
