// solvers::ValidateTorques — held-out validation of identified dynamic parameters: the torques
// that a parameter vector predicts on a record it was not fitted to, against the measured ones.
//
// For every sample k of the validation record the predicted torques are
// τ̂_k = φ(q_k, q'_k, q''_k) θ (models::SerialRobot::Regressor with the record's states; Coulomb
// friction from sign(q')), with θ the standard parameters, or the base parameters θ_b placed in
// their kept standard columns (the others zero), which gives the same torques for every state
// (models/base_parameters.h). Only the joints whose torque was measured are scored (real records
// often lack some), each by
//     RMS error e_j = sqrt(mean_k (τ_jk − τ̂_jk)²),  RMS torque t_j = sqrt(mean_k τ_jk²),
//     relative error e_j / t_j  (× 100: % of the RMS measured torque),
// and pooled over the measured joints: sqrt(Σ_jk (τ − τ̂)²) / sqrt(Σ_jk τ²), the relative error of
// Brunot et al. (2018) Table 3 on the validation rows.
#ifndef DYNID_SOLVERS_TORQUE_VALIDATION_H_
#define DYNID_SOLVERS_TORQUE_VALIDATION_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/models/base_parameters.h"
#include "dynid/models/serial_robot.h"

namespace dynid::solvers {

// A validation record: Ns samples of n joints (one row per sample).
struct ValidationRecord {
  Eigen::MatrixXd q, qd, qdd;  // Ns × n states [rad, rad/s, rad/s²] (m for prismatic joints)
  Eigen::MatrixXd tau;         // Ns × n measured torques [N m or N]; unmeasured columns ignored
  std::vector<bool> measured;  // n flags; empty = every joint measured
};

struct TorqueValidation {
  std::vector<int> joints;         // the measured joints (0-based), ascending
  Eigen::VectorXd rms_error;       // n [N m]; NaN for unmeasured joints
  Eigen::VectorXd rms_measured;    // n [N m]; NaN for unmeasured joints
  Eigen::VectorXd relative_error;  // n, e_j / t_j (fraction); NaN for unmeasured joints
  double pooled_rms_error = 0.0;   // sqrt(Σ (τ − τ̂)² / (Ns · measured joints))
  double pooled_rms_measured = 0.0;
  double pooled_relative_error = 0.0;  // fraction
  Eigen::MatrixXd predicted;           // Ns × n, every joint (also the unmeasured ones)

  // A table "joint  RMS error  RMS torque  % of RMS" plus the pooled line; joint_names (n) may be
  // empty ("joint 1", …).
  std::string Report(const std::vector<std::string>& joint_names = {}) const;
};

// Scores the standard parameters theta_standard (robot.num_parameters()). False with a message for
// inconsistent sizes, non-finite states or measured torques, no measured joint, or a measured
// joint whose RMS torque is zero.
bool ValidateTorques(const models::SerialRobot& robot, const Eigen::VectorXd& theta_standard,
                     const ValidationRecord& record, TorqueValidation* result, std::string* error);

// Scores base parameters theta_base (base.size()) of `robot`.
bool ValidateTorques(const models::SerialRobot& robot, const models::BaseParameterSet& base,
                     const Eigen::VectorXd& theta_base, const ValidationRecord& record,
                     TorqueValidation* result, std::string* error);

// The standard vector with theta_base in the kept columns and zeros elsewhere (p entries):
// phi θ equals phi_b θ_b for every state.
Eigen::VectorXd StandardFromBase(const models::BaseParameterSet& base,
                                 const Eigen::VectorXd& theta_base, int num_standard);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_TORQUE_VALIDATION_H_
