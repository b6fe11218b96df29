// experiments/rt_manipulator_study/rt_manipulator_output — what rt_manipulator_study reports: the
// table of payload estimates on the console, and the files written to --out_dir (rt_study.csv
// with the time series, summary.json, the figures rt_positions, rt_accelerations, rt_mass,
// rt_residuals).
#ifndef DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_OUTPUT_H_
#define DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_OUTPUT_H_

#include <string>
#include <vector>

#include "dynid/models/rt_manipulator.h"
#include "experiments/rt_manipulator_study/rt_manipulator_estimates.h"
#include "experiments/rt_manipulator_study/rt_manipulator_record.h"

namespace dynid::rt_manipulator_study {

// The record's description and the table of payload estimates (filter final, filter mean over
// the 2nd half, smoother with sd, iterations), then the elapsed time.
void PrintTable(const Record& record, const std::vector<Estimate>& estimates, double elapsed_s);

// Writes rt_study.csv, the figures (--figures) and summary.json to --out_dir. False (exit code
// 1) with a message otherwise.
bool WriteOutputs(const models::RtManipulatorRigid& model, const Record& record,
                  const Weightings& weightings, const std::vector<Estimate>& estimates,
                  double elapsed_s, std::string* error);

}  // namespace dynid::rt_manipulator_study

#endif  // DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_OUTPUT_H_
