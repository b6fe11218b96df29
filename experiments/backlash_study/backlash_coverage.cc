// experiments/backlash_study/backlash_coverage — the measured coverage quoted beside a single
// run's intervals (see backlash_coverage.h).
#include "experiments/backlash_study/backlash_coverage.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "dynid/solvers/coverage.h"
#include "experiments/backlash_study/backlash_case.h"
#include "experiments/backlash_study/backlash_flags.h"
#include "experiments/common/monte_carlo_cli.h"

namespace dynid::backlash_study {
namespace {

const char* const kParameters[2] = {"b_rad", "K_nm_per_rad"};

}  // namespace

bool LoadMeasuredCoverage(MeasuredCoverage* coverage, std::string* error) {
  coverage->rows.clear();
  coverage->source.clear();
  coverage->withheld.clear();
  coverage->other_settings.clear();
  const std::string mismatch = ModelMismatchDescription();
  if (FLAGS_coverage_csv.empty() && !mismatch.empty()) {
    // The shipped coverage was measured with the exact model; it says nothing of this setting.
    coverage->withheld = "coverage not measured for this setting (" + mismatch +
                         "): the shipped coverage holds for the exact model only";
    return true;
  }
  // The file's rows are per case and estimator; the case selection, the extra Q_xx = 0 smoother
  // (--smoother_q0: rows of its own), the Q_pp scan and a measured record's flags do not change
  // the other rows.
  return cli::LoadQuotedCoverage(FLAGS_coverage_csv, "backlash_study/coverage.csv",
                                 {"cases", "smoother_q0", "sweep_cases", "qpp_factors",
                                  "measurements_csv", "log_progress", "progress_period"},
                                 &coverage->rows, &coverage->source, &coverage->other_settings,
                                 error);
}

std::string CoverageText(const MeasuredCoverage& coverage, const std::string& case_name,
                         const std::string& estimator) {
  std::string text;
  bool any = false, all_calibrated = true;
  for (int i = 0; i < 2; ++i) {
    const solvers::CoverageRow* row =
        solvers::FindCoverageRow(coverage.rows, case_name, estimator, kParameters[i]);
    text += i == 0 ? "b " : ", K ";
    if (row == nullptr || row->with_interval == 0) {
      text += "-";
      continue;
    }
    any = true;
    all_calibrated = all_calibrated && row->calibrated;
    char cell[64];
    std::snprintf(cell, sizeof(cell), "%.2f (%d/%d)%s", row->coverage_95, row->covered,
                  row->with_interval, row->calibrated ? "" : " NOT calibrated");
    text += cell;
  }
  if (!any) {
    return coverage.withheld.empty() ? "coverage not measured"
                                     : "coverage not measured for this setting";
  }
  if (!coverage.other_settings.empty()) text += " (measured at other settings)";
  return "coverage " + text;
}

nlohmann::json CoverageEntry(const MeasuredCoverage& coverage, const std::string& case_name,
                             const std::string& estimator) {
  nlohmann::json entry;
  entry["source"] = coverage.source;
  if (!coverage.withheld.empty()) entry["note"] = coverage.withheld;
  if (!coverage.other_settings.empty()) entry["other_settings"] = coverage.other_settings;
  for (const char* parameter : kParameters) {
    const solvers::CoverageRow* row =
        solvers::FindCoverageRow(coverage.rows, case_name, estimator, parameter);
    entry[parameter] = row == nullptr ? nlohmann::json() : solvers::CoverageJson({*row})[0];
  }
  return entry;
}

std::string CoverageCsvCells(const MeasuredCoverage& coverage, const std::string& case_name,
                             const std::string& estimator) {
  const solvers::CoverageRow* rows[2];
  for (int i = 0; i < 2; ++i) {
    rows[i] = solvers::FindCoverageRow(coverage.rows, case_name, estimator, kParameters[i]);
  }
  char cells[160];
  std::snprintf(cells, sizeof(cells), ",%.17g,%.17g,%d,%d",
                rows[0] ? rows[0]->coverage_95 : std::nan(""),
                rows[1] ? rows[1]->coverage_95 : std::nan(""),
                rows[0] && rows[0]->calibrated ? 1 : 0, rows[1] && rows[1]->calibrated ? 1 : 0);
  return cells;
}

}  // namespace dynid::backlash_study
