#include "dynid/data/trajectory.h"

#include <cmath>

#include <gtest/gtest.h>

namespace dynid::data {
namespace {

std::vector<Eigen::VectorXd> ViaPoints() {
  return {Eigen::Vector3d(0.0, 0.0, 0.0), Eigen::Vector3d(1.0, -0.5, 0.05),
          Eigen::Vector3d(-0.5, 0.5, 0.05), Eigen::Vector3d(0.2, 0.0, -1.0)};
}

// Central differences of q and q' agree with q' and q'' away from acceleration switches.
void ExpectConsistentDerivatives(const JointTrajectory& trajectory, double tolerance) {
  const double h = 1e-6;
  Eigen::VectorXd q0, qd0, qdd0, q1, qd1, qdd1, q, qd, qdd;
  int checked = 0;
  for (double t = 0.0137; t < trajectory.duration() - 0.01; t += 0.0731) {
    trajectory.Evaluate(t - h, &q0, &qd0, &qdd0);
    trajectory.Evaluate(t + h, &q1, &qd1, &qdd1);
    trajectory.Evaluate(t, &q, &qd, &qdd);
    EXPECT_LE(((q1 - q0) / (2 * h) - qd).cwiseAbs().maxCoeff(), tolerance) << "t = " << t;
    if ((qdd1 - qdd0).cwiseAbs().maxCoeff() < 1e-9 || qdd1.size() == 0) {
      EXPECT_LE(((qd1 - qd0) / (2 * h) - qdd).cwiseAbs().maxCoeff(), tolerance) << "t = " << t;
    }
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST(TrajectoryTest, TrapezoidalHitsViaPointsWithinBounds) {
  const Eigen::Vector3d vmax(1.0, 2.0, 0.5), amax(4.0, 3.0, 2.0);
  TrapezoidalTrajectory trajectory;
  std::string error;
  ASSERT_TRUE(TrapezoidalTrajectory::Create(ViaPoints(), vmax, amax, 0.1, &trajectory, &error))
      << error;
  Eigen::VectorXd time, q, qd, qdd;
  Eigen::MatrixXd qs, qds, qdds;
  trajectory.Sample(1e-3, &time, &qs, &qds, &qdds);
  for (int j = 0; j < 3; ++j) {
    EXPECT_LE(qds.col(j).cwiseAbs().maxCoeff(), vmax[j] * (1 + 1e-12));
    EXPECT_LE(qdds.col(j).cwiseAbs().maxCoeff(), amax[j] * (1 + 1e-12));
  }
  // The binding joint of the first move (joint 1: 1 rad at 1 rad/s, 4 rad/s²) reaches vmax.
  EXPECT_NEAR(qds.col(0).head(1500).cwiseAbs().maxCoeff(), 1.0, 1e-9);
  trajectory.Evaluate(trajectory.duration(), &q, &qd, &qdd);
  EXPECT_LE((q - ViaPoints().back()).norm(), 1e-12);
  EXPECT_LE(qd.norm(), 1e-12);
  ExpectConsistentDerivatives(trajectory, 1e-5);
  std::string why;
  EXPECT_TRUE(trajectory.WithinLimits(Eigen::Vector3d::Constant(-1.1),
                                      Eigen::Vector3d::Constant(1.1), vmax, 1e-3, &why))
      << why;
  EXPECT_FALSE(trajectory.WithinLimits(Eigen::Vector3d::Constant(-0.9),
                                       Eigen::Vector3d::Constant(1.1), vmax, 1e-3, &why));
  EXPECT_NE(why.find("joint 3"), std::string::npos) << why;
}

TEST(TrajectoryTest, QuinticRespectsBounds) {
  const Eigen::Vector3d vmax(1.0, 2.0, 0.5), amax(4.0, 3.0, 2.0);
  QuinticTrajectory trajectory;
  std::string error;
  ASSERT_TRUE(QuinticTrajectory::Create(ViaPoints(), vmax, amax, 0.0, &trajectory, &error))
      << error;
  Eigen::VectorXd time;
  Eigen::MatrixXd q, qd, qdd;
  trajectory.Sample(1e-4, &time, &q, &qd, &qdd);
  double worst_ratio = 0.0;
  for (int j = 0; j < 3; ++j) {
    EXPECT_LE(qd.col(j).cwiseAbs().maxCoeff(), vmax[j] * (1 + 1e-9));
    EXPECT_LE(qdd.col(j).cwiseAbs().maxCoeff(), amax[j] * (1 + 1e-6));
    worst_ratio = std::max(worst_ratio, qd.col(j).cwiseAbs().maxCoeff() / vmax[j]);
    worst_ratio = std::max(worst_ratio, qdd.col(j).cwiseAbs().maxCoeff() / amax[j]);
  }
  EXPECT_GT(worst_ratio, 0.999);  // some bound is active
  ExpectConsistentDerivatives(trajectory, 1e-5);
}

TEST(TrajectoryTest, FourierStaysWithinLimits) {
  const Eigen::Vector3d lower(-1.0, -2.0, 0.1), upper(1.0, 0.5, 0.4), vmax(1.0, 1.0, 0.2);
  FourierOptions options;
  options.num_harmonics = 4;
  options.base_frequency_hz = 0.2;
  options.num_periods = 2.0;
  FourierTrajectory trajectory;
  std::string error;
  ASSERT_TRUE(FourierTrajectory::Create(lower, upper, vmax, options, &trajectory, &error))
      << error;
  EXPECT_NEAR(trajectory.duration(), 10.0, 1e-12);
  std::string why;
  EXPECT_TRUE(trajectory.WithinLimits(lower, upper, vmax, 1e-3, &why)) << why;
  ExpectConsistentDerivatives(trajectory, 1e-5);
  // Periodic: the state after one period equals the initial one.
  Eigen::VectorXd q0, qd0, qdd0, q1, qd1, qdd1;
  trajectory.Evaluate(0.0, &q0, &qd0, &qdd0);
  trajectory.Evaluate(5.0, &q1, &qd1, &qdd1);
  EXPECT_LE((q1 - q0).norm() + (qd1 - qd0).norm(), 1e-9);
}

TEST(TrajectoryTest, RejectsBadInput) {
  TrapezoidalTrajectory trapezoidal;
  std::string error;
  EXPECT_FALSE(TrapezoidalTrajectory::Create({Eigen::Vector2d(0, 0)}, Eigen::Vector2d(1, 1),
                                             Eigen::Vector2d(1, 1), 0.0, &trapezoidal, &error));
  EXPECT_FALSE(TrapezoidalTrajectory::Create({Eigen::Vector2d(0, 0), Eigen::Vector2d(1, 1)},
                                             Eigen::Vector2d(1, 0), Eigen::Vector2d(1, 1), 0.0,
                                             &trapezoidal, &error));
  EXPECT_NE(error.find("vmax"), std::string::npos);
}

}  // namespace
}  // namespace dynid::data
