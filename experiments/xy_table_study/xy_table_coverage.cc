// experiments/xy_table_study/xy_table_coverage — the measured coverage quoted beside a single
// run's standard deviations (see xy_table_coverage.h).
#include "experiments/xy_table_study/xy_table_coverage.h"

#include <cstdio>
#include <string>
#include <vector>

#include "dynid/solvers/coverage.h"
#include "experiments/xy_table_study/xy_table_flags.h"

namespace dynid::xy_table_study {
namespace {

const char* const kParameters[5] = {"J1", "J2", "w1", "w2", "k"};

}  // namespace

bool LoadCoverage(bool simulated, MeasuredCoverage* coverage, std::string* error) {
  coverage->rows.clear();
  coverage->source.clear();
  coverage->withheld.clear();
  if (!simulated) {
    coverage->withheld = "coverage not measured for measured data (no truth)";
    return true;
  }
  const std::string mismatch = ModelMismatchDescription();
  if (FLAGS_coverage_csv.empty() && !mismatch.empty()) {
    // The shipped coverage was measured with the exact model constants; it says nothing here.
    coverage->withheld = "coverage not measured for this setting (" + mismatch +
                         "): the shipped coverage holds for the exact model constants only";
    return true;
  }
  // A coverage measured at other settings says nothing of this run's intervals: not quoted. The
  // weight sweep, the evaluation and the Monte Carlo's extra acceleration weights do not change
  // the stages' runs.
  std::string difference;
  if (!cli::LoadQuotedCoverage(FLAGS_coverage_csv, "xy_table_study/coverage.csv",
                               {"acceleration_weight_sweep", "evaluation",
                                "monte_carlo_acceleration_weights", "circle_csv"},
                               &coverage->rows, &coverage->source, &difference, error)) {
    return false;
  }
  if (!difference.empty()) {
    coverage->withheld = "coverage not measured for this setting (" + difference + ")";
    coverage->rows.clear();
    coverage->source.clear();
  }
  return true;
}

std::string CoverageText(const MeasuredCoverage& coverage, const std::string& estimator) {
  const std::string scenario = MismatchScenarioName();
  std::string text;
  bool all_calibrated = true;
  for (const char* parameter : kParameters) {
    const solvers::CoverageRow* row =
        solvers::FindCoverageRow(coverage.rows, scenario, estimator, parameter);
    if (row == nullptr) continue;
    if (!text.empty()) text += ", ";
    text += parameter;
    if (row->with_interval == 0) {
      text += " - (" + std::to_string(row->non_converged) + " runs not converged)";
      all_calibrated = false;
      continue;
    }
    all_calibrated = all_calibrated && row->calibrated;
    char cell[64];
    std::snprintf(cell, sizeof(cell), " %.2f (%d/%d)", row->coverage_95, row->covered,
                  row->with_interval);
    text += cell;
  }
  if (text.empty()) {
    return coverage.withheld.empty() ? "coverage not measured"
                                     : "coverage not measured for this setting";
  }
  return "coverage " + text + (all_calibrated ? ": calibrated" : ": NOT calibrated");
}

nlohmann::json CoverageEntry(const MeasuredCoverage& coverage, const std::string& estimator) {
  nlohmann::json entry;
  entry["source"] = coverage.source;
  entry["label"] = CoverageText(coverage, estimator);
  if (!coverage.withheld.empty()) entry["note"] = coverage.withheld;
  const std::string scenario = MismatchScenarioName();
  for (const char* parameter : kParameters) {
    const solvers::CoverageRow* row =
        solvers::FindCoverageRow(coverage.rows, scenario, estimator, parameter);
    entry[parameter] = row == nullptr ? nlohmann::json() : solvers::CoverageJson({*row})[0];
  }
  return entry;
}

}  // namespace dynid::xy_table_study
