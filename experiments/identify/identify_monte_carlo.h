// identify's Monte Carlo: a parametric (model-based) bootstrap of a real record, which measures
// whether the standard deviations identify reports cover (solvers/monte_carlo.h, coverage.h).
//
// A real record has no truth; the bootstrap takes the record's own IDIM-LS estimate θ̂ as the
// truth and makes every run's record from it:
//   - the positions are the measured ones (so the differentiated states q̂, q̂', q̂'' and the
//     regressor Φ are those of the record), optionally perturbed by an encoder's quantisation
//     error (uniform within ± step / 2, independent per sample and joint) when
//     BootstrapOptions::encoder_step > 0, so that the run's differentiation sees errors in the
//     positions;
//   - the torques are τ* = Φ(q̂, q̂', q̂'') θ̂ + e*, where e* is a moving-block resample
//     (solvers/block_bootstrap.h) of the record's residual e = τ − Φ θ̂ at its samples: blocks
//     of L consecutive samples of all measured joints together (joint-vector blocks), so that
//     the residual's colour (up to lag L − 1) and the correlation between the joints' residuals
//     (coupled dynamics and a common model error load every joint at once) are kept. L is the
//     Politis & White (2004, 2009) automatic length of the residuals' autocorrelation function
//     (the longest over the measured joints), or given. Not the AR(1) plug-in length of their
//     lag-1 autocorrelation: that is the HAC covariance's default bandwidth rule, so a bootstrap
//     with it would share the assumption it is meant to check (on the TIAGo record it gives 16
//     samples, and the HAC σ look calibrated that way only). The Politis–White length is in turn
//     the L of the HAC's autocorrelation bandwidth rule (HacBandwidth::kAutocorrelation), so its
//     HAC σ are checked at given block lengths too.
// Every run is identified by the same pipeline as the record (same differentiator, rest
// detection, selection, decimation, methods), and every method's estimate and σ are scored
// against θ̂: `ls` and `ls_hac` (the same estimate with its classical and its HAC σ), `wls` and
// `wls_hac`, `pc` (physically consistent; converged = its solver's test), `iv` and `iv_hac`
// when IDIM-IV runs.
// What it covers: the torque disturbance with its colour and cross-joint correlation. What it
// does not: model error (the residual is resampled as noise around a model taken as right,
// although part of it is unmodelled dynamics that would repeat with the motion), errors in the
// positions and their derivatives beyond the optional quantisation (the regressor is otherwise
// the same in every run), and the variability of the trajectory itself.
#ifndef DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_MONTE_CARLO_H_
#define DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_MONTE_CARLO_H_

#include <Eigen/Core>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/models/serial_robot.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/identify/identify_log.h"
#include "experiments/identify/identify_run.h"

