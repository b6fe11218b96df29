#include "dynid/models/serial_robot.h"

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <gtest/gtest.h>

#include "dynid/models/scara3.h"
#include "dynid/models/tx40.h"
#include "tests/models/robot_test_util.h"

namespace dynid::models {
namespace {

struct State {
  Eigen::VectorXd q, qd, qdd;
};

State RandomState(const SerialRobot& robot, std::mt19937* rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const int n = robot.num_joints();
  State s{Eigen::VectorXd(n), Eigen::VectorXd(n), Eigen::VectorXd(n)};
  for (int j = 0; j < n; ++j) {
    s.q[j] = unit(*rng) * 3.0;
    s.qd[j] = unit(*rng) * 2.0;
    s.qdd[j] = unit(*rng) * 5.0;
  }
  return s;
}

std::vector<SerialRobot> TestRobots() {
  std::vector<SerialRobot> robots;
  robots.push_back(MakeTx40());
  Tx40Options physical;
  physical.coupling_form = CouplingForm::kPhysical;
  physical.torque_offsets = true;
  robots.push_back(MakeTx40(physical));
  robots.push_back(MakeScara3());
  robots.push_back(testing::MakeRandomChain7(11, /*with_offsets=*/true));
  robots.push_back(testing::MakeRandomChain7(12, false, CouplingForm::kGautier));
  robots.push_back(testing::MakeRandomGeneralChain7(13));
  robots.push_back(testing::MakeRandomGeneralChain7(14, CouplingForm::kGautier));
  robots.push_back(testing::TurnLinkFrames(MakeTx40(physical), 15));
  return robots;
}

TEST(SerialRobotTest, RegressorTimesStandardParametersEqualsNewtonEuler) {
  std::mt19937 rng(1);
  std::normal_distribution<double> normal;
  for (SerialRobot robot : TestRobots()) {
    for (int trial = 0; trial < 20; ++trial) {
      // Any theta (not only physical ones): the identity is linear algebra.
      Eigen::VectorXd theta(robot.num_parameters());
      for (int i = 0; i < theta.size(); ++i) theta[i] = normal(rng);
      robot.SetStandardParameters(theta);
      const State s = RandomState(robot, &rng);
      Eigen::VectorXd tau;
      robot.InverseDynamics(s.q, s.qd, s.qdd, &tau);
      Eigen::MatrixXd phi;
      robot.Regressor(s.q, s.qd, s.qdd, &phi);
      ASSERT_EQ(phi.rows(), robot.num_joints());
      ASSERT_EQ(phi.cols(), robot.num_parameters());
      EXPECT_LE((phi * theta - tau).norm(), 1e-10 * tau.norm()) << robot.name();
    }
  }
}

TEST(SerialRobotTest, StackedRegressorIsJointMajor) {
  SerialRobot robot = testing::MakeRandomChain7(3, true);
  std::mt19937 rng(2);
  const int ns = 5, n = robot.num_joints();
  Eigen::MatrixXd q(ns, n), qd(ns, n), qdd(ns, n);
  for (int k = 0; k < ns; ++k) {
    const State s = RandomState(robot, &rng);
    q.row(k) = s.q.transpose();
    qd.row(k) = s.qd.transpose();
    qdd.row(k) = s.qdd.transpose();
  }
  Eigen::MatrixXd x;
  robot.StackedRegressor(q, qd, qdd, &x);
  ASSERT_EQ(x.rows(), n * ns);
  for (int k = 0; k < ns; ++k) {
    Eigen::MatrixXd phi;
    robot.Regressor(q.row(k).transpose(), qd.row(k).transpose(), qdd.row(k).transpose(), &phi);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ((x.row(i * ns + k) - phi.row(i)).cwiseAbs().maxCoeff(), 0.0);
    }
  }
}

TEST(SerialRobotTest, MassMatrixIsSymmetricPositiveDefiniteAndMatchesNewtonEuler) {
  std::mt19937 rng(4);
  for (const SerialRobot& robot : TestRobots()) {
    const int n = robot.num_joints();
    for (int trial = 0; trial < 5; ++trial) {
      const State s = RandomState(robot, &rng);
      Eigen::MatrixXd mass;
      robot.MassMatrix(s.q, &mass);
      EXPECT_LE((mass - mass.transpose()).norm(), 1e-14 * mass.norm());
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(mass);
      EXPECT_GT(eig.eigenvalues().minCoeff(), 0.0) << robot.name();
      // Column j of M = tau(q, 0, e_j) − tau(q, 0, 0) (friction vanishes at rest, offsets cancel).
      const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
      Eigen::VectorXd tau0, tau_j;
      robot.InverseDynamics(s.q, zero, zero, &tau0);
      for (int j = 0; j < n; ++j) {
        robot.InverseDynamics(s.q, zero, Eigen::VectorXd::Unit(n, j), &tau_j);
        EXPECT_LE((tau_j - tau0 - mass.col(j)).norm(), 1e-12 * mass.norm()) << robot.name();
      }
    }
  }
}

TEST(SerialRobotTest, ForwardDynamicsInvertsInverseDynamics) {
  std::mt19937 rng(5);
  for (const SerialRobot& robot : TestRobots()) {
    for (int trial = 0; trial < 5; ++trial) {
      const State s = RandomState(robot, &rng);
      Eigen::VectorXd tau, qdd;
      robot.InverseDynamics(s.q, s.qd, s.qdd, &tau);
      robot.ForwardDynamics(s.q, s.qd, tau, &qdd);
      EXPECT_LE((qdd - s.qdd).norm(), 1e-9 * s.qdd.norm()) << robot.name();
    }
  }
}

bool Identical(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

// ForwardDynamics shares one kinematic pass between the bias and the mass matrix and factors M
// with its own Cholesky: against the separate public pieces (NonlinearEffects, MassMatrix,
// Eigen's LLT) and against M q'' = tau − N, with rotor inertias, coupled motors in both forms,
// prismatic joints and general joint axes. With Eigen's default SSE2 packets the accelerations
// are LLT's bit for bit (the simulations built on them must not change).
TEST(SerialRobotTest, ForwardDynamicsEqualsCholeskyOfMassMatrixAndBias) {
  std::mt19937 rng(22);
  std::normal_distribution<double> normal;
  for (const SerialRobot& robot : TestRobots()) {
    const int n = robot.num_joints();
    SerialRobotData data(robot);
    for (int trial = 0; trial < 20; ++trial) {
      const State s = RandomState(robot, &rng);
      Eigen::VectorXd tau(n);
      for (int j = 0; j < n; ++j) tau[j] = 20.0 * normal(rng);
      Eigen::VectorXd bias, qdd;
      Eigen::MatrixXd mass;
      robot.NonlinearEffects(s.q, s.qd, &bias);
      robot.MassMatrix(s.q, &mass);
      const Eigen::LLT<Eigen::MatrixXd> llt(mass);
      ASSERT_EQ(llt.info(), Eigen::Success) << robot.name();
      const Eigen::VectorXd expected = llt.solve(tau - bias);
      robot.ForwardDynamics(s.q, s.qd, tau, &data, &qdd);
      ASSERT_EQ(qdd.size(), n);
      EXPECT_LE((qdd - expected).norm(), 1e-12 * expected.norm()) << robot.name();
#if !defined(__AVX__) && !defined(__FMA__)
      EXPECT_TRUE(Identical(qdd, expected)) << robot.name() << " trial " << trial;
#endif
      // Independently: the inverse dynamics of the accelerations gives tau back.
      Eigen::VectorXd tau_back;
      robot.InverseDynamics(s.q, s.qd, qdd, &tau_back);
      EXPECT_LE((tau_back - tau).norm(),
                1e-12 * (tau.norm() + bias.norm() + mass.norm() * qdd.norm()))
          << robot.name();
    }
  }
}

TEST(SerialRobotTest, EnergiesAgreeWithMassMatrixAndGravity) {
  std::mt19937 rng(6);
  for (const SerialRobot& robot : TestRobots()) {
    const int n = robot.num_joints();
    const State s = RandomState(robot, &rng);
    Eigen::MatrixXd mass;
    robot.MassMatrix(s.q, &mass);
    const double kinetic = robot.KineticEnergy(s.q, s.qd);
    EXPECT_NEAR(kinetic, 0.5 * s.qd.dot(mass * s.qd), 1e-12 * std::abs(kinetic)) << robot.name();
    // Gravity torques are the gradient of the potential energy (central differences).
    Eigen::VectorXd tau_g;
    robot.GravityTorques(s.q, &tau_g);
    const double h = 1e-6;
    for (int j = 0; j < n; ++j) {
      Eigen::VectorXd qp = s.q, qm = s.q;
      qp[j] += h;
      qm[j] -= h;
      const double gradient = (robot.PotentialEnergy(qp) - robot.PotentialEnergy(qm)) / (2 * h);
      EXPECT_NEAR(gradient, tau_g[j], 1e-6 * (1.0 + tau_g.norm())) << robot.name() << " " << j;
    }
  }
}

TEST(SerialRobotTest, CouplingFormsGiveTheSameTorques) {
  Tx40Options options;
  options.coupling_form = CouplingForm::kPhysical;
  const SerialRobot physical = MakeTx40(options);
  const SerialRobot gautier = ConvertCouplingForm(physical, CouplingForm::kGautier);
  const SerialRobot back = ConvertCouplingForm(gautier, CouplingForm::kPhysical);
  EXPECT_LE((back.standard_parameters() - physical.standard_parameters()).norm(), 1e-15);
  // Published form: ia5' = ia5 + Iam6, fv6' = fv6 + fvm6.
  EXPECT_NEAR(gautier.standard_parameters()[gautier.ParameterIndex("ia5")], 0.0361 + 0.0114,
              1e-15);
  EXPECT_NEAR(gautier.standard_parameters()[gautier.ParameterIndex("fv6")], 0.689 + 0.8, 1e-15);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 10; ++trial) {
    const State s = RandomState(physical, &rng);
    Eigen::VectorXd tau_p, tau_g;
    physical.InverseDynamics(s.q, s.qd, s.qdd, &tau_p);
    gautier.InverseDynamics(s.q, s.qd, s.qdd, &tau_g);
    EXPECT_LE((tau_p - tau_g).norm(), 1e-12 * tau_p.norm());
  }
  // The published rows: row 5 carries Iam6 q6'' + fvm6 q6', row 6 Iam6 q5'' + fvm6 q5'.
  const State s = RandomState(gautier, &rng);
  Eigen::MatrixXd phi;
  gautier.Regressor(s.q, s.qd, s.qdd, &phi);
  const int iam6 = gautier.ParameterIndex("iam6"), fvm6 = gautier.ParameterIndex("fvm6"),
            fcm6 = gautier.ParameterIndex("fcm6");
  EXPECT_DOUBLE_EQ(phi(4, iam6), s.qdd[5]);
  EXPECT_DOUBLE_EQ(phi(5, iam6), s.qdd[4]);
  EXPECT_DOUBLE_EQ(phi(4, fvm6), s.qd[5]);
  EXPECT_DOUBLE_EQ(phi(5, fvm6), s.qd[4]);
  EXPECT_EQ(phi(4, fcm6), Sign(s.qd[4] + s.qd[5]));
  EXPECT_EQ(phi(5, fcm6), Sign(s.qd[4] + s.qd[5]));
  EXPECT_EQ(phi.col(iam6).head(4).norm(), 0.0);
}

// Along a frictionless, torque-driven motion the change of kinetic + potential energy equals the
// work of the joint torques: d/dt(T + U) = q'ᵀ tau.
TEST(SerialRobotTest, EnergyBalanceAlongFrictionlessMotion) {
  const SerialRobot robot = testing::MakeRandomChain7(21, false, CouplingForm::kPhysical,
                                                      /*with_friction=*/false);
  const int n = robot.num_joints();
  auto torque = [n](double t) {
    Eigen::VectorXd tau(n);
    for (int j = 0; j < n; ++j) tau[j] = 2.0 * std::sin((j + 1) * 3.0 * t + j);
    return tau;
  };
  // State [q, q', W] with W' = q'ᵀ tau: the work is integrated by the same RK4 steps.
  auto derivative = [&](double t, const Eigen::VectorXd& x, Eigen::VectorXd* dx) {
    Eigen::VectorXd qdd;
    const Eigen::VectorXd tau = torque(t);
    robot.ForwardDynamics(x.head(n), x.segment(n, n), tau, &qdd);
    dx->resize(2 * n + 1);
    dx->head(n) = x.segment(n, n);
    dx->segment(n, n) = qdd;
    (*dx)[2 * n] = x.segment(n, n).dot(tau);
  };
  Eigen::VectorXd x = Eigen::VectorXd::Zero(2 * n + 1);
  x.head(n).setConstant(0.3);
  const double dt = 2e-4;
  const int steps = 2500;
  auto energy = [&](const Eigen::VectorXd& state) {
    return robot.KineticEnergy(state.head(n), state.segment(n, n)) +
           robot.PotentialEnergy(state.head(n));
  };
  const double e0 = energy(x);
  Eigen::VectorXd k1, k2, k3, k4;
  for (int k = 0; k < steps; ++k) {
    const double t = k * dt;
    derivative(t, x, &k1);
    derivative(t + dt / 2, x + dt / 2 * k1, &k2);
    derivative(t + dt / 2, x + dt / 2 * k2, &k3);
    derivative(t + dt, x + dt * k3, &k4);
    x += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  const double work = x[2 * n];
  const double e1 = energy(x);
  const double kinetic_end = robot.KineticEnergy(x.head(n), x.segment(n, n));
  EXPECT_GT(kinetic_end, 0.1);  // the robot did move
  EXPECT_NEAR(e1 - e0, work, 1e-6 * (std::abs(e1 - e0) + std::abs(work)));
}

TEST(SerialRobotTest, ForwardKinematicsOfTx40) {
  const SerialRobot robot = MakeTx40();
  // Controller zero: arm straight up (q2 offset −pi/2 makes link 2 vertical), so the wrist
  // centre is at height 0.225 + 0.225 and lateral offset r3 = 0.035.
  const std::vector<Eigen::Isometry3d> poses = robot.ForwardKinematics(Eigen::VectorXd::Zero(6));
  const Eigen::Vector3d wrist = poses[4].translation();
  EXPECT_NEAR(wrist.z(), 0.45, 1e-12);
  EXPECT_NEAR(std::hypot(wrist.x(), wrist.y()), 0.035, 1e-12);
}

// ---- Model and data: explicit workspaces ----

// Bitwise equality (0 ulp); NaN never occurs in these states.
TEST(SerialRobotTest, WorkspaceCallsEqualConvenienceCallsExactly) {
  std::mt19937 rng(21);
  for (const SerialRobot& robot : TestRobots()) {
    // One workspace shared by every algorithm and state, as a loop would use it.
    SerialRobotData data(robot);
    EXPECT_EQ(data.num_joints(), robot.num_joints());
    EXPECT_EQ(data.num_parameters(), robot.num_parameters());
    for (int trial = 0; trial < 5; ++trial) {
      const State s = RandomState(robot, &rng);
      Eigen::VectorXd a, b;
      robot.InverseDynamics(s.q, s.qd, s.qdd, &a);
      robot.InverseDynamics(s.q, s.qd, s.qdd, &data, &b);
      EXPECT_TRUE(Identical(a, b)) << robot.name() << " InverseDynamics";
      robot.NonlinearEffects(s.q, s.qd, &a);
      robot.NonlinearEffects(s.q, s.qd, &data, &b);
      EXPECT_TRUE(Identical(a, b)) << robot.name() << " NonlinearEffects";
      robot.GravityTorques(s.q, &a);
      robot.GravityTorques(s.q, &data, &b);
      EXPECT_TRUE(Identical(a, b)) << robot.name() << " GravityTorques";
      Eigen::MatrixXd m1, m2;
      robot.MassMatrix(s.q, &m1);
      robot.MassMatrix(s.q, &data, &m2);
      EXPECT_TRUE(Identical(m1, m2)) << robot.name() << " MassMatrix";
      Eigen::VectorXd tau;
      robot.InverseDynamics(s.q, s.qd, s.qdd, &tau);
      robot.ForwardDynamics(s.q, s.qd, tau, &a);
      robot.ForwardDynamics(s.q, s.qd, tau, &data, &b);
      EXPECT_TRUE(Identical(a, b)) << robot.name() << " ForwardDynamics";
      EXPECT_EQ(robot.KineticEnergy(s.q, s.qd), robot.KineticEnergy(s.q, s.qd, &data))
          << robot.name();
      EXPECT_EQ(robot.PotentialEnergy(s.q), robot.PotentialEnergy(s.q, &data)) << robot.name();
      robot.Regressor(s.q, s.qd, s.qdd, &m1);
      robot.Regressor(s.q, s.qd, s.qdd, &data, &m2);
      EXPECT_TRUE(Identical(m1, m2)) << robot.name() << " Regressor";
    }
    // Stacked regressor: two batches of different lengths (one not a multiple of the block)
    // through the same workspace.
    for (const int ns : {45, 7}) {
      const int n = robot.num_joints();
      Eigen::MatrixXd q(ns, n), qd(ns, n), qdd(ns, n);
      for (int k = 0; k < ns; ++k) {
        const State s = RandomState(robot, &rng);
        q.row(k) = s.q.transpose();
        qd.row(k) = s.qd.transpose();
        qdd.row(k) = s.qdd.transpose();
      }
      Eigen::MatrixXd x1, x2;
      robot.StackedRegressor(q, qd, qdd, &x1);
      robot.StackedRegressor(q, qd, qdd, &data, &x2);
      EXPECT_TRUE(Identical(x1, x2)) << robot.name() << " StackedRegressor, " << ns << " samples";
    }
  }
}

TEST(SerialRobotTest, RegressorTimesStandardParametersEqualsInverseDynamicsThroughWorkspace) {
  std::mt19937 rng(22);
  std::normal_distribution<double> normal;
  for (SerialRobot robot : TestRobots()) {
    SerialRobotData data(robot);
    Eigen::VectorXd tau;
    Eigen::MatrixXd phi;
    for (int trial = 0; trial < 10; ++trial) {
      Eigen::VectorXd theta(robot.num_parameters());
      for (int i = 0; i < theta.size(); ++i) theta[i] = normal(rng);
      robot.SetStandardParameters(theta);  // the workspace does not depend on the parameters
      const State s = RandomState(robot, &rng);
      robot.Regressor(s.q, s.qd, s.qdd, &data, &phi);
      robot.InverseDynamics(s.q, s.qd, s.qdd, &data, &tau);
      EXPECT_LE((phi * theta - tau).norm(), 1e-10 * tau.norm()) << robot.name();
    }
  }
}

TEST(SerialRobotTest, ThreadsWithTheirOwnWorkspacesMatchSequentialCalls) {
  const SerialRobot robot = MakeTx40();  // shared, const: the model holds no per-call state
  std::mt19937 rng(23);
  constexpr int kThreads = 2, kStates = 300;
  std::vector<std::vector<State>> states(kThreads);
  for (std::vector<State>& set : states) {
    for (int k = 0; k < kStates; ++k) set.push_back(RandomState(robot, &rng));
  }
  // Sequential reference (convenience calls).
  std::vector<std::vector<Eigen::MatrixXd>> expected_phi(kThreads);
  std::vector<std::vector<Eigen::VectorXd>> expected_tau(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    for (const State& s : states[t]) {
      Eigen::MatrixXd phi;
      Eigen::VectorXd tau;
      robot.Regressor(s.q, s.qd, s.qdd, &phi);
      robot.InverseDynamics(s.q, s.qd, s.qdd, &tau);
      expected_phi[t].push_back(phi);
      expected_tau[t].push_back(tau);
    }
  }
  // Concurrent: each thread its own workspace and its own states, several passes so that the
  // threads overlap.
  constexpr int kPasses = 20;
  std::vector<std::vector<Eigen::MatrixXd>> phi(kThreads,
                                                std::vector<Eigen::MatrixXd>(kStates));
  std::vector<std::vector<Eigen::VectorXd>> tau(kThreads, std::vector<Eigen::VectorXd>(kStates));
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t]() {
      SerialRobotData data(robot);
      for (int pass = 0; pass < kPasses; ++pass) {
        for (int k = 0; k < kStates; ++k) {
          const State& s = states[t][k];
          robot.Regressor(s.q, s.qd, s.qdd, &data, &phi[t][k]);
          robot.InverseDynamics(s.q, s.qd, s.qdd, &data, &tau[t][k]);
          if (!Identical(phi[t][k], expected_phi[t][k]) ||
              !Identical(tau[t][k], expected_tau[t][k])) {
            ++mismatches[t];
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
    for (int k = 0; k < kStates; ++k) {
      ASSERT_TRUE(Identical(phi[t][k], expected_phi[t][k])) << "thread " << t << " state " << k;
      ASSERT_TRUE(Identical(tau[t][k], expected_tau[t][k])) << "thread " << t << " state " << k;
    }
  }
}

TEST(SerialRobotDeathTest, WorkspaceOfAnotherSizeIsRejected) {
  const SerialRobot tx40 = MakeTx40();
  const SerialRobot scara = MakeScara3();
  SerialRobotData data(scara);
  Eigen::VectorXd tau;
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(6);
  EXPECT_DEATH(tx40.InverseDynamics(zero, zero, zero, &data, &tau), "workspace sized for");
}

}  // namespace
}  // namespace dynid::models

namespace dynid::models {
namespace {

// The general joint form against the modified-DH path: the same mechanism with turned link frames
// (general axes, general placements) has the same torques, mass matrix and energies, and the
// modified-DH rows written as general joints (JointModel::FromModifiedDh, axis z) the same
// regressor.
TEST(SerialRobotGeneralJointTest, TurnedLinkFramesGiveTheSameDynamics) {
  std::mt19937 rng(21);
  Tx40Options physical;
  physical.coupling_form = CouplingForm::kPhysical;
  const std::vector<SerialRobot> originals = {MakeTx40(physical), MakeScara3(),
                                              testing::MakeRandomChain7(31, true)};
  for (const SerialRobot& original : originals) {
    const SerialRobot turned = testing::TurnLinkFrames(original, 41);
    ASSERT_FALSE(turned.is_modified_dh());
    for (int trial = 0; trial < 10; ++trial) {
      const State s = RandomState(original, &rng);
      Eigen::VectorXd tau_a, tau_b;
      original.InverseDynamics(s.q, s.qd, s.qdd, &tau_a);
      turned.InverseDynamics(s.q, s.qd, s.qdd, &tau_b);
      EXPECT_LT((tau_a - tau_b).norm(), 1e-10 * (1.0 + tau_a.norm())) << original.name();
      Eigen::MatrixXd m_a, m_b;
      original.MassMatrix(s.q, &m_a);
      turned.MassMatrix(s.q, &m_b);
      EXPECT_LT((m_a - m_b).norm(), 1e-10 * (1.0 + m_a.norm())) << original.name();
      EXPECT_NEAR(original.KineticEnergy(s.q, s.qd), turned.KineticEnergy(s.q, s.qd),
                  1e-10 * (1.0 + std::abs(original.KineticEnergy(s.q, s.qd))));
      EXPECT_NEAR(original.PotentialEnergy(s.q), turned.PotentialEnergy(s.q),
                  1e-10 * (1.0 + std::abs(original.PotentialEnergy(s.q))));
    }
    // Written as general joints without turning, the regressor is the same to rounding.
    SerialRobot general(original.name() + "_general", original.joints(),
                        original.parameterization(), original.coupled_motors());
    ASSERT_FALSE(general.is_modified_dh());
    for (int trial = 0; trial < 5; ++trial) {
      const State s = RandomState(original, &rng);
      Eigen::MatrixXd phi_a, phi_b;
      original.Regressor(s.q, s.qd, s.qdd, &phi_a);
      general.Regressor(s.q, s.qd, s.qdd, &phi_b);
      EXPECT_LT((phi_a - phi_b).cwiseAbs().maxCoeff(), 1e-12 * (1.0 + phi_a.cwiseAbs().maxCoeff()))
          << original.name();
    }
  }
}

TEST(SerialRobotGeneralJointTest, StribeckColumnIsTheFixedShapeTerm) {
  const SerialRobot robot = testing::MakeRandomGeneralChain7(51);
  const int fs = robot.DriveIndex(2, ParameterKind::kFs);
  ASSERT_GE(fs, 0);
  EXPECT_EQ(robot.parameter_names()[fs], "fs3");
  EXPECT_EQ(robot.DriveIndex(3, ParameterKind::kFc), -1);  // joint 4 carries no Coulomb term
  for (double qd : {-0.7, -0.1, 0.0, 0.05, 0.3, 2.0}) {
    Eigen::VectorXd q = Eigen::VectorXd::Zero(7), v = q, a = q;
    v[2] = qd;
    Eigen::MatrixXd phi;
    robot.Regressor(q, v, a, &phi);
    EXPECT_NEAR(phi(2, fs), std::exp(-(qd / 0.3) * (qd / 0.3)) * Sign(qd), 1e-15);
  }
}

}  // namespace
}  // namespace dynid::models
