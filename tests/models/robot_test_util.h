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

// A random unit vector and a random rotation.
inline Eigen::Vector3d RandomUnitVector(std::mt19937* rng) {
  std::normal_distribution<double> normal;
  Eigen::Vector3d v(normal(*rng), normal(*rng), normal(*rng));
  return v.normalized();
}
inline Eigen::Matrix3d RandomRotation(std::mt19937* rng) {
  std::normal_distribution<double> normal;
  return Eigen::Quaterniond(normal(*rng), normal(*rng), normal(*rng), normal(*rng))
      .normalized()
      .toRotationMatrix();
}

// R P R R P R R in the general joint form: random placements (rotation and translation), random
// joint axes and joint-zero offsets, random physically consistent links, per-joint drive terms
// (one joint with a Stribeck column, one without Coulomb friction, offsets on some) and a
// coupled motor on joints 6 and 7.
inline SerialRobot MakeRandomGeneralChain7(std::uint32_t seed,
                                           CouplingForm form = CouplingForm::kPhysical) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), pos(0.0, 1.0);
  const JointType types[7] = {JointType::kRevolute, JointType::kPrismatic, JointType::kRevolute,
                              JointType::kRevolute, JointType::kPrismatic, JointType::kRevolute,
                              JointType::kRevolute};
  std::vector<JointModel> joints(7);
  Parameterization parameterization;
  parameterization.coupling_form = form;
  for (int j = 0; j < 7; ++j) {
    joints[j].name = "g" + std::to_string(j + 1);
    joints[j].type = types[j];
    joints[j].placement.linear() = RandomRotation(&rng);
    joints[j].placement.translation() =
        Eigen::Vector3d(0.3 * unit(rng), 0.3 * unit(rng), 0.3 * unit(rng));
    joints[j].axis = RandomUnitVector(&rng);
    joints[j].offset = 0.5 * unit(rng);
    JointTerms terms;
    terms.offset = j % 2 == 0;
    terms.coulomb = j != 3;
    terms.stribeck_velocity = j == 2 ? 0.3 : 0.0;
    parameterization.joint_terms.push_back(terms);
  }
  CoupledMotor motor;
  motor.name = "m7";
  motor.coupling = Eigen::VectorXd::Zero(7);
  motor.coupling[5] = 1.0;
  motor.coupling[6] = -0.5;
  SerialRobot robot("general7", joints, parameterization, {motor});
  for (int j = 0; j < 7; ++j) {
    const double mass = 0.5 + 3.0 * pos(rng);
    const Eigen::Vector3d com(0.2 * unit(rng), 0.2 * unit(rng), 0.2 * unit(rng));
    const Eigen::Vector3d principal(0.01 + 0.05 * pos(rng), 0.01 + 0.05 * pos(rng),
                                    0.01 + 0.05 * pos(rng));
    const Eigen::Matrix3d r = RandomRotation(&rng);
    robot.SetLinkInertia(
        j, LinkInertia::FromCenterOfMass(mass, com, r * principal.asDiagonal() * r.transpose()));
    const JointTerms terms = parameterization.joint_terms[j];
    JointDrive drive;
    drive.ia = 0.01 + 0.1 * pos(rng);
    drive.fv = pos(rng);
    if (terms.coulomb) drive.fc = pos(rng);
    if (terms.stribeck_velocity > 0.0) drive.fs = pos(rng);
    if (terms.offset) drive.offset = unit(rng);
    robot.SetJointDrive(j, drive);
  }
  robot.SetCoupledMotor(0, 0.02, 0.3, 0.4);
  return robot;
}

// The same mechanism as `robot` with every link frame turned by a random rotation Q_j about its
// origin: placement Q_{j−1}ᵀ P_j Q_j, axis Q_jᵀ u_j, link inertias re-expressed in the turned
// frames. Torques, mass matrix and energies are unchanged; the kinematics take the general-axis
// path.
inline SerialRobot TurnLinkFrames(const SerialRobot& robot, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const int n = robot.num_joints();
  std::vector<Eigen::Matrix3d> turn(n + 1, Eigen::Matrix3d::Identity());
  for (int j = 1; j <= n; ++j) turn[j] = RandomRotation(&rng);
  std::vector<JointModel> joints = robot.joints();
  for (int j = 0; j < n; ++j) {
    Eigen::Isometry3d before = Eigen::Isometry3d::Identity(), after = before;
    before.linear() = turn[j].transpose();
    after.linear() = turn[j + 1];
    joints[j].placement = before * joints[j].placement * after;
    joints[j].axis = turn[j + 1].transpose() * joints[j].axis;
  }
  SerialRobot turned(robot.name() + "_turned", joints, robot.parameterization(),
                     robot.coupled_motors());
  turned.SetStandardParameters(robot.standard_parameters());
  for (int j = 0; j < n; ++j) {
    Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
    pose.linear() = turn[j + 1].transpose();  // old frame j in the turned frame
    turned.SetLinkInertia(j, robot.GetLinkInertia(j).Transformed(pose));
  }
  turned.set_gravity_mps2(robot.gravity_mps2());
  return turned;
}

}  // namespace dynid::models::testing

#endif  // DYNID_TESTS_MODELS_ROBOT_TEST_UTIL_H_
