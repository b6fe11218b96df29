// experiments/scara_study/scara_coverage — the measured coverage that scara_study quotes beside
// every σ of a single run: the coverage.csv of the study's Monte Carlo (--monte_carlo), by
// default the one shipped with the study (share/dynid/scara_study/coverage.csv: 50 seeds at the
// default flags, with and without --mismatch=gravity; the commands are in the study's README),
// or the file of --coverage_csv. A single run cannot tell whether the σ it reports is honest;
// the Monte Carlo can, and the label carries that answer to estimates.csv, table7.csv,
// summary.json, the figures' titles and the console.
#ifndef DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_COVERAGE_H_
#define DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_COVERAGE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/solvers/coverage.h"

namespace dynid::scara_study {

struct MeasuredCoverage {
  std::vector<solvers::CoverageRow> rows;
  std::string source;    // the file read (empty: none found, nothing measured)
  std::string scenario;  // the rows that apply: "" (ideal model) or "mismatch_<--mismatch>"
  // Empty when the file was measured at this run's flags; otherwise what differs (or that the
  // file does not record its settings), which every label then says.
  std::string other_settings;
};

// --coverage_csv if given (false with a message naming the flag, file and line when it cannot be
// read: exit code 2), else the shipped file if it exists (else no rows).
bool LoadMeasuredCoverage(MeasuredCoverage* coverage, std::string* error);

// The label of the σ an estimator reports for one parameter (index 0..3 of IZZ1, IZZ2, mr, m3):
//   "calibrated (coverage 0.96 over 50 seeds)", "not calibrated (coverage 0.32 over 50 seeds)",
//   "too few seeds to judge (coverage 1.00 over 3 seeds)", "no interval in the Monte Carlo",
//   or "coverage not measured" (no row for it).
std::string ParameterCoverageLabel(const MeasuredCoverage& coverage, const std::string& estimator,
                                   int parameter);

// One label for the four σ of an estimator: "calibrated (coverage 0.88-1.00 over 50 seeds)"
// when all four are (with "; conservative, σ up to 85× the spread over the seeds" when a mean
// reported σ exceeds twice the spread of the estimates), otherwise the parameters that are not,
// e.g. "IZZ1 not calibrated (coverage 0.62 over 50 seeds); IZZ2 not calibrated (coverage 0.32 over
// 50 seeds)", or "coverage not measured".
std::string EstimatorCoverageLabel(const MeasuredCoverage& coverage, const std::string& estimator);

// summary.json: per parameter the label and the coverage row (solvers::CoverageJson; null
// without a row), and the source file.
nlohmann::json CoverageEntry(const MeasuredCoverage& coverage, const std::string& estimator);

}  // namespace dynid::scara_study

#endif  // DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_COVERAGE_H_
