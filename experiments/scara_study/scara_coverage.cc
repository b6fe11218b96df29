// experiments/scara_study/scara_coverage — the measured coverage quoted beside a single run's σ
// (see scara_coverage.h).
#include "experiments/scara_study/scara_coverage.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "experiments/common/monte_carlo_cli.h"
#include "experiments/scara_study/scara_flags.h"
#include "experiments/scara_study/scara_published.h"

namespace dynid::scara_study {
namespace {

// A calibrated σ more than this many times the spread of the estimates over the seeds is called
// conservative in the label.
constexpr double kConservativeRatio = 2.0;

const solvers::CoverageRow* FindRow(const MeasuredCoverage& coverage, const std::string& estimator,
                                    int parameter) {
  return solvers::FindCoverageRow(coverage.rows, coverage.scenario, estimator,
                                  kParamNames[parameter]);
}

}  // namespace

bool LoadMeasuredCoverage(MeasuredCoverage* coverage, std::string* error) {
  coverage->scenario = FLAGS_mismatch == "none" ? "" : "mismatch_" + FLAGS_mismatch;
  // The rows of every --mismatch are in the file (by scenario); the single run's own flags
  // (sign statistics, a measured record) do not change a Monte Carlo run.
  return cli::LoadQuotedCoverage(
      FLAGS_coverage_csv, "scara_study/coverage.csv",
      {"mismatch", "seed_repeats", "measurements_csv", "measurement_std"}, &coverage->rows,
      &coverage->source, &coverage->other_settings, error);
}

std::string ParameterCoverageLabel(const MeasuredCoverage& coverage, const std::string& estimator,
                                   int parameter) {
  const solvers::CoverageRow* row = FindRow(coverage, estimator, parameter);
  if (row == nullptr) return "coverage not measured";
  if (row->with_interval == 0) return "no interval in the Monte Carlo";
  const char* verdict = row->with_interval < solvers::kMinCalibrationRuns ? "too few seeds to judge"
                        : row->calibrated                                 ? "calibrated"
                                                                          : "not calibrated";
  char text[200];
  std::snprintf(text, sizeof(text), "%s (coverage %.2f over %d seeds", verdict, row->coverage_95,
                row->with_interval);
  std::string label = text;
  if (row->calibrated && row->spread > 0.0 &&
      row->mean_reported_std > kConservativeRatio * row->spread) {
    std::snprintf(text, sizeof(text), "; conservative, σ %.2g× the spread over the seeds",
                  row->mean_reported_std / row->spread);
    label += text;
  }
  if (!coverage.other_settings.empty()) label += "; measured at other settings";
  return label + ")";
}

std::string EstimatorCoverageLabel(const MeasuredCoverage& coverage, const std::string& estimator) {
  bool any = false, all_calibrated = true;
  double low = 1.0, high = 0.0, widest = 0.0;
  int seeds = 0;
  std::string failing;
  for (int i = 0; i < 4; ++i) {
    const solvers::CoverageRow* row = FindRow(coverage, estimator, i);
    if (row == nullptr || row->with_interval == 0) {
      all_calibrated = false;
      continue;
    }
    any = true;
    const bool calibrated = row->calibrated && row->with_interval >= solvers::kMinCalibrationRuns;
    all_calibrated = all_calibrated && calibrated;
    low = std::min(low, row->coverage_95);
    high = std::max(high, row->coverage_95);
    seeds = std::max(seeds, row->with_interval);
    if (row->spread > 0.0) widest = std::max(widest, row->mean_reported_std / row->spread);
    if (!calibrated) {
      failing += (failing.empty() ? "" : "; ") + std::string(kParamNames[i]) + " " +
                 ParameterCoverageLabel(coverage, estimator, i);
    }
  }
  if (!any) return "coverage not measured";
  if (!all_calibrated) return failing;
  char text[200];
  if (high - low < 0.005) {
    std::snprintf(text, sizeof(text), "calibrated (coverage %.2f over %d seeds", low, seeds);
  } else {
    std::snprintf(text, sizeof(text), "calibrated (coverage %.2f-%.2f over %d seeds", low, high,
                  seeds);
  }
  std::string label = text;
  // Honest but wide: say by how much (a σ far above the spread is no measure of precision).
  if (widest > kConservativeRatio) {
    std::snprintf(text, sizeof(text), "; conservative, σ up to %.2g× the spread over the seeds",
                  widest);
    label += text;
  }
  if (!coverage.other_settings.empty()) label += "; measured at other settings";
  return label + ")";
}

nlohmann::json CoverageEntry(const MeasuredCoverage& coverage, const std::string& estimator) {
  nlohmann::json entry;
  entry["source"] = coverage.source.empty() ? nlohmann::json() : nlohmann::json(coverage.source);
  entry["scenario"] = coverage.scenario;
  if (!coverage.other_settings.empty()) entry["other_settings"] = coverage.other_settings;
  entry["label"] = EstimatorCoverageLabel(coverage, estimator);
  for (int i = 0; i < 4; ++i) {
    const solvers::CoverageRow* row = FindRow(coverage, estimator, i);
    entry["parameters"][kParamNames[i]] = {
        {"label", ParameterCoverageLabel(coverage, estimator, i)},
        {"coverage", row == nullptr ? nlohmann::json() : solvers::CoverageJson({*row})[0]}};
  }
  return entry;
}

}  // namespace dynid::scara_study
