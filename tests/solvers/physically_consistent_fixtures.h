// Shared fixture of the physically consistent fit and validation tests: a random consistent
// R R P R chain with rotor inertias, friction and offsets at random states, with its stacked
// regressor, base parameters and noisy torques.
#ifndef DYNID_TESTS_SOLVERS_PHYSICALLY_CONSISTENT_FIXTURES_H_
#define DYNID_TESTS_SOLVERS_PHYSICALLY_CONSISTENT_FIXTURES_H_

#include <glog/logging.h>

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>
#include <random>
#include <string>

#include "dynid/models/base_parameters.h"
#include "dynid/models/serial_robot.h"

namespace dynid::testing {

inline models::SerialRobot MakeRandomChain4(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), pos(0.0, 1.0);
  const models::JointType types[4] = {models::JointType::kRevolute, models::JointType::kRevolute,
                                      models::JointType::kPrismatic, models::JointType::kRevolute};
  std::vector<models::JointGeometry> joints(4);
  for (int j = 0; j < 4; ++j) {
    joints[j].type = types[j];
    joints[j].alpha_rad = j == 0 ? 0.0 : unit(rng) * M_PI;
    joints[j].d_m = 0.1 + 0.3 * pos(rng);
    joints[j].r_m = 0.05 + 0.2 * pos(rng);
    joints[j].theta_rad = unit(rng) * M_PI;
  }
  models::Parameterization parameterization;
  parameterization.torque_offset = true;
  models::SerialRobot robot("random4", joints, parameterization);
  for (int j = 0; j < 4; ++j) {
    const double mass = 0.5 + 3.0 * pos(rng);
    const Eigen::Vector3d com(0.2 * unit(rng), 0.2 * unit(rng), 0.2 * unit(rng));
    const Eigen::Matrix3d r = Eigen::Quaterniond(unit(rng), unit(rng), unit(rng), unit(rng))
                                  .normalized()
                                  .toRotationMatrix();
    // Principal moments about the centre of mass with the triangle inequality held with margin:
    // the third between |a − b| and a + b, at least 10 % of that range from either end.
    Eigen::Vector3d principal(0.02 + 0.05 * pos(rng), 0.02 + 0.05 * pos(rng), 0.0);
    const double low = std::abs(principal[0] - principal[1]);
    principal[2] = low + (0.1 + 0.8 * pos(rng)) * (principal[0] + principal[1] - low);
    robot.SetLinkInertia(j, models::LinkInertia::FromCenterOfMass(
                                mass, com, r * principal.asDiagonal() * r.transpose()));
    models::JointDrive drive;
    drive.ia = 0.05 + 0.1 * pos(rng);
    drive.fv = 0.3 + pos(rng);
    drive.fc = 0.3 + pos(rng);
    drive.offset = 0.5 * unit(rng);
    robot.SetJointDrive(j, drive);
  }
  return robot;
}

// A record of the chain at random states (q uniform over a turn, or ±0.3 m, q' within ±2, q''
// within ±5; models::RandomRobotStates), which excites every base parameter well: states
// (Ns × 4), the stacked standard regressor, the base set, the base regressor and torques with
// white noise of `noise_std` on every joint (stacked joint-major like the regressor).
struct ChainRecord {
  Eigen::MatrixXd q, qd, qdd;
  Eigen::MatrixXd x_standard, x_base;
  models::BaseParameterSet base;
  Eigen::VectorXd tau_exact, tau;
};

// `still_joint` >= 0 holds that joint at 0.3 (rad or m) throughout (a rank-deficient record).
inline ChainRecord SimulateChain(const models::SerialRobot& robot, double noise_std,
                                 std::uint32_t seed, int still_joint = -1, int num_states = 1000) {
  std::string error;
  ChainRecord record;
  models::RandomRobotStates(robot, num_states, seed, 2.0, 5.0, 0.3, &record.q, &record.qd,
                            &record.qdd);
  if (still_joint >= 0) {
    record.q.col(still_joint).setConstant(0.3);
    record.qd.col(still_joint).setZero();
    record.qdd.col(still_joint).setZero();
  }
  robot.StackedRegressor(record.q, record.qd, record.qdd, &record.x_standard);
  CHECK(models::ComputeNumericalBaseParameters(robot, models::NumericalBaseOptions(), &record.base,
                                               &error))
      << error;
  record.base.SelectColumns(record.x_standard, &record.x_base);
  record.tau_exact = record.x_standard * robot.standard_parameters();
  std::mt19937 rng(seed + 1000);
  std::normal_distribution<double> normal(0.0, 1.0);
  record.tau = record.tau_exact;
  for (Eigen::Index i = 0; i < record.tau.size(); ++i) record.tau[i] += noise_std * normal(rng);
  return record;
}

}  // namespace dynid::testing

#endif  // DYNID_TESTS_SOLVERS_PHYSICALLY_CONSISTENT_FIXTURES_H_
