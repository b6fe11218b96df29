// The contract every van de Molengraft model passes (van de Molengraft (1990) ch. 2): sizes and
// names, affine in a and u, Jets agree with doubles (values and derivatives against central
// differences), the equations of motion vanish on a trajectory simulated from the model itself
// (accelerations and velocities taken by finite differences of the simulated motion, not from the
// simulator), and the simulator's measurements are the model's measurements.
#include <cmath>

// GCC 12 reports false -Warray-bounds positives on Eigen's vectorised 1×1 fixed-size
// expressions (the n = 1 models); the accesses are in bounds.
#pragma GCC diagnostic ignored "-Warray-bounds"

#include <gtest/gtest.h>

#include "dynid/models/friction_mass.h"
#include "dynid/models/mass_spring_damper.h"
#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"
#include "dynid/models/rt_manipulator.h"

namespace dynid::models {
namespace {

// Per-model test set-up: a model, an excitation and a state scale.
template <class Model>
struct ModelSetup;

template <>
struct ModelSetup<MassSpringDamper> {
  static MassSpringDamper Make() { return MassSpringDamper(); }
  static void Input(double t, double* u) { u[0] = 3.0 * std::sin(2.0 * t) + std::cos(7.0 * t); }
  static Eigen::Matrix<double, 1, 1> S0() { return Eigen::Matrix<double, 1, 1>(0.1); }
  static double Duration() { return 2.0; }
};

template <>
struct ModelSetup<FrictionMass> {
  static FrictionMass Make() {
    FrictionMass::Parameters p;
    p.smoothing_velocity_m_per_s = 0.05;
    return FrictionMass(p);
  }
  static void Input(double t, double* u) { u[0] = 4.0 * std::sin(2.0 * M_PI * t); }
  static Eigen::Matrix<double, 1, 1> S0() { return Eigen::Matrix<double, 1, 1>(0.0); }
  static double Duration() { return 2.0; }
};

template <>
struct ModelSetup<RtManipulatorRigid> {
  static RtManipulatorRigid Make() { return RtManipulatorRigid(); }
  static void Input(double t, double* u) {
    const Eigen::Vector2d f = RtManipulatorReferenceInputs(RtManipulatorParameters(), t);
    u[0] = f(0), u[1] = f(1);
  }
  static Eigen::Vector2d S0() { return Eigen::Vector2d(0.25, 0.0); }
  static double Duration() { return 1.0; }
};

template <>
struct ModelSetup<RtManipulatorFlexible> {
  static RtManipulatorFlexible Make() { return RtManipulatorFlexible(); }
  static void Input(double t, double* u) { ModelSetup<RtManipulatorRigid>::Input(t, u); }
  static Eigen::Vector3d S0() { return Eigen::Vector3d(0.25, 0.0, 0.0); }
  static double Duration() { return 1.0; }
};

template <class Model>
class MechanicalContractTest : public ::testing::Test {};

using Models =
    ::testing::Types<MassSpringDamper, FrictionMass, RtManipulatorRigid, RtManipulatorFlexible>;
TYPED_TEST_SUITE(MechanicalContractTest, Models);

// A deterministic, generic evaluation point.
template <class Model>
struct Point {
  static constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters;
  Eigen::Matrix<double, n, 1> s, v, a;
  Eigen::Matrix<double, m, 1> u;
  Eigen::Matrix<double, p, 1> theta;
  explicit Point(const Model& model) {
    for (int i = 0; i < n; ++i) {
      s(i) = 0.3 + 0.1 * i;
      v(i) = 0.5 - 0.2 * i;
      a(i) = -1.0 + 0.7 * i;
    }
    for (int i = 0; i < m; ++i) u(i) = 2.0 - 1.5 * i;
    theta = model.NominalParameters() * 1.1;
  }
};

TYPED_TEST(MechanicalContractTest, SizesAndNames) {
  using Model = TypeParam;
  const Model model = ModelSetup<Model>::Make();
  const ModelInfo info = model.Info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(static_cast<int>(info.positions.size()), Model::kNumPositions);
  EXPECT_EQ(static_cast<int>(info.inputs.size()), Model::kNumInputs);
  EXPECT_EQ(static_cast<int>(info.parameters.size()), Model::kNumParameters);
  EXPECT_EQ(static_cast<int>(info.measurements.size()), Model::kNumMeasurements);
  EXPECT_EQ(static_cast<int>(info.equations.size()), Model::kNumPositions);
  for (const auto* group : {&info.positions, &info.inputs, &info.parameters, &info.measurements,
                            &info.equations}) {
    for (const VariableInfo& variable : *group) {
      EXPECT_FALSE(variable.name.empty());
      EXPECT_FALSE(variable.unit.empty()) << variable.name;
    }
  }
  EXPECT_EQ(model.NominalParameters().size(), Model::kNumParameters);
}

TYPED_TEST(MechanicalContractTest, AffineInAccelerationsAndInputs) {
  using Model = TypeParam;
  constexpr int n = Model::kNumPositions, l = Model::kNumMeasurements;
  const Model model = ModelSetup<Model>::Make();
  const Point<Model> x(model);
  // f(a, u) affine  <=>  f(mid) = (f(1) + f(2)) / 2 for two different points and f is
  // unchanged along differences after subtracting the linear part; two checks suffice for
  // quadratic terms, which would show up as a non-zero midpoint defect.
  const auto a2 = (x.a * -2.0 + Eigen::Matrix<double, n, 1>::Constant(0.3)).eval();
  const auto u2 = (x.u * 3.0 - decltype(x.u)::Constant(1.0)).eval();
  const auto amid = (0.5 * (x.a + a2)).eval();
  const auto umid = (0.5 * (x.u + u2)).eval();
  Eigen::Matrix<double, n, 1> r1, r2, rmid;
  Eigen::Matrix<double, l, 1> z1, z2, zmid;
  model.EquationsOfMotion(x.s.data(), x.v.data(), x.a.data(), x.u.data(), x.theta.data(), 0.3,
                          r1.data());
  model.EquationsOfMotion(x.s.data(), x.v.data(), a2.data(), u2.data(), x.theta.data(), 0.3,
                          r2.data());
  model.EquationsOfMotion(x.s.data(), x.v.data(), amid.data(), umid.data(), x.theta.data(), 0.3,
                          rmid.data());
  model.Measurements(x.s.data(), x.v.data(), x.a.data(), x.u.data(), x.theta.data(), 0.3,
                     z1.data());
  model.Measurements(x.s.data(), x.v.data(), a2.data(), u2.data(), x.theta.data(), 0.3,
                     z2.data());
  model.Measurements(x.s.data(), x.v.data(), amid.data(), umid.data(), x.theta.data(), 0.3,
                     zmid.data());
  EXPECT_LT((rmid - 0.5 * (r1 + r2)).norm(), 1e-12 * (1.0 + r1.norm() + r2.norm()));
  EXPECT_LT((zmid - 0.5 * (z1 + z2)).norm(), 1e-12 * (1.0 + z1.norm() + z2.norm()));
}

TYPED_TEST(MechanicalContractTest, JetsAgreeWithDoublesAndFiniteDifferences) {
  using Model = TypeParam;
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                l = Model::kNumMeasurements;
  const Model model = ModelSetup<Model>::Make();
  const Point<Model> x(model);
  ModelLinearization<Model> lin;
  LinearizeModel(model, x.s.data(), x.v.data(), x.a.data(), x.u.data(), x.theta.data(), 0.4,
                 &lin);
  // Values.
  Eigen::Matrix<double, n, 1> r;
  Eigen::Matrix<double, l, 1> z;
  model.EquationsOfMotion(x.s.data(), x.v.data(), x.a.data(), x.u.data(), x.theta.data(), 0.4,
                          r.data());
  model.Measurements(x.s.data(), x.v.data(), x.a.data(), x.u.data(), x.theta.data(), 0.4,
                     z.data());
  EXPECT_LT((lin.equations - r).norm(), 1e-14 * (1.0 + r.norm()));
  EXPECT_LT((lin.measurements - z).norm(), 1e-14 * (1.0 + z.norm()));
  // Derivatives: central differences over the stacked [s, v, theta, a, u].
  constexpr int kSize = 3 * n + m + p;
  Eigen::Matrix<double, kSize, 1> w;
  w << x.s, x.v, x.theta, x.a, x.u;
  auto eval = [&](const Eigen::Matrix<double, kSize, 1>& ww, Eigen::Matrix<double, n, 1>* rr,
                  Eigen::Matrix<double, l, 1>* zz) {
    const double* base = ww.data();
    model.EquationsOfMotion(base, base + n, base + 2 * n + p, base + 3 * n + p, base + 2 * n,
                            0.4, rr->data());
    model.Measurements(base, base + n, base + 2 * n + p, base + 3 * n + p, base + 2 * n, 0.4,
                       zz->data());
  };
  Eigen::Matrix<double, n + l, kSize> numeric;
  for (int j = 0; j < kSize; ++j) {
    const double step = 1e-6 * (1.0 + std::abs(w(j)));
    Eigen::Matrix<double, kSize, 1> wp = w, wm = w;
    wp(j) += step;
    wm(j) -= step;
    Eigen::Matrix<double, n, 1> rp, rm;
    Eigen::Matrix<double, l, 1> zp, zm;
    eval(wp, &rp, &zp);
    eval(wm, &rm, &zm);
    numeric.col(j) << (rp - rm) / (2 * step), (zp - zm) / (2 * step);
  }
  Eigen::Matrix<double, n + l, kSize> analytic;
  analytic << lin.J_r_x, lin.J_r_pbar, lin.J_z_x, lin.J_z_pbar;
  EXPECT_LT((analytic - numeric).cwiseAbs().maxCoeff(), 1e-6 * (1.0 + analytic.norm()))
      << "analytic\n" << analytic << "\nnumeric\n" << numeric;
}

// LinearizeModelInto into a caller's row-major [∂/∂p̄ | ∂/∂x | value] rows (a stride, p̄'s
// columns as [u; a]) writes the same numbers as LinearizeModel, and nothing else.
TYPED_TEST(MechanicalContractTest, StridedTargetHoldsTheSameLinearization) {
  using Model = TypeParam;
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                l = Model::kNumMeasurements;
  constexpr int kX = 2 * n + p, kP = n + m, kStride = kP + kX + 3;  // 2 columns never written
  const Model model = ModelSetup<Model>::Make();
  const Point<Model> x(model);
  ModelLinearization<Model> lin;
  LinearizeModel(model, x.s.data(), x.v.data(), x.a.data(), x.u.data(), x.theta.data(), 0.4,
                 &lin);
  Eigen::Matrix<double, n + l, kStride, Eigen::RowMajor> rows;
  rows.setConstant(-7.0);
  double* const r_row = rows.data();
  double* const z_row = rows.data() + n * kStride;
  LinearizeModelInto(model, x.s.data(), x.v.data(), x.a.data(), x.u.data(), x.theta.data(), 0.4,
                     LinearizationTarget{r_row + kP + kX, z_row + kP + kX, r_row + kP, r_row,
                                         z_row + kP, z_row, kStride, /*inputs_first=*/true});
  Eigen::Matrix<double, n + l, kStride, Eigen::RowMajor> expected;
  expected.setConstant(-7.0);
  expected.template topLeftCorner<n, m>() = lin.J_r_pbar.template rightCols<m>();
  expected.template block<n, n>(0, m) = lin.J_r_pbar.template leftCols<n>();
  expected.template block<n, kX>(0, kP) = lin.J_r_x;
  expected.template block<n, 1>(0, kP + kX) = lin.equations;
  expected.template bottomLeftCorner<l, m>() = lin.J_z_pbar.template rightCols<m>();
  expected.template block<l, n>(n, m) = lin.J_z_pbar.template leftCols<n>();
  expected.template block<l, kX>(n, kP) = lin.J_z_x;
  expected.template block<l, 1>(n, kP + kX) = lin.measurements;
  EXPECT_EQ(rows, expected);
}

TYPED_TEST(MechanicalContractTest, EquationsOfMotionVanishOnSimulatedMotion) {
  using Model = TypeParam;
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, l = Model::kNumMeasurements;
  const Model model = ModelSetup<Model>::Make();
  const auto theta = model.NominalParameters();
  const int num_samples = 2001;
  const double dt = ModelSetup<Model>::Duration() / (num_samples - 1);
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num_samples, 0.0, dt * (num_samples - 1));
  const Trajectory trajectory =
      Simulate(model, theta, ModelSetup<Model>::S0(), Eigen::Matrix<double, n, 1>::Zero(),
               &ModelSetup<Model>::Input, times, 20);
  ASSERT_EQ(trajectory.positions.rows(), num_samples);
  ASSERT_EQ(trajectory.measurements.cols(), l);
  ASSERT_EQ(trajectory.inputs.cols(), m);
  double force_scale = 1.0, worst_equation = 0.0, worst_velocity = 0.0, velocity_scale = 1e-3;
  for (int k = 2; k < num_samples - 2; ++k) {
    // Fourth-order central differences of the simulated positions and velocities.
    auto d = [&](const Eigen::MatrixXd& x) {
      return ((x.row(k - 2) - 8.0 * x.row(k - 1) + 8.0 * x.row(k + 1) - x.row(k + 2)) /
              (12.0 * dt))
          .transpose()
          .eval();
    };
    const Eigen::Matrix<double, n, 1> s = trajectory.positions.row(k).transpose();
    const Eigen::Matrix<double, n, 1> v = d(trajectory.positions);
    const Eigen::Matrix<double, n, 1> a = d(trajectory.velocities);
    const Eigen::Matrix<double, m, 1> u = trajectory.inputs.row(k).transpose();
    Eigen::Matrix<double, n, 1> r;
    model.EquationsOfMotion(s.data(), v.data(), a.data(), u.data(), theta.data(), times(k),
                            r.data());
    worst_equation = std::max(worst_equation, r.cwiseAbs().maxCoeff());
    force_scale = std::max(force_scale, u.cwiseAbs().maxCoeff());
    worst_velocity = std::max(
        worst_velocity, (v - trajectory.velocities.row(k).transpose()).cwiseAbs().maxCoeff());
    velocity_scale = std::max(velocity_scale, v.cwiseAbs().maxCoeff());
    // The simulator's measurements are the model's measurements at the simulated state.
    Eigen::Matrix<double, l, 1> z;
    const Eigen::Matrix<double, n, 1> a_sim = trajectory.accelerations.row(k).transpose();
    const Eigen::Matrix<double, n, 1> v_sim = trajectory.velocities.row(k).transpose();
    model.Measurements(s.data(), v_sim.data(), a_sim.data(), u.data(), theta.data(), times(k),
                       z.data());
    EXPECT_LT((z - trajectory.measurements.row(k).transpose()).norm(), 1e-12 * (1 + z.norm()));
  }
  EXPECT_LT(worst_equation, 1e-5 * force_scale);
  EXPECT_LT(worst_velocity, 1e-6 * velocity_scale);
  // The motion is not trivial.
  EXPECT_GT(velocity_scale, 1e-2);
}

TEST(RtManipulatorTest, ReferenceDerivativesMatchFiniteDifferences) {
  for (double t : {0.1, 0.37, 0.5, 0.81}) {
    const double h = 1e-5;
    const RtReference ref = RtManipulatorReference(t);
    const RtReference plus = RtManipulatorReference(t + h), minus = RtManipulatorReference(t - h);
    EXPECT_LT(((plus.position - minus.position) / (2 * h) - ref.velocity).norm(), 1e-6);
    EXPECT_LT(((plus.velocity - minus.velocity) / (2 * h) - ref.acceleration).norm(), 1e-5);
  }
  // Straight line from (0.25, 0) to (0, 0.75) m.
  for (double t : {0.0, 0.3, 0.6, 1.0}) {
    const RtReference ref = RtManipulatorReference(t);
    const double x = ref.position(0) * std::cos(ref.position(1));
    const double y = ref.position(0) * std::sin(ref.position(1));
    EXPECT_NEAR(x / 0.25 + y / 0.75, 1.0, 1e-5) << t;
  }
}

TEST(RtManipulatorTest, RigidSimulationFollowsReferenceUnderInverseDynamicsInputs) {
  const RtManipulatorRigid model;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(11, 0.0, 1.0);
  const Trajectory trajectory =
      Simulate(model, model.NominalParameters(), Eigen::Vector2d(0.25, 0.0),
               Eigen::Vector2d::Zero(), &ModelSetup<RtManipulatorRigid>::Input, times, 200);
  for (int k = 0; k < times.size(); ++k) {
    const RtReference ref = RtManipulatorReference(times(k));
    EXPECT_LT((trajectory.positions.row(k).transpose() - ref.position).norm(), 1e-6) << k;
  }
}

TEST(FrictionMassTest, StickSlipSticksWhenForceBelowStaticFriction) {
  StickSlipParameters p;
  p.static_friction_n = 3.0;
  p.dynamic_friction_n = 2.0;
  // f = 4 sin(2 pi t): sticks until |f| > 3, slides, sticks again after the velocity returns to 0.
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(1001, 0.0, 1.0);
  Trajectory trajectory;
  Eigen::VectorXd friction;
  SimulateStickSlip(p, [](double t, double* f) { f[0] = 4.0 * std::sin(2.0 * M_PI * t); },
                    times, 0.0, 0.0, 1e-4, &trajectory, &friction);
  const double t_break = std::asin(0.75) / (2.0 * M_PI);
  for (int k = 0; k < times.size(); ++k) {
    if (times(k) < t_break - 1e-3) {
      EXPECT_EQ(trajectory.velocities(k, 0), 0.0) << times(k);
      EXPECT_NEAR(friction(k), 4.0 * std::sin(2.0 * M_PI * times(k)), 1e-12);
    }
  }
  // Sliding phase: a = (f − 2)/m; position grows; then it stops and stays stuck (|f| <= 3
  // around the zero crossing of f) or slides back.
  const int mid = 300;  // t = 0.3
  EXPECT_GT(trajectory.velocities(mid, 0), 0.0);
  EXPECT_NEAR(trajectory.accelerations(mid, 0), 4.0 * std::sin(2.0 * M_PI * 0.3) - 2.0, 1e-12);
  // Velocity never changes sign within a sliding phase without passing through a stuck sample
  // or exact zero.
  for (int k = 1; k < times.size(); ++k) {
    EXPECT_FALSE(trajectory.velocities(k, 0) * trajectory.velocities(k - 1, 0) < 0.0) << k;
  }
  // Analytic first stop: v(t) = ∫_{tb}^{t} (4 sin(2 pi τ) − 2) dτ = 0.
  auto velocity = [&](double t) {
    return (std::cos(2 * M_PI * t_break) - std::cos(2 * M_PI * t)) * 4.0 / (2 * M_PI) -
           2.0 * (t - t_break);
  };
  double lo = 0.3, hi = 0.9;
  for (int i = 0; i < 60; ++i) {
    const double mid_t = 0.5 * (lo + hi);
    (velocity(mid_t) > 0 ? lo : hi) = mid_t;
  }
  const int k_stop = static_cast<int>(std::ceil(lo * 1000.0)) + 1;
  EXPECT_EQ(trajectory.velocities(k_stop, 0), 0.0) << "stop expected near t = " << lo;
  EXPECT_GT(trajectory.velocities(k_stop - 3, 0), 0.0);
}

}  // namespace
}  // namespace dynid::models
