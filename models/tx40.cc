#include "dynid/models/tx40.h"

#include <cmath>

#include <glog/logging.h>

namespace dynid::models {
namespace {

constexpr double kDeg = M_PI / 180.0;

Eigen::VectorXd Vector6(double a, double b, double c, double d, double e, double f) {
  Eigen::VectorXd v(6);
  v << a, b, c, d, e, f;
  return v;
}

}  // namespace

SerialRobot MakeTx40(const Tx40Options& options) {
  const double alpha[6] = {0.0, -M_PI / 2, 0.0, M_PI / 2, -M_PI / 2, M_PI / 2};
  const double d[6] = {0.0, 0.0, 0.225, 0.0, 0.0, 0.0};
  const double r[6] = {0.0, 0.0, 0.035, 0.225, 0.0, 0.0};
  const double theta0[6] = {0.0, -M_PI / 2, M_PI / 2, 0.0, 0.0, M_PI};
  std::vector<JointGeometry> joints(6);
  for (int j = 0; j < 6; ++j) {
    joints[j].type = JointType::kRevolute;
    joints[j].alpha_rad = alpha[j];
    joints[j].d_m = d[j];
    joints[j].r_m = r[j];
    joints[j].theta_rad = theta0[j];
  }
  Parameterization parameterization;
  parameterization.rotor_inertia = true;
  parameterization.friction = true;
  parameterization.torque_offset = options.torque_offsets;
  parameterization.coupling_form = CouplingForm::kPhysical;
  CoupledMotor motor6;
  motor6.name = "m6";
  motor6.coupling = Vector6(0, 0, 0, 0, 1, 1);
  SerialRobot robot("tx40", joints, parameterization, {motor6});

  const double mass[6] = {8.61, 4.85, 4.07, 3.62, 1.02, 0.20};
  const double first_moment[6][3] = {{0, 0, -0.4305},     {0.392, -0.0072, 0.162},
                                     {0.0326, 0.0244, 0.265}, {0.0145, -0.00724, -0.586},
                                     {0, -0.00306, -0.00102}, {0, 0, 0.0084}};
  // XX XY XZ YY YZ ZZ about frame j.
  const double inertia[6][6] = {{0.424, 0, 0, 0.424, 0, 0.352},
                                {1.63e-2, 7.85e-4, -1.57e-2, 8.81e-2, 3.24e-4, 8.28e-2},
                                {2.23e-2, -1.95e-4, -1.16e-3, 2.24e-2, -2.22e-3, 4.41e-3},
                                {1.09e-1, 2.9e-5, 1.35e-3, 1.08e-1, -1.17e-3, 4.07e-3},
                                {1.01e-3, 0, 0, 1.00e-3, -3.06e-6, 1.01e-3},
                                {3.53e-3, 0, 0, 3.53e-3, 0, 3.53e-4}};
  // Motor 6's rotor is the coupled rotor Iam6 (header comment), so the physical ia6 is zero.
  const double ia[6] = {0.362, 0.507, 0.0829, 0.0341, 0.0361, 0.0};
  const double fv[6] = {7.94, 5.69, 1.98, 1.11, 1.60, 0.689};
  const double fc[6] = {6.98, 7.83, 6.19, 2.41, 3.41, 1.83};
  for (int j = 0; j < 6; ++j) {
    LinkInertia link;
    link.xx = inertia[j][0];
    link.xy = inertia[j][1];
    link.xz = inertia[j][2];
    link.yy = inertia[j][3];
    link.yz = inertia[j][4];
    link.zz = inertia[j][5];
    link.mx = first_moment[j][0];
    link.my = first_moment[j][1];
    link.mz = first_moment[j][2];
    link.m = mass[j];
    robot.SetLinkInertia(j, link);
    JointDrive drive;
    drive.ia = ia[j];
    drive.fv = fv[j];
    drive.fc = fc[j];
    robot.SetJointDrive(j, drive);
  }
  robot.SetCoupledMotor(0, /*ia=*/0.0114, /*fv=*/0.8, /*fc=*/1.6);
  return ConvertCouplingForm(robot, options.coupling_form);
}

const std::vector<std::string>& Tx40EssentialNames() {
  static const std::vector<std::string> names = {
      "zz1r", "fc1", "fv1", "xx2r", "xz2r", "zz2r", "mx2r", "fc2", "fv2", "xx3r",
      "zz3r", "my3r", "ia3", "fc3", "fv3", "mx4",  "ia4",  "fc4", "fv4", "my5r",
      "ia5",  "fc5", "fv5", "ia6", "fc6", "fv6",  "fcm6", "fvm6"};
  return names;
}

Eigen::VectorXd Tx40GearRatios() { return Vector6(32, 32, 45, -48, 45, 32); }

Eigen::VectorXd Tx40EncoderResolutionRad() {
  return Vector6(0.057, 0.057, 0.122, 0.114, 0.122, 0.172) * 1e-3 * kDeg;
}

Eigen::VectorXd Tx40JointLowerLimitRad() {
  return Vector6(-180, -125, -138, -270, -120, -270) * kDeg;
}

Eigen::VectorXd Tx40JointUpperLimitRad() {
  return Vector6(180, 125, 138, 270, 133.5, 270) * kDeg;
}

Eigen::VectorXd Tx40VelocityLimitRadPerS() {
  return Vector6(287, 287, 430, 410, 320, 700) * kDeg;
}

Eigen::MatrixXd Tx40MotorFromJoint() {
  Eigen::MatrixXd r = Tx40GearRatios().asDiagonal();
  r(5, 4) = r(5, 5);
  return r;
}

Eigen::MatrixXd Tx40JointTorqueFromMotorTorque() { return Tx40MotorFromJoint().transpose(); }

void Tx40MotorToJoint(const Eigen::MatrixXd& motor_positions, const Eigen::MatrixXd& motor_torques,
                      Eigen::MatrixXd* joint_positions, Eigen::MatrixXd* joint_torques) {
  CHECK_EQ(motor_positions.cols(), 6) << "motor positions: expected 6 columns";
  CHECK_EQ(motor_torques.cols(), 6) << "motor torques: expected 6 columns";
  CHECK(joint_positions != nullptr && joint_torques != nullptr);
  const Eigen::MatrixXd r = Tx40MotorFromJoint();
  // Rows are samples: q_kᵀ = q_m,kᵀ R^{-T}, tau_kᵀ = tau_m,kᵀ Tᵀ = tau_m,kᵀ R.
  *joint_positions = r.partialPivLu().solve(motor_positions.transpose()).transpose();
  *joint_torques = motor_torques * r;
}

}  // namespace dynid::models
