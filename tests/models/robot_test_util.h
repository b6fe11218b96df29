// Shared fixtures for the serial-robot tests: a random 7-joint chain with prismatic joints and
// random physically consistent parameters.
#ifndef DYNID_TESTS_MODELS_ROBOT_TEST_UTIL_H_
#define DYNID_TESTS_MODELS_ROBOT_TEST_UTIL_H_

#include <cmath>
#include <random>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "dynid/models/serial_robot.h"

namespace dynid::models::testing {

// R R P R R P R with random alpha, d, r and joint-zero angles, a coupled motor on joints 6 and 7,
// random masses, centres of mass and positive definite inertias, random drive terms.
inline SerialRobot MakeRandomChain7(std::uint32_t seed, bool with_offsets,
                                    CouplingForm form = CouplingForm::kPhysical,
                                    bool with_friction = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), pos(0.0, 1.0);
  const JointType types[7] = {JointType::kRevolute, JointType::kRevolute, JointType::kPrismatic,
                              JointType::kRevolute, JointType::kRevolute, JointType::kPrismatic,
                              JointType::kRevolute};
  std::vector<JointGeometry> joints(7);
  for (int j = 0; j < 7; ++j) {
    joints[j].type = types[j];
    joints[j].alpha_rad = j == 0 ? 0.0 : unit(rng) * M_PI;
    joints[j].d_m = 0.1 + 0.3 * pos(rng);
    joints[j].r_m = 0.05 + 0.2 * pos(rng);
    joints[j].theta_rad = unit(rng) * M_PI;
  }
  Parameterization parameterization;
  parameterization.torque_offset = with_offsets;
  parameterization.friction = with_friction;
  parameterization.coupling_form = form;
  CoupledMotor motor;
  motor.name = "m7";
  motor.coupling = Eigen::VectorXd::Zero(7);
  motor.coupling[5] = 0.5;
  motor.coupling[6] = 1.0;
  SerialRobot robot("random7", joints, parameterization, {motor});
  for (int j = 0; j < 7; ++j) {
    const double mass = 0.5 + 3.0 * pos(rng);
    const Eigen::Vector3d com(0.2 * unit(rng), 0.2 * unit(rng), 0.2 * unit(rng));
    const Eigen::Quaterniond orientation =
        Eigen::Quaterniond(unit(rng), unit(rng), unit(rng), unit(rng)).normalized();
    // Principal moments obeying the triangle inequality.
    const Eigen::Vector3d principal(0.01 + 0.05 * pos(rng), 0.01 + 0.05 * pos(rng),
                                    0.01 + 0.05 * pos(rng));
    const Eigen::Matrix3d r = orientation.toRotationMatrix();
    robot.SetLinkInertia(
        j, LinkInertia::FromCenterOfMass(mass, com, r * principal.asDiagonal() * r.transpose()));
    JointDrive drive;
    drive.ia = 0.01 + 0.1 * pos(rng);
    if (with_friction) {
      drive.fv = pos(rng);
      drive.fc = pos(rng);
    }
    if (with_offsets) drive.offset = unit(rng);
    robot.SetJointDrive(j, drive);
  }
  robot.SetCoupledMotor(0, 0.02, with_friction ? 0.3 : 0.0, with_friction ? 0.4 : 0.0);
  return robot;
}

}  // namespace dynid::models::testing

#endif  // DYNID_TESTS_MODELS_ROBOT_TEST_UTIL_H_
