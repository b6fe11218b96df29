// models/drive_description — transmissions, motors and friction of a robot's joints, read from a
// JSON or YAML file, and the conversion of recorded motor-side data to the joint side.
//
// Transmission. Motor angles q_m = R q (R: n × n "motor from joint" matrix; R = diag(N) for
// independent gears of ratio N_j). By the principle of virtual work the joint torques are
// tau = Rᵀ tau_m (Khalil & Dombre (2002) §9.7). Motor torques tau_m = K_t ∘ i for currents i and
// motor constants K_t [N m/A]. A row k of R with more than one non-zero entry is a motor that
// turns with several joints (the TX40's motor 6: R(6,5) = R(6,6) = N6); it becomes a SerialRobot
// coupled motor named "m<k>" with coupling c = R(k,:)/R(k,k) and the parameters ia<m>, fv<m>,
// fc<m> (serial_robot.h). Its rotor inertia and friction are then those of the coupled motor; the
// joint's own ia/fv/fc columns stay (in the Gautier form they absorb the diagonal part).
//
// Data side. With side = motor, recorded positions are motor angles and recorded torques motor
// torques: q = R⁻¹ q_m, tau = Rᵀ tau_m. With side = joint (default) they are used as they are.
// Currents are always motor currents: tau = Rᵀ (K_t ∘ i). The joint-zero offsets o_j
// (position_offset: the description's joint angle when the recorded one is zero) are added to
// the robot's joint offsets by MakeSerialRobot, so the robot takes the recorded (joint-side)
// positions as they are.
//
// Friction per joint: viscous fv q', Coulomb fc sign(q'), optional offset and a fixed-shape
// Stribeck term fs exp(−(q'/v_s)²) sign(q') with v_s given (stribeck_velocity; fs is linear,
// v_s is not identified). Without a drive file (DefaultDrives) every joint gets rotor inertia,
// viscous and Coulomb friction and a torque offset; rotor inertias that cannot be identified
// (e.g. that of joint 1, which acts like zz1) are regrouped by the base parameters.
//
// File format (YAML shown; JSON has the same keys):
//     side: motor                # joint (default) | motor
//     coupling_form: gautier     # physical (default) | gautier (serial_robot.h)
//     joints:                    # keyed by the chain's joint names; joints not listed get the
//       joint_1:                 # defaults of DefaultDrives
//         gear_ratio: 32         # N_j (default 1)
//         motor_constant: 0.7    # K_t [N m/A] (default 1)
//         position_offset: 0.0   # o_j [rad or m] (default 0)
//         rotor_inertia: true    # ia column (default true)
//         friction: {viscous: true, coulomb: true, offset: false, stribeck_velocity: 0.0}
//         initial: {ia: 0.36, fv: 7.9, fc: 7.0, fs: 0.0, offset: 0.0}   # prior values
//     transmission:              # optional R, n rows of n numbers in chain joint order;
//       - [32, 0, 0, 0, 0, 0]    # its diagonal must equal any gear_ratio given
//       ...
//     coupled_motors:            # optional prior values of the motors R couples
//       m6: {ia: 0.0114, fv: 0.8, fc: 1.6}
#ifndef DYNID_MODELS_DRIVE_DESCRIPTION_H_
#define DYNID_MODELS_DRIVE_DESCRIPTION_H_

#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/models/robot_description.h"
#include "dynid/models/serial_robot.h"

namespace dynid::models {

enum class DataSide { kJoint, kMotor };

struct JointDriveSpec {
  std::string joint;             // chain joint name
  double gear_ratio = 1.0;       // N_j
  double motor_constant = 1.0;   // K_t [N m/A]
  double position_offset = 0.0;  // o_j [rad or m]
  JointTerms terms;              // drive columns (DefaultDriveTerms() unless the file says)
  JointDrive initial;            // prior values of those columns
};

struct CoupledMotorPrior {
  std::string name;  // "m<k>"
  double ia = 0.0, fv = 0.0, fc = 0.0;
};

struct DriveDescription {
  std::string source;  // file, or "default drives"
  DataSide side = DataSide::kJoint;
  CouplingForm coupling_form = CouplingForm::kPhysical;
  std::vector<JointDriveSpec> joints;  // one per chain joint, chain order
  Eigen::MatrixXd motor_from_joint;    // R, n × n
  std::vector<CoupledMotorPrior> coupled_priors;

  int num_joints() const { return static_cast<int>(joints.size()); }
  // The coupled motors R implies (header comment), with their prior values.
  std::vector<CoupledMotor> CoupledMotors() const;
};

// Rotor inertia, viscous and Coulomb friction and a torque offset (no Stribeck term).
JointTerms DefaultDriveTerms();
// Unit gears and motor constants, joint-side data, DefaultDriveTerms() for every joint.
DriveDescription DefaultDrives(const ChainDescription& chain);

// Reads a drive file for `chain` (joint names must be the chain's). Errors name the file, the
// line and column (YAML) and the key.
bool ReadDriveDescription(const std::string& path, const ChainDescription& chain,
                          DriveDescription* drives, std::string* error);
// The same from text in the given format ("json" or "yaml"); source names it in messages.
bool ParseDriveDescription(const std::string& text, const std::string& format,
                           const std::string& source, const ChainDescription& chain,
                           DriveDescription* drives, std::string* error);

// Recorded data (Ns × n, one sample per row) to the model's joint side (header comment).
// positions → q; torques → tau; currents → tau.
void JointPositionsFromData(const DriveDescription& drives, const Eigen::MatrixXd& positions,
                            Eigen::MatrixXd* q);
void JointTorquesFromData(const DriveDescription& drives, const Eigen::MatrixXd& torques,
                          Eigen::MatrixXd* tau);
void JointTorquesFromCurrents(const DriveDescription& drives, const Eigen::MatrixXd& currents,
                              Eigen::MatrixXd* tau);

}  // namespace dynid::models

#endif  // DYNID_MODELS_DRIVE_DESCRIPTION_H_
