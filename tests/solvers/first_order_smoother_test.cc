#include "dynid/solvers/internal/first_order_smoother.h"

#include <ceres/problem.h>
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <cmath>
#include <string>
#include <vector>

#include "dynid/models/mass_spring_damper.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/models/xy_table.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/weighted_residual_smoother.h"
#include "tests/solvers/weighted_residual_fixtures.h"

namespace dynid::solvers {
namespace {

using problems::ParameterMode;
using problems::Transcription;
using problems::WeightedResidualVariables;
using testing_fixtures::MakeMsdExperiment;
using testing_fixtures::MaxRelativeDifference;
using testing_fixtures::MsdExperiment;
using testing_fixtures::StartFromMeasurements;

WeightedResidualVariables SolveByCeres(const MsdExperiment& e, Transcription transcription,
                                       ParameterMode mode, const Eigen::Vector3d& theta) {
  WeightedResidualVariables variables = StartFromMeasurements(e, theta, mode);
  problems::WeightedResidualOptions options;
  options.transcription = transcription;
  options.parameter_mode = mode;
  ceres::Problem problem;
  std::string error;
  EXPECT_TRUE(problems::BuildWeightedResidualProblem(e.model, e.data, e.weights, options,
                                                     &variables, &problem, &error))
      << error;
  WeightedResidualSmootherOptions solver_options;
  solver_options.function_tolerance = 1e-16;
  solver_options.gradient_tolerance = 1e-16;
  solver_options.parameter_tolerance = 1e-16;
  solver_options.max_iterations = 200;
  const SolverSummary summary = SolveWeightedResidual(&problem, &variables, solver_options);
  EXPECT_TRUE(summary.final_cost <= summary.initial_cost) << summary.message;
  return variables;
}

// Linear model (theta fixed): the Riccati sweep solves the same least-squares problem as the
// Ceres shooting transcription, so they agree to round-off.
TEST(FirstOrderSmootherTest, RiccatiEqualsCeresShootingOnLinearModel) {
  const MsdExperiment e = MakeMsdExperiment(201, 2.0, false, 21, ParameterMode::kFixed);
  const Eigen::Vector3d theta = e.model.NominalParameters();
  const WeightedResidualVariables ceres_solution =
      SolveByCeres(e, Transcription::kShooting, ParameterMode::kFixed, theta);
  WeightedResidualVariables riccati = StartFromMeasurements(e, theta, ParameterMode::kFixed);
  const FirstOrderSmootherSummary summary = internal::RunFirstOrderSmoother(
      e.model, e.data, e.weights, FirstOrderSmootherOptions(), &riccati);
  ASSERT_TRUE(summary.converged) << summary.message;
  EXPECT_LE(summary.iterations, 2);  // linear: exact after one sweep, the second confirms
  EXPECT_LT(MaxRelativeDifference(ceres_solution.states, riccati.states), 1e-8);
  EXPECT_LT(MaxRelativeDifference(ceres_solution.inputs, riccati.inputs), 1e-8);
}

// A residual weight V that couples the equation of motion and the measurements (not diagonal):
// the elimination of p̄ then mixes all rows, and the sweep still solves the Ceres problem.
TEST(FirstOrderSmootherTest, RiccatiEqualsCeresShootingWithCoupledResidualWeight) {
  MsdExperiment e = MakeMsdExperiment(201, 2.0, false, 22, ParameterMode::kFixed);
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  T(1, 0) = 0.3, T(2, 1) = -0.4, T(3, 2) = 0.2, T(3, 0) = 0.1;
  const Eigen::Matrix4d V = e.weights.residual;
  e.weights.residual = T * V * T.transpose();
  const Eigen::Vector3d theta = e.model.NominalParameters();
  const WeightedResidualVariables ceres_solution =
      SolveByCeres(e, Transcription::kShooting, ParameterMode::kFixed, theta);
  WeightedResidualVariables riccati = StartFromMeasurements(e, theta, ParameterMode::kFixed);
  const FirstOrderSmootherSummary summary = internal::RunFirstOrderSmoother(
      e.model, e.data, e.weights, FirstOrderSmootherOptions(), &riccati);
  ASSERT_TRUE(summary.converged) << summary.message;
  EXPECT_LT(MaxRelativeDifference(ceres_solution.states, riccati.states), 1e-8);
  EXPECT_LT(MaxRelativeDifference(ceres_solution.inputs, riccati.inputs), 1e-8);
}

// With two threads (linearisation and elimination on a worker ahead of the sweep, smoothed
// inputs in parallel) every iterate is bit-for-bit the one-thread iterate.
TEST(FirstOrderSmootherTest, ThreadCountDoesNotChangeTheIterates) {
  const MsdExperiment e = MakeMsdExperiment(3001, 6.0, false, 23, ParameterMode::kConstant);
  FirstOrderSmootherOptions options;
  options.max_iterations = 3;
  options.tolerance = 0.0;
  options.damping = 0.7;
  WeightedResidualVariables one =
      StartFromMeasurements(e, Eigen::Vector3d(1.3, 0.3, 35.0), ParameterMode::kConstant);
  WeightedResidualVariables two = one;
  ASSERT_EQ(internal::RunFirstOrderSmoother(e.model, e.data, e.weights, options, &one).iterations,
            3);
  options.num_threads = 2;
  ASSERT_EQ(internal::RunFirstOrderSmoother(e.model, e.data, e.weights, options, &two).iterations,
            3);
  EXPECT_EQ(one.states, two.states);
  EXPECT_EQ(one.inputs, two.inputs);
  EXPECT_EQ(one.parameters, two.parameters);
  EXPECT_GT((two.parameters.col(0) - Eigen::Vector3d(1.3, 0.3, 35.0)).norm(), 0.1);
}

// The sweep's AVX2 + FMA kernels (when the CPU has them) and its portable ones
// (solvers/internal/simd_kernels.h) compute the same iterates up to round-off, with one and two
// threads.
TEST(FirstOrderSmootherTest, PortableAndWideKernelsAgree) {
  const MsdExperiment e = MakeMsdExperiment(2001, 4.0, false, 25, ParameterMode::kConstant);
  FirstOrderSmootherOptions options;
  options.max_iterations = 3;
  options.tolerance = 0.0;
  for (int threads : {1, 2}) {
    options.num_threads = threads;
    WeightedResidualVariables wide =
        StartFromMeasurements(e, Eigen::Vector3d(1.3, 0.3, 35.0), ParameterMode::kConstant);
    WeightedResidualVariables portable = wide;
    ASSERT_EQ(
        internal::RunFirstOrderSmoother(e.model, e.data, e.weights, options, &wide).iterations, 3);
    simd::ForcePortableKernels(true);
    EXPECT_FALSE(simd::UseWideKernels());
    const FirstOrderSmootherSummary summary =
        internal::RunFirstOrderSmoother(e.model, e.data, e.weights, options, &portable);
    simd::ForcePortableKernels(false);
    ASSERT_EQ(summary.iterations, 3) << summary.message;
    EXPECT_LT(MaxRelativeDifference(wide.states, portable.states), 1e-9) << threads;
    EXPECT_LT(MaxRelativeDifference(wide.inputs, portable.inputs), 1e-9) << threads;
    EXPECT_LT(MaxRelativeDifference(wide.parameters, portable.parameters), 1e-9) << threads;
  }
}

// Inputs the weighted equations do not determine (the acceleration and force measurements
// weighted 0, so one equation of motion for two inputs): the message names the node and the
// cause, with one thread and through the two-thread pipeline.
TEST(FirstOrderSmootherTest, ReportsUndeterminedInputsWithItsNode) {
  MsdExperiment e = MakeMsdExperiment(2001, 4.0, false, 24, ParameterMode::kConstant);
  e.weights.residual(2, 2) = 0.0;
  e.weights.residual(3, 3) = 0.0;
  for (int threads : {1, 2}) {
    WeightedResidualVariables variables =
        StartFromMeasurements(e, e.model.NominalParameters(), ParameterMode::kConstant);
    FirstOrderSmootherOptions options;
    options.num_threads = threads;
    const FirstOrderSmootherSummary summary =
        internal::RunFirstOrderSmoother(e.model, e.data, e.weights, options, &variables);
    EXPECT_FALSE(summary.converged);
    EXPECT_NE(summary.message.find("node 0: FᵀVF is singular"), std::string::npos)
        << threads << ": " << summary.message;
  }
}

TEST(FirstOrderSmootherTest, RejectsInvalidThreadCount) {
  FirstOrderSmootherOptions options;
  options.num_threads = 0;
  std::string why;
  EXPECT_FALSE(options.IsValid(&why));
  EXPECT_NE(why.find("num_threads must be >= 1"), std::string::npos) << why;
}

// Both transcriptions approximate the same continuous optimum: their difference shrinks with h.
TEST(FirstOrderSmootherTest, CollocationAndShootingConvergeTogetherAsStepShrinks) {
  const Eigen::Vector3d theta = models::MassSpringDamper().NominalParameters();
  std::vector<double> differences;
  for (int num_nodes : {41, 81, 161, 321}) {
    const MsdExperiment e = MakeMsdExperiment(num_nodes, 2.0, true, 0, ParameterMode::kFixed);
    const WeightedResidualVariables shooting =
        SolveByCeres(e, Transcription::kShooting, ParameterMode::kFixed, theta);
    const WeightedResidualVariables collocation =
        SolveByCeres(e, Transcription::kCollocation, ParameterMode::kFixed, theta);
    // Compare at the common times t = 0.25 j.
    double worst = 0.0;
    for (int j = 0; j <= 8; ++j) {
      const int k = j * (num_nodes - 1) / 8;
      worst = std::max(worst, std::abs(shooting.states(1, k) - collocation.states(1, k)));
    }
    differences.push_back(worst);
  }
  for (size_t i = 1; i < differences.size(); ++i) {
    EXPECT_LT(differences[i], 0.6 * differences[i - 1]) << "refinement " << i;
  }
  EXPECT_LT(differences.back(), differences.front() / 5.0);
}

// Textbook Kalman filter + Rauch–Tung–Striebel smoother for the mass–spring–damper with the
// measured force as known input (the Kalman–Bucy limit of van de Molengraft (1990) §3.3: equation
// of motion and input measurement weighted infinitely). Returns the smoothed [s; v] (2 × N).
Eigen::MatrixXd KalmanRtsSmoother(const MsdExperiment& e) {
  const Eigen::Vector3d theta = e.model.NominalParameters();
  const double mass = theta(0), damping = theta(1), stiffness = theta(2);
  const int num_nodes = static_cast<int>(e.data.time.size());
  const Eigen::VectorXd w = problems::TrapezoidalNodeWeights(e.data.time);
  // a = (f − c v − k s) / m.
  const Eigen::RowVector2d accel_row(-stiffness / mass, -damping / mass);
  std::vector<Eigen::Vector2d> m_prior(num_nodes), m_post(num_nodes);
  std::vector<Eigen::Matrix2d> P_prior(num_nodes), P_post(num_nodes), F(num_nodes);
  m_prior[0] = e.weights.initial_guess;
  P_prior[0] = e.weights.initial.inverse();
  const Eigen::Matrix2d W_inverse = e.weights.kinematic.inverse();
  for (int k = 0; k < num_nodes; ++k) {
    // Measurements: position, and acceleration minus its known-input part.
    Eigen::Matrix2d H;
    H << 1.0, 0.0, accel_row;
    const double force = e.data.measurements(k, 2);
    const Eigen::Vector2d y(e.data.measurements(k, 0), e.data.measurements(k, 1) - force / mass);
    const Eigen::Matrix2d R = Eigen::Vector2d(1.0 / (e.weights.residual(1, 1) * w(k)),
                                              1.0 / (e.weights.residual(2, 2) * w(k)))
                                  .asDiagonal();
    const Eigen::Matrix2d S = H * P_prior[k] * H.transpose() + R;
    const Eigen::Matrix2d K = P_prior[k] * H.transpose() * S.inverse();
    m_post[k] = m_prior[k] + K * (y - H * m_prior[k]);
    P_post[k] = (Eigen::Matrix2d::Identity() - K * H) * P_prior[k];
    if (k + 1 == num_nodes) break;
    const double h = e.data.time(k + 1) - e.data.time(k);
    // Exact discretisation of s' = v, v' = a with a and the process noise held over the step.
    Eigen::Matrix2d Phi, Gamma;
    Phi << 1.0, h, 0.0, 1.0;
    Gamma << h, 0.5 * h * h, 0.0, h;
    const Eigen::Vector2d GammaB(0.5 * h * h, h);
    F[k] = Phi + GammaB * accel_row;
    m_prior[k + 1] = F[k] * m_post[k] + GammaB * force / mass;
    P_prior[k + 1] =
        F[k] * P_post[k] * F[k].transpose() + Gamma * (W_inverse / h) * Gamma.transpose();
  }
  Eigen::MatrixXd smoothed(2, num_nodes);
  smoothed.col(num_nodes - 1) = m_post[num_nodes - 1];
  for (int k = num_nodes - 2; k >= 0; --k) {
    const Eigen::Matrix2d J = P_post[k] * F[k].transpose() * P_prior[k + 1].inverse();
    smoothed.col(k) = m_post[k] + J * (smoothed.col(k + 1) - m_prior[k + 1]);
  }
  return smoothed;
}

TEST(FirstOrderSmootherTest, EqualsKalmanRtsSmootherWhenEquationAndInputWeightedInfinitely) {
  MsdExperiment e = MakeMsdExperiment(201, 2.0, false, 8, ParameterMode::kFixed);
  const Eigen::Vector3d theta = e.model.NominalParameters();
  const Eigen::MatrixXd rts = KalmanRtsSmoother(e);
  std::vector<double> ceres_errors, riccati_errors;
  for (double big : {1e8, 1e11}) {
    e.weights.residual(0, 0) = big;  // equation of motion
    e.weights.residual(3, 3) = big;  // force measurement
    const WeightedResidualVariables ceres_solution =
        SolveByCeres(e, Transcription::kShooting, ParameterMode::kFixed, theta);
    WeightedResidualVariables riccati = StartFromMeasurements(e, theta, ParameterMode::kFixed);
    ASSERT_TRUE(internal::RunFirstOrderSmoother(e.model, e.data, e.weights,
                                                FirstOrderSmootherOptions(), &riccati)
                    .converged);
    ceres_errors.push_back(MaxRelativeDifference(rts, ceres_solution.states));
    riccati_errors.push_back(MaxRelativeDifference(rts, riccati.states));
  }
  // The weighted-residual solution tends to the Kalman smoother as O(1 / weight).
  EXPECT_LT(riccati_errors[1], 1e-7);
  EXPECT_LT(riccati_errors[1], riccati_errors[0] / 100.0);
  EXPECT_LT(ceres_errors[1], 1e-6);
  EXPECT_LT(ceres_errors[1], ceres_errors[0] / 20.0);
}

// Non-linear problems (theta estimated): the iterated first-order approximation converges to the
// stationary point Ceres finds, with and without numerical damping.
TEST(FirstOrderSmootherTest, IteratedApproximationMatchesCeresWithEstimatedParameters) {
  for (ParameterMode mode : {ParameterMode::kConstant, ParameterMode::kTimeVarying}) {
    const MsdExperiment e = MakeMsdExperiment(201, 2.0, false, 4, mode);
    const Eigen::Vector3d start(1.3, 0.3, 35.0);
    const WeightedResidualVariables ceres_solution =
        SolveByCeres(e, Transcription::kShooting, mode, start);
    for (double damping : {1.0, 0.6}) {
      WeightedResidualVariables riccati = StartFromMeasurements(e, start, mode);
      FirstOrderSmootherOptions options;
      options.damping = damping;
      options.max_iterations = 200;
      options.tolerance = 1e-10;  // the round-off floor of the time-varying case is ~3e-12
      const FirstOrderSmootherSummary summary =
          internal::RunFirstOrderSmoother(e.model, e.data, e.weights, options, &riccati);
      ASSERT_TRUE(summary.converged) << summary.message << " after " << summary.iterations;
      EXPECT_LT(MaxRelativeDifference(ceres_solution.parameters, riccati.parameters), 1e-7)
          << problems::ParameterModeName(mode) << " damping " << damping;
      EXPECT_LT(MaxRelativeDifference(ceres_solution.states, riccati.states), 1e-7);
    }
  }
}

// The filter's estimate at the last node uses all data, so it equals the smoother's there.
TEST(FirstOrderSmootherTest, LinearOptimalFilterEndsOnTheSmoothedEstimate) {
  const MsdExperiment e = MakeMsdExperiment(201, 2.0, false, 9, ParameterMode::kFixed);
  const Eigen::Vector3d theta = e.model.NominalParameters();
  WeightedResidualVariables riccati = StartFromMeasurements(e, theta, ParameterMode::kFixed);
  ASSERT_TRUE(internal::RunFirstOrderSmoother(e.model, e.data, e.weights,
                                              FirstOrderSmootherOptions(), &riccati)
                  .converged);
  LinearOptimalFilterResult filtered;
  std::string error;
  ASSERT_TRUE(internal::RunLinearOptimalFilter(e.model, e.data, e.weights, ParameterMode::kFixed,
                                               theta, LinearOptimalFilterOptions(), &filtered,
                                               &error))
      << error;
  const int last = riccati.num_nodes() - 1;
  EXPECT_LT((filtered.states.col(last) - riccati.states.col(last)).norm(),
            1e-9 * riccati.states.col(last).norm());
  EXPECT_LT((filtered.inputs.col(last) - riccati.inputs.col(last)).norm(),
            1e-9 * riccati.inputs.col(last).norm());
  // Elsewhere the filter differs (it has not seen the future) but tracks the truth.
  const Eigen::VectorXd error_s = filtered.states.row(0).transpose() - e.truth.positions.col(0);
  EXPECT_LT(error_s.tail(150).cwiseAbs().maxCoeff(), 5e-3);
  EXPECT_GT((filtered.states.row(0) - riccati.states.row(0)).cwiseAbs().maxCoeff(), 1e-7);
}

TEST(FirstOrderSmootherTest, OnlineFilterEstimatesRtPayloadFromRigidData) {
  const models::RtManipulatorRigid model;
  const int num_nodes = 501;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num_nodes, 0.0, 1.0);
  const models::Trajectory truth = models::Simulate(
      model, model.NominalParameters(), Eigen::Vector2d(0.25, 0.0), Eigen::Vector2d::Zero(),
      [](double t, double* u) {
        const Eigen::Vector2d f =
            models::RtManipulatorReferenceInputs(models::RtManipulatorParameters(), t);
        u[0] = f(0), u[1] = f(1);
      },
      times, 10);
  problems::WeightedResidualData data{times, truth.measurements};
  problems::WeightedResidualWeights weights;
  weights.kinematic = Eigen::Vector4d(1e6, 1e6, 1e4, 1e4).asDiagonal();
  Eigen::VectorXd v(8);
  v << 1e6, 1e6, 1e8, 1e8, 1e4, 1e4, 1e4, 1e4;
  weights.residual = v.asDiagonal();
  weights.parameter = Eigen::MatrixXd::Constant(1, 1, 1e2);
  Eigen::VectorXd r0(5);
  r0 << 1e6, 1e6, 1e6, 1e6, 1.0;
  weights.initial = r0.asDiagonal();
  weights.initial_guess = Eigen::VectorXd::Zero(5);
  weights.initial_guess(0) = 0.25;
  LinearOptimalFilterResult filtered;
  std::string error;
  ASSERT_TRUE(internal::RunLinearOptimalFilter(model, data, weights, ParameterMode::kTimeVarying,
                                               Eigen::Matrix<double, 1, 1>(0.0),
                                               LinearOptimalFilterOptions(), &filtered, &error))
      << error;
  // Starts at 0 kg, ends at the true 2 kg (noise-free data, small discretisation bias).
  EXPECT_NEAR(filtered.states(4, num_nodes - 1), 2.0, 0.05);
  EXPECT_LT(std::abs(filtered.states(4, 0)), 1.0);
}

TEST(FirstOrderSmootherTest, RejectsSingularInitialWeight) {
  MsdExperiment e = MakeMsdExperiment(21, 1.0, false, 2, ParameterMode::kFixed);
  e.weights.initial(1, 1) = 0.0;
  WeightedResidualVariables variables =
      StartFromMeasurements(e, e.model.NominalParameters(), ParameterMode::kFixed);
  const FirstOrderSmootherSummary summary = internal::RunFirstOrderSmoother(
      e.model, e.data, e.weights, FirstOrderSmootherOptions(), &variables);
  EXPECT_FALSE(summary.converged);
  EXPECT_NE(summary.message.find("R0 must be positive definite"), std::string::npos)
      << summary.message;
}

// The public entry points run the library's compiled sweeps for its own models: the same
// iterates as the header templates, and the same errors for bad input.
static_assert(kHasFirstOrderSweeps<models::MassSpringDamper>);
static_assert(kHasFirstOrderSweeps<models::XyTableFlexible>);
static_assert(!kHasFirstOrderSweeps<double>);

TEST(FirstOrderSmootherTest, PublicEntryPointsMatchTheTemplates) {
  const MsdExperiment e = MakeMsdExperiment(801, 4.0, false, 31, ParameterMode::kConstant);
  FirstOrderSmootherOptions options;
  options.damping = 0.8;
  WeightedResidualVariables compiled =
      StartFromMeasurements(e, Eigen::Vector3d(1.2, 0.35, 36.0), ParameterMode::kConstant);
  WeightedResidualVariables templated = compiled;
  const FirstOrderSmootherSummary a =
      RunFirstOrderSmoother(e.model, e.data, e.weights, options, &compiled);
  const FirstOrderSmootherSummary b =
      internal::RunFirstOrderSmoother(e.model, e.data, e.weights, options, &templated);
  ASSERT_TRUE(a.converged) << a.message;
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_LT(MaxRelativeDifference(compiled.states, templated.states), 1e-12);
  EXPECT_LT(MaxRelativeDifference(compiled.parameters, templated.parameters), 1e-12);

  LinearOptimalFilterResult filtered;
  std::string error;
  EXPECT_FALSE(RunLinearOptimalFilter(e.model, e.data, e.weights, ParameterMode::kFixed,
                                      Eigen::VectorXd::Zero(2), LinearOptimalFilterOptions(),
                                      &filtered, &error));
  EXPECT_NE(error.find("fixed_theta has 2 entries, the model 3 parameters"), std::string::npos)
      << error;
  LinearOptimalFilterResult templated_filter;
  ASSERT_TRUE(RunLinearOptimalFilter(e.model, e.data, e.weights, ParameterMode::kConstant,
                                     e.model.NominalParameters(), LinearOptimalFilterOptions(),
                                     &filtered, &error))
      << error;
  ASSERT_TRUE(internal::RunLinearOptimalFilter(
      e.model, e.data, e.weights, ParameterMode::kConstant, e.model.NominalParameters(),
      LinearOptimalFilterOptions(), &templated_filter, &error))
      << error;
  EXPECT_TRUE(filtered.states.allFinite());
  EXPECT_LT(MaxRelativeDifference(filtered.states, templated_filter.states), 1e-12);
}

}  // namespace
}  // namespace dynid::solvers