namespace dynid::identify {

struct BootstrapOptions {
  int block_length = 0;       // samples; 0 = solvers::PolitisWhiteBlockLength of the residuals
  double encoder_step = 0.0;  // > 0: positions perturbed uniformly within ± step / 2
};

// What every run shares, from the record and its identification.
struct BootstrapRecord {
  std::vector<std::string> names;  // base parameters
  Eigen::VectorXd truth;           // θ̂: the record's IDIM-LS estimate
  Eigen::VectorXd truth_std;       // its classical σ (for the report: which are determined)
  Eigen::MatrixXd fitted;          // Ns × n: Φ(q̂, q̂', q̂'') θ̂ (NaN for unmeasured joints)
  Eigen::MatrixXd residual;        // Ns × n: τ − fitted (NaN for unmeasured joints)
  int block_length = 1;            // used
  int politis_white_block_length = 1;  // solvers::PolitisWhiteBlockLength (the default)
  int ar1_block_length = 1;            // solvers::MovingBlockLength (the HAC bandwidth rule)
  double rho = 0.0;              // mean lag-1 autocorrelation of the measured joints' residuals
  Eigen::VectorXd residual_rms;  // per joint (NaN unmeasured)
};

// The truth, the fitted torques and the residual of `log` identified as `results` (RunIdentify
// on `log`, IDIM-LS available). False with a message otherwise.
bool MakeBootstrapRecord(const models::SerialRobot& robot, const JointLog& log,
                         const IdentifyResults& results, const BootstrapOptions& bootstrap,
                         BootstrapRecord* record, std::string* error);

// The record of run `seed`: `log` with the bootstrap torques (and perturbed positions).
JointLog BootstrapLog(const JointLog& log, const BootstrapRecord& record,
                      const BootstrapOptions& bootstrap, std::uint64_t seed);

// Every method's estimate in `results` against `truth`, as Monte Carlo estimates (estimators
// ls, ls_hac, wls, wls_hac, pc, iv, iv_hac; unavailable methods left out).
void AppendEstimates(const IdentifyResults& results, const BootstrapRecord& record,
                     std::vector<solvers::MonteCarloEstimate>* estimates);

// One run: BootstrapLog identified with `options` (no validation, no essential selection, one
// thread), its estimates appended.
bool BootstrapTrial(const models::SerialRobot& robot, const JointLog& log,
                    const BootstrapRecord& record, const BootstrapOptions& bootstrap,
                    const IdentifyOptions& options, std::uint64_t seed,
                    std::vector<solvers::MonteCarloEstimate>* estimates, std::string* error);

// What the bootstrap does and does not cover, one line for the console and the JSON.
std::string BootstrapDescription(const BootstrapRecord& record, const BootstrapOptions& bootstrap);

// --monte_carlo: the record identified once, then the bootstrap runs (cli::RunMonteCarloFromFlags:
// --seed, --monte_carlo_threads, journalled in out_dir, resumable), coverage.csv,
// monte_carlo_runs.csv, coverage.png and summary.json written to out_dir.
bool RunIdentifyMonteCarlo(const models::SerialRobot& robot, const JointLog& log,
                           const IdentifyOptions& options, const BootstrapOptions& bootstrap,
                           const std::string& out_dir, std::uint64_t first_seed, bool figures,
                           std::string* error);

// The measured coverage a single run quotes (--coverage_csv).
struct QuotedCoverage {
  std::vector<solvers::CoverageRow> rows;
  std::string source;    // the file read; empty when none was given or it was withheld
  std::string withheld;  // why a given file is not quoted (measured at other settings)
};

// Reads `path` (empty: nothing quoted) and checks that it was measured at this run's flags
// (cli::LoadQuotedCoverage). False with a message naming --coverage_csv for an unreadable file.
bool LoadIdentifyCoverage(const std::string& path, QuotedCoverage* coverage, std::string* error);

// The row of (estimator, parameter), or nullptr.
const solvers::CoverageRow* QuotedRow(const QuotedCoverage& coverage, const std::string& estimator,
                                      const std::string& parameter);

// "calibrated (coverage 0.94)", "NOT calibrated (coverage 0.41)", "too few runs (coverage 0.90
// over 8)", "no interval", or "coverage not measured".
std::string IntervalLabel(const solvers::CoverageRow* row);

// The estimators a single run quotes, in the order of its lines.
inline constexpr const char* kQuotedEstimators[] = {"ls", "ls_hac", "wls", "wls_hac",
                                                    "pc", "pc_hac", "iv",  "iv_hac"};
// NOT calibrated intervals a console line names (the lowest coverages).
inline constexpr int kConsoleWorstIntervals = 3;

// The quoted coverage of one estimator's intervals over `parameters`.
struct EstimatorCoverage {
  std::string estimator;
  int with_interval = 0;  // parameters whose row has an interval
  int calibrated = 0;
  int too_few_runs = 0;          // not calibrated because of fewer than kMinCalibrationRuns
  double median_coverage = 0.0;  // over the parameters with an interval (NaN for none)
  // Intervals that held the truth in every run, and how many of those honest 95 % intervals
  // would give by chance (Σ 0.95^runs): many more say the intervals are wider than they need be.
  int cover_every_run = 0;
  double cover_every_run_expected = 0.0;
  // The NOT calibrated ones with the lowest coverage (at most max_worst), lowest first, equal
  // coverages in the order of `parameters`.
  std::vector<std::string> worst;
  std::vector<double> worst_coverage;
};
EstimatorCoverage SummarizeQuotedCoverage(const QuotedCoverage& coverage,
                                          const std::string& estimator,
                                          const std::vector<std::string>& parameters,
                                          int max_worst);

// The console lines of a single run, one per quoted estimator (a summary, not the list: 57
// parameters × 5 estimators do not read on a console): "ls 0 of 57 calibrated, median coverage
// 0.50; lowest: off2 0.22, mx3r 0.22, fc2 0.26 (+54 more NOT calibrated)", then where every
// interval's label is (parameters.csv and summary.json in `out_dir`). Empty without a file; the
// reason when the file was withheld.
std::string CoverageConsoleLines(const QuotedCoverage& coverage,
                                 const std::vector<std::string>& parameters,
                                 const std::string& out_dir);

// summary.json's "coverage": source, note, per estimator and parameter the row and its label
// ("estimators"), and per estimator the console's summary with every NOT calibrated parameter,
// lowest coverage first ("per_estimator").
nlohmann::json CoverageSummaryJson(const QuotedCoverage& coverage,
                                   const std::vector<std::string>& parameters);

}  // namespace dynid::identify

#endif  // DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_MONTE_CARLO_H_
