// identify's input: a recording of a robot as one CSV table keyed by the description's joint
// names, read onto the chain's joints (joint side, SI units), with what was found in it.
//
// Columns (any order): t [s]; q_<joint> for every joint of the chain; for the joints whose effort
// was recorded either tau_<joint> (torque, data side of the drive description) or i_<joint>
// (motor current, converted with the motor constants and the transmission); optionally
// dq_<joint> (a recorded velocity, compared with the derived one in the report, never used in
// place of it) and qref_<joint> for every joint (the controller's reference trajectory, which
// IDIM-IV needs). '#' lines before the header are provenance comments.
#ifndef DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_LOG_H_
#define DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_LOG_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/models/drive_description.h"
#include "dynid/models/robot_description.h"

namespace dynid::identify {

struct JointLog {
  std::string source;
  Eigen::VectorXd t;           // Ns time stamps [s], strictly increasing
  Eigen::MatrixXd q;           // Ns × n joint positions (joint side) [rad, m]
  Eigen::MatrixXd tau;         // Ns × n joint torques [N m, N]; NaN in unmeasured columns
  std::vector<bool> measured;  // n: the joint's torque is measured and used
  Eigen::MatrixXd dq;          // Ns × n recorded velocities, joint side (empty when absent)
  Eigen::MatrixXd qref;        // Ns × n reference positions, joint side (empty when absent)
  std::vector<std::string> effort_source;  // n: "tau_<joint>", "i_<joint>" or "" (none)
  // Findings about the record, one sentence each (time steps, channels stuck at one value,
  // efforts present but not used), for the console and the report.
  std::vector<std::string> findings;

  int num_samples() const { return static_cast<int>(t.size()); }
  // Samples [first, first + count) as a log of their own.
  JointLog Slice(int first, int count) const;
};

// Reads `path` for `chain` with `drives`. effort_joints: the joints whose effort is used (each
// must have a tau_/i_ column); empty = every joint that has one. Errors name the file, the line
// and column of the offending header cell or value, and what is wrong.
bool ReadJointLog(const std::string& path, const models::ChainDescription& chain,
                  const models::DriveDescription& drives,
                  const std::vector<std::string>& effort_joints, JointLog* log, std::string* error);

}  // namespace dynid::identify

#endif  // DYNID_EXPERIMENTS_IDENTIFY_IDENTIFY_LOG_H_
