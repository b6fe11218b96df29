#include "dynid/models/base_parameters.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "dynid/models/scara3.h"
#include "dynid/models/tx40.h"
#include "tests/models/robot_test_util.h"

namespace dynid::models {
namespace {

Eigen::MatrixXd Stacked(const SerialRobot& robot, int states, std::uint32_t seed) {
  Eigen::MatrixXd q, qd, qdd, w;
  RandomRobotStates(robot, states, seed, 2.0, 5.0, 0.5, &q, &qd, &qdd);
  robot.StackedRegressor(q, qd, qdd, &w);
  return w;
}

std::vector<SerialRobot> Robots() {
  std::vector<SerialRobot> robots;
  robots.push_back(MakeTx40());
  Tx40Options options;
  options.coupling_form = CouplingForm::kPhysical;
  options.torque_offsets = true;
  robots.push_back(MakeTx40(options));
  robots.push_back(MakeScara3());
  robots.push_back(testing::MakeRandomChain7(31, true));
  robots.push_back(testing::MakeRandomChain7(32, false, CouplingForm::kGautier));
  return robots;
}

// Checks a base set against an independent stacked regressor (other seed than the numerical
// method's): full column rank, same rank as the standard regressor, phi_b K = phi.
void ExpectValidBase(const SerialRobot& robot, const BaseParameterSet& base) {
  const Eigen::MatrixXd w = Stacked(robot, 40, 999);
  Eigen::MatrixXd w_base;
  base.SelectColumns(w, &w_base);
  EXPECT_EQ(NumericalRank(w_base), base.size()) << robot.name();
  EXPECT_EQ(NumericalRank(w), base.size()) << robot.name();
  EXPECT_LE((w_base * base.grouping - w).norm(), 1e-9 * w.norm()) << robot.name();
  // Regrouped parameters reproduce the full model's torques.
  Eigen::VectorXd tau_full = w * robot.standard_parameters();
  Eigen::VectorXd tau_base = w_base * base.Reduce(robot.standard_parameters());
  EXPECT_LE((tau_full - tau_base).norm(), 1e-10 * tau_full.norm()) << robot.name();
}

TEST(BaseParametersTest, ClosedFormAndNumericalAgree) {
  for (const SerialRobot& robot : Robots()) {
    BaseParameterSet khalil, greedy, pivoted;
    std::string error;
    ASSERT_TRUE(ComputeKhalilBaseParameters(robot, &khalil, &error)) << error;
    NumericalBaseOptions options;
    ASSERT_TRUE(ComputeNumericalBaseParameters(robot, options, &greedy, &error)) << error;
    options.choice = NumericalBaseOptions::ColumnChoice::kPivoted;
    ASSERT_TRUE(ComputeNumericalBaseParameters(robot, options, &pivoted, &error)) << error;
    EXPECT_EQ(khalil.size(), greedy.size()) << robot.name();
    EXPECT_EQ(khalil.size(), pivoted.size()) << robot.name();
    // Greedy selection in the standard order keeps exactly Khalil's parameters.
    EXPECT_EQ(khalil.kept, greedy.kept) << robot.name();
    ExpectValidBase(robot, khalil);
    ExpectValidBase(robot, greedy);
    ExpectValidBase(robot, pivoted);
    // Same span: the union of both column sets has the same rank.
    const Eigen::MatrixXd w = Stacked(robot, 40, 5);
    Eigen::MatrixXd a, b;
    khalil.SelectColumns(w, &a);
    pivoted.SelectColumns(w, &b);
    Eigen::MatrixXd both(w.rows(), a.cols() + b.cols());
    both << a, b;
    EXPECT_EQ(NumericalRank(both), khalil.size()) << robot.name();
    // The grouping matrices agree where the kept columns agree.
    if (khalil.kept == greedy.kept) {
      EXPECT_LE((khalil.grouping - greedy.grouping).norm(), 1e-6 * khalil.grouping.norm())
          << robot.name();
      EXPECT_EQ(khalil.names, greedy.names) << robot.name();
    }
  }
}

TEST(BaseParametersTest, KhalilGroupingOfTx40Link2) {
  const SerialRobot robot = MakeTx40();
  BaseParameterSet base;
  std::string error;
  ASSERT_TRUE(ComputeKhalilBaseParameters(robot, &base, &error)) << error;
  const int mx2r = base.Index("mx2r");
  ASSERT_GE(mx2r, 0);
  // MX2r = MX2 + d3 (M3 + M4 + M5 + M6) (the masses of links 3..6 regrouped down the chain).
  const Eigen::VectorXd& theta = robot.standard_parameters();
  const double expected = theta[robot.ParameterIndex("mx2")] +
                          0.225 * (theta[robot.ParameterIndex("m3")] +
                                   theta[robot.ParameterIndex("m4")] +
                                   theta[robot.ParameterIndex("m5")] +
                                   theta[robot.ParameterIndex("m6")]);
  EXPECT_NEAR(base.Reduce(theta)[mx2r], expected, 1e-12);
  // XX2r = XX2 − YY2 + (YY3 + 2 r3 MZ3 + r3² M3 ...) contains −YY2.
  EXPECT_EQ(base.grouping(base.Index("xx2r"), robot.ParameterIndex("yy2")), -1.0);
  // The first link only shows ZZ1 + Ia1 + ...
  EXPECT_EQ(base.grouping(base.Index("zz1r"), robot.ParameterIndex("ia1")), 1.0);
}

TEST(BaseParametersTest, RejectsUncoveredChains) {
  std::vector<JointGeometry> joints(2);
  joints[0].type = JointType::kPrismatic;
  joints[1].type = JointType::kRevolute;
  const SerialRobot robot("pr", joints);
  BaseParameterSet base;
  std::string error;
  EXPECT_FALSE(ComputeKhalilBaseParameters(robot, &base, &error));
  EXPECT_NE(error.find("numerical"), std::string::npos);
  // The numerical method covers it.
  EXPECT_TRUE(ComputeNumericalBaseParameters(robot, NumericalBaseOptions(), &base, &error))
      << error;
  EXPECT_GT(base.size(), 0);
}

}  // namespace
}  // namespace dynid::models
