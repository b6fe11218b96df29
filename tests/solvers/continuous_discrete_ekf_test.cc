// Tests of the continuous–discrete EKF and the SAEKF of Hovland et al. (2002) Table 1.
#include "dynid/solvers/continuous_discrete_ekf.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "dynid/data/excitation_signals.h"

namespace dynid::solvers {
namespace {

// A discrete Kalman filter written independently, for the linear cross-check.
void DiscreteKalmanFilter(const Eigen::MatrixXd& Phi, const Eigen::MatrixXd& Qd,
                          const Eigen::MatrixXd& H, const Eigen::MatrixXd& R,
                          const Eigen::VectorXd& x0, const Eigen::MatrixXd& P0,
                          const Eigen::MatrixXd& y, Eigen::MatrixXd* states,
                          Eigen::MatrixXd* final_covariance) {
  Eigen::VectorXd x = x0;
  Eigen::MatrixXd P = P0;
  states->resize(y.rows(), x0.size());
  for (int k = 0; k < y.rows(); ++k) {
    if (k > 0) {
      x = Phi * x;
      P = Phi * P * Phi.transpose() + Qd;
    }
    const Eigen::MatrixXd S = H * P * H.transpose() + R;
    const Eigen::MatrixXd K = P * H.transpose() * S.inverse();
    x += K * (y.row(k).transpose() - H * x);
    P = (Eigen::MatrixXd::Identity(x.size(), x.size()) - K * H) * P;
    states->row(k) = x.transpose();
  }
  *final_covariance = P;
}

TEST(ContinuousDiscreteEkfTest, LinearSystemMatchesExactDiscreteKalmanFilter) {
  // Double integrator x' = [x2; 0] + v, intensity q on the velocity: P(t) is a cubic in t, so
  // RK4 on the Riccati equation is exact and the CD-EKF must equal the exact discrete filter
  // with Phi = [[1, h], [0, 1]], Qd = q [[h³/3, h²/2], [h²/2, h]].
  const double h = 0.01, q = 3.0, r = 0.04;
  const int n = 300;
  ContinuousDiscreteSystem system;
  system.state_size = 2;
  system.measurement_size = 1;
  system.dynamics = [](int, double, const Eigen::VectorXd& x, Eigen::VectorXd* f,
                       Eigen::MatrixXd* F) {
    *f = Eigen::Vector2d(x(1), 0.0);
    if (F) *F = (Eigen::Matrix2d() << 0, 1, 0, 0).finished();
  };
  system.measurement = [](int, const Eigen::VectorXd& x, Eigen::VectorXd* y, Eigen::MatrixXd* H) {
    *y = x.head<1>();
    *H = Eigen::RowVector2d(1.0, 0.0);
  };
  std::mt19937_64 generator(3);
  std::normal_distribution<double> normal;
  Eigen::VectorXd times(n);
  Eigen::MatrixXd y(n, 1);
  for (int k = 0; k < n; ++k) {
    times(k) = k * h;
    y(k, 0) = std::sin(2.0 * times(k)) + std::sqrt(r) * normal(generator);
  }
  ContinuousDiscreteEkfOptions options;
  options.process_noise_intensity = Eigen::Matrix2d(Eigen::Vector2d(0.0, q).asDiagonal());
  options.measurement_covariance = Eigen::MatrixXd::Constant(1, 1, r);
  options.initial_state = Eigen::Vector2d(0.1, 1.0);
  options.initial_covariance = Eigen::Matrix2d(Eigen::Vector2d(1.0, 4.0).asDiagonal());
  options.steps_per_sample = 1;
  ContinuousDiscreteEkfResult result;
  std::string error;
  ASSERT_TRUE(RunContinuousDiscreteEkf(system, times, y, options, &result, &error)) << error;
  EXPECT_TRUE(result.converged);
  EXPECT_EQ(result.iterations, n);

  Eigen::Matrix2d Phi, Qd;
  Phi << 1, h, 0, 1;
  Qd << h * h * h / 3, h * h / 2, h * h / 2, h;
  Qd *= q;
  Eigen::MatrixXd reference, reference_P;
  DiscreteKalmanFilter(Phi, Qd, Eigen::RowVector2d(1.0, 0.0), options.measurement_covariance,
                       options.initial_state, options.initial_covariance, y, &reference,
                       &reference_P);
  EXPECT_LT((result.states - reference).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((result.final_covariance - reference_P).cwiseAbs().maxCoeff(), 1e-12);
  // Innovations of a consistent filter have unit normalised variance.
  const double normalised =
      (result.prediction_errors.array() / result.prediction_error_std.array()).square().mean();
  EXPECT_NEAR(normalised, 1.0, 0.3);
}

TEST(ContinuousDiscreteEkfTest, RejectsBadOptionsAndData) {
  ContinuousDiscreteSystem system;
  system.state_size = 2;
  system.measurement_size = 1;
  system.dynamics = [](int, double, const Eigen::VectorXd& x, Eigen::VectorXd* f,
                       Eigen::MatrixXd* F) {
    *f = x;
    if (F) *F = Eigen::Matrix2d::Identity();
  };
  system.measurement = [](int, const Eigen::VectorXd& x, Eigen::VectorXd* y, Eigen::MatrixXd* H) {
    *y = x.head<1>();
    *H = Eigen::RowVector2d(1.0, 0.0);
  };
  ContinuousDiscreteEkfOptions options;
  options.process_noise_intensity = Eigen::Matrix2d::Identity();
  options.measurement_covariance = Eigen::MatrixXd::Constant(1, 1, -1.0);
  options.initial_state = Eigen::Vector2d::Zero();
  options.initial_covariance = Eigen::Matrix2d::Identity();
  ContinuousDiscreteEkfResult result;
  std::string error;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(5, 0.0, 0.4);
  const Eigen::MatrixXd y = Eigen::MatrixXd::Zero(5, 1);
  EXPECT_FALSE(RunContinuousDiscreteEkf(system, times, y, options, &result, &error));
  EXPECT_NE(error.find("R must be symmetric positive definite"), std::string::npos) << error;
  options.measurement_covariance(0, 0) = 1.0;
  EXPECT_FALSE(RunContinuousDiscreteEkf(system, times, Eigen::MatrixXd::Zero(4, 1), options,
                                        &result, &error));
  EXPECT_NE(error.find("measurements must be 5 × 1"), std::string::npos) << error;
  // x' = x with enormous steps overflows: reported as divergence, not a crash.
  options.stable_steps = false;
  EXPECT_FALSE(RunContinuousDiscreteEkf(system, Eigen::VectorXd::LinSpaced(5, 0.0, 1e100),
                                        Eigen::MatrixXd::Constant(5, 1, 1.0), options, &result,
                                        &error));
  EXPECT_NE(error.find("diverged"), std::string::npos) << error;
}

struct SimulatedCase {
  models::TwoMassTransmission model;
  models::TransmissionRecord record;
  Eigen::MatrixXd measurements;
};

SimulatedCase SimulateSeedCase2(int samples) {
  SimulatedCase c{models::TwoMassTransmission(models::HovlandSimulation2Parameters()), {}, {}};
  data::PrbsOptions prbs;
  prbs.amplitude = 3.0;
  prbs.clock_period_s = 10e-3;
  prbs.seed = 0x5a5;
  const double ts = 1e-4;
  c.record = models::SimulateTransmission(c.model, data::PrbsSignal(samples, ts, prbs), ts,
                                          models::TwoMassTransmission::State::Zero(), 10);
  c.measurements = models::AddVelocityNoise(c.record, true, 1.0, 11);
  return c;
}

TEST(SaekfTest, TracksTheTransmissionTorqueOfSimulation2) {
  const SimulatedCase c = SimulateSeedCase2(4000);
  SaekfOptions options;
  options.state_noise_intensity << 0, 0, 1000, 0;
  options.tau_noise_intensity = 100.0;
  options.measurement_variance = 1.0;
  options.measure_arm_velocity = true;
  SaekfResult result;
  std::string error;
  ASSERT_TRUE(RunSaekf(c.model, c.record.input, 1e-4, c.measurements, options, &result, &error))
      << error;
  const Eigen::VectorXd& truth = c.record.spring_torque;
  const double rms_truth = std::sqrt(truth.squaredNorm() / truth.size());
  const double rms_error = std::sqrt((result.tau - truth).squaredNorm() / truth.size());
  EXPECT_GT(rms_truth, 2.0);  // the excitation loads the spring
  EXPECT_LT(rms_error, 0.6 * rms_truth);
  // The velocity estimates are better than the raw measurements (noise std 1 rad/s).
  const double velocity_error =
      std::sqrt((result.states.col(2) - c.record.states.col(2)).squaredNorm() / truth.size());
  EXPECT_LT(velocity_error, 0.8);
  // The literal Table 1 variant (Jacobian frozen over the interval) gives nearly the same answer.
  options.freeze_jacobian = true;
  SaekfResult frozen;
  ASSERT_TRUE(RunSaekf(c.model, c.record.input, 1e-4, c.measurements, options, &frozen, &error));
  EXPECT_LT(std::sqrt((frozen.tau - result.tau).squaredNorm() / truth.size()), 0.05 * rms_truth);
}

TEST(SaekfTest, TauVarianceGrowsByQppBetweenSamplesWithoutInformation) {
  // Table 1: P_pp' = Q_pp. With a huge R the updates do nothing, so P_pp(t_k) = P_pp(0) + k h Qpp.
  const models::TwoMassTransmission model(models::HovlandSimulation2Parameters());
  SaekfOptions options;
  options.tau_noise_intensity = 50.0;
  options.measurement_variance = 1e30;
  const int n = 11;
  SaekfResult result;
  std::string error;
  ASSERT_TRUE(RunSaekf(model, Eigen::VectorXd::Zero(n), 1e-3, Eigen::MatrixXd::Zero(n, 1), options,
                       &result, &error))
      << error;
  ASSERT_EQ(result.tau_std.size(), n);
  // The Coulomb slope at zero velocity (2e4 1/s) forces stable sub-steps.
  EXPECT_GE(result.filter.max_steps_per_sample, 18);
  for (int k = 0; k < n; ++k) {
    EXPECT_NEAR(result.tau_std(k) * result.tau_std(k), 1.0 + k * 1e-3 * 50.0, 1e-9) << k;
  }
  EXPECT_LT(result.filter.state_std.col(2).maxCoeff(), 1.0);
  // One RK4 step per 1e-3 s sample is outside RK4's stability region: P_xx explodes.
  options.stable_steps = false;
  SaekfResult unstable;
  RunSaekf(model, Eigen::VectorXd::Zero(n), 1e-3, Eigen::MatrixXd::Zero(n, 1), options, &unstable,
           &error);
  EXPECT_EQ(unstable.filter.max_steps_per_sample, 1);
  EXPECT_GT(unstable.filter.state_std.col(2).maxCoeff(), 1e3);
  options.stable_steps = true;
  options.tau_noise_intensity = 0.0;
  EXPECT_FALSE(RunSaekf(model, Eigen::VectorXd::Zero(n), 1e-3, Eigen::MatrixXd::Zero(n, 1), options,
                        &result, &error));
  EXPECT_NE(error.find("Q_pp must be > 0"), std::string::npos) << error;
}

}  // namespace
}  // namespace dynid::solvers
