// Tests of the recursive joint state and parameter estimators: discrete EKF, square-root UKF,
// RTS smoother, the mechanical-model state-space adapter and the Hopfield-network estimator.
// Each is cross-checked against an independent computation (a plain Kalman filter, the batch
// least-squares solution of a linear-Gaussian record, finite differences, linear least squares).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "dynid/models/mass_spring_damper.h"
#include "dynid/models/scara3.h"
#include "dynid/models/scara3_model.h"
#include "dynid/solvers/continuous_discrete_ekf.h"
#include "dynid/solvers/extended_kalman_filter.h"
#include "dynid/solvers/hopfield_estimator.h"
#include "dynid/solvers/kalman_smoother.h"
#include "dynid/solvers/mechanical_state_space.h"
#include "dynid/solvers/unscented_kalman_filter.h"

namespace dynid::solvers {
namespace {

// A linear-Gaussian test system: a damped oscillator sampled at 0.1 s, position measured.
struct LinearCase {
  Eigen::MatrixXd F, Q, H, R, P0;
  Eigen::VectorXd x0;
  Eigen::MatrixXd y;
};

LinearCase MakeLinearCase(int num) {
  LinearCase c;
  c.F.resize(2, 2);
  c.F << 0.98, 0.1, -0.3, 0.95;
  c.Q = Eigen::MatrixXd::Identity(2, 2) * 0.01;
  c.Q(0, 1) = c.Q(1, 0) = 0.002;
  c.H.resize(1, 2);
  c.H << 1.0, 0.0;
  c.R = Eigen::MatrixXd::Identity(1, 1) * 0.04;
  c.P0 = Eigen::MatrixXd::Identity(2, 2) * 2.0;
  c.x0 = Eigen::Vector2d(0.5, -0.2);
  std::mt19937 rng(7);
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::LLT<Eigen::MatrixXd> lq(c.Q);
  Eigen::Vector2d x(1.0, 0.0);
  c.y.resize(num, 1);
  for (int k = 0; k < num; ++k) {
    if (k > 0) x = c.F * x + lq.matrixL() * Eigen::Vector2d(g(rng), g(rng));
    c.y(k, 0) = x(0) + 0.2 * g(rng);
  }
  return c;
}

DiscreteStateSpaceSystem LinearSystem(const LinearCase& c) {
  DiscreteStateSpaceSystem sys;
  sys.state_size = 2;
  sys.measurement_size = 1;
  sys.transition = [&c](int, const Eigen::VectorXd& x, Eigen::VectorXd* xn, Eigen::MatrixXd* J) {
    *xn = c.F * x;
    if (J) *J = c.F;
  };
  sys.measurement = [&c](int, const Eigen::VectorXd& x, Eigen::VectorXd* y, Eigen::MatrixXd* J) {
    *y = c.H * x;
    if (J) *J = c.H;
  };
  return sys;
}

KalmanFilterOptions LinearOptions(const LinearCase& c) {
  KalmanFilterOptions o;
  o.process_noise = c.Q;
  o.measurement_covariance = c.R;
  o.initial_state = c.x0;
  o.initial_covariance = c.P0;
  return o;
}

TEST(CholeskyRankOneTest, UpdateAndDowndateMatchRefactorisation) {
  Eigen::MatrixXd a(3, 3);
  a << 4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2;
  Eigen::MatrixXd l = Eigen::LLT<Eigen::MatrixXd>(a).matrixL();
  const Eigen::Vector3d v(0.3, -0.7, 0.4);
  ASSERT_TRUE(CholeskyRankOneUpdate(&l, v, 1.0));
  EXPECT_LE((l * l.transpose() - (a + v * v.transpose())).norm(), 1e-12);
  ASSERT_TRUE(CholeskyRankOneUpdate(&l, v, -1.0));
  EXPECT_LE((l * l.transpose() - a).norm(), 1e-12);
  // A downdate that would leave an indefinite matrix is refused.
  Eigen::MatrixXd l2 = Eigen::LLT<Eigen::MatrixXd>(a).matrixL();
  EXPECT_FALSE(CholeskyRankOneUpdate(&l2, Eigen::Vector3d(3.0, 0.0, 0.0), -1.0));
}

// On a linear system the EKF and the UKF are both the Kalman filter.
TEST(RecursiveEstimatorsTest, EkfUkfAndKalmanFilterCoincideOnLinearSystem) {
  const LinearCase c = MakeLinearCase(80);
  const DiscreteStateSpaceSystem sys = LinearSystem(c);
  // Independent plain Kalman filter.
  Eigen::VectorXd x = c.x0;
  Eigen::MatrixXd P = c.P0;
  Eigen::MatrixXd ref(c.y.rows(), 2);
  for (int k = 0; k < c.y.rows(); ++k) {
    if (k > 0) {
      x = c.F * x;
      P = c.F * P * c.F.transpose() + c.Q;
    }
    const Eigen::MatrixXd S = c.H * P * c.H.transpose() + c.R;
    const Eigen::MatrixXd K = P * c.H.transpose() * S.inverse();
    x += K * (c.y.row(k).transpose() - c.H * x);
    P = P - K * S * K.transpose();
    ref.row(k) = x.transpose();
  }
  KalmanFilterRecord ekf;
  std::string error;
  ASSERT_TRUE(RunExtendedKalmanFilter(sys, c.y, EkfOptions{LinearOptions(c)}, &ekf, &error))
      << error;
  UkfOptions uo;
  uo.filter = LinearOptions(c);
  for (double alpha : {1.0, 0.5}) {
    uo.alpha = alpha;
    uo.kappa = 1.0;
    UkfResult ukf;
    ASSERT_TRUE(RunSquareRootUkf(sys, c.y, uo, &ukf, &error)) << error;
    EXPECT_TRUE(ukf.positive_definite_throughout);
    EXPECT_LE((ukf.record.filtered_states - ref).cwiseAbs().maxCoeff(), 1e-9);
    EXPECT_LE((ukf.record.filtered_covariances.back() - P).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_NEAR(ukf.record.log_likelihood, ekf.log_likelihood, 1e-8);
  }
  EXPECT_LE((ekf.filtered_states - ref).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LE((ekf.filtered_covariances.back() - P).cwiseAbs().maxCoeff(), 1e-12);
}

// The Gaussian filter of a two-state system with quadratic transition and measurement, its
// moments by tensor-product Gauss–Hermite quadrature (3 nodes per axis: exact for the quartic
// integrands). For quadratic f and h the truncated second-order terms are exact:
// E f(x) = f(μ) + ½ Σ e_i tr(∇²f_i P), Cov f(x) = F P Fᵀ + ½ Σ e_i e_jᵀ tr(∇²f_i P ∇²f_j P),
// Cov(x, h(x)) = P Hᵀ (the third central moments vanish).
Eigen::VectorXd QuadraticTransition(const Eigen::VectorXd& x) {
  return Eigen::Vector2d(x(0) + 0.3 * x(0) * x(1), 0.9 * x(1) + 0.2 * x(0) * x(0));
}
Eigen::VectorXd QuadraticMeasurement(const Eigen::VectorXd& x) {
  return Eigen::Vector2d(x(0) * x(0) + x(1), x(1) - 0.4 * x(0) * x(1));
}

// The quadrature nodes μ + L z and weights of N(μ, P).
void GaussHermiteNodes(const Eigen::VectorXd& mean, const Eigen::MatrixXd& cov,
                       std::vector<Eigen::VectorXd>* nodes, std::vector<double>* weights) {
  const double z[3] = {-std::sqrt(3.0), 0.0, std::sqrt(3.0)};
  const double w[3] = {1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0};
  const Eigen::MatrixXd l = Eigen::LLT<Eigen::MatrixXd>(cov).matrixL();
  nodes->clear();
  weights->clear();
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      nodes->push_back(mean + l * Eigen::Vector2d(z[a], z[b]));
      weights->push_back(w[a] * w[b]);
    }
  }
}

TEST(RecursiveEstimatorsTest, SecondOrderEkfIsExactGaussianFilterOnQuadraticSystem) {
  DiscreteStateSpaceSystem sys;
  sys.state_size = 2;
  sys.measurement_size = 2;
  sys.transition = [](int, const Eigen::VectorXd& x, Eigen::VectorXd* xn, Eigen::MatrixXd* j) {
    *xn = QuadraticTransition(x);
    if (j) *j << 1.0 + 0.3 * x(1), 0.3 * x(0), 0.4 * x(0), 0.9;
  };
  sys.measurement = [](int, const Eigen::VectorXd& x, Eigen::VectorXd* y, Eigen::MatrixXd* j) {
    *y = QuadraticMeasurement(x);
    if (j) *j << 2.0 * x(0), 1.0, -0.4 * x(1), 1.0 - 0.4 * x(0);
  };
  KalmanFilterOptions o;
  o.process_noise = Eigen::Matrix2d(Eigen::Vector2d(0.02, 0.01).asDiagonal());
  o.measurement_covariance = Eigen::Matrix2d(Eigen::Vector2d(0.05, 0.03).asDiagonal());
  o.initial_state = Eigen::Vector2d(0.8, -0.5);
  o.initial_covariance.resize(2, 2);
  o.initial_covariance << 0.3, 0.1, 0.1, 0.2;
  Eigen::MatrixXd y(4, 2);
  y << 0.4, -0.3, 0.9, -0.6, 1.3, -0.2, 0.7, 0.1;

  // Reference: the Gaussian (moment-matching) filter with quadrature moments.
  Eigen::VectorXd mean = o.initial_state;
  Eigen::MatrixXd cov = o.initial_covariance;
  std::vector<Eigen::VectorXd> nodes;
  std::vector<double> weights;
  std::vector<Eigen::VectorXd> ref_states;
  std::vector<Eigen::MatrixXd> ref_covs;
  for (int k = 0; k < y.rows(); ++k) {
    if (k > 0) {
      GaussHermiteNodes(mean, cov, &nodes, &weights);
      Eigen::VectorXd m = Eigen::VectorXd::Zero(2);
      for (size_t i = 0; i < nodes.size(); ++i) m += weights[i] * QuadraticTransition(nodes[i]);
      Eigen::MatrixXd c = o.process_noise;
      for (size_t i = 0; i < nodes.size(); ++i) {
        const Eigen::VectorXd d = QuadraticTransition(nodes[i]) - m;
        c += weights[i] * d * d.transpose();
      }
      mean = m;
      cov = c;
    }
    GaussHermiteNodes(mean, cov, &nodes, &weights);
    Eigen::VectorXd y_hat = Eigen::VectorXd::Zero(2);
    for (size_t i = 0; i < nodes.size(); ++i) y_hat += weights[i] * QuadraticMeasurement(nodes[i]);
    Eigen::MatrixXd a = o.measurement_covariance;
    Eigen::MatrixXd cross = Eigen::MatrixXd::Zero(2, 2);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Eigen::VectorXd d = QuadraticMeasurement(nodes[i]) - y_hat;
      a += weights[i] * d * d.transpose();
      cross += weights[i] * (nodes[i] - mean) * d.transpose();
    }
    const Eigen::MatrixXd gain = cross * a.inverse();
    mean += gain * (y.row(k).transpose() - y_hat);
    cov -= gain * a * gain.transpose();
    ref_states.push_back(mean);
    ref_covs.push_back(cov);
  }

