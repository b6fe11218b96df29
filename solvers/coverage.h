// solvers:: coverage statistics of Monte Carlo runs (solvers/monte_carlo.h): are the intervals an
// estimator reports honest? (solvers/README.md, "Monte Carlo evidence").
//
// For each (scenario, estimator, parameter), over the R runs whose estimator converged with a
// finite estimate θ̂_r (truth θ), with reported standard deviations σ_r and 95 % intervals
// [l_r, u_r] (monte_carlo.h: the reported interval, or θ̂_r ± 1.96 σ_r):
//
//   bias               = (1/R) Σ (θ̂_r − θ)
//   spread             = sqrt( Σ (θ̂_r − mean θ̂)² / (R − 1) )      the actual scatter
//   mean_reported_std  = mean of the finite σ_r                     what the estimator claims
//   coverage_95        = #{ r : l_r <= θ <= u_r } / (runs with an interval)
//   z_r                = (θ̂_r − θ) / σ_r,   z_mean, z_std (sample std, R − 1)
//
// An estimator with unbiased estimates and honest σ has coverage ≈ 0.95 and z ~ N(0, 1):
// z_mean ≈ 0, z_std ≈ 1. z_std > 1 with z_mean ≈ 0 says the σ are too small by that factor
// (spread / mean_reported_std is the same ratio); |z_mean| large says the estimate is biased by
// that many σ, which no scaling of σ can repair without making the interval uninformative.
//
// `calibrated` is true when coverage_95 ∈ [0.85, 1.0] over at least 20 runs with an interval.
// Why at least 20: the observed coverage of R honest 95 % intervals is Binomial(R, 0.95) / R, with
// standard error sqrt(0.95 · 0.05 / R) = 0.049 at R = 20 and larger below — as large as half the
// band between the nominal 0.95 and the 0.85 threshold, where each single miss moves the coverage
// by more than 5 points. With fewer runs the verdict is decided by one or two intervals, and honest
// intervals fail the test too often (passing probability 0.98 at 20 runs, 0.91 at 10, 0.77 at 5).
// An upper bound of 1.0 (not 0.99) keeps conservative intervals calibrated: they are honest, only
// wider than needed, which the ratio spread / mean_reported_std shows.
#ifndef DYNID_SOLVERS_COVERAGE_H_
#define DYNID_SOLVERS_COVERAGE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/solvers/monte_carlo.h"

