#include "dynid/solvers/torque_validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "tests/solvers/physically_consistent_fixtures.h"

namespace dynid::solvers {
namespace {

using dynid::testing::ChainRecord;
using dynid::testing::MakeRandomChain4;
using dynid::testing::SimulateChain;

// The record as a validation record, torques from inverse dynamics (independent of the regressor)
// plus white noise of noise_std[j] on joint j.
ValidationRecord MakeRecord(const models::SerialRobot& robot, const ChainRecord& chain,
                            const Eigen::Vector4d& noise_std, std::uint32_t seed) {
  ValidationRecord record;
  record.q = chain.q;
  record.qd = chain.qd;
  record.qdd = chain.qdd;
  record.tau.resize(chain.q.rows(), 4);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::VectorXd tau;
  for (Eigen::Index k = 0; k < chain.q.rows(); ++k) {
    robot.InverseDynamics(chain.q.row(k).transpose(), chain.qd.row(k).transpose(),
                          chain.qdd.row(k).transpose(), &tau);
    for (int j = 0; j < 4; ++j) record.tau(k, j) = tau[j] + noise_std[j] * normal(rng);
  }
  return record;
}

TEST(TorqueValidationTest, TruthPredictsInverseDynamicsAndScoresTheNoise) {
  const models::SerialRobot robot = MakeRandomChain4(4);
  const ChainRecord chain = SimulateChain(robot, 0.0, 4);
  const Eigen::Vector4d noise(0.0, 0.2, 0.0, 0.05);
  const ValidationRecord record = MakeRecord(robot, chain, noise, 9);
  TorqueValidation v;
  std::string error;
  ASSERT_TRUE(ValidateTorques(robot, robot.standard_parameters(), record, &v, &error)) << error;
  ASSERT_EQ(v.joints.size(), 4u);
  EXPECT_LT(v.rms_error[0], 1e-10 * v.rms_measured[0]);
  EXPECT_LT(v.rms_error[2], 1e-10 * v.rms_measured[2]);
  EXPECT_NEAR(v.rms_error[1], 0.2, 0.02);
  EXPECT_NEAR(v.rms_error[3], 0.05, 0.005);
  EXPECT_NEAR(v.relative_error[1], v.rms_error[1] / v.rms_measured[1], 1e-15);
  // Pooled: the root of the summed squares over all measured joints.
  const double e2 = v.rms_error.squaredNorm(), t2 = v.rms_measured.squaredNorm();
  EXPECT_NEAR(v.pooled_relative_error, std::sqrt(e2 / t2), 1e-12);
  EXPECT_NEAR(v.pooled_rms_error, std::sqrt(e2 / 4.0), 1e-12);
  EXPECT_NE(v.Report().find("pooled"), std::string::npos);

  // Base parameters give the same predictions.
  TorqueValidation b;
  ASSERT_TRUE(ValidateTorques(robot, chain.base, chain.base.Reduce(robot.standard_parameters()),
                              record, &b, &error))
      << error;
  EXPECT_LT((b.predicted - v.predicted).norm(), 1e-10 * v.predicted.norm());
}

TEST(TorqueValidationTest, ScoresOnlyTheMeasuredJoints) {
  const models::SerialRobot robot = MakeRandomChain4(6);
  const ChainRecord chain = SimulateChain(robot, 0.0, 6, -1, 400);
  ValidationRecord record = MakeRecord(robot, chain, Eigen::Vector4d::Zero(), 1);
  record.measured = {true, false, true, false};
  record.tau.col(1).setConstant(std::nan(""));  // not recorded
  // Parameters off by 10 %: the error appears on the measured joints only.
  const Eigen::VectorXd theta = 1.1 * robot.standard_parameters();
  TorqueValidation v;
  std::string error;
  ASSERT_TRUE(ValidateTorques(robot, theta, record, &v, &error)) << error;
  EXPECT_EQ(v.joints, (std::vector<int>{0, 2}));
  EXPECT_TRUE(std::isnan(v.relative_error[1]));
  // τ̂ = 1.1 τ: relative error 0.1 on every measured joint and pooled.
  EXPECT_NEAR(v.relative_error[0], 0.1, 1e-9);
  EXPECT_NEAR(v.relative_error[2], 0.1, 1e-9);
  EXPECT_NEAR(v.pooled_relative_error, 0.1, 1e-9);
  EXPECT_EQ(v.predicted.cols(), 4);
  EXPECT_TRUE(v.predicted.allFinite());

  record.measured = {false, false, false, false};
  EXPECT_FALSE(ValidateTorques(robot, theta, record, &v, &error));
  EXPECT_NE(error.find("no joint"), std::string::npos) << error;
  record.measured = {true, true, false, false};
  EXPECT_FALSE(ValidateTorques(robot, theta, record, &v, &error));
  EXPECT_NE(error.find("joint 2 is not finite"), std::string::npos) << error;
}

}  // namespace
}  // namespace dynid::solvers
