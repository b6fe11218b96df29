#include "dynid/problems/weighted_residual_problem.h"

#include <cmath>
#include <string>

#include <ceres/problem.h>
#include <gtest/gtest.h>

#include "dynid/models/mass_spring_damper.h"
#include "tests/solvers/weighted_residual_fixtures.h"

namespace dynid::problems {
namespace {

using testing_fixtures::MakeMsdExperiment;
using testing_fixtures::MsdExperiment;

// Variables set to the simulated truth.
WeightedResidualVariables TruthVariables(const MsdExperiment& e, ParameterMode mode) {
  WeightedResidualVariables variables;
  const int num_nodes = static_cast<int>(e.data.time.size());
  ResizeVariables(1, 1, e.model.NominalParameters(), num_nodes, mode, &variables);
  for (int k = 0; k < num_nodes; ++k) {
    variables.states.col(k) << e.truth.positions(k, 0), e.truth.velocities(k, 0);
    variables.inputs.col(k) << e.truth.accelerations(k, 0), e.truth.inputs(k, 0);
  }
  return variables;
}

double KinematicCost(const MsdExperiment& e, Transcription transcription) {
  WeightedResidualVariables variables = TruthVariables(e, ParameterMode::kConstant);
  WeightedResidualData data = e.data;
  data.measurements = e.truth.measurements;  // noise-free: only xi is left
  WeightedResidualWeights weights = e.weights;
  weights.initial.resize(0, 0);
  WeightedResidualOptions options;
  options.transcription = transcription;
  ceres::Problem problem;
  std::string error;
  EXPECT_TRUE(BuildWeightedResidualProblem(e.model, data, weights, options, &variables, &problem,
                                           &error))
      << error;
  double cost = 0.0;
  problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost, nullptr, nullptr, nullptr);
  return cost;
}

TEST(WeightedResidualProblemTest, TrueMotionCostVanishesAsStepShrinks) {
  for (Transcription transcription : {Transcription::kShooting, Transcription::kCollocation}) {
    const double coarse = KinematicCost(MakeMsdExperiment(51, 2.0, true, 1, ParameterMode::kConstant),
                                        transcription);
    const double fine = KinematicCost(MakeMsdExperiment(101, 2.0, true, 1, ParameterMode::kConstant),
                                      transcription);
    // On the exact motion xi_s = O(h²) but xi_v = O(h) (v' − a with a held constant or linear
    // over an element), so ∫ xiᵀ W xi = O(h²): halving h divides it by ~4.
    EXPECT_GT(coarse, 0.0);
    EXPECT_NEAR(coarse / fine, 4.0, 0.3) << TranscriptionName(transcription);
  }
}

TEST(WeightedResidualProblemTest, CeresCostEqualsDirectlyWeightedResiduals) {
  // Shooting with diagonal weights: ½ Σ (w_k zetaᵀ V zeta) + ½ Σ h xiᵀ W xi + ½ |x0 − q0|²_R0.
  for (ParameterMode mode : {ParameterMode::kConstant, ParameterMode::kTimeVarying}) {
    const MsdExperiment e = MakeMsdExperiment(21, 1.0, false, 7, mode);
    WeightedResidualVariables variables = TruthVariables(e, mode);
    variables.states.array() += 0.01;  // away from the optimum so every term contributes
    if (mode == ParameterMode::kTimeVarying) {
      for (int k = 0; k < variables.num_nodes(); ++k) variables.parameters(2, k) += 0.1 * k;
    }
    WeightedResidualOptions options;
    options.parameter_mode = mode;
    ceres::Problem problem;
    std::string error;
    ASSERT_TRUE(BuildWeightedResidualProblem(e.model, e.data, e.weights, options, &variables,
                                             &problem, &error))
        << error;
    double cost = 0.0;
    problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost, nullptr, nullptr, nullptr);

    Eigen::MatrixXd zeta, xi;
    ComputeWeightedResiduals(e.model, e.data, variables, &zeta, &xi);
    const Eigen::VectorXd w = TrapezoidalNodeWeights(e.data.time);
    double expected = 0.0;
    for (int k = 0; k < variables.num_nodes(); ++k) {
      expected += 0.5 * w(k) * zeta.row(k) * e.weights.residual * zeta.row(k).transpose();
      if (k + 1 == variables.num_nodes()) continue;
      const double h = e.data.time(k + 1) - e.data.time(k);
      expected += 0.5 * h * xi.row(k).head(2) * e.weights.kinematic * xi.row(k).head(2).transpose();
      if (mode == ParameterMode::kTimeVarying) {
        expected +=
            0.5 * h * xi.row(k).tail(3) * e.weights.parameter * xi.row(k).tail(3).transpose();
      }
    }
    Eigen::VectorXd x0(5);
    x0 << variables.states.col(0), variables.parameters.col(0);
    expected += 0.5 * (x0 - e.weights.initial_guess).transpose() * e.weights.initial *
                (x0 - e.weights.initial_guess);
    EXPECT_NEAR(cost, expected, 1e-10 * expected) << ParameterModeName(mode);
  }
}

