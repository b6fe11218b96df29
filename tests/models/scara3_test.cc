#include "dynid/models/scara3.h"

#include <gtest/gtest.h>

#include <random>

#include "dynid/models/base_parameters.h"

namespace dynid::models {
namespace {

TEST(Scara3Test, PublishedBaseParameters) {
  const Scara3Parameters p = Scara3BaseParametersFromLinks();
  EXPECT_NEAR(p.izz1, 4.968, 1e-12);
  EXPECT_NEAR(p.izz2, 0.648, 1e-12);
  EXPECT_NEAR(p.mr, 1.2, 1e-12);
  EXPECT_NEAR(p.m3, 2.0, 1e-12);
}

TEST(Scara3Test, GenericModelMatchesClosedForm) {
  const SerialRobot robot = MakeScara3();
  const Scara3Parameters p = Scara3BaseParametersFromLinks();
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    Eigen::Vector3d q(3 * unit(rng), 3 * unit(rng), 0.2 * unit(rng));
    Eigen::Vector3d qd(2 * unit(rng), 2 * unit(rng), unit(rng));
    Eigen::Vector3d qdd(5 * unit(rng), 5 * unit(rng), 5 * unit(rng));
    Eigen::VectorXd tau;
    robot.InverseDynamics(q, qd, qdd, &tau);
    const Eigen::Vector3d closed = Scara3ClosedFormTorques(q, qd, qdd, p);
    EXPECT_LE((tau - closed).norm(), 1e-10 * closed.norm());
  }
}

// Viscous friction in the link data: the closed form plus fv_j q_j' in the inverse dynamics, and
// the forward dynamics consistent with it; without friction no friction columns.
TEST(Scara3Test, ViscousFrictionAddsToClosedForm) {
  Scara3LinkData data;
  data.fv1 = 1.7;
  data.fv2 = 0.28;
  data.fv3 = 12.0;
  const SerialRobot robot = MakeScara3(data);
  const Scara3Parameters p = Scara3BaseParametersFromLinks(data);
  EXPECT_EQ(p.AsVector(), Scara3BaseParametersFromLinks().AsVector());
  EXPECT_EQ(robot.num_parameters(), MakeScara3().num_parameters() + 6);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int trial = 0; trial < 10; ++trial) {
    const Eigen::Vector3d q(3 * unit(rng), 3 * unit(rng), 0.2 * unit(rng));
    const Eigen::Vector3d qd(2 * unit(rng), 2 * unit(rng), unit(rng));
    const Eigen::Vector3d qdd(5 * unit(rng), 5 * unit(rng), 5 * unit(rng));
    Eigen::VectorXd tau;
    robot.InverseDynamics(q, qd, qdd, &tau);
    const Eigen::Vector3d expected =
        Scara3ClosedFormTorques(q, qd, qdd, p) +
        Eigen::Vector3d(data.fv1 * qd(0), data.fv2 * qd(1), data.fv3 * qd(2));
    EXPECT_LE((tau - expected).norm(), 1e-10 * expected.norm());
  }
}

TEST(Scara3Test, BaseRegressorSpansClosedFormRegressor) {
  const SerialRobot robot = MakeScara3();
  BaseParameterSet base;
  std::string error;
  ASSERT_TRUE(ComputeKhalilBaseParameters(robot, &base, &error)) << error;
  EXPECT_EQ(base.names, (std::vector<std::string>{"zz1r", "zz2r", "mx2r", "my2r", "m3"}));
  // Stack both regressors at random states; without MY2 the generic base columns and the closed
  // form's (IZZ1, IZZ2, mr, m3) span the same 4-dimensional space.
  const int ns = 30;
  Eigen::MatrixXd q, qd, qdd, w;
  RandomRobotStates(robot, ns, 8, 2.0, 5.0, 0.3, &q, &qd, &qdd);
  robot.StackedRegressor(q, qd, qdd, &w);
  Eigen::MatrixXd w_base;
  base.SelectColumns(w, &w_base);
  Eigen::MatrixXd generic(3 * ns, 4);
  generic << w_base.col(0), w_base.col(1), w_base.col(2), w_base.col(4);
  Eigen::MatrixXd closed(3 * ns, 4);
  for (int k = 0; k < ns; ++k) {
    const Eigen::Matrix<double, 3, 4> phi = Scara3ClosedFormRegressor(
        q.row(k).transpose(), qd.row(k).transpose(), qdd.row(k).transpose());
    for (int i = 0; i < 3; ++i) closed.row(i * ns + k) = phi.row(i);
  }
  Eigen::MatrixXd both(3 * ns, 8);
  both << generic, closed;
  EXPECT_EQ(NumericalRank(generic), 4);
  EXPECT_EQ(NumericalRank(closed), 4);
  EXPECT_EQ(NumericalRank(both), 4);
  // The least-squares map from the generic base values reproduces the paper's values.
  const Eigen::VectorXd tau = w_base * base.Reduce(robot.standard_parameters());
  const Eigen::Vector4d fitted = closed.colPivHouseholderQr().solve(tau);
  EXPECT_LE((fitted - Scara3BaseParametersFromLinks().AsVector()).norm(), 1e-10);
}

}  // namespace
}  // namespace dynid::models