  EkfOptions second{o};
  second.second_order = true;
  KalmanFilterRecord first_order, second_order;
  std::string error;
  ASSERT_TRUE(RunExtendedKalmanFilter(sys, y, EkfOptions{o}, &first_order, &error)) << error;
  ASSERT_TRUE(RunExtendedKalmanFilter(sys, y, second, &second_order, &error)) << error;
  double first_order_error = 0.0;
  for (int k = 0; k < y.rows(); ++k) {
    EXPECT_LE((second_order.filtered_states.row(k).transpose() - ref_states[k]).norm(), 1e-8) << k;
    EXPECT_LE((second_order.filtered_covariances[k] - ref_covs[k]).norm(), 1e-8) << k;
    first_order_error = std::max(
        first_order_error, (first_order.filtered_states.row(k).transpose() - ref_states[k]).norm());
  }
  // The first-order filter is not the Gaussian filter here: the check is sensitive.
  EXPECT_GT(first_order_error, 1e-2);
}

// On a linear-Gaussian record the RTS smoother (after either filter) is the batch least-squares
// (maximum a posteriori) estimate of all states; its covariances are the diagonal blocks of the
// inverse normal matrix.
TEST(RecursiveEstimatorsTest, RtsSmootherEqualsBatchLeastSquares) {
  const int num = 40;
  const LinearCase c = MakeLinearCase(num);
  const DiscreteStateSpaceSystem sys = LinearSystem(c);
  const int dim = 2 * num;
  Eigen::MatrixXd normal = Eigen::MatrixXd::Zero(dim, dim);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(dim);
  const Eigen::MatrixXd p0i = c.P0.inverse(), qi = c.Q.inverse(), ri = c.R.inverse();
  normal.block(0, 0, 2, 2) += p0i;
  rhs.segment(0, 2) += p0i * c.x0;
  for (int k = 0; k < num; ++k) {
    normal.block(2 * k, 2 * k, 2, 2) += c.H.transpose() * ri * c.H;
    rhs.segment(2 * k, 2) += c.H.transpose() * ri * c.y.row(k).transpose();
    if (k + 1 < num) {
      // r = x_{k+1} − F x_k : blocks [−F, I].
      Eigen::MatrixXd j(2, 4);
      j << -c.F, Eigen::MatrixXd::Identity(2, 2);
      normal.block(2 * k, 2 * k, 4, 4) += j.transpose() * qi * j;
    }
  }
  const Eigen::VectorXd batch = normal.ldlt().solve(rhs);
  const Eigen::MatrixXd cov = normal.inverse();

  KalmanFilterRecord ekf;
  std::string error;
  ASSERT_TRUE(RunExtendedKalmanFilter(sys, c.y, EkfOptions{LinearOptions(c)}, &ekf, &error))
      << error;
  UkfOptions uo;
  uo.filter = LinearOptions(c);
  UkfResult ukf;
  ASSERT_TRUE(RunSquareRootUkf(sys, c.y, uo, &ukf, &error)) << error;
  for (const KalmanFilterRecord* rec : {&ekf, &ukf.record}) {
    RtsSmootherResult sm;
    ASSERT_TRUE(RunRtsSmoother(*rec, &sm, &error)) << error;
    for (int k = 0; k < num; ++k) {
      EXPECT_LE((sm.states.row(k).transpose() - batch.segment(2 * k, 2)).norm(), 1e-9) << k;
      EXPECT_LE((sm.covariances[k] - cov.block(2 * k, 2 * k, 2, 2)).norm(), 1e-9) << k;
    }
  }
}

TEST(RecursiveEstimatorsTest, RejectsBadOptions) {
  const LinearCase c = MakeLinearCase(5);
  const DiscreteStateSpaceSystem sys = LinearSystem(c);
  KalmanFilterOptions o = LinearOptions(c);
  o.measurement_covariance(0, 0) = -1.0;
  KalmanFilterRecord rec;
  std::string error;
  EXPECT_FALSE(RunExtendedKalmanFilter(sys, c.y, EkfOptions{o}, &rec, &error));
  EXPECT_NE(error.find("measurement_covariance"), std::string::npos) << error;
  EkfOptions second{LinearOptions(c)};
  second.second_order = true;
  second.hessian_step = 0.0;
  EXPECT_FALSE(RunExtendedKalmanFilter(sys, c.y, second, &rec, &error));
  EXPECT_NE(error.find("hessian_step"), std::string::npos) << error;
  UkfOptions uo;
  uo.filter = LinearOptions(c);
  uo.alpha = 0.0;
  UkfResult ukf;
  EXPECT_FALSE(RunSquareRootUkf(sys, c.y, uo, &ukf, &error));
  EXPECT_NE(error.find("alpha"), std::string::npos) << error;
}

TEST(Scara3ModelTest, EquationsMatchClosedForm) {
  const models::Scara3Model model;
  const Eigen::Vector4d theta = model.NominalParameters();
  const Eigen::Vector3d q(0.3, -0.8, 0.1), qd(0.5, -1.2, 0.2), qdd(1.1, 0.4, -0.7);
  const Eigen::Vector3d tau = models::Scara3ClosedFormTorques(
      q, qd, qdd, models::Scara3BaseParametersFromLinks());
  Eigen::Vector3d r;
  model.EquationsOfMotion(q.data(), qd.data(), qdd.data(), tau.data(), theta.data(), 0.0,
                          r.data());
  EXPECT_LE(r.norm(), 1e-12);
}

// The adapter's transition Jacobians (Euler and RK4) and measurement Jacobian agree with
// central differences.
TEST(MechanicalStateSpaceTest, JacobiansMatchFiniteDifferences) {
  const models::Scara3Model model;
  Eigen::VectorXd times(3);
  times << 0.0, 0.01, 0.02;
  Eigen::MatrixXd inputs(3, 3);
  inputs << 2.0, -1.0, -15.0, 1.0, 0.5, -20.0, 0.0, 0.0, 0.0;
  Eigen::VectorXd x(10);
  x << 0.3, -0.8, 0.05, 0.5, -1.2, 0.2, 4.9, 0.6, 1.1, 2.1;
  for (Discretization d : {Discretization::kForwardEuler, Discretization::kRk4}) {
    AugmentedMechanicalSystem<models::Scara3Model> sys(model, times, inputs, d, 2);
    Eigen::VectorXd x1, xp, xm;
    Eigen::MatrixXd jac;
    sys.Transition(0, x, &x1, &jac);
    for (int j = 0; j < 10; ++j) {
      const double h = 1e-6 * (1.0 + std::abs(x(j)));
      Eigen::VectorXd a = x, b = x;
      a(j) += h;
      b(j) -= h;
      sys.Transition(0, a, &xp, nullptr);
      sys.Transition(0, b, &xm, nullptr);
      EXPECT_LE(((xp - xm) / (2 * h) - jac.col(j)).norm(), 1e-6 * (1.0 + jac.col(j).norm()))
          << "column " << j;
    }
    Eigen::VectorXd y;
    Eigen::MatrixXd hj;
    sys.Measure(1, x, &y, &hj);
    // y = [q1, q1', q2, q2', d3, d3'] of x = [q1, q2, d3, q1', q2', d3', theta].
    Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(6, 6);
    for (int j = 0; j < 3; ++j) {
      expected(2 * j, j) = 1.0;
      expected(2 * j + 1, 3 + j) = 1.0;
    }
    EXPECT_LE((hj.leftCols(6) - expected).norm(), 1e-14);
    EXPECT_LE(hj.rightCols(4).norm(), 1e-14);
  }
}

// A record of the SCARA under a smooth open-loop torque, simulated finely with the model itself.
struct ScaraRecord {
  Eigen::VectorXd times;
  Eigen::MatrixXd inputs, clean, noisy;
};

ScaraRecord MakeScaraRecord(int num, double dt, double noise_scale, std::uint32_t seed) {
  const models::Scara3Model model;
  ScaraRecord r;
  r.times = Eigen::VectorXd::LinSpaced(num, 0.0, dt * (num - 1));
  r.inputs.resize(num, 3);
  for (int k = 0; k < num; ++k) {
    const double t = r.times(k);
    // Torques that keep the joints moving back and forth; gravity compensated on the stroke.
    r.inputs.row(k) << 8.0 * std::sin(2.1 * t) + 3.0 * std::sin(5.3 * t),
        2.0 * std::sin(3.1 * t + 0.4) + 1.0 * std::cos(6.7 * t),
        -2.0 * 9.81 + 4.0 * std::sin(4.0 * t);
  }
  // Zero-order-hold simulation with the adapter's RK4 and 10 substeps (the reference model).
  AugmentedMechanicalSystem<models::Scara3Model> fine(model, r.times, r.inputs,
                                                      Discretization::kRk4, 10);
  Eigen::VectorXd x(10);
  x << 0.0, 0.5, 0.1, 0.0, 0.0, 0.0, model.NominalParameters();
  r.clean.resize(num, 6);
  r.noisy.resize(num, 6);
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  const Eigen::Matrix<double, 6, 1> std_dev =
      noise_scale * (Eigen::Matrix<double, 6, 1>() << 0.01, 0.02, 0.01, 0.02, 0.002, 0.004)
                        .finished();
  for (int k = 0; k < num; ++k) {
    if (k > 0) {
      Eigen::VectorXd xn;
      fine.Transition(k - 1, x, &xn, nullptr);
      x = xn;
    }
    Eigen::VectorXd y;
    fine.Measure(k, x, &y, nullptr);
    r.clean.row(k) = y.transpose();
    for (int i = 0; i < 6; ++i) r.noisy(k, i) = y(i) + std_dev(i) * g(rng);
  }
  return r;
}

KalmanFilterOptions ScaraOptions(double noise_scale) {
  KalmanFilterOptions o;
  const Eigen::Matrix<double, 6, 1> std_dev =
      noise_scale * (Eigen::Matrix<double, 6, 1>() << 0.01, 0.02, 0.01, 0.02, 0.002, 0.004)
                        .finished();
  o.measurement_covariance = std_dev.array().square().matrix().asDiagonal();
  o.process_noise = Eigen::MatrixXd::Identity(10, 10) * 1e-10;
  o.process_noise.bottomRightCorner(4, 4).setZero();  // constant parameters
  o.initial_state.resize(10);
  // Parameters start 10 % low with a 20 % prior std: a mildly non-linear problem.
  const Eigen::Vector4d truth = models::Scara3Model().NominalParameters();
  o.initial_state << 0.0, 0.5, 0.1, 0.0, 0.0, 0.0, 0.9 * truth;
  Eigen::VectorXd p0(10);
  p0 << 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, (0.2 * truth).array().square().matrix();
  o.initial_covariance = p0.asDiagonal();
  return o;
}

// Mildly non-linear: joint state and parameters of the SCARA from noisy positions and
// velocities. EKF and UKF agree with each other to half their standard deviations and
// both contain the truth within 4 sigma; the RTS pass keeps the parameter estimate.
TEST(RecursiveEstimatorsTest, UkfAndEkfAgreeOnScara) {
  const ScaraRecord rec = MakeScaraRecord(600, 0.01, 1.0, 3);
  const models::Scara3Model model;
  AugmentedMechanicalSystem<models::Scara3Model> adapter(model, rec.times, rec.inputs,
                                                         Discretization::kRk4, 1);
  const DiscreteStateSpaceSystem sys = adapter.Discrete();
  KalmanFilterRecord ekf;
  std::string error;
  ASSERT_TRUE(RunExtendedKalmanFilter(sys, rec.noisy, EkfOptions{ScaraOptions(1.0)}, &ekf, &error))
      << error;
  UkfOptions uo;
  uo.filter = ScaraOptions(1.0);
  UkfResult ukf;
  ASSERT_TRUE(RunSquareRootUkf(sys, rec.noisy, uo, &ukf, &error)) << error;
  EXPECT_TRUE(ukf.positive_definite_throughout);
  const Eigen::Vector4d truth = model.NominalParameters();
  const Eigen::Vector4d pe = ekf.filtered_states.bottomRows(1).rightCols(4).transpose();
  const Eigen::Vector4d pu = ukf.record.filtered_states.bottomRows(1).rightCols(4).transpose();
  const Eigen::Vector4d se =
      ekf.filtered_covariances.back().bottomRightCorner(4, 4).diagonal().cwiseSqrt();
  for (int i = 0; i < 4; ++i) {
    EXPECT_LE(std::abs(pe(i) - truth(i)), 4.0 * se(i)) << i;
    EXPECT_LE(std::abs(pu(i) - truth(i)), 4.0 * se(i)) << i;
    EXPECT_LE(std::abs(pe(i) - pu(i)), 0.5 * se(i)) << i;
    EXPECT_LE(se(i), 0.05 * truth(i)) << i;  // the record is informative
  }
  RtsSmootherResult sm;
  ASSERT_TRUE(RunRtsSmoother(ukf.record, &sm, &error)) << error;
  EXPECT_LE((sm.states.row(0).tail(4) - ukf.record.filtered_states.bottomRows(1).rightCols(4))
                .norm(),
            0.1 * se.minCoeff());
}

// The discrete EKF on the RK4 map and the continuous–discrete EKF (moment ODEs by RK4) are two
// discretisations of one filter: with fine steps their estimates agree closely.
TEST(RecursiveEstimatorsTest, DiscreteAndContinuousDiscreteEkfAgree) {
  const ScaraRecord rec = MakeScaraRecord(300, 0.01, 1.0, 5);
  const models::Scara3Model model;
  AugmentedMechanicalSystem<models::Scara3Model> adapter(model, rec.times, rec.inputs,
                                                         Discretization::kRk4, 4);
  const KalmanFilterOptions o = ScaraOptions(1.0);
  KalmanFilterRecord ekf;
  std::string error;
  // Q of the discrete filter ≈ intensity × Δt.
  KalmanFilterOptions od = o;
  od.process_noise = o.process_noise * 0.01;
  ASSERT_TRUE(RunExtendedKalmanFilter(adapter.Discrete(), rec.noisy, EkfOptions{od}, &ekf, &error))
      << error;
  ContinuousDiscreteEkfOptions co;
  co.process_noise_intensity = o.process_noise;
  co.measurement_covariance = o.measurement_covariance;
  co.initial_state = o.initial_state;
  co.initial_covariance = o.initial_covariance;
  co.steps_per_sample = 4;
  ContinuousDiscreteEkfResult cd;
  ASSERT_TRUE(
      RunContinuousDiscreteEkf(adapter.ContinuousDiscrete(), rec.times, rec.noisy, co, &cd, &error))
      << error;
  const Eigen::VectorXd se = cd.state_std.bottomRows(1).transpose();
  for (int i = 6; i < 10; ++i) {
    EXPECT_LE(std::abs(ekf.filtered_states(299, i) - cd.states(299, i)), 0.05 * se(i)) << i;
  }
}

// Regressor of the SCARA along a smooth joint motion, for the Hopfield tests.
void ScaraRegression(int num, double dt, Eigen::VectorXd* times, Eigen::MatrixXd* phi,
                     Eigen::VectorXd* tau) {
  const Eigen::Vector4d p = models::Scara3BaseParametersFromLinks().AsVector();
  *times = Eigen::VectorXd::LinSpaced(num, 0.0, dt * (num - 1));
  phi->resize(3 * num, 4);
  tau->resize(3 * num);
  for (int k = 0; k < num; ++k) {
    const double t = (*times)(k);
    const Eigen::Vector3d q(std::sin(t) + 0.3 * std::sin(3.1 * t), 0.8 * std::sin(1.7 * t + 1.0),
                            0.1 * std::sin(2.3 * t));
    const Eigen::Vector3d qd(std::cos(t) + 0.93 * std::cos(3.1 * t),
                             1.36 * std::cos(1.7 * t + 1.0), 0.23 * std::cos(2.3 * t));
    const Eigen::Vector3d qdd(-std::sin(t) - 2.883 * std::sin(3.1 * t),
                              -2.312 * std::sin(1.7 * t + 1.0), -0.529 * std::sin(2.3 * t));
    const Eigen::Matrix<double, 3, 4> r = models::Scara3ClosedFormRegressor(q, qd, qdd);
    phi->middleRows(3 * k, 3) = r;
    tau->segment(3 * k, 3) = r * p;
  }
}

// On noise-free data the network's final state is the LS solution (= the true parameters),
// with either activation (60 s of data: a sample has rank 3 < 4, so the error decays only as the
// regressor's kernel rotates); the time mean is biased by the transient from p0.
TEST(HopfieldEstimatorTest, ConvergesToLeastSquaresOnNoiseFreeData) {
  Eigen::VectorXd times, tau;
  Eigen::MatrixXd phi;
  ScaraRegression(6001, 0.01, &times, &phi, &tau);
  const Eigen::Vector4d ls = phi.colPivHouseholderQr().solve(tau);
  HopfieldOptions o;
  o.gain = 5.0;
  o.initial_parameters = Eigen::Vector4d(1.0, 1.0, 1.0, 1.0);
  HopfieldResult r;
  std::string error;
  ASSERT_TRUE(RunHopfieldEstimator(times, phi, tau, o, &r, &error)) << error;
  EXPECT_LE((r.final_estimate - ls).cwiseQuotient(ls).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_GT((r.mean_estimate - ls).norm(), (r.final_estimate - ls).norm());
  EXPECT_LE(r.energy(r.energy.size() - 1), 1e-6);

  o.activation = HopfieldActivation::kTanh;
  o.amplitude = Eigen::Vector4d(10.0, 10.0, 10.0, 10.0);
  o.beta = 10.0;
  ASSERT_TRUE(RunHopfieldEstimator(times, phi, tau, o, &r, &error)) << error;
  EXPECT_LE((r.final_estimate - ls).cwiseQuotient(ls).cwiseAbs().maxCoeff(), 1e-3);

  o.initial_parameters(0) = 20.0;  // outside ±A
  EXPECT_FALSE(RunHopfieldEstimator(times, phi, tau, o, &r, &error));
  EXPECT_NE(error.find("amplitude"), std::string::npos) << error;
}

}  // namespace
}  // namespace dynid::solvers
