#include "dynid/data/robot_simulator.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <glog/logging.h>
#include <gtest/gtest.h>

#include "dynid/data/trajectory.h"
#include "dynid/models/base_parameters.h"
#include "dynid/models/tx40.h"

namespace dynid::data {
namespace {

QuinticTrajectory Tx40Move() {
  Eigen::VectorXd a(6), b(6);
  a << 0.0, 0.2, -0.3, 0.5, 0.4, -0.5;
  b << 0.8, -0.4, 0.6, -0.6, -0.3, 1.0;
  QuinticTrajectory trajectory;
  std::string error;
  CHECK(QuinticTrajectory::Create({a, b, a}, 0.5 * models::Tx40VelocityLimitRadPerS(),
                                  2.0 * models::Tx40VelocityLimitRadPerS(), 0.05, &trajectory,
                                  &error))
      << error;
  return trajectory;
}

RobotSimulatorOptions Tx40Options(const models::SerialRobot& robot) {
  RobotSimulatorOptions options;
  options.control_rate_hz = 5000.0;
  options.gains = TunePidGains(robot, Eigen::VectorXd::Zero(6), 10.0);
  options.motor_from_joint = models::Tx40MotorFromJoint();
  options.duration_s = 0.6;
  return options;
}

TEST(RobotSimulatorTest, TracksAndRecordsConsistentStates) {
  const models::SerialRobot robot = models::MakeTx40();
  const QuinticTrajectory reference = Tx40Move();
  RobotSimulatorOptions options = Tx40Options(robot);
  options.velocity_from_encoder = false;
  RobotSimulation sim;
  std::string error;
  ASSERT_TRUE(SimulateClosedLoop(robot, reference, options, &sim, &error)) << error;
  ASSERT_EQ(sim.time.size(), 3001);
  EXPECT_LT((sim.q_reference - sim.q).cwiseAbs().maxCoeff(), 0.02);
  // The recorded acceleration is the direct dynamic model at the recorded state and torque.
  for (int k = 0; k < 3001; k += 250) {
    Eigen::VectorXd tau;
    robot.InverseDynamics(sim.q.row(k).transpose(), sim.qd.row(k).transpose(),
                          sim.qdd.row(k).transpose(), &tau);
    EXPECT_LE((tau - sim.tau.row(k).transpose()).norm(), 1e-8 * tau.norm()) << k;
  }
  // Each recorded step is the held-torque motion: re-integrating one control period with 40
  // fine RK4 steps from the recorded state reproduces the next state, wherever no joint velocity
  // changes sign inside the period (Coulomb friction makes the model discontinuous there).
  const double dt = 2e-4;
  int checked = 0;
  for (int k = 0; k + 1 < 3001; k += 13) {
    const Eigen::VectorXd v0 = sim.qd.row(k).transpose(), v1 = sim.qd.row(k + 1).transpose();
    // Away from zero velocity (the stick phases chatter: the sign can flip twice in a period).
    if ((v0.cwiseAbs().array() < 0.05).any()) continue;
    if (std::abs(v0[4] + v0[5]) < 0.05) continue;  // motor 6 friction acts on sign(q5' + q6')
    Eigen::VectorXd q = sim.q.row(k).transpose(), v = v0;
    const Eigen::VectorXd tau = sim.tau.row(k).transpose();
    const int fine = 40;
    const double h = dt / fine;
    Eigen::VectorXd a1, a2, a3, a4;
    for (int step = 0; step < fine; ++step) {
      robot.ForwardDynamics(q, v, tau, &a1);
      robot.ForwardDynamics(q + 0.5 * h * v, v + 0.5 * h * a1, tau, &a2);
      robot.ForwardDynamics(q + 0.5 * h * (v + 0.5 * h * a1), v + 0.5 * h * a2, tau, &a3);
      robot.ForwardDynamics(q + h * (v + 0.5 * h * a2), v + h * a3, tau, &a4);
      q += h / 6 * (v + 2 * (v + 0.5 * h * a1) + 2 * (v + 0.5 * h * a2) + (v + h * a3));
      v += h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
    }
    EXPECT_LE((q - sim.q.row(k + 1).transpose()).norm(), 1e-11) << k;
    EXPECT_LE((v - v1).norm(), 1e-7) << k;
    ++checked;
  }
  EXPECT_GT(checked, 20);
  // Noise-free sensors and identity quantisation: measured = true.
  EXPECT_EQ((sim.q_measured - sim.q).norm(), 0.0);
  EXPECT_EQ((sim.tau_measured - sim.tau).norm(), 0.0);
}

TEST(RobotSimulatorTest, IntegrationConvergesWithSubsteps) {
  // Without Coulomb friction the right-hand side is smooth and RK4 converges fast; with it the
  // model is discontinuous at q' = 0 (see TracksAndRecordsConsistentStates for that case).
  models::SerialRobot robot = models::MakeTx40();
  for (int j = 0; j < 6; ++j) {
    models::JointDrive drive = robot.GetJointDrive(j);
    drive.fc = 0.0;
    robot.SetJointDrive(j, drive);
  }
  robot.SetCoupledMotor(0, robot.standard_parameters()[robot.ParameterIndex("iam6")],
                        robot.standard_parameters()[robot.ParameterIndex("fvm6")], 0.0);
  const QuinticTrajectory reference = Tx40Move();
  RobotSimulatorOptions options = Tx40Options(robot);
  options.duration_s = 0.3;
  RobotSimulation one, four;
  std::string error;
  ASSERT_TRUE(SimulateClosedLoop(robot, reference, options, &one, &error)) << error;
  options.integration_substeps = 4;
  ASSERT_TRUE(SimulateClosedLoop(robot, reference, options, &four, &error)) << error;
  EXPECT_LT((one.q - four.q).cwiseAbs().maxCoeff(), 1e-8);
}

TEST(RobotSimulatorTest, SensorsAndTransmission) {
  const models::SerialRobot robot = models::MakeTx40();
  const QuinticTrajectory reference = Tx40Move();
  RobotSimulatorOptions options = Tx40Options(robot);
  options.duration_s = 0.2;
  options.encoder_resolution_rad = models::Tx40EncoderResolutionRad();
  options.torque_noise_std = Eigen::VectorXd::Constant(6, 0.5);
  options.torque_bias = Eigen::VectorXd::Constant(6, 0.1);
  options.seed = 5;
  RobotSimulation sim, again;
  std::string error;
  ASSERT_TRUE(SimulateClosedLoop(robot, reference, options, &sim, &error)) << error;
  ASSERT_TRUE(SimulateClosedLoop(robot, reference, options, &again, &error)) << error;
  EXPECT_EQ((sim.tau_measured - again.tau_measured).norm(), 0.0);  // seeded
  const Eigen::VectorXd res = models::Tx40EncoderResolutionRad();
  for (int k = 0; k < sim.time.size(); k += 97) {
    for (int j = 0; j < 6; ++j) {
      const double steps = sim.q_measured(k, j) / res[j];
      EXPECT_NEAR(steps, std::round(steps), 1e-6);
      EXPECT_LE(std::abs(sim.q_measured(k, j) - sim.q(k, j)), 0.5 * res[j] * (1 + 1e-9));
    }
  }
  const Eigen::MatrixXd noise = sim.tau_measured - sim.tau;
  EXPECT_NEAR(noise.mean(), 0.1, 0.02);
  EXPECT_NEAR(std::sqrt((noise.array() - noise.mean()).square().mean()), 0.5, 0.02);
  // tau = Rᵀ tau_m and q_m = R q_meas.
  const Eigen::MatrixXd r = models::Tx40MotorFromJoint();
  EXPECT_LE((sim.tau_motor * r - sim.tau_measured).norm(), 1e-9 * sim.tau_measured.norm());
  EXPECT_LE((sim.q_measured * r.transpose() - sim.q_motor).norm(), 1e-12 * sim.q_motor.norm());
}

// A run that records a subset of the series gives those series bitwise equal to the full run's
// and leaves the others empty; sensors, noise, transmission and unmodelled friction on.
TEST(RobotSimulatorTest, RecordedSubsetEqualsTheFullRecord) {
  const models::SerialRobot robot = models::MakeTx40();
  const QuinticTrajectory reference = Tx40Move();
  RobotSimulatorOptions options = Tx40Options(robot);
  options.duration_s = 0.2;
  options.encoder_resolution_rad = models::Tx40EncoderResolutionRad();
  options.torque_noise_std = Eigen::VectorXd::Constant(6, 0.5);
  options.torque_bias = Eigen::VectorXd::Constant(6, 0.1);
  options.seed = 7;
  options.unmodelled_torque = [](const Eigen::VectorXd&, const Eigen::VectorXd& qd,
                                 const Eigen::VectorXd&, Eigen::VectorXd* tau_u) {
    *tau_u = 0.2 * qd.array().tanh().matrix();
  };
  RobotSimulation full;
  std::string error;
  ASSERT_TRUE(SimulateClosedLoop(robot, reference, options, &full, &error)) << error;
  const auto series = [](const RobotSimulation& sim) {
    return std::vector<std::pair<unsigned, const Eigen::MatrixXd*>>{
        {kRecordQReference, &sim.q_reference},
        {kRecordQdReference, &sim.qd_reference},
        {kRecordQddReference, &sim.qdd_reference},
        {kRecordQ, &sim.q},
        {kRecordQd, &sim.qd},
        {kRecordQdd, &sim.qdd},
        {kRecordTau, &sim.tau},
        {kRecordQMeasured, &sim.q_measured},
        {kRecordTauMeasured, &sim.tau_measured},
        {kRecordQMotor, &sim.q_motor},
        {kRecordTauMotor, &sim.tau_motor}};
  };
  for (const auto& [bit, m] : series(full)) ASSERT_EQ(m->rows(), full.time.size()) << bit;
  // The auxiliary model's subset, the motor side alone (formed from the joint side, which is
  // then not kept), one series each, and all but one.
  std::vector<unsigned> subsets = {kRecordQ | kRecordQd | kRecordTau,
                                   kRecordQMotor | kRecordTauMotor,
                                   kRecordTauMeasured | kRecordQReference};
  for (const auto& [bit, m] : series(full)) {
    subsets.push_back(bit);
    subsets.push_back(~bit);
  }
  for (const unsigned subset : subsets) {
    options.recorded_series = subset;
    RobotSimulation part;
    ASSERT_TRUE(SimulateClosedLoop(robot, reference, options, &part, &error)) << error;
    ASSERT_EQ(part.time.size(), full.time.size());
    EXPECT_EQ((part.time - full.time).cwiseAbs().maxCoeff(), 0.0);
    const auto all = series(full), some = series(part);
    for (size_t i = 0; i < all.size(); ++i) {
      const unsigned bit = all[i].first;
      const Eigen::MatrixXd& expected = *all[i].second;
      const Eigen::MatrixXd& got = *some[i].second;
      if (subset & bit) {
        ASSERT_EQ(got.rows(), expected.rows()) << subset << " " << bit;
        ASSERT_EQ(got.cols(), expected.cols()) << subset << " " << bit;
        EXPECT_TRUE((got.array() == expected.array()).all()) << subset << " " << bit;
      } else {
        EXPECT_EQ(got.size(), 0) << subset << " " << bit;
      }
    }
  }
}

TEST(RobotSimulatorTest, RejectsBadOptions) {
  const models::SerialRobot robot = models::MakeTx40();
  RobotSimulatorOptions options;
  RobotSimulation sim;
  std::string error;
  EXPECT_FALSE(SimulateClosedLoop(robot, Tx40Move(), options, &sim, &error));
  EXPECT_NE(error.find("gains"), std::string::npos) << error;
}

}  // namespace
}  // namespace dynid::data
