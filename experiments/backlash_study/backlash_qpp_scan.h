// experiments/backlash_study/backlash_qpp_scan — the Q_pp scan of backlash_study: every
// estimator rerun on each scan case with Q_pp scaled by each factor, printed and written to
// D/qpp_sweep.csv (long form), summary.json "qpp_sweep" and D/qpp_sweep_<case>.csv and .png.
#ifndef DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_QPP_SCAN_H_
#define DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_QPP_SCAN_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "experiments/backlash_study/backlash_case.h"

namespace dynid::backlash_study {

// The scan of `scan_cases` over `qpp_factors` (nothing if either is empty); false with a
// message.
bool RunQppScan(const std::vector<double>& qpp_factors, const std::vector<Case>& scan_cases,
                data::OutputStage* stage, nlohmann::json* summary, std::string* error);

}  // namespace dynid::backlash_study

#endif  // DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_QPP_SCAN_H_
