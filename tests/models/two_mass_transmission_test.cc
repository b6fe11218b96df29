// Tests of models::TwoMassTransmission (Hovland et al. (2002) eq. 1) and of the excitation signals.
#include "dynid/models/two_mass_transmission.h"

#include <ceres/jet.h>
#include <gtest/gtest.h>

#include <cmath>

#include "dynid/data/excitation_signals.h"
#include "dynid/models/mechanical_model.h"

namespace dynid::models {
namespace {

TEST(TwoMassTransmissionTest, SpringShapes) {
  const double b = 0.1, K = 79.0;
  EXPECT_DOUBLE_EQ(TwoMassTransmission::SpringTorque(0.04, b, K, SpringShape::kDeadZone, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(TwoMassTransmission::SpringTorque(-0.05, b, K, SpringShape::kDeadZone, 0.0),
                   0.0);
  EXPECT_NEAR(TwoMassTransmission::SpringTorque(0.15, b, K, SpringShape::kDeadZone, 0.0), K * 0.1,
              1e-12);
  EXPECT_NEAR(TwoMassTransmission::SpringTorque(-0.25, b, K, SpringShape::kDeadZone, 0.0), -K * 0.2,
              1e-12);
  EXPECT_DOUBLE_EQ(TwoMassTransmission::SpringTorque(0.2, b, 67.0, SpringShape::kLinear, 0.0),
                   67.0 * 0.2);
  // The smooth dead zone approaches the hard one away from the corners, and is odd.
  for (double delta : {-0.3, -0.2, 0.0, 0.2, 0.3}) {
    const double hard = TwoMassTransmission::SpringTorque(delta, b, K, SpringShape::kDeadZone, 0);
    const double smooth =
        TwoMassTransmission::SpringTorque(delta, b, K, SpringShape::kSmoothDeadZone, 1e-4);
    EXPECT_NEAR(smooth, hard, 1e-5) << delta;
    EXPECT_NEAR(TwoMassTransmission::SpringTorque(-delta, b, K, SpringShape::kSmoothDeadZone, 1e-3),
                -TwoMassTransmission::SpringTorque(delta, b, K, SpringShape::kSmoothDeadZone, 1e-3),
                1e-12);
  }
  // Friction saturates at Cc (2/pi scaling; see models/two_mass_transmission.h).
  EXPECT_NEAR(TwoMassTransmission::FrictionTorque(1e3, 0.0, 0.27, 100.0), 0.27, 1e-5);
}

TEST(TwoMassTransmissionTest, AnalyticJacobiansMatchAutomaticDifferentiation) {
  for (const auto& parameters : {HovlandSimulation1Parameters(), HovlandSimulation2Parameters()}) {
    const TwoMassTransmission model(parameters);
    using Jet = ceres::Jet<double, 5>;
    for (double x3 : {-0.3, -0.004, 0.0, 0.02, 1.5}) {
      TwoMassTransmission::State x(0.1, -0.05, x3, 0.7);
      const double tau = 0.4, u = 1.2;
      Jet xj[4], tau_j(tau, 4), xdot[4];
      for (int i = 0; i < 4; ++i) xj[i] = Jet(x(i), i);
      model.StateDerivative(xj, Jet(u), tau_j, xdot);
      Eigen::Matrix4d J_x;
      Eigen::Vector4d J_tau;
      model.StateJacobians(x, &J_x, &J_tau);
      for (int r = 0; r < 4; ++r) {
        for (int c = 0; c < 4; ++c) EXPECT_NEAR(J_x(r, c), xdot[r].v(c), 1e-9) << r << "," << c;
        EXPECT_NEAR(J_tau(r), xdot[r].v(4), 1e-9) << r;
      }
    }
  }
}

TEST(TwoMassTransmissionTest, EquationsOfMotionAgreeWithStateDerivative) {
  TwoMassTransmissionParameters parameters = HovlandSimulation1Parameters();
  parameters.coulomb_friction_nm = 0.1;  // exercise every term
  const TwoMassTransmission model(parameters);
  const auto theta = model.NominalParameters();
  for (double delta : {-0.3, 0.01, 0.25}) {
    const double s[2] = {0.2 + delta, 0.2}, v[2] = {0.5, -0.3}, u[1] = {0.8};
    const double x[4] = {s[0], s[1], v[0], v[1]};
    double xdot[4];
    model.StateDerivative(x, u[0], model.TrueSpringTorque(delta), xdot);
    const double a[2] = {xdot[2], xdot[3]};
    double r[2];
    model.EquationsOfMotion(s, v, a, u, theta.data(), 0.0, r);
    EXPECT_NEAR(r[0], 0.0, 1e-12);
    EXPECT_NEAR(r[1], 0.0, 1e-12);
  }
}

TEST(TwoMassTransmissionTest, SimulationMatchesGenericSimulator) {
  // With a constant input both integrate the same ODE with the same RK4 steps; the smooth dead
  // zone keeps the right-hand side smooth.
  TwoMassTransmissionParameters parameters = HovlandSimulation2Parameters();
  parameters.shape = SpringShape::kSmoothDeadZone;
  const TwoMassTransmission model(parameters);
  const int n = 1000;
  const double ts = 1e-4;
  const Eigen::VectorXd input = Eigen::VectorXd::Constant(n, 2.0);
  const TransmissionRecord record =
      SimulateTransmission(model, input, ts, TwoMassTransmission::State::Zero(), 4);
  const Trajectory generic = Simulate(
      model, model.NominalParameters(), Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero(),
      [](double, double* u) { u[0] = 2.0; }, record.time, 4);
  EXPECT_LT((record.states.leftCols(2) - generic.positions).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((record.states.rightCols(2) - generic.velocities).cwiseAbs().maxCoeff(), 1e-8);
  // The motor pushed with a positive torque runs ahead of the arm towards the far flank.
  EXPECT_GT(record.delta(n - 1), 0.4 * parameters.backlash_rad);
  EXPECT_GT(record.spring_torque(n - 1), 0.0);
}

TEST(TwoMassTransmissionTest, NoiseHasTheRequestedVarianceAndIsReproducible) {
  const TwoMassTransmission model(HovlandSimulation2Parameters());
  TransmissionRecord record;
  record.states = Eigen::MatrixXd::Zero(20000, 4);
  const Eigen::MatrixXd y = AddVelocityNoise(record, true, 2.0, 7);
  ASSERT_EQ(y.cols(), 2);
  EXPECT_NEAR(y.col(0).squaredNorm() / y.rows(), 2.0, 0.1);
  EXPECT_NEAR(y.col(1).squaredNorm() / y.rows(), 2.0, 0.1);
  EXPECT_EQ(y, AddVelocityNoise(record, true, 2.0, 7));
  EXPECT_EQ(AddVelocityNoise(record, false, 2.0, 7).cols(), 1);
}

TEST(TwoMassTransmissionTest, EncoderVelocitiesDifferenceTheQuantisedPositions) {
  // 4 counts per revolution: q = pi / 2. Positions read to the nearest multiple of q.
  TransmissionRecord record;
  record.sample_period_s = 0.5;
  record.states = Eigen::MatrixXd::Zero(4, 4);
  record.states.col(0) << 0.1, 0.9, 1.7, 3.0;      // read 0, q, q, 2q
  record.states.col(1) << -0.1, -0.8, -2.4, -2.4;  // read 0, -q, -2q, -2q
  const double q = M_PI / 2.0;
  const Eigen::MatrixXd v = EncoderVelocities(record, true, 4);
  ASSERT_EQ(v.rows(), 4);
  ASSERT_EQ(v.cols(), 2);
  const Eigen::Vector4d motor(2.0 * q, 2.0 * q, 0.0, 2.0 * q), arm(-2.0 * q, -2.0 * q, -2.0 * q, 0);
  EXPECT_LT((v.col(0) - motor).norm(), 1e-12) << v;
  EXPECT_LT((v.col(1) - arm).norm(), 1e-12) << v;
  EXPECT_EQ(EncoderVelocities(record, false, 4).cols(), 1);

  // A simulated record: the quantisation error of each difference is at most q / ts, and the
  // differences of a fine encoder approach the mean velocity over each sample interval.
  const TwoMassTransmission model(HovlandSimulation2Parameters());
  const double ts = 1e-4;
  const Eigen::VectorXd u = Eigen::VectorXd::Constant(2000, 1.0);
  const TransmissionRecord sim =
      SimulateTransmission(model, u, ts, TwoMassTransmission::State::Zero(), 4);
  const int counts = 1 << 14;
  const Eigen::MatrixXd y = EncoderVelocities(sim, true, counts);
  const Eigen::MatrixXd fine = EncoderVelocities(sim, true, 1 << 30);
  for (int k = 1; k < sim.states.rows(); ++k) {
    for (int j = 0; j < 2; ++j) {
      const double mean_velocity = (sim.states(k, j) - sim.states(k - 1, j)) / ts;
      EXPECT_LE(std::abs(y(k, j) - mean_velocity), 2.0 * M_PI / counts / ts + 1e-9);
      EXPECT_NEAR(fine(k, j), mean_velocity, 1e-4);
    }
  }
}

TEST(TwoMassTransmissionTest, ParameterValidation) {
  TwoMassTransmissionParameters p;
  std::string why;
  EXPECT_TRUE(p.IsValid(&why));
  p.motor_inertia_kgm2 = 0.0;
  EXPECT_FALSE(p.IsValid(&why));
  EXPECT_NE(why.find("motor inertia"), std::string::npos) << why;
  SpringShape shape;
  EXPECT_TRUE(ParseSpringShape("linear", &shape, &why));
  EXPECT_EQ(shape, SpringShape::kLinear);
  EXPECT_FALSE(ParseSpringShape("cubic", &shape, &why));
}

TEST(ExcitationSignalsTest, PrbsIsMaximalLengthAndHeldPerClock) {
  for (int bits : {3, 5, 7, 9, 11}) {
    data::PrbsOptions options;
    options.register_bits = bits;
    options.clock_period_s = 1.0;
    options.amplitude = 2.0;
    options.offset = 0.5;
    const int period = (1 << bits) - 1;
    const Eigen::VectorXd u = data::PrbsSignal(2 * period, 1.0, options);
    int smallest = 0;
    for (int p = 1; p <= period && smallest == 0; ++p) {
      bool repeats = true;
      for (int k = 0; k + p < u.size() && repeats; ++k) repeats = u(k) == u(k + p);
      if (repeats) smallest = p;
    }
    EXPECT_EQ(smallest, period) << bits << " bits";
    // A maximal-length sequence has one more "high" than "low" per period.
    EXPECT_NEAR((u.head(period).array() - 0.5).sum(), 2.0, 1e-9) << bits << " bits";
  }
  data::PrbsOptions options;
  options.clock_period_s = 5e-3;
  const Eigen::VectorXd u = data::PrbsSignal(1000, 1e-3, options);
  for (int k = 0; k < 1000; ++k) EXPECT_EQ(u(k), u(k - k % 5)) << k;
  std::string why;
  options.clock_period_s = 1e-4;
  EXPECT_FALSE(options.IsValid(1e-3, &why));
}

TEST(ExcitationSignalsTest, SweptSine) {
  data::SweptSineOptions options;
  options.amplitude = 2.0;
  options.start_frequency_hz = 1.0;
  options.end_frequency_hz = 3.0;
  const Eigen::VectorXd u = data::SweptSineSignal(10001, 1e-3, options);
  EXPECT_NEAR(u.maxCoeff(), 2.0, 1e-3);
  EXPECT_NEAR(u(0), 0.0, 1e-12);
  // Mean frequency 2 Hz over 10 s: about 40 zero crossings.
  int crossings = 0;
  for (int k = 1; k < u.size(); ++k) crossings += (u(k - 1) < 0) != (u(k) < 0);
  EXPECT_NEAR(crossings, 40, 1);
  std::string why;
  options.end_frequency_hz = 600.0;
  EXPECT_FALSE(options.IsValid(1e-3, &why));
}

}  // namespace
}  // namespace dynid::models
