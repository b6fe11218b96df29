// Tests of solvers::RunSlidingSurfaceFilter (van de Molengraft (1990) §4.3) on
// models::UnknownForceMass, whose identification model is linear, so the discrete sliding law is
// exact and the bounds below follow from Lambda, Omega and the sample period alone; cross-checks
// against an independent KKT solve of eq. 4.13, against supplied exact measurement rates, and
// against the linear optimal filter.
#include "dynid/solvers/sliding_surface_filter.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "dynid/models/friction_mass.h"
#include "dynid/models/mass_spring_damper.h"
#include "dynid/models/unknown_force_mass.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/internal/first_order_smoother.h"

namespace dynid::solvers {
namespace {

constexpr double kPeriod = 1e-3;

// An analytic motion of m a + e(t) = f(t): s(t) given, e(t) given, f = m a + e.
struct LinearCase {
  SlidingSurfaceFilterData data;
  Eigen::VectorXd force;         // e(t)
  Eigen::VectorXd velocity;      // v(t)
  Eigen::VectorXd acceleration;  // a(t)
};

LinearCase MakeLinearCase(double true_mass, double duration_s, bool constant_force = false) {
  const int num = static_cast<int>(std::round(duration_s / kPeriod)) + 1;
  LinearCase c;
  c.data.time = Eigen::VectorXd::LinSpaced(num, 0.0, kPeriod * (num - 1));
  c.data.measurements.resize(num, 3);
  c.data.measurement_rates.resize(num, 3);
  c.force.resize(num);
  c.velocity.resize(num);
  c.acceleration.resize(num);
  const double w = 2.0 * M_PI;
  for (int k = 0; k < num; ++k) {
    const double t = c.data.time(k);
    const double s = 0.1 * std::sin(w * t) + 0.05 * t * t;
    const double v = 0.1 * w * std::cos(w * t) + 0.1 * t;
    const double a = -0.1 * w * w * std::sin(w * t) + 0.1;
    const double jerk = -0.1 * w * w * w * std::cos(w * t);
    const double e = constant_force ? 1.5 : 1.0 + 0.5 * std::sin(3.0 * t);
    const double e_rate = constant_force ? 0.0 : 1.5 * std::cos(3.0 * t);
    c.data.measurements.row(k) << s, a, true_mass * a + e;
    c.data.measurement_rates.row(k) << v, jerk, true_mass * jerk + e_rate;
    c.force(k) = e;
    c.velocity(k) = v;
    c.acceleration(k) = a;
  }
  return c;
}

SlidingSurfaceFilterOptions ThesisOptions() {
  SlidingSurfaceFilterOptions options;
  options.lambda = Eigen::Vector4d::Constant(15.0);
  options.omega = Eigen::Vector4d::Constant(15.0);
  options.xi_weight = Eigen::Matrix3d::Identity();
  return options;
}

const Eigen::Vector3d kX0(0.3, 0.0, 4.0);
const Eigen::Vector2d kPbar0(8.0, 4.0);

// A priori bound on |zeta_i(t)| after the reaching time t_r = |s0| / Omega (σ = 0): during
// reaching |nu| <= |s0| t_r, afterwards |s_s| <= Omega h, so
// |zeta_i(t)| <= 2 Omega h + Lambda s0² / Omega exp(−Lambda (t − t_r)).
double ResidualBound(double s0, double lambda, double omega, double t) {
  const double t_r = std::abs(s0) / omega;
  return 2.0 * omega * kPeriod +
         lambda * s0 * s0 / omega * std::exp(-lambda * std::max(0.0, t - t_r - kPeriod));
}

TEST(SlidingSurfaceFilterTest, ReachesEachSurfaceAtThePredictedTimeAndStaysThere) {
  const LinearCase c = MakeLinearCase(1.0, 2.0);
  const models::UnknownForceMass model;
  SlidingSurfaceFilterData data = c.data;
  data.measurement_rates.resize(0, 0);
  SlidingSurfaceFilterResult result;
  SlidingSurfaceFilterSummary summary;
  const SlidingSurfaceFilterOptions options = ThesisOptions();
  ASSERT_TRUE(RunSlidingSurfaceFilter(model, data, options, kX0, kPbar0, &result, &summary))
      << summary.message;
  EXPECT_TRUE(summary.converged) << summary.message;
  const Eigen::VectorXd s0 = result.sliding.col(0);
  // s_s(0) = zeta(0) at the initial estimate: [−(8 + 4 − f0), 0 − 0.3, a0 − 8, f0 − 4].
  EXPECT_NEAR(s0(0), -(8.0 + 4.0 - 4.0), 1e-12);
  EXPECT_NEAR(s0(1), -0.3, 1e-12);
  for (int i = 0; i < 4; ++i) {
    const double predicted = std::abs(s0(i)) / options.omega(i);
    EXPECT_NEAR(summary.reaching_time_s(i), predicted, kPeriod * 1.001) << "component " << i;
    for (int k = 0; k < data.time.size(); ++k) {
      if (data.time(k) < summary.reaching_time_s(i)) {
        // Linear approach to the surface: s_s(t) = s0 − Omega t sign(s0).
        ASSERT_NEAR(result.sliding(i, k),
                    s0(i) - options.omega(i) * data.time(k) * (s0(i) > 0 ? 1.0 : -1.0), 1e-9);
      } else {
        ASSERT_LE(std::abs(result.sliding(i, k)), options.omega(i) * kPeriod * (1 + 1e-9))
            << "component " << i << " left its surface at t = " << data.time(k);
      }
    }
  }
}

TEST(SlidingSurfaceFilterTest, TracksATimeVaryingForceWithinTheBoundFromLambdaOmegaAndH) {
  for (double true_mass : {1.0, 2.0}) {
    const LinearCase c = MakeLinearCase(true_mass, 2.0);
    const models::UnknownForceMass model;  // m_f = 1 in both cases
    SlidingSurfaceFilterData data = c.data;
    data.measurement_rates.resize(0, 0);
    SlidingSurfaceFilterResult result;
    SlidingSurfaceFilterSummary summary;
    const SlidingSurfaceFilterOptions options = ThesisOptions();
    ASSERT_TRUE(RunSlidingSurfaceFilter(model, data, options, kX0, kPbar0, &result, &summary))
        << summary.message;
    const Eigen::VectorXd s0 = result.sliding.col(0);
    // e_hat = f − m_f a − zeta1 + m_f zeta3 − zeta4 with f − m_f a = e + (m − m_f) a: with the
    // right mass the filter tracks e, with the wrong one e + (m − m_f) a (the model error).
    double worst_ratio = 0.0, error_sq = 0.0, inertia_sq = 0.0;
    int count = 0;
    for (int k = 0; k < data.time.size(); ++k) {
      const double t = data.time(k);
      const double bound = ResidualBound(s0(0), 15, 15, t) + ResidualBound(s0(2), 15, 15, t) +
                           ResidualBound(s0(3), 15, 15, t);
      const double target = c.force(k) + (true_mass - 1.0) * c.acceleration(k);
      const double error = std::abs(result.states(2, k) - target);
      ASSERT_LE(error, bound) << "t = " << t << ", true mass " << true_mass;
      if (t >= 1.0) {
        worst_ratio = std::max(worst_ratio, error / bound);
        error_sq += std::pow(result.states(2, k) - c.force(k), 2);
        inertia_sq += std::pow((true_mass - 1.0) * c.acceleration(k), 2);
        ++count;
      }
    }
    EXPECT_LT(worst_ratio, 1.0);
    // After the transient the error about the true force is the inertia error, to 1 %.
    const double rms = std::sqrt(error_sq / count), inertia_rms = std::sqrt(inertia_sq / count);
    if (true_mass == 1.0) {
      EXPECT_LT(rms, 0.05);
    } else {
      EXPECT_NEAR(rms, inertia_rms, 0.01 * inertia_rms);
    }
    // The residuals vanish in both cases: the filter is blind to the mass error.
    EXPECT_LT(result.residuals.rightCols(500).cwiseAbs().maxCoeff(), 2.0 * 15 * kPeriod);
  }
}

TEST(SlidingSurfaceFilterTest, NonzeroSigmaShiftsTheVelocityBySigmaOverLambda) {
  const LinearCase c = MakeLinearCase(1.0, 2.0);
  const models::UnknownForceMass model;
  SlidingSurfaceFilterData data = c.data;
  data.measurement_rates.resize(0, 0);
  for (double sigma : {0.0, 5.0}) {
    SlidingSurfaceFilterOptions options = ThesisOptions();
    options.sigma = Eigen::Vector4d::Constant(sigma);
    SlidingSurfaceFilterResult result;
    SlidingSurfaceFilterSummary summary;
    ASSERT_TRUE(RunSlidingSurfaceFilter(model, data, options, kX0, kPbar0, &result, &summary));
    const int last = static_cast<int>(data.time.size()) - 1;
    // nu_a = ∫(z_a − â) = (v − v(0)) − (v̂ − v̂(0)) → sigma / lambda on the surface, so
    // v̂ − v → v̂(0) − v(0) − sigma / lambda (the velocity is never corrected by the position).
    const double offset = result.states(1, last) - c.velocity(last);
    EXPECT_NEAR(offset, kX0(1) - c.velocity(0) - sigma / 15.0, 2e-3) << "sigma = " << sigma;
  }
}

TEST(SlidingSurfaceFilterTest, ForwardDifferencesAgreeWithExactMeasurementRates) {
  const LinearCase c = MakeLinearCase(1.0, 2.0);
  const models::UnknownForceMass model;
  SlidingSurfaceFilterData differenced = c.data;
  differenced.measurement_rates.resize(0, 0);
  SlidingSurfaceFilterResult exact_result, difference_result;
  SlidingSurfaceFilterSummary summary;
  // With the pure sign both chatter by about Omega h around the surface, on different samples;
  // a boundary layer of 0.05 (> Omega h = 0.015, stable) makes the comparison sharp.
  SlidingSurfaceFilterOptions options = ThesisOptions();
  options.boundary_layer = 0.05;
  ASSERT_TRUE(
      RunSlidingSurfaceFilter(model, c.data, options, kX0, kPbar0, &exact_result, &summary));
  ASSERT_TRUE(RunSlidingSurfaceFilter(model, differenced, options, kX0, kPbar0, &difference_result,
                                      &summary));
  // The forward difference is O(h) off the rate; the estimates differ by 2e-5 (measured).
  const Eigen::MatrixXd difference = exact_result.states - difference_result.states;
  EXPECT_LT(difference.rightCols(1000).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_LT((exact_result.inputs - difference_result.inputs).rightCols(1000).cwiseAbs().maxCoeff(),
            1e-3);
  EXPECT_GT(difference.cwiseAbs().maxCoeff(), 0.0);  // really two different paths
}

TEST(SlidingSurfaceFilterTest, GainsAreTheMinimumWeightedNormSolutionOfTheSlidingCondition) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto random = [&](int rows, int cols) {
    Eigen::MatrixXd a(rows, cols);
    for (int i = 0; i < a.size(); ++i) a.data()[i] = normal(rng);
    return a;
  };
  const int nz = 6, nx = 5, np = 3;  // n + l, 2n + p, n + m (n = 2, l = 4, m = 1, p = 1)
  const Eigen::MatrixXd C = random(nz, nx), F = random(nz, np);
  const Eigen::MatrixXd L = random(nx, nx);
  const Eigen::MatrixXd W = L * L.transpose() + Eigen::MatrixXd::Identity(nx, nx);
  Eigen::MatrixXd K_x, K_p;
  std::string error;
  ASSERT_TRUE(internal::SlidingSurfaceGains(C, F, W.inverse(), 1e-10, &K_x, &K_p, &error)) << error;
  // F p̄' + C xi = eta holds for every eta.
  EXPECT_LT((C * K_x + F * K_p - Eigen::MatrixXd::Identity(nz, nz)).cwiseAbs().maxCoeff(), 1e-10);
  // Independent: minimise ½ xiᵀ W xi + 0 over (xi, p̄') subject to C xi + F p̄' = eta by the KKT
  // system (no null-space basis).
  const Eigen::VectorXd eta = random(nz, 1);
  Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(nx + np + nz, nx + np + nz);
  kkt.topLeftCorner(nx, nx) = W;
  kkt.block(nx + np, 0, nz, nx) = C;
  kkt.block(nx + np, nx, nz, np) = F;
  kkt.block(0, nx + np, nx, nz) = C.transpose();
  kkt.block(nx, nx + np, np, nz) = F.transpose();
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(nx + np + nz);
  rhs.tail(nz) = eta;
  const Eigen::VectorXd solution = kkt.fullPivLu().solve(rhs);
  EXPECT_LT((K_x * eta - solution.head(nx)).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((K_p * eta - solution.segment(nx, np)).cwiseAbs().maxCoeff(), 1e-9);
  // A rank-deficient F is refused with a message.
  Eigen::MatrixXd F_bad = F;
  F_bad.col(2) = F.col(0) + F.col(1);
  EXPECT_FALSE(internal::SlidingSurfaceGains(C, F_bad, W.inverse(), 1e-10, &K_x, &K_p, &error));
  EXPECT_NE(error.find("full column rank"), std::string::npos) << error;
}

TEST(SlidingSurfaceFilterTest, WorksOnANonlinearModelOfTheInterface) {
  // FrictionMass: r = theta0 a + theta1 sign_eps(v) − f, theta = [mass, friction], both free to
  // vary; C and F depend on the state, so the discrete law holds to O(h) only.
  models::FrictionMass::Parameters parameters;
  parameters.smoothing_velocity_m_per_s = 0.05;
  const models::FrictionMass model(parameters);
  const LinearCase c = MakeLinearCase(1.0, 2.0);
  SlidingSurfaceFilterData data = c.data;
  data.measurement_rates.resize(0, 0);
  SlidingSurfaceFilterOptions options = ThesisOptions();
  options.xi_weight = Eigen::Vector4d(1.0, 1.0, 1.0, 1.0).asDiagonal();
  SlidingSurfaceFilterResult result;
  SlidingSurfaceFilterSummary summary;
  ASSERT_TRUE(RunSlidingSurfaceFilter(model, data, options, Eigen::Vector4d(0.3, 0.0, 1.0, 2.0),
                                      kPbar0, &result, &summary))
      << summary.message;
  EXPECT_TRUE(summary.converged) << summary.message;
  for (int i = 0; i < 4; ++i) {
    const double predicted = std::abs(result.sliding(i, 0)) / 15.0;
    EXPECT_NEAR(summary.reaching_time_s(i), predicted, 0.02) << "component " << i;
  }
  EXPECT_LT(result.residuals.rightCols(500).cwiseAbs().maxCoeff(), 0.05);
  // The equation of motion holds at the estimate: theta0 â + theta1 sign(v̂) ≈ f̂.
  const int last = static_cast<int>(data.time.size()) - 1;
  EXPECT_NEAR(result.inputs(1, last), data.measurements(last, 2), 0.05);
}

TEST(SlidingSurfaceFilterTest, RejectsBadOptionsAndDataWithMessages) {
  const models::UnknownForceMass model;
  const LinearCase c = MakeLinearCase(1.0, 0.1);
  SlidingSurfaceFilterResult result;
  SlidingSurfaceFilterSummary summary;
  auto message_for = [&](const SlidingSurfaceFilterOptions& options,
                         const SlidingSurfaceFilterData& data) {
    EXPECT_FALSE(RunSlidingSurfaceFilter(model, data, options, kX0, kPbar0, &result, &summary));
    return summary.message;
  };
  SlidingSurfaceFilterOptions options = ThesisOptions();
  options.lambda(2) = 0.0;
  EXPECT_NE(message_for(options, c.data).find("lambda must be finite and > 0"), std::string::npos);
  options = ThesisOptions();
  options.omega = Eigen::Vector3d::Ones();
  EXPECT_NE(message_for(options, c.data).find("omega has 3 entries"), std::string::npos);
  options = ThesisOptions();
  options.lambda = options.omega = Eigen::Vector3d::Ones();
  EXPECT_NE(message_for(options, c.data).find("n + l = 4"), std::string::npos);
  options = ThesisOptions();
  options.xi_weight(0, 0) = -1.0;
  EXPECT_NE(message_for(options, c.data).find("positive definite"), std::string::npos);
  options = ThesisOptions();
  SlidingSurfaceFilterData data = c.data;
  data.time(5) = data.time(4);
  EXPECT_NE(message_for(options, data).find("sample 5"), std::string::npos);
  data = c.data;
  data.measurements.conservativeResize(Eigen::NoChange, 2);
  EXPECT_NE(message_for(options, data).find("measurements must be"), std::string::npos);
  std::string why;
  EXPECT_TRUE(ThesisOptions().IsValid(&why)) << why;
}

// The study's setting (van de Molengraft (1990) §4.4): stick–slip friction w_s = w_d = 2 N, f = 4
// sin(2 pi t), filter mass 1 kg; true mass 1 (the estimate tracks w) and 2 (it tracks w + (m − m_f)
// a).
TEST(SlidingSurfaceFilterTest, TracksStickSlipFrictionAndAbsorbsTheMassError) {
  const models::UnknownForceMass model;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(2001, 0.0, 2.0);
  for (double true_mass : {1.0, 2.0}) {
    models::StickSlipParameters truth_parameters;
    truth_parameters.mass_kg = true_mass;
    models::Trajectory truth;
    Eigen::VectorXd friction;
    models::SimulateStickSlip(
        truth_parameters, [](double t, double* f) { f[0] = 4.0 * std::sin(2.0 * M_PI * t); }, times,
        0.0, 0.0, 1e-4, &truth, &friction);
    SlidingSurfaceFilterData data{times, truth.measurements, Eigen::MatrixXd()};
    SlidingSurfaceFilterResult sliding;
    SlidingSurfaceFilterSummary summary;
    ASSERT_TRUE(
        RunSlidingSurfaceFilter(model, data, ThesisOptions(), kX0, kPbar0, &sliding, &summary))
        << summary.message;
    EXPECT_TRUE(summary.converged);
    EXPECT_LT(summary.reaching_time_s.maxCoeff(), 0.6);
    const Eigen::VectorXd absorbed = friction + (true_mass - 1.0) * truth.accelerations.col(0);
    const Eigen::VectorXd estimate = sliding.states.row(2).transpose();
    const auto rms = [](const Eigen::VectorXd& x) { return std::sqrt(x.squaredNorm() / x.size()); };
    // After 1 s the estimate chatters by Omega h / 2 per residual about w + (m − m_f) a.
    EXPECT_LT(rms((estimate - absorbed).tail(1000)), 15.0 * kPeriod);
    if (true_mass == 2.0) {
      EXPECT_GT(rms((estimate - friction).tail(1000)), 0.5);
    }
    // The linear optimal filter (weights by the 1/order² rule) agrees after the transient.
    problems::WeightedResidualData optimal_data{times, truth.measurements};
    problems::WeightedResidualWeights weights;
    weights.kinematic = Eigen::Vector2d(1e6, 1e4).asDiagonal();
    weights.parameter = Eigen::MatrixXd::Constant(1, 1, 1e-5);
    weights.residual = Eigen::Vector4d(1e4, 1e8, 1e4, 1e4).asDiagonal();
    weights.initial = Eigen::Vector3d(1e2, 1e2, 1e-2).asDiagonal();
    weights.initial_guess = kX0;
    LinearOptimalFilterResult optimal;
    std::string error;
    ASSERT_TRUE(internal::RunLinearOptimalFilter(
        model, optimal_data, weights, problems::ParameterMode::kTimeVarying,
        Eigen::Matrix<double, 1, 1>(0.0), LinearOptimalFilterOptions(), &optimal, &error))
        << error;
    const Eigen::VectorXd optimal_estimate = optimal.states.row(2).transpose();
    EXPECT_LT(rms((optimal_estimate - absorbed).tail(1000)), 5e-3);
    EXPECT_LT(rms((optimal_estimate - estimate).tail(1000)), 15.0 * kPeriod);
  }
}

TEST(LinearOptimalFilterCrossCheck, RecoversAConstantForceLikeTheSlidingSurfaceFilter) {
  const LinearCase c = MakeLinearCase(1.0, 2.0, /*constant_force=*/true);
  const models::UnknownForceMass model;
  problems::WeightedResidualData data{c.data.time, c.data.measurements};
  problems::WeightedResidualWeights weights;
  weights.kinematic = Eigen::Vector2d(1e6, 1e4).asDiagonal();
  weights.parameter = Eigen::MatrixXd::Constant(1, 1, 1.0);
  weights.residual = Eigen::Vector4d(1e4, 1e8, 1e2, 1e2).asDiagonal();
  weights.initial = Eigen::Vector3d(1e2, 1e2, 1e-2).asDiagonal();
  weights.initial_guess = kX0;
  LinearOptimalFilterResult optimal;
  std::string error;
  ASSERT_TRUE(internal::RunLinearOptimalFilter(
      model, data, weights, problems::ParameterMode::kTimeVarying, Eigen::Matrix<double, 1, 1>(0.0),
      LinearOptimalFilterOptions(), &optimal, &error))
      << error;
  SlidingSurfaceFilterData sliding_data = c.data;
  sliding_data.measurement_rates.resize(0, 0);
  SlidingSurfaceFilterResult sliding;
  SlidingSurfaceFilterSummary summary;
  ASSERT_TRUE(RunSlidingSurfaceFilter(model, sliding_data, ThesisOptions(), kX0, kPbar0, &sliding,
                                      &summary));
  // Mean over the last 0.5 s: the sliding-surface estimate chatters by about 3 Omega h.
  const int last = static_cast<int>(c.data.time.size()) - 1;
  const double optimal_mean = optimal.states.row(2).tail(500).mean();
  const double sliding_mean = sliding.states.row(2).tail(500).mean();
  EXPECT_NEAR(optimal_mean, 1.5, 1e-2);  // from an initial guess 2.5 N off
  EXPECT_NEAR(sliding_mean, 1.5, 1e-2);
  EXPECT_NEAR(optimal_mean, sliding_mean, 1e-2);
  EXPECT_LT(std::abs(optimal.states(2, last) - 1.5), 1e-2);
  EXPECT_NEAR(optimal.states(0, last), c.data.measurements(last, 0), 1e-4);
}

}  // namespace
}  // namespace dynid::solvers
