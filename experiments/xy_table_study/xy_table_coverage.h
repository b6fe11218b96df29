// experiments/xy_table_study/xy_table_coverage — the measured coverage that xy_table_study quotes
// beside the standard deviations of a single run: the coverage.csv of a Monte Carlo of the study
// (--monte_carlo), by default the one shipped with the study (share/dynid/xy_table_study/
// coverage.csv, measured at the default flags with drawn truths; the command is in the study's
// README), or the file of --coverage_csv. A single run cannot tell whether its ± is honest; the
// Monte Carlo can, and the label carries that answer to every table row, JSON entry and console
// line.
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_COVERAGE_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_COVERAGE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/solvers/coverage.h"

namespace dynid::xy_table_study {

struct MeasuredCoverage {
  std::vector<solvers::CoverageRow> rows;
  std::string source;  // the file read (empty: none found, nothing measured)
  // Why no file was read although one is shipped: the run's setting is not the one it was
  // measured at (a model mismatch or unmodelled effect, ModelMismatchDescription()), or the
  // record is measured.
  std::string withheld;
};

// --coverage_csv if given (false with a message naming the file and line when it cannot be read:
// exit code 2), else the shipped file if it exists (else no rows). The shipped file holds for
// the exact model constants only: under a model mismatch or unmodelled effect it is not read.
bool LoadCoverage(bool simulated, MeasuredCoverage* coverage, std::string* error);

// For the stage table: "J1 0.00 (0/50), ..., k 0.00 (0/50): NOT calibrated" for one estimator
// (stage name), "calibrated" when every parameter's row is, "coverage not measured" when the file
// has no row for it, "coverage not measured for this setting" when the shipped file was withheld.
std::string CoverageText(const MeasuredCoverage& coverage, const std::string& estimator);

// For summary.json: {"source", "label", per parameter the row (solvers::CoverageJson) or null,
// and "note" when the shipped file was withheld}.
nlohmann::json CoverageEntry(const MeasuredCoverage& coverage, const std::string& estimator);

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_COVERAGE_H_
