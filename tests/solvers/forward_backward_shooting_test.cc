// Tests of solvers::RunForwardBackwardShooting against an independent solution of the same
// discrete problem: the Riccati sweep of the first-order approximation (same discretisation, so
// they must agree to round-off; the Riccati sweep in turn equals Ceres on kShooting and approaches
// the finite-element transcription as the step shrinks, first_order_smoother_test.cc). The
// costate substitution of shooting converges only when states and costates are weakly coupled
// (short records, heavy W, moderate position weights); the weights below are chosen so, and a
// strongly coupled case must be reported as diverged.
#include "dynid/solvers/internal/forward_backward_shooting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dynid/models/mass_spring_damper.h"
#include "dynid/problems/weighted_residual_problem.h"
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

// The fixture with weaker coupling between states and costates: W × 1e3 (kinematic residuals
// trusted more) and the position measurement weighted 1e-2 of its inverse noise intensity.
MsdExperiment WeaklyCoupled(int num_nodes, double duration, ParameterMode mode) {
  MsdExperiment e = MakeMsdExperiment(num_nodes, duration, false, 21, mode);
  e.weights.kinematic *= 1e3;
  e.weights.residual(1, 1) *= 1e-2;
  return e;
}

// Linear model, theta fixed: shooting and the Riccati sweep solve the stationarity conditions of
// the same discrete functional, so they agree to round-off.
TEST(ForwardBackwardShootingTest, EqualsRiccatiSweepOnLinearModel) {
  const MsdExperiment e = WeaklyCoupled(101, 1.0, ParameterMode::kFixed);
  const Eigen::Vector3d theta = e.model.NominalParameters();
  WeightedResidualVariables riccati = StartFromMeasurements(e, theta, ParameterMode::kFixed);
  ASSERT_TRUE(internal::RunFirstOrderSmoother(e.model, e.data, e.weights,
                                              FirstOrderSmootherOptions(), &riccati)
                  .converged);
  WeightedResidualVariables shooting = StartFromMeasurements(e, theta, ParameterMode::kFixed);
  const ForwardBackwardShootingSummary summary = internal::RunForwardBackwardShooting(
      e.model, e.data, e.weights, ForwardBackwardShootingOptions(), &shooting);
  ASSERT_TRUE(summary.converged) << summary.message << " after " << summary.iterations;
  EXPECT_LT(summary.root_residual, 1e-10);
  EXPECT_GT(summary.iterations, 1);  // the costate substitution really iterates
  EXPECT_LT(MaxRelativeDifference(riccati.states, shooting.states), 1e-8);
  EXPECT_LT(MaxRelativeDifference(riccati.inputs, shooting.inputs), 1e-8);
}

// theta estimated (kConstant): the problem is non-linear (theta multiplies a, v, s); shooting
// with re-linearisation converges to the stationary point of the iterated first-order
// approximation.
TEST(ForwardBackwardShootingTest, EstimatedParametersMatchFirstOrderApproximation) {
  const MsdExperiment e = WeaklyCoupled(101, 1.0, ParameterMode::kConstant);
  const Eigen::Vector3d start(1.3, 0.3, 35.0);
  WeightedResidualVariables riccati = StartFromMeasurements(e, start, ParameterMode::kConstant);
  FirstOrderSmootherOptions riccati_options;
  riccati_options.max_iterations = 200;
  riccati_options.tolerance = 1e-12;
  ASSERT_TRUE(internal::RunFirstOrderSmoother(e.model, e.data, e.weights, riccati_options, &riccati)
                  .converged);
  WeightedResidualVariables shooting = StartFromMeasurements(e, start, ParameterMode::kConstant);
  ForwardBackwardShootingOptions options;
  const ForwardBackwardShootingSummary summary =
      internal::RunForwardBackwardShooting(e.model, e.data, e.weights, options, &shooting);
  ASSERT_TRUE(summary.converged) << summary.message << " after " << summary.iterations;
  EXPECT_LT(MaxRelativeDifference(riccati.parameters, shooting.parameters), 1e-8);
  EXPECT_LT(MaxRelativeDifference(riccati.states, shooting.states), 1e-8);
  // and theta moved from the start towards the truth
  EXPECT_LT((shooting.parameters.col(0) - e.model.NominalParameters()).norm(),
            0.5 * (start - e.model.NominalParameters()).norm());
}

// Strong coupling (2 s record, inverse-noise weights): the costate substitution diverges; the
// solver must say so instead of returning non-finite estimates as converged.
TEST(ForwardBackwardShootingTest, ReportsDivergenceOfTheCostateSubstitution) {
  const MsdExperiment e = MakeMsdExperiment(201, 2.0, false, 21, ParameterMode::kFixed);
  WeightedResidualVariables shooting =
      StartFromMeasurements(e, e.model.NominalParameters(), ParameterMode::kFixed);
  const ForwardBackwardShootingSummary summary = internal::RunForwardBackwardShooting(
      e.model, e.data, e.weights, ForwardBackwardShootingOptions(), &shooting);
  EXPECT_FALSE(summary.converged);
  EXPECT_NE(summary.message.find("diverged"), std::string::npos) << summary.message;
}

TEST(ForwardBackwardShootingTest, RejectsInvalidOptionsAndLongRecords) {
  const MsdExperiment e = MakeMsdExperiment(51, 0.5, false, 1, ParameterMode::kFixed);
  const Eigen::Vector3d theta = e.model.NominalParameters();
  ForwardBackwardShootingOptions options;
  options.damping = 0.0;
  std::string why;
  EXPECT_FALSE(options.IsValid(&why));
  EXPECT_NE(why.find("damping"), std::string::npos) << why;
  WeightedResidualVariables variables = StartFromMeasurements(e, theta, ParameterMode::kFixed);
  ForwardBackwardShootingSummary summary =
      internal::RunForwardBackwardShooting(e.model, e.data, e.weights, options, &variables);
  EXPECT_FALSE(summary.converged);
  EXPECT_NE(summary.message.find("damping"), std::string::npos) << summary.message;
  options = ForwardBackwardShootingOptions();
  options.max_nodes = 50;
  summary = internal::RunForwardBackwardShooting(e.model, e.data, e.weights, options, &variables);
  EXPECT_FALSE(summary.converged);
  EXPECT_NE(summary.message.find("max_nodes"), std::string::npos) << summary.message;
  problems::WeightedResidualWeights no_initial = e.weights;
  no_initial.initial.resize(0, 0);
  no_initial.initial_guess.resize(0);
  summary = internal::RunForwardBackwardShooting(e.model, e.data, no_initial,
                                                 ForwardBackwardShootingOptions(), &variables);
  EXPECT_FALSE(summary.converged);
  EXPECT_NE(summary.message.find("R0"), std::string::npos) << summary.message;
}

}  // namespace
}  // namespace dynid::solvers
