// experiments/backlash_study/backlash_coverage — the measured coverage that backlash_study quotes
// beside every interval of a single run: the coverage.csv of a Monte Carlo of the study
// (--monte_carlo), by default the one shipped with the study (share/dynid/backlash_study/
// coverage.csv, measured at the default flags; the command is in the study's README), or the
// file of --coverage_csv. A single run cannot tell whether its interval is honest; the Monte
// Carlo can, and the label carries that answer to every table row, JSON entry and console line.
#ifndef DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_COVERAGE_H_
#define DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_COVERAGE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/solvers/coverage.h"

namespace dynid::backlash_study {

struct MeasuredCoverage {
  std::vector<solvers::CoverageRow> rows;
  std::string source;  // the file read (empty: none found, nothing measured)
  // Why no file was read although one is shipped: the run's setting is not the one it was
  // measured at (a model mismatch or unmodelled effect, ModelMismatchDescription()).
  std::string withheld;
  // Empty when the file read was measured at this run's flags; otherwise what differs (or that
  // the file does not record its settings), which every label then says.
  std::string other_settings;
};

// --coverage_csv if given (false with a message naming the file and line when it cannot be read:
// exit code 2), else the shipped file if it exists (else no rows). The shipped file holds for the
// exact model only: under a model mismatch or an unmodelled effect it is not read, and every
// interval says "coverage not measured for this setting" (a coverage.csv measured at that setting
// can be given with --coverage_csv).
bool LoadMeasuredCoverage(MeasuredCoverage* coverage, std::string* error);

// For the console: "b 0.96 (48/50), K 0.12 (6/50) NOT calibrated" style text for one estimator
// of one case ("coverage not measured" when the file has no row for it, "coverage not measured
// for this setting" when the shipped file was withheld).
std::string CoverageText(const MeasuredCoverage& coverage, const std::string& case_name,
                         const std::string& estimator);

// For summary.json: {"source", "b_rad": row or null, "K_nm_per_rad": row or null, and "note"
// when the shipped file was withheld}
// (rows as solvers::CoverageJson).
nlohmann::json CoverageEntry(const MeasuredCoverage& coverage, const std::string& case_name,
                             const std::string& estimator);

// For results.csv: the measured coverage_95 of b and K and whether each is calibrated (NaN and 0
// when not measured), as ",b_coverage_95,K_coverage_95,b_calibrated,K_calibrated" cells.
std::string CoverageCsvCells(const MeasuredCoverage& coverage, const std::string& case_name,
                             const std::string& estimator);

}  // namespace dynid::backlash_study

#endif  // DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_COVERAGE_H_
