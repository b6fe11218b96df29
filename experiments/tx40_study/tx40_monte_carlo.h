// experiments/tx40_study/tx40_monte_carlo — the study's Monte Carlo (--monte_carlo=N): the
// simulated TX40 experiment (--simulation=realistic or ideal) with N seeds (--seed, --seed + 1,
// ...; run i is the single run with --seed + i: via points, noise), every method at every
// knowledge level on each record, and
//   - per method × knowledge × identified parameter: bias, spread, mean reported σ and the
//     coverage of the 95 % interval (solvers/coverage.h), once with the σ of σ²(XᵀX)⁻¹ (LS) /
//     Brunot et al. (2018) eq. 8 (IV) (estimator "<method>_<knowledge>") and once with the HAC σ
//     ("<method>_<knowledge>_hac");
//   - per method × knowledge: the median and spread of the relative error ||y − Xθ||/||y||
//     beside Brunot et al. (2018) Table 3, how many runs converged, and which are biased: the
//     fraction of parameters whose |bias| exceeds 2 standard errors of the mean
//     (spread/√runs) and 10 % of |truth|.
// An IDIM-IV run that did not converge (iteration cap, or an auxiliary model that failed) is
// counted, not used in the statistics.
#ifndef DYNID_EXPERIMENTS_TX40_STUDY_TX40_MONTE_CARLO_H_
#define DYNID_EXPERIMENTS_TX40_STUDY_TX40_MONTE_CARLO_H_

#include <string>
#include <vector>

#include "dynid/solvers/coverage.h"
#include "dynid/solvers/idim.h"
#include "experiments/tx40_study/tx40_flags.h"

namespace dynid::tx40_study {

// The scenario column of coverage.csv: "realistic" or "ideal", with "_torque_offsets" appended
// when the identified model carries the offsets (--torque_offsets).
std::string CoverageScenario(const Settings& settings);

// The coverage.csv estimator of a method and knowledge level ("idim_ls_conventional_good"), with
// "_hac" for the HAC σ.
std::string CoverageEstimator(const std::string& method_key, const std::string& knowledge,
                              bool hac);

// Runs the settings.monte_carlo seeds on settings.monte_carlo_threads threads, prints the
// summary and writes coverage.csv, monte_carlo_runs.csv, relative_errors.csv, coverage.png
// (settings.figures) and summary.json to settings.out_dir. False (exit code 1) with a message
// otherwise.
bool RunMonteCarloStudy(const Settings& settings, const models::SerialRobot& robot,
                        const solvers::IdimModel& model, std::string* error);

// The measured coverage a single simulated run quotes (--coverage_csv, else the shipped
// tx40_study/coverage.csv), for the rows of `scenario`.
struct MeasuredCoverage {
  std::vector<solvers::CoverageRow> rows;
  std::string source;    // the file read; empty: none
  std::string scenario;  // "realistic" or "ideal"
  // Empty when the file was measured at this run's flags; otherwise what differs (or that the
  // file does not record its settings), which every label then says.
  std::string other_settings;
};

// The label of one run's intervals: e.g. "eq. 8 σ NOT calibrated: 12 of 55 parameters
// calibrated, coverage median 0.62 (50 seeds)" or "coverage not measured".
std::string RunCoverageLabel(const MeasuredCoverage& coverage, const std::string& method_key,
                             const std::string& knowledge, bool hac, int num_parameters);

}  // namespace dynid::tx40_study

#endif  // DYNID_EXPERIMENTS_TX40_STUDY_TX40_MONTE_CARLO_H_
