#include "dynid/problems/physically_consistent_problem.h"

#include <ceres/cost_function.h>
#include <ceres/gradient_checker.h>
#include <ceres/manifold.h>
#include <ceres/problem.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dynid/models/base_parameters.h"
#include "dynid/models/inertia_parameterization.h"
#include "dynid/models/tx40.h"
#include "tests/models/robot_test_util.h"

namespace dynid::problems {
namespace {

using models::CouplingForm;

Eigen::VectorXd RandomVector(int n, std::uint32_t seed, double scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  Eigen::VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = normal(rng);
  return v;
}

// The random 7-joint chain with every link moved into the consistent set (its independent
// principal moments do not always obey the triangle inequality).
models::SerialRobot ConsistentChain7(std::uint32_t seed, bool with_offsets, CouplingForm form) {
  models::SerialRobot robot = models::testing::MakeRandomChain7(seed, with_offsets, form);
  const PhysicalParameterization parameterization(robot);
  robot.SetStandardParameters(
      parameterization.ProjectToConsistent(robot.standard_parameters(), 1e-2));
  return robot;
}

// Stacked regressor of a robot at random states (rows × p) and torques with the robot's values.
void RandomSystem(const models::SerialRobot& robot, int states, std::uint32_t seed,
                  Eigen::MatrixXd* x, Eigen::VectorXd* y) {
  Eigen::MatrixXd q, qd, qdd;
  models::RandomRobotStates(robot, states, seed, 2.0, 5.0, 0.5, &q, &qd, &qdd);
  robot.StackedRegressor(q, qd, qdd, x);
  *y = *x * robot.standard_parameters() + RandomVector(static_cast<int>(x->rows()), seed, 0.1);
}

TEST(PhysicalParameterizationTest, RoundTripsConsistentRobotsInBothCouplingForms) {
  for (CouplingForm form : {CouplingForm::kPhysical, CouplingForm::kGautier}) {
    const models::SerialRobot robot = ConsistentChain7(4, true, form);
    const PhysicalParameterization parameterization(robot);
    ASSERT_EQ(parameterization.size(), robot.num_parameters());
    Eigen::VectorXd phi, theta;
    std::string error;
    ASSERT_TRUE(parameterization.FromStandard(robot.standard_parameters(), &phi, &error)) << error;
    parameterization.ToStandard(phi, &theta);
    EXPECT_LT((theta - robot.standard_parameters()).norm(),
              1e-12 * robot.standard_parameters().norm());
    EXPECT_EQ(parameterization.names()[0], "alpha_1");
    EXPECT_EQ(parameterization.names()[robot.ParameterIndex("fc3")], "ln_fc3");
    EXPECT_EQ(parameterization.names()[robot.ParameterIndex("off2")], "off2");
    EXPECT_TRUE(parameterization.IsNonNegative(robot.ParameterIndex("iam7")));
    EXPECT_FALSE(parameterization.IsNonNegative(robot.ParameterIndex("off2")));
  }
}

TEST(PhysicalParameterizationTest, CholeskyCoordinatesRoundTripAndReachTheBoundary) {
  for (CouplingForm form : {CouplingForm::kPhysical, CouplingForm::kGautier}) {
    const models::SerialRobot robot = ConsistentChain7(4, true, form);
    const PhysicalParameterization cholesky(robot, PhysicalCoordinates::kCholesky);
    Eigen::VectorXd u, theta;
    std::string error;
    ASSERT_TRUE(cholesky.FromStandard(robot.standard_parameters(), &u, &error)) << error;
    cholesky.ToStandard(u, &theta);
    EXPECT_LT((theta - robot.standard_parameters()).norm(),
              1e-12 * robot.standard_parameters().norm());
    EXPECT_EQ(cholesky.names()[0], "u44_1");
    EXPECT_EQ(cholesky.names()[robot.ParameterIndex("fc3")], "sqrt_fc3");
    // Zero entries are allowed and land exactly on the boundary: a massless link 1 and no
    // Coulomb friction on joint 3, still consistent (semidefinite).
    u.segment<10>(cholesky.LinkIndex(0)).setZero();
    u[robot.ParameterIndex("fc3")] = 0.0;
    cholesky.ToStandard(u, &theta);
    EXPECT_EQ(theta[robot.ParameterIndex("m1")], 0.0);
    EXPECT_EQ(cholesky.PhysicalValues(theta)[robot.ParameterIndex("fc3")], 0.0);
    for (int trial = 0; trial < 20; ++trial) {
      cholesky.ToStandard(RandomVector(cholesky.size(), 100 + trial, 1.0), &theta);
      for (int j = 0; j < cholesky.num_links(); ++j) {
        EXPECT_GE(models::CheckLinkConsistency(
                      models::Vector10d(theta.segment<10>(cholesky.LinkIndex(j))))
                      .pseudo_inertia_min_eigenvalue,
                  -1e-12 * theta.segment<10>(cholesky.LinkIndex(j)).norm());
      }
      const Eigen::VectorXd physical = cholesky.PhysicalValues(theta);
      for (int i = 0; i < cholesky.size(); ++i) {
        if (cholesky.IsNonNegative(i)) {
          EXPECT_GE(physical[i], -1e-12);
        }
      }
    }
  }
}

TEST(PhysicalParameterizationTest, GautierFormPhysicalValuesAreThePhysicalForm) {
  const models::SerialRobot gautier = ConsistentChain7(9, false, CouplingForm::kGautier);
  const models::SerialRobot physical =
      models::ConvertCouplingForm(gautier, CouplingForm::kPhysical);
  const PhysicalParameterization parameterization(gautier);
  const Eigen::VectorXd values = parameterization.PhysicalValues(gautier.standard_parameters());
  EXPECT_LT((values - physical.standard_parameters()).norm(), 1e-14 * values.norm());
  // A Gautier ia6' below the coupled term iam7·c6² is a negative physical rotor inertia.
  Eigen::VectorXd theta = gautier.standard_parameters();
  theta[gautier.ParameterIndex("ia6")] = 0.1 * 0.25 * theta[gautier.ParameterIndex("iam7")];
  Eigen::VectorXd phi;
  std::string error;
  EXPECT_FALSE(parameterization.FromStandard(theta, &phi, &error));
  EXPECT_NE(error.find("ia6"), std::string::npos) << error;
  const Eigen::VectorXd projected = parameterization.ProjectToConsistent(theta, 1e-3);
  EXPECT_TRUE(parameterization.FromStandard(projected, &phi, &error)) << error;
}

TEST(PhysicalParameterizationTest, Tx40CadValuesProjectToAConsistentStart) {
  const models::SerialRobot robot = models::MakeTx40();
  const PhysicalParameterization parameterization(robot);
  Eigen::VectorXd phi;
  std::string error;
  // The physical ia6 of the CAD set is exactly 0 (the rotor is the coupled motor's): on the
  // boundary, not inside.
  EXPECT_FALSE(parameterization.FromStandard(robot.standard_parameters(), &phi, &error));
  EXPECT_NE(error.find("ia6"), std::string::npos) << error;
  const Eigen::VectorXd start =
      parameterization.ProjectToConsistent(robot.standard_parameters(), 1e-3);
  ASSERT_TRUE(parameterization.FromStandard(start, &phi, &error)) << error;
  Eigen::VectorXd back;
  parameterization.ToStandard(phi, &back);
  EXPECT_LT((back - start).norm(), 1e-12 * start.norm());
}

TEST(PhysicallyConsistentProblemTest, CostJacobianPassesGradientChecker) {
#ifdef DYNID_NATIVE_BUILD
  GTEST_SKIP() << "-DDYNID_NATIVE=ON: the GradientChecker's results are allocated inside Ceres "
                  "(plain malloc) and would be freed here by Eigen's AVX allocator";
#endif
  for (CouplingForm form : {CouplingForm::kPhysical, CouplingForm::kGautier}) {
    for (PhysicalCoordinates coordinates :
         {PhysicalCoordinates::kLogCholesky, PhysicalCoordinates::kCholesky}) {
      const models::SerialRobot robot = models::testing::MakeRandomChain7(2, true, form);
      const PhysicalParameterization parameterization(robot, coordinates);
      Eigen::MatrixXd x;
      Eigen::VectorXd y;
      RandomSystem(robot, 3, 17, &x, &y);
      std::unique_ptr<ceres::CostFunction> cost(NewPhysicalLinearCost(&parameterization, x, y));
      const Eigen::VectorXd phi = RandomVector(parameterization.size(), 31, 0.5);
      const double* parameters[] = {phi.data()};
      ceres::NumericDiffOptions numeric_diff_options;
      const std::vector<const ceres::Manifold*>* no_manifolds = nullptr;
      ceres::GradientChecker checker(cost.get(), no_manifolds, numeric_diff_options);
      ceres::GradientChecker::ProbeResults results;
      EXPECT_TRUE(checker.Probe(parameters, 1e-7, &results)) << results.error_log;
      // The residual is the linear model at θ(φ).
      Eigen::VectorXd theta, residual(x.rows());
      parameterization.ToStandard(phi, &theta);
      ASSERT_TRUE(cost->Evaluate(parameters, residual.data(), nullptr));
      EXPECT_LT((residual - (x * theta - y)).norm(), 1e-10 * y.norm());
    }
  }
}

// Cost and gradient of a built problem at phi.
void Evaluate(ceres::Problem* problem, double* cost, std::vector<double>* gradient) {
  ceres::Problem::EvaluateOptions options;
  ASSERT_TRUE(problem->Evaluate(options, cost, nullptr, gradient, nullptr));
}

TEST(PhysicallyConsistentProblemTest, CompressedRowsGiveTheSameCostAndGradient) {
  const models::SerialRobot robot = models::MakeTx40();
  const PhysicalParameterization parameterization(robot);
  models::BaseParameterSet base;
  std::string error;
  ASSERT_TRUE(models::ComputeKhalilBaseParameters(robot, &base, &error)) << error;
  Eigen::MatrixXd x_standard, x_base;
  Eigen::VectorXd y;
  RandomSystem(robot, 40, 5, &x_standard, &y);
  base.SelectColumns(x_standard, &x_base);
  PhysicallyConsistentData data;
  data.x = x_base;
  data.y = y;
  data.column_map = base.grouping;
  data.row_weights = Eigen::VectorXd::LinSpaced(y.size(), 0.5, 2.0);
  data.row_weights[3] = 0.0;
  EXPECT_EQ(CountWeightedRows(data), y.size() - 1);
  const Eigen::VectorXd start =
      parameterization.ProjectToConsistent(robot.standard_parameters(), 1e-3);
  Eigen::VectorXd phi0;
  ASSERT_TRUE(parameterization.FromStandard(start, &phi0, &error)) << error;
  phi0 += RandomVector(parameterization.size(), 3, 0.05);
  double costs[2];
  std::vector<double> gradients[2];
  for (int compress = 0; compress < 2; ++compress) {
    PhysicallyConsistentProblemOptions options;
    options.compress_rows = compress == 1;
    options.rows_per_residual_block = 50;
    options.regularization = 0.0;
    Eigen::VectorXd phi = phi0;
    ceres::Problem problem;
    ASSERT_TRUE(
        BuildPhysicallyConsistentProblem(&parameterization, data, options, &phi, &problem, &error))
        << error;
    EXPECT_EQ(problem.NumResiduals(), compress ? base.size() + 1 : y.size());
    Evaluate(&problem, &costs[compress], &gradients[compress]);
  }
  // The direct cost ½ ||diag(w)(X_b K θ − y)||².
  Eigen::VectorXd theta;
  parameterization.ToStandard(phi0, &theta);
  const double direct =
      0.5 * (data.row_weights.asDiagonal() * (x_base * (base.grouping * theta) - y)).squaredNorm();
  EXPECT_NEAR(costs[0], direct, 1e-10 * direct);
  EXPECT_NEAR(costs[1], direct, 1e-10 * direct);
  const Eigen::Map<Eigen::VectorXd> g0(gradients[0].data(), gradients[0].size());
  const Eigen::Map<Eigen::VectorXd> g1(gradients[1].data(), gradients[1].size());
  EXPECT_LT((g0 - g1).norm(), 1e-9 * g0.norm());
}

TEST(PhysicallyConsistentProblemTest, PriorIsTheWhitenedPseudoInertiaDifference) {
  const models::SerialRobot robot = ConsistentChain7(6, false, CouplingForm::kPhysical);
  const PhysicalParameterization parameterization(robot);
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  RandomSystem(robot, 20, 2, &x, &y);
  PhysicallyConsistentData data;
  data.x = x;
  data.y = y;
  PhysicallyConsistentProblemOptions options;
  options.prior_weight = 4.0;
  options.prior_theta = robot.standard_parameters();
  PhysicallyConsistentRows rows;
  std::string error;
  ASSERT_TRUE(PhysicallyConsistentResidualRows(parameterization, data, options, &rows, &error))
      << error;
  ASSERT_EQ(rows.prior_matrix.rows(), 70);
  EXPECT_LT((rows.prior_matrix * options.prior_theta - rows.prior_target).norm(), 1e-9);
  // Every link's J doubled: J0^{-½}(2 J0 − J0)J0^{-½} = 1, ||1||_F = 2, times √w = 2.
  Eigen::VectorXd doubled = options.prior_theta;
  for (int j = 0; j < 7; ++j) doubled.segment<10>(parameterization.LinkIndex(j)) *= 2.0;
  const Eigen::VectorXd r = rows.prior_matrix * doubled - rows.prior_target;
  for (int j = 0; j < 7; ++j) EXPECT_NEAR(r.segment<10>(10 * j).norm(), 4.0, 1e-9) << j;
  // Drive terms carry no prior.
  EXPECT_EQ(rows.prior_matrix.col(robot.ParameterIndex("fv3")).norm(), 0.0);

  Eigen::VectorXd bad = options.prior_theta;
  bad[robot.ParameterIndex("m2")] = -1.0;
  options.prior_theta = bad;
  EXPECT_FALSE(PhysicallyConsistentResidualRows(parameterization, data, options, &rows, &error));
  EXPECT_NE(error.find("prior of link 2"), std::string::npos) << error;
}

TEST(PhysicallyConsistentProblemTest, RejectsInconsistentSizes) {
  const models::SerialRobot robot = models::testing::MakeRandomChain7(1, false);
  const PhysicalParameterization parameterization(robot);
  PhysicallyConsistentData data;
  data.x = Eigen::MatrixXd::Ones(100, robot.num_parameters());
  data.y = Eigen::VectorXd::Ones(99);
  std::string error;
  EXPECT_FALSE(ValidatePhysicallyConsistentData(parameterization, data, &error));
  EXPECT_NE(error.find("y has 99 rows"), std::string::npos) << error;
  data.y = Eigen::VectorXd::Ones(100);
  data.column_map = Eigen::MatrixXd::Ones(3, 3);
  EXPECT_FALSE(ValidatePhysicallyConsistentData(parameterization, data, &error));
  EXPECT_NE(error.find("column map"), std::string::npos) << error;
  data.column_map.resize(0, 0);
  data.row_weights = -Eigen::VectorXd::Ones(100);
  EXPECT_FALSE(ValidatePhysicallyConsistentData(parameterization, data, &error));
  EXPECT_NE(error.find("non-negative"), std::string::npos) << error;
  data.row_weights.resize(0);
  EXPECT_TRUE(ValidatePhysicallyConsistentData(parameterization, data, &error)) << error;
  PhysicallyConsistentProblemOptions options;
  options.prior_weight = -1.0;
  EXPECT_FALSE(options.IsValid(&error));
}

}  // namespace
}  // namespace dynid::problems
