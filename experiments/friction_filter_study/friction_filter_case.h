// experiments/friction_filter_study/friction_filter_case — what one case yields: the
// friction-estimate errors against the truth (simulated) or the estimated friction levels
// (measured), the time series of case_<...>.csv and the case's summary.json entry.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_CASE_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_CASE_H_

#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/friction_filter_study/friction_filter_filters.h"
#include "experiments/friction_filter_study/friction_filter_jumps.h"
#include "experiments/friction_filter_study/friction_filter_record.h"

namespace dynid::friction_filter_study {

struct ErrorRow {
  double true_mass = 0.0;
  std::string filter;
  double rms_all = 0.0, rms_after = 0.0, max_after = 0.0, rms_absorbed_after = 0.0;
  // After the transient, outside the windows after the friction jumps (--jump_window_s): the
  // noise the estimate passes between jumps.
  double rms_between_jumps = 0.0;
  // The velocity estimate's RMS error after the transient (m/s).
  double rms_velocity_after = 0.0;
  // The jumps of the true friction after the transient and how the estimate followed them.
  std::vector<JumpMeasure> jumps;
  JumpSummary jump_summary;
};

// Per filter on a measured record: the friction estimate at the end, and its mean and mean
// absolute value after the transient.
struct LevelRow {
  std::string filter;
  double final_n = 0.0, mean_after_n = 0.0, mean_abs_after_n = 0.0;
};

struct CaseResult {
  double true_mass = 0.0;        // (0 for a measured record)
  std::string file;              // case_mass<m>.csv or case_measured.csv
  std::vector<LevelRow> levels;  // (measured record only)
  std::vector<std::string> header;
  Eigen::MatrixXd table;
  std::vector<ErrorRow> rows;
  nlohmann::json summary;
};

// The case's errors or levels (after record.first_after), time series and summary.
CaseResult EvaluateCase(const Record& record, const CaseRecord& case_record,
                        const FilterRuns& runs);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_CASE_H_
