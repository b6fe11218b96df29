// models/tx40 — the Stäubli TX40 six-axis industrial robot (Brunot et al. (2018) §2 and §4.1).
//
// Geometry (modified DH, metres): alpha = [0, −pi/2, 0, pi/2, −pi/2, pi/2],
// d = [0, 0, 0.225, 0, 0, 0], r = [0, 0, 0.035, 0.225, 0, 0]; all joints revolute. The joint
// variables q are the controller's joint angles: the modified-DH angles are
// theta = [q1, q2 − pi/2, q3 + pi/2, q4, q5, q6 + pi] (the joint-zero offsets live in
// JointGeometry::theta_rad), the convention of the public BIRDy TX40 description whose
// ("CAD") inertial values are used here.
//
// Transmission: gear ratios N = [32, 32, 45, −48, 45, 32]; motor 6 turns with joints 5 and 6,
// q_m = R q with R = diag(N), R(6,5) = N6 (1-based); joint torques tau = T tau_m with T = Rᵀ
// (T = diag(N), T(5,6) = N6). Motor 6 is a SerialRobot coupled motor "m6" with c = e5 + e6,
// adding the standard parameters iam6, fvm6, fcm6.
//
// Standard parameters: 6 × (10 inertial + ia + fv + fc) + iam6 + fvm6 + fcm6 = 81 (+6 torque
// offsets "off1".."off6" when enabled). Base parameters: 55 = 36 inertial (zz1r; xx2r xy2 xz2r
// yz2 zz2r mx2r my2; 7 per link for links 3–6) + ia3..ia6 + iam6 + fv1..fv6 + fc1..fc6 + fvm6 +
// fcm6, plus 6 with offsets (tests/models/tx40_test.cc). Brunot et al. (2018) count 60 for their
// own parameterisation.
//
// CAD values (kg, kg m, kg m², N m s/rad, N m), as used by Brunot et al. (2018) §4.1. The list
// gives one rotor inertia per motor; motor 6's (0.0114 kg m²) is taken as the coupled rotor inertia
// Iam6 (it turns with q5 + q6), so in the physical form ia6 = 0. fv, fc are joint-side terms,
// fvm6 = 0.8, fcm6 = 1.6 motor-6 terms. In the published (Gautier) form the same robot has
// ia5' = ia5 + Iam6, ia6' = Iam6, fv5' = fv5 + fvm6, fv6' = fv6 + fvm6 (ConvertCouplingForm).
#ifndef DYNID_MODELS_TX40_H_
#define DYNID_MODELS_TX40_H_

#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/models/serial_robot.h"

namespace dynid::models {

struct Tx40Options {
  CouplingForm coupling_form = CouplingForm::kGautier;  // the form of Brunot et al. (2018) Table 2
  bool torque_offsets = false;
};

// The TX40 with the CAD parameter set loaded.
SerialRobot MakeTx40(const Tx40Options& options = Tx40Options());

// The 28 essential parameter names of Brunot et al. (2018) Table 2 (published form).
const std::vector<std::string>& Tx40EssentialNames();

Eigen::VectorXd Tx40GearRatios();                   // [32, 32, 45, −48, 45, 32]
Eigen::VectorXd Tx40EncoderResolutionRad();         // joint side, Brunot et al. (2018) Table 1
Eigen::VectorXd Tx40JointLowerLimitRad();           // controller angles
Eigen::VectorXd Tx40JointUpperLimitRad();
Eigen::VectorXd Tx40VelocityLimitRadPerS();
Eigen::MatrixXd Tx40MotorFromJoint();               // R: q_m = R q
Eigen::MatrixXd Tx40JointTorqueFromMotorTorque();   // T = Rᵀ: tau = T tau_m

// Real-robot interface (Brunot et al. (2018) §2): motor positions (rad) and motor torques (N m), Ns
// × 6, to joint positions (controller angles, the q of MakeTx40) and joint torques, Ns × 6.
void Tx40MotorToJoint(const Eigen::MatrixXd& motor_positions, const Eigen::MatrixXd& motor_torques,
                      Eigen::MatrixXd* joint_positions, Eigen::MatrixXd* joint_torques);

}  // namespace dynid::models

#endif  // DYNID_MODELS_TX40_H_
