// Tests of the backlash smoothing problem: derivatives, structure, and the residuals at the truth.
#include "dynid/problems/backlash_smoother_problem.h"

#include <ceres/ceres.h>
#include <ceres/gradient_checker.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dynid/problems/internal/backlash_shape_reference.h"

namespace dynid::problems {
namespace {

// Every row of every block of the probed Jacobian within 1e-6 of the numeric one, relative to
// that row's largest numeric entry (rows mix entries of 1e4 and 1e-3; the checker's element-wise
// relative test would flag round-off of the small ones; a wrong derivative is off by O(1) of the
// row scale). `where` prefixes the failure message.
void ExpectRowsAgree(const ceres::GradientChecker::ProbeResults& results,
                     const std::string& where) {
  for (size_t block = 0; block < results.jacobians.size(); ++block) {
    const Eigen::MatrixXd& user = results.jacobians[block];
    const Eigen::MatrixXd& numeric_jacobian = results.numeric_jacobians[block];
    for (int row = 0; row < user.rows(); ++row) {
      const double scale = 1.0 + numeric_jacobian.row(row).cwiseAbs().maxCoeff();
      EXPECT_LT((user.row(row) - numeric_jacobian.row(row)).cwiseAbs().maxCoeff(), 1e-6 * scale)
          << where << "block " << block << " row " << row << "\n"
          << results.error_log;
    }
  }
}

TEST(BacklashSmootherProblemTest, AutomaticDerivativesPassTheGradientChecker) {
#ifdef DYNID_NATIVE_BUILD
  GTEST_SKIP() << "-DDYNID_NATIVE=ON: the GradientChecker's results are allocated inside Ceres "
                  "(plain malloc) and would be freed here by Eigen's AVX allocator";
#endif
  std::mt19937_64 generator(5);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  BacklashSmootherProblemOptions options;
  options.state_noise_intensity << 0.0, 0.0, 1000.0, 0.0;
  options.tau_noise_intensity = 100.0;
  options.measurement_variance = 1.0;
  options.rk4_steps_per_sample = 2;
  for (const auto& parameters :
       {models::HovlandSimulation1Parameters(), models::HovlandSimulation2Parameters()}) {
    const models::TwoMassTransmission model(parameters);
    for (int l : {1, 2}) {
      const Eigen::VectorXd y = Eigen::VectorXd::Constant(l, 0.3);
      std::unique_ptr<ceres::CostFunction> interval(
          CreateBacklashIntervalCost(model, options, 1e-4, 0.7, y));
      std::unique_ptr<ceres::CostFunction> initial(CreateBacklashInitialCost(options, y));
      EXPECT_EQ(interval->num_residuals(), 5 + l);
      EXPECT_EQ(initial->num_residuals(), 5 + l);
      ceres::NumericDiffOptions numeric;
      // The checker differentiates by Ridders' extrapolation; its default first step (1 % of the
      // value) is wider than the Coulomb atan's transition (1/alpha = 0.01 rad/s).
      numeric.ridders_relative_initial_step_size = 1e-5;
      const std::vector<const ceres::Manifold*>* no_manifolds = nullptr;
      ceres::GradientChecker interval_checker(interval.get(), no_manifolds, numeric);
      ceres::GradientChecker initial_checker(initial.get(), no_manifolds, numeric);
      for (int trial = 0; trial < 5; ++trial) {
        double a[5], b[5];
        for (int i = 0; i < 5; ++i) a[i] = uniform(generator);
        a[2] *= 0.05;  // include velocities in the steep part of the Coulomb atan
        // The next node near the current one keeps residuals moderate, so that numeric
        // differences of small entries are not drowned in round-off of huge residuals.
        for (int i = 0; i < 5; ++i) b[i] = a[i] + 1e-3 * uniform(generator);
        const double* blocks[2] = {a, b};
        ceres::GradientChecker::ProbeResults results;
        // The checker's element-wise relative test flags entries of 1e-6 that sit in rows with
        // entries of 1e5 (round-off of the differences); compare each row relative to its
        // largest entry instead. A wrong derivative is off by O(1) of the row scale.
        interval_checker.Probe(blocks, 1e-4, &results);
        ASSERT_TRUE(results.return_value);
        ExpectRowsAgree(results, "");
        EXPECT_TRUE(initial_checker.Probe(blocks, 1e-9, &results)) << results.error_log;
      }
    }
  }
}

// The shape residuals tau_K − curve: at Δ_k, at the interval midpoint and averaged over the
// interval, with Δ on both flanks and inside the gap (away from the corners, where dz has no
// derivative), and the average across a corner against a fine quadrature.
TEST(BacklashSmootherProblemTest, ShapeCostsPassTheGradientChecker) {
#ifdef DYNID_NATIVE_BUILD
  GTEST_SKIP() << "-DDYNID_NATIVE=ON: the GradientChecker's results are allocated inside Ceres "
                  "(plain malloc) and would be freed here by Eigen's AVX allocator";
#endif
  std::unique_ptr<ceres::CostFunction> node_cost(CreateBacklashShapeCost(0.01));
  std::unique_ptr<ceres::CostFunction> midpoint_cost(
      CreateBacklashIntervalShapeCost(0.01, ShapeCurvePoint::kIntervalMidpoint));
  std::unique_ptr<ceres::CostFunction> average_cost(
      CreateBacklashIntervalShapeCost(0.01, ShapeCurvePoint::kIntervalAverage));
  ASSERT_EQ(node_cost->num_residuals(), 1);
  ASSERT_EQ(midpoint_cost->num_residuals(), 1);
  const std::vector<const ceres::Manifold*>* no_manifolds = nullptr;
  ceres::NumericDiffOptions numeric;
  numeric.ridders_relative_initial_step_size = 1e-4;  // steps well inside the 0.01 rad interval
  ceres::GradientChecker node_checker(node_cost.get(), no_manifolds, numeric);
  ceres::GradientChecker midpoint_checker(midpoint_cost.get(), no_manifolds, numeric);
  ceres::GradientChecker average_checker(average_cost.get(), no_manifolds, numeric);
  double spring[3] = {0.01, 0.1, 79.0};
  auto curve = [&spring](double delta) {
    const double x = delta - spring[0], half = 0.5 * spring[1];
    return x > half ? spring[2] * (x - half) : x < -half ? spring[2] * (x + half) : 0.0;
  };
  for (double delta : {-0.3, 0.0, 0.2}) {
    double a[5] = {delta + 0.5, 0.5, 0.1, -0.2, 3.0};
    double b[5] = {delta + 0.52, 0.51, 0.1, -0.2, 3.1};  // Δ_{k+1} = Δ_k + 0.01
    ceres::GradientChecker::ProbeResults results;
    const double* node_blocks[2] = {a, spring};
    EXPECT_TRUE(node_checker.Probe(node_blocks, 1e-7, &results)) << results.error_log;
    const double* interval_blocks[3] = {a, b, spring};
    EXPECT_TRUE(midpoint_checker.Probe(interval_blocks, 1e-7, &results)) << results.error_log;
    EXPECT_TRUE(average_checker.Probe(interval_blocks, 1e-6, &results)) << results.error_log;
    double residual = 0.0;
    ASSERT_TRUE(midpoint_cost->Evaluate(interval_blocks, &residual, nullptr));
    EXPECT_NEAR(residual, (3.0 - curve(delta + 0.005)) / 0.01, 1e-9);
    // Away from the corners the curve is linear over the interval: average = midpoint value.
    ASSERT_TRUE(average_cost->Evaluate(interval_blocks, &residual, nullptr));
    EXPECT_NEAR(residual, (3.0 - curve(delta + 0.005)) / 0.01, 1e-6);
  }
  // Across the corner at Δ = c + b/2 = 0.06: the average differs from the midpoint value.
  double a[5] = {0.05, 0.0, 0.0, 0.0, 0.0}, b[5] = {0.08, 0.0, 0.0, 0.0, 0.0};
  double mean = 0.0;
  const int m = 100000;
  for (int i = 0; i < m; ++i) mean += curve(0.05 + 0.03 * (i + 0.5) / m) / m;
  const double* blocks[3] = {a, b, spring};
  double residual = 0.0;
  ASSERT_TRUE(average_cost->Evaluate(blocks, &residual, nullptr));
  EXPECT_NEAR(-0.01 * residual, mean, 1e-8);
  ASSERT_TRUE(midpoint_cost->Evaluate(blocks, &residual, nullptr));
  EXPECT_GT(std::abs(-0.01 * residual - mean), 0.1 * mean);
  // The average is differentiable across a corner too (F is C¹): the hand-written Jacobian
  // against numeric differences with the corner inside the interval, on both flanks, both
  // directions of travel.
  for (const auto& [d0, d1] : std::vector<std::pair<double, double>>{
           {0.05, 0.08}, {0.08, 0.05}, {-0.05, -0.08}, {-0.03, -0.06}}) {
    double n0[5] = {d0 + 0.2, 0.2, 0.1, -0.2, 0.5}, n1[5] = {d1 + 0.3, 0.3, 0.1, -0.2, 0.6};
    const double* corner_blocks[3] = {n0, n1, spring};
    ceres::GradientChecker::ProbeResults results;
    EXPECT_TRUE(average_checker.Probe(corner_blocks, 1e-6, &results))
        << d0 << " → " << d1 << ": " << results.error_log;
  }
}

// The first-order hold's interval cost of the shape problem (its Jacobian by hand through the
// RK4 map and the hold's correction, which depends on the nodes and on [c, b, K]): in the gap, in
// contact on both flanks, across one corner in both directions of travel, and across both corners
// of a narrow gap in one interval; one and two measured velocities, one and two RK4 steps.
TEST(BacklashSmootherProblemTest, FirstOrderHoldShapeIntervalCostPassesTheGradientChecker) {
#ifdef DYNID_NATIVE_BUILD
  GTEST_SKIP() << "-DDYNID_NATIVE=ON: the GradientChecker's results are allocated inside Ceres "
                  "(plain malloc) and would be freed here by Eigen's AVX allocator";
#endif
  const models::TwoMassTransmission model(models::HovlandSimulation1Parameters());
  BacklashSmootherProblemOptions options;
  options.tau_hold = TauHold::kFirstOrder;
  options.measurement_variance = 2.5e-4;
  struct Point {
    double d0, d1, v0, v1;  // Δ at the nodes [rad] and x3 − x4 [rad/s]
    double backlash;
  };
  // spring c = 0.01: corners at 0.01 ∓ b/2. Steps of 1 ms.
  const std::vector<Point> points = {
      {0.0, 0.002, 2.0, 2.1, 0.2},      // in the gap
      {0.15, 0.152, 2.0, 1.9, 0.2},     // in contact, Δ > c + b/2
      {-0.15, -0.153, -3.0, -2.8, 0.2}, // in contact, Δ < c − b/2
      {0.109, 0.112, 3.0, 2.9, 0.2},    // entering contact across c + b/2 = 0.11
      {0.112, 0.109, -3.0, -3.1, 0.2},  // leaving it
      {-0.0895, -0.0915, -2.0, -2.1, 0.2},  // across c − b/2 = −0.09
      {0.0085, 0.0115, 3.0, 3.0, 0.001},    // across both corners of a 1 mrad gap
  };
  for (int steps : {1, 2}) {
    options.rk4_steps_per_sample = steps;
    for (int l : {1, 2}) {
      const Eigen::VectorXd y = Eigen::VectorXd::Constant(l, 0.3);
      std::unique_ptr<ceres::CostFunction> cost(
          CreateBacklashShapeIntervalCost(model, options, 1e-3, 0.7, y));
      ASSERT_EQ(cost->num_residuals(), 5 + l);
      ASSERT_EQ(cost->parameter_block_sizes(), (std::vector<int32_t>{5, 5, 3}));
      ceres::NumericDiffOptions numeric;
      numeric.ridders_relative_initial_step_size = 1e-6;  // steps well inside every segment
      const std::vector<const ceres::Manifold*>* no_manifolds = nullptr;
      ceres::GradientChecker checker(cost.get(), no_manifolds, numeric);
      for (const Point& p : points) {
        double spring[3] = {0.01, p.backlash, 37.0};
        // x2 = 0.4; x1 = x2 + Δ; x4 = 0.5; x3 = x4 + Δ'; tau_K near the curve.
        double a[5] = {0.4 + p.d0, 0.4, 0.5 + p.v0, 0.5, 1.0};
        double b[5] = {0.4 + p.d1, 0.4, 0.5 + p.v1, 0.5, 1.1};
        const double* blocks[3] = {a, b, spring};
        ceres::GradientChecker::ProbeResults results;
        checker.Probe(blocks, 1e-4, &results);
        ASSERT_TRUE(results.return_value);
        // Row-relative comparison (rows mix entries of 1e4 and 1e-3; see the test above).
        std::ostringstream where;
        where << "steps " << steps << " l " << l << " Δ " << p.d0 << " → " << p.d1 << " ";
        ExpectRowsAgree(results, where.str());
      }
    }
  }
  // In the gap the correction vanishes: the same residual as the plain first-order hold.
  BacklashSmootherProblemOptions plain = options;
  plain.rk4_steps_per_sample = 1;
  const Eigen::VectorXd y = Eigen::VectorXd::Constant(1, 0.3);
  std::unique_ptr<ceres::CostFunction> with_spring(
      CreateBacklashShapeIntervalCost(model, plain, 1e-3, 0.7, y));
  std::unique_ptr<ceres::CostFunction> without(
      CreateBacklashIntervalCost(model, plain, 1e-3, 0.7, y));
  double spring[3] = {0.01, 0.2, 37.0};
  double a[5] = {0.4, 0.4, 2.5, 0.5, 0.0}, b[5] = {0.402, 0.4, 2.6, 0.5, 0.0};
  const double* three[3] = {a, b, spring};
  const double* two[2] = {a, b};
  double r1[6], r2[6];
  ASSERT_TRUE(with_spring->Evaluate(three, r1, nullptr));
  ASSERT_TRUE(without->Evaluate(two, r2, nullptr));
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(r1[i], r2[i]) << i;
}

// The hand-written Jacobian of the first-order hold's shape interval cost against automatic
// derivatives through the same residual (the former implementation): residuals to round-off,
// Jacobians to 1e-10 of each row's scale, in the gap, in contact (closed-form correction), across
// corners (Jets through the correction), at motor velocities where the Coulomb friction's atan
// bends, for both simulations' models, one and two measured velocities, one to three RK4 steps.
TEST(BacklashSmootherProblemTest, FirstOrderHoldShapeIntervalCostMatchesAutomaticDerivatives) {
  std::mt19937_64 generator(23);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  BacklashSmootherProblemOptions options;
  options.tau_hold = TauHold::kFirstOrder;
  options.state_noise_intensity << 0.0, 0.0, 1000.0, 0.0;
  options.measurement_variance = 1.0;
  struct Point {
    double d0, d1, v0, v1, backlash;
  };
  const std::vector<Point> points = {
      {0.0, 0.002, 2.0, 2.1, 0.2},       {0.15, 0.152, 2.0, 1.9, 0.2},
      {-0.15, -0.153, -3.0, -2.8, 0.2},  {0.109, 0.112, 3.0, 2.9, 0.2},
      {0.112, 0.109, -3.0, -3.1, 0.2},   {-0.0895, -0.0915, -2.0, -2.1, 0.2},
      {0.0085, 0.0115, 3.0, 3.0, 0.001}, {0.3, 0.3, 0.0, 0.0, 0.2},
  };
  int checked = 0;
  for (const auto& parameters :
       {models::HovlandSimulation1Parameters(), models::HovlandSimulation2Parameters()}) {
    const models::TwoMassTransmission model(parameters);
    for (int steps : {1, 2, 3}) {
      options.rk4_steps_per_sample = steps;
      for (int l : {1, 2}) {
        const Eigen::VectorXd y = Eigen::VectorXd::Constant(l, 0.3);
        std::unique_ptr<ceres::CostFunction> by_hand(
            CreateBacklashShapeIntervalCost(model, options, 1e-3, 0.7, y));
        std::unique_ptr<ceres::CostFunction> automatic(
            internal::CreateBacklashShapeIntervalCostWithAutomaticDerivatives(model, options, 1e-3, 0.7, y));
        ASSERT_EQ(by_hand->num_residuals(), automatic->num_residuals());
        ASSERT_EQ(by_hand->parameter_block_sizes(), automatic->parameter_block_sizes());
        const int m = by_hand->num_residuals();
        for (const Point& p : points) {
          for (double motor_velocity : {0.5, 0.002, -0.01}) {
            double spring[3] = {0.01, p.backlash, 37.0 + 10.0 * uniform(generator)};
            double a[5] = {0.4 + p.d0, 0.4, motor_velocity + p.v0, motor_velocity,
                           1.0 + uniform(generator)};
            double b[5] = {0.4 + p.d1, 0.4, motor_velocity + p.v1, motor_velocity,
                           1.1 + uniform(generator)};
            const double* blocks[3] = {a, b, spring};
            std::vector<double> r_hand(m), r_auto(m);
            std::vector<std::vector<double>> j_hand(3), j_auto(3);
            const int sizes[3] = {5, 5, 3};
            double* jh[3];
            double* ja[3];
            for (int block = 0; block < 3; ++block) {
              j_hand[block].assign(m * sizes[block], 0.0);
              j_auto[block].assign(m * sizes[block], 0.0);
              jh[block] = j_hand[block].data();
              ja[block] = j_auto[block].data();
            }
            ASSERT_TRUE(by_hand->Evaluate(blocks, r_hand.data(), jh));
            ASSERT_TRUE(automatic->Evaluate(blocks, r_auto.data(), ja));
            for (int i = 0; i < m; ++i) {
              EXPECT_NEAR(r_hand[i], r_auto[i], 1e-12 * (1.0 + std::abs(r_auto[i]))) << i;
            }
            for (int row = 0; row < m; ++row) {
              double scale = 1.0;
              for (int block = 0; block < 3; ++block) {
                for (int col = 0; col < sizes[block]; ++col) {
                  scale = std::max(scale, std::abs(j_auto[block][row * sizes[block] + col]));
                }
              }
              for (int block = 0; block < 3; ++block) {
                for (int col = 0; col < sizes[block]; ++col) {
                  const int i = row * sizes[block] + col;
                  EXPECT_NEAR(j_hand[block][i], j_auto[block][i], 1e-10 * scale)
                      << "steps " << steps << " l " << l << " Δ " << p.d0 << " → " << p.d1 << " x4 "
                      << motor_velocity << " block " << block << " row " << row << " col " << col;
                }
              }
            }
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 3 * 2 * 8 * 3);
}

TEST(BacklashSmootherProblemTest, StructureAndResidualsAtTheTruth) {
  // Smooth corners, so that one RK4 step per sample is accurate at the truth.
  models::TwoMassTransmissionParameters parameters = models::HovlandSimulation1Parameters();
  parameters.shape = models::SpringShape::kSmoothDeadZone;
  parameters.smoothing_rad = 0.01;
  const models::TwoMassTransmission model(parameters);
  const int n = 200;
  const double ts = 1e-3;
  Eigen::VectorXd input(n);
  for (int k = 0; k < n; ++k) input(k) = 2.0 * std::sin(0.03 * k);
  const models::TransmissionRecord record = models::SimulateTransmission(
      model, input, ts, models::TwoMassTransmission::State::Zero(), 20);
  BacklashSmootherData data;
  data.sample_period_s = ts;
  data.input = input;
  data.measurements = record.states.col(2);  // noise-free motor velocity
  BacklashSmootherProblemOptions options;
  options.state_noise_floor.setConstant(1.0);
  options.measurement_variance = 1.0;
  // The true trajectory with tau_K held at its interval mean is nearly consistent with the RK4
  // transition; every weighted residual is small compared with its unit standard deviation.
  BacklashSmootherVariables variables;
  Eigen::VectorXd tau(n);
  for (int k = 0; k + 1 < n; ++k) {
    tau(k) = 0.5 * (record.spring_torque(k) + record.spring_torque(k + 1));
  }
  tau(n - 1) = record.spring_torque(n - 1);
  variables.Set(record.states, tau);
  ceres::Problem problem;
  std::string error;
  ASSERT_TRUE(BuildBacklashSmootherProblem(model, data, options, &variables, &problem, &error))
      << error;
  EXPECT_EQ(problem.NumParameterBlocks(), n);
  EXPECT_EQ(problem.NumResidualBlocks(), n);
  EXPECT_EQ(problem.NumResiduals(), 6 * n);
  double cost = 0.0;
  std::vector<double> residuals;
  problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost, &residuals, nullptr, nullptr);
  double max_dynamics = 0.0;
  for (int block = 1; block < n; ++block) {
    for (int j = 0; j < 4; ++j) {
      max_dynamics = std::max(max_dynamics, std::abs(residuals[6 * block + j]));
    }
  }
  // Dynamics defects per step (units of sqrt(ts · floor) ≈ 0.03) are tiny at the truth.
  EXPECT_LT(max_dynamics, 0.05);
  // A wrong tau_K breaks the dynamics.
  variables.Set(record.states, tau + Eigen::VectorXd::Constant(n, 0.5));
  problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost, &residuals, nullptr, nullptr);
  EXPECT_GT(std::abs(residuals[6 * 10 + 2]), 1.0);
}

TEST(BacklashSmootherProblemTest, RejectsBadInput) {
  const models::TwoMassTransmission model;
  BacklashSmootherData data;
  data.sample_period_s = 1e-3;
  data.input = Eigen::VectorXd::Zero(10);
  data.measurements = Eigen::MatrixXd::Zero(10, 3);
  BacklashSmootherProblemOptions options;
  BacklashSmootherVariables variables;
  std::string error;
  {
    ceres::Problem problem;
    EXPECT_FALSE(BuildBacklashSmootherProblem(model, data, options, &variables, &problem, &error));
    EXPECT_NE(error.find("expected 1 (x3) or 2 (x3, x4) measurement columns, got 3"),
              std::string::npos)
        << error;
  }
  data.measurements = Eigen::MatrixXd::Zero(10, 1);
  options.tau_noise_intensity = -1.0;
  {
    ceres::Problem problem;
    EXPECT_FALSE(BuildBacklashSmootherProblem(model, data, options, &variables, &problem, &error));
    EXPECT_NE(error.find("Q_pp must be > 0"), std::string::npos) << error;
  }
  options.tau_noise_intensity = 1.0;
  data.measurements(4, 0) = NAN;
  {
    ceres::Problem problem;
    EXPECT_FALSE(BuildBacklashSmootherProblem(model, data, options, &variables, &problem, &error));
    EXPECT_NE(error.find("NaN"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace dynid::problems