namespace dynid::solvers {

inline constexpr int kMinCalibrationRuns = 20;
inline constexpr double kMinCalibratedCoverage = 0.85;
inline constexpr double kMaxCalibratedCoverage = 1.0;

// True when coverage ∈ [kMinCalibratedCoverage, kMaxCalibratedCoverage] and
// runs_with_interval >= kMinCalibrationRuns (false for a NaN coverage).
bool IsCalibrated(double coverage, int runs_with_interval);

// The statistics of one (scenario, estimator, parameter). Statistics with no run to compute them
// from are NaN (spread and z_std need two).
struct CoverageRow {
  std::string scenario;  // name of the scenario (may be empty)
  std::string estimator;
  std::string parameter;
  double truth = 0.0;     // of the first run (a warning is logged if runs disagree)
  int runs = 0;           // converged runs with a finite estimate (the statistics' sample)
  int non_converged = 0;  // runs whose estimator did not converge (not in `runs`)
  int with_interval = 0;  // runs of `runs` with a reported interval (coverage's denominator)
  int covered = 0;        // of those, intervals containing the truth
  int with_std = 0;       // runs of `runs` with a finite σ > 0 (z-score sample)
  double bias = 0.0;
  double spread = 0.0;
  double median_estimate = 0.0;
  double mean_reported_std = 0.0;
  double coverage_95 = 0.0;
  double z_mean = 0.0;
  double z_std = 0.0;
  bool calibrated = false;
};

// One row per (scenario, estimator, parameter) in the order of first appearance in `runs`
// (scenario by scenario). `scenario_names` are indexed by MonteCarloRun::scenario.
std::vector<CoverageRow> SummarizeCoverage(const std::vector<MonteCarloRun>& runs,
                                           const std::vector<std::string>& scenario_names);

// The row of (scenario, estimator, parameter), or nullptr.
const CoverageRow* FindCoverageRow(const std::vector<CoverageRow>& rows,
                                   const std::string& scenario, const std::string& estimator,
                                   const std::string& parameter);

// coverage.csv: the columns
//   estimator,parameter,runs,bias,spread,mean_reported_std,coverage_95,calibrated,
// then scenario,truth,median_estimate,z_mean,z_std,non_converged,with_interval,covered,label
// (calibrated 1/0; label = "[scenario ]estimator parameter", the figure's abscissa). Numbers
// round-trip (%.17g); NaN as "nan". A non-empty `settings` (one line: how the Monte Carlo was
// run, e.g. its command line) is written first as the comment "# settings: <settings>", so that
// a single run quoting the file can tell whether it was measured at its own settings.
std::string FormatCoverageCsv(const std::vector<CoverageRow>& rows,
                              const std::string& settings = "");

// Reads a coverage.csv written by FormatCoverageCsv (every column of it, by header name; "nan"
// as NaN) into `rows`, e.g. the measured coverage a study quotes beside a single run's
// intervals, and its "# settings:" comments into *settings (several for files that join the
// rows of several Monte Carlos; none for a file that does not record them; may be null). False
// with a message naming the file and line otherwise.
bool ReadCoverageCsv(const std::string& path, std::vector<CoverageRow>* rows, std::string* error,
                     std::vector<std::string>* settings = nullptr);

// The measured coverage a single run quotes: the coverage.csv at `given_path` (a study's
// --coverage_csv) when it is not empty, else the runtime file `shipped_relative_path`
// (data/runtime_files.h, e.g. "scara_study/coverage.csv") when it exists. *source is the file
// read, empty (and no rows) when there was none to read; *settings its "# settings:" comments
// (may be null). False with ReadCoverageCsv's message for a file that cannot be read.
bool LoadMeasuredCoverage(const std::string& given_path, const std::string& shipped_relative_path,
                          std::vector<CoverageRow>* rows, std::string* source, std::string* error,
                          std::vector<std::string>* settings = nullptr);

// One line per row for a console (runs, median, bias, spread, mean σ, coverage with
// "covered/with_interval", z mean and std, non-converged, and "calibrated" or "NOT calibrated").
std::string FormatCoverageTable(const std::vector<CoverageRow>& rows);

// A short label of a row's coverage for tables and console lines of a single run, e.g.
// "coverage 0.96 over 50 runs (calibrated)" or "coverage 0.12 over 50 runs: NOT calibrated".
std::string CoverageLabel(const CoverageRow& row);

// Rows of coverage.csv drawn in one panel: rows first .. first + count − 1, one (scenario,
// estimator) group when one_group (its parameters name the rows), else several small groups
// (their labels "[scenario ]estimator parameter" name the rows).
struct CoveragePanelRows {
  int first = 0;
  int count = 0;
  bool one_group = true;
};
// Most rows in a panel of several groups (a group of more rows has its panel alone).
inline constexpr int kMaxCoveragePanelRows = 60;

// The panels of `rows` (in coverage.csv's order): each run of consecutive rows of one scenario
// and estimator is a group; consecutive groups share a panel while that brings its rows closer to
// an even share of at most kMaxCoveragePanelRows per panel.
std::vector<CoveragePanelRows> CoveragePanels(const std::vector<CoverageRow>& rows);

// The figure of `rows`, written as `csv_name` (a coverage.csv in the figure's folder). Per panel
// of CoveragePanels, side by side: coverage_95 of every row (parameters top-down on the
// ordinate), the calibrated band [0.85, 1] shaded and the nominal 0.95 dashed, its title the
// group and how many of its intervals are calibrated; and the z-scores' spread and mean (z_std,
// z_mean: 1 and 0 for honest σ, dashed). Two groups per row of panels; the figure's height grows
// with the rows of the largest panel (about 0.14 in per row), so that every name stays readable
// at any number of rows (57 parameters × 5 estimators: five panels of 57 rows).
data::Figure CoverageFigure(const std::vector<CoverageRow>& rows, const std::string& csv_name,
                            const std::string& title);

// The rows as a JSON array of objects with the CSV's fields (NaN as null).
nlohmann::json CoverageJson(const std::vector<CoverageRow>& rows);

// The Monte Carlo outputs of a study, written into `stage`: coverage.csv (FormatCoverageCsv of
// SummarizeCoverage(runs, scenario_names), also returned in `rows`), monte_carlo_runs.csv
// (FormatMonteCarloRunsCsv) and, when `figures`, coverage.png (CoverageFigure with `title`)
// and, for rows of more than one estimator or scenario, coverage_map.png: every parameter ×
// estimator cell coloured by its coverage on one page (the runtime script
// plot_coverage_map.py, data::RunPythonScript); `settings` as in FormatCoverageCsv. False with a
// message when a file or the figure could not be written.
bool WriteCoverageOutputs(const std::vector<MonteCarloRun>& runs,
                          const std::vector<std::string>& scenario_names, const std::string& title,
                          bool figures, data::OutputStage* stage, std::vector<CoverageRow>* rows,
                          std::string* error, const std::string& settings = "");

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_COVERAGE_H_
