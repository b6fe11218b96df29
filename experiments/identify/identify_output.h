// identify's results on disk: every file is written into an output stage and committed as a set
// (data/output.h), so a failed run leaves the previous results as they were.
//
//   parameters.csv           one row per base parameter: the chosen method's estimate, std,
//                            rel_std_percent, physically_consistent, then ±3σ and the prior, LS
//                            and physically consistent estimates side by side
//   standard_parameters.csv  per link of the physically consistent fit: mass, centre of mass,
//                            inertia about the centre of mass (link-frame axes), and the prior's
//   validation.csv           per method and measured joint (and pooled): RMS error, RMS torque,
//                            relative error on the validation record
//   validation_torques.csv   the validation record's measured and predicted torques
//   summary.json, report.md  everything above with the diagnostics, for programs and for people
//   torques.png, parameters.png
#ifndef DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_OUTPUT_H_
#define DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_OUTPUT_H_

#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/models/serial_robot.h"
#include "experiments/identify/identify_monte_carlo.h"
#include "experiments/identify/identify_run.h"

namespace dynid::identify {

// What the run was given, for the summary and the report.
struct RunDescription {
  std::string robot_file, chain, drives_file, data_file, validation;
  std::string differentiator;
  std::string hac_bandwidth;  // --hac_bandwidth: the HAC covariance's bandwidth rule
  // --hac_critical: the critical value of the HAC intervals
  solvers::HacCriticalValue hac_critical_value = solvers::HacCriticalValue::kFixedB;
  Method chosen = Method::kPc;
  std::vector<std::string> drive_terms;  // models::DescribeDriveTerms
  std::vector<std::string> findings;     // of the records (identify_log.h)
  double seconds = 0.0;                  // computation so far
  QuotedCoverage coverage;               // --coverage_csv: the intervals' measured coverage
};

bool WriteIdentifyOutputs(const models::SerialRobot& robot, const IdentifyResults& results,
                          const RunDescription& run, bool figures, data::OutputStage* stage,
                          std::string* error);

// The validation table printed on the console.
std::string ValidationTable(const IdentifyResults& results);

}  // namespace dynid::identify

#endif  // DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_OUTPUT_H_