TEST(WeightedResidualProblemTest, RejectsBadInputsWithMessages) {
  const MsdExperiment e = MakeMsdExperiment(11, 1.0, false, 3, ParameterMode::kConstant);
  WeightedResidualOptions options;
  auto build = [&](const WeightedResidualData& data, const WeightedResidualWeights& weights,
                   std::string* error) {
    WeightedResidualVariables variables = TruthVariables(e, ParameterMode::kConstant);
    ceres::Problem problem;
    const bool ok =
        BuildWeightedResidualProblem(e.model, data, weights, options, &variables, &problem, error);
    EXPECT_EQ(problem.NumResidualBlocks(), ok ? problem.NumResidualBlocks() : 0);
    return ok;
  };
  std::string error;
  WeightedResidualData data = e.data;
  data.measurements.conservativeResize(Eigen::NoChange, 2);
  EXPECT_FALSE(build(data, e.weights, &error));
  EXPECT_NE(error.find("measurements: expected 11 × 3"), std::string::npos) << error;

  data = e.data;
  data.time(5) = data.time(4);
  EXPECT_FALSE(build(data, e.weights, &error));
  EXPECT_NE(error.find("not strictly increasing at node 5"), std::string::npos) << error;

  WeightedResidualWeights weights = e.weights;
  weights.residual(1, 1) = -1.0;
  EXPECT_FALSE(build(e.data, weights, &error));
  EXPECT_NE(error.find("residual weight V: not positive semi-definite"), std::string::npos)
      << error;

  weights = e.weights;
  weights.kinematic(1, 1) = 0.0;
  EXPECT_FALSE(build(e.data, weights, &error));
  EXPECT_NE(error.find("kinematic weight W: not positive definite"), std::string::npos) << error;

  weights = e.weights;
  weights.initial = Eigen::MatrixXd::Identity(2, 2);  // kConstant needs 2n + p = 5
  EXPECT_FALSE(build(e.data, weights, &error));
  EXPECT_NE(error.find("initial weight R0: expected 5 × 5"), std::string::npos) << error;
}

TEST(WeightedResidualProblemTest, SquareRootFactorReproducesFullMatrices) {
  Eigen::MatrixXd A(3, 3);
  A << 4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2;
  Eigen::MatrixXd S;
  std::string error;
  ASSERT_TRUE(SquareRootFactor(A, true, &S, &error)) << error;
  EXPECT_LT((S.transpose() * S - A).norm(), 1e-12);
  // Semi-definite: rank one.
  const Eigen::Vector3d u(1, 2, 3);
  ASSERT_TRUE(SquareRootFactor(u * u.transpose(), false, &S, &error)) << error;
  EXPECT_LT((S.transpose() * S - u * u.transpose()).norm(), 1e-12);
  EXPECT_FALSE(SquareRootFactor(u * u.transpose(), true, &S, &error));
}

}  // namespace
}  // namespace dynid::problems
