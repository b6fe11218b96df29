#include "dynid/solvers/internal/constant_parameter_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "dynid/solvers/internal/first_order_smoother.h"
#include "tests/solvers/weighted_residual_fixtures.h"

namespace dynid::solvers {
namespace {

using problems::ParameterMode;
using problems::WeightedResidualVariables;
using testing_fixtures::MakeMsdExperiment;
using testing_fixtures::MaxRelativeDifference;
using testing_fixtures::MsdExperiment;
using testing_fixtures::StartFromMeasurements;

struct Runs {
  WeightedResidualVariables augmented, conditioned;
  FirstOrderSmootherSummary augmented_summary, conditioned_summary;
};

Runs RunBoth(const MsdExperiment& e, const Eigen::Vector3d& start, int iterations, double damping) {
  Runs runs;
  FirstOrderSmootherOptions options;
  options.max_iterations = iterations;
  options.tolerance = 0.0;  // all iterations run
  options.damping = damping;
  runs.augmented = StartFromMeasurements(e, start, ParameterMode::kConstant);
  runs.conditioned = runs.augmented;
  options.sweep = FirstOrderSmootherOptions::Sweep::kAugmented;
  runs.augmented_summary =
      internal::RunFirstOrderSmoother(e.model, e.data, e.weights, options, &runs.augmented);
  options.sweep = FirstOrderSmootherOptions::Sweep::kConditionedOnTheta;
  runs.conditioned_summary =
      internal::RunFirstOrderSmoother(e.model, e.data, e.weights, options, &runs.conditioned);
  return runs;
}

// One iteration from a poor start (a linearisation far from the optimum) and five damped ones:
// the sweep conditioned on theta solves the same linear–quadratic problem as the augmented
// (2n + p)-state sweep.
TEST(ConstantParameterSweepTest, EqualsAugmentedSweep) {
  const MsdExperiment e = MakeMsdExperiment(301, 3.0, false, 5, ParameterMode::kConstant);
  for (int iterations : {1, 5}) {
    const Runs runs = RunBoth(e, Eigen::Vector3d(1.3, 0.3, 35.0), iterations, 0.7);
    ASSERT_EQ(runs.augmented_summary.iterations, iterations) << runs.augmented_summary.message;
    ASSERT_EQ(runs.conditioned_summary.iterations, iterations) << runs.conditioned_summary.message;
    EXPECT_LT(MaxRelativeDifference(runs.augmented.parameters, runs.conditioned.parameters), 1e-8)
        << iterations;
    EXPECT_LT(MaxRelativeDifference(runs.augmented.states, runs.conditioned.states), 1e-8);
    EXPECT_LT(MaxRelativeDifference(runs.augmented.inputs, runs.conditioned.inputs), 1e-8);
    // The iterate has moved (the comparison is not of two copies of the start).
    EXPECT_GT((runs.conditioned.parameters.col(0) - Eigen::Vector3d(1.3, 0.3, 35.0)).norm(), 0.1);
  }
}

// An initial weight R0 that couples the initial state and theta: d_0 | theta then has a
// theta-dependent mean.
TEST(ConstantParameterSweepTest, EqualsAugmentedSweepWithCoupledPrior) {
  MsdExperiment e = MakeMsdExperiment(201, 2.0, false, 6, ParameterMode::kConstant);
  Eigen::MatrixXd B = Eigen::MatrixXd::Identity(5, 5);
  B(2, 0) = 0.3, B(3, 1) = -0.2, B(4, 0) = 0.1, B(4, 2) = 0.5;
  e.weights.initial = B * e.weights.initial * B.transpose();
  e.weights.initial_guess(1) = 0.2;
  const Runs runs = RunBoth(e, Eigen::Vector3d(1.1, 0.5, 30.0), 2, 1.0);
  ASSERT_EQ(runs.conditioned_summary.iterations, 2) << runs.conditioned_summary.message;
  EXPECT_LT(MaxRelativeDifference(runs.augmented.parameters, runs.conditioned.parameters), 1e-8);
  EXPECT_LT(MaxRelativeDifference(runs.augmented.states, runs.conditioned.states), 1e-8);
  EXPECT_LT(MaxRelativeDifference(runs.augmented.inputs, runs.conditioned.inputs), 1e-8);
}

// A residual weight V that couples the equation of motion and the measurements (not diagonal):
// the conditioned sweep weights its rows (NodeRows) by the full square root of V, the augmented
// sweep those of its NodeLinearization, and they still agree.
TEST(ConstantParameterSweepTest, EqualsAugmentedSweepWithCoupledResidualWeight) {
  MsdExperiment e = MakeMsdExperiment(201, 2.0, false, 7, ParameterMode::kConstant);
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  T(1, 0) = 0.3, T(2, 1) = -0.4, T(3, 2) = 0.2, T(3, 0) = 0.1;
  e.weights.residual = T * e.weights.residual * T.transpose();
  const Runs runs = RunBoth(e, Eigen::Vector3d(1.2, 0.4, 32.0), 3, 0.8);
  ASSERT_EQ(runs.augmented_summary.iterations, 3) << runs.augmented_summary.message;
  ASSERT_EQ(runs.conditioned_summary.iterations, 3) << runs.conditioned_summary.message;
  EXPECT_LT(MaxRelativeDifference(runs.augmented.parameters, runs.conditioned.parameters), 1e-8);
  EXPECT_LT(MaxRelativeDifference(runs.augmented.states, runs.conditioned.states), 1e-8);
  EXPECT_LT(MaxRelativeDifference(runs.augmented.inputs, runs.conditioned.inputs), 1e-8);
  EXPECT_GT((runs.conditioned.parameters.col(0) - Eigen::Vector3d(1.2, 0.4, 32.0)).norm(), 0.1);
}

// A singular R0 (here in its theta block) is rejected with the augmented sweep's message.
TEST(ConstantParameterSweepTest, RejectsSingularThetaBlockOfPrior) {
  MsdExperiment e = MakeMsdExperiment(21, 1.0, false, 2, ParameterMode::kConstant);
  WeightedResidualVariables variables =
      StartFromMeasurements(e, e.model.NominalParameters(), ParameterMode::kConstant);
  e.weights.initial(4, 4) = 0.0;  // R0 singular
  const FirstOrderSmootherSummary summary = internal::RunFirstOrderSmoother(
      e.model, e.data, e.weights, FirstOrderSmootherOptions(), &variables);
  EXPECT_FALSE(summary.converged);
  EXPECT_NE(summary.message.find("R0 must be positive definite"), std::string::npos)
      << summary.message;
}

}  // namespace
}  // namespace dynid::solvers
