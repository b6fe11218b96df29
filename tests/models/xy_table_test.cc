// The xy-table models (models/xy_table.h) and the simulated true system
// (experiments/xy_table_study/xy_table_simulator.h): the mechanical-model contract (sizes and
// names, affine in a and u, Jets against central differences, equations of motion vanish on a
// simulated motion), the hand-derived Lagrange equations against the independent Jet Lagrangian,
// the rigid model as the flexible model's phi3 = phi1 limit, and the simulator against the models.
#include <cmath>

#include <gtest/gtest.h>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"
#include "dynid/models/xy_table.h"

namespace dynid::models {
namespace {

XyTableParameters TestParameters() {
  XyTableParameters p;
  p.friction_smoothing_rad_per_s = 0.5;  // moderate, so central differences are accurate
  return p;
}

template <class Model>
struct XyPoint {
  static constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters;
  Eigen::Matrix<double, n, 1> s, v, a;
  Eigen::Matrix<double, m, 1> u;
  Eigen::Matrix<double, p, 1> theta;
  explicit XyPoint(const Model& model) {
    for (int i = 0; i < n; ++i) {
      s(i) = 40.0 + 15.0 * i;  // rad (0.4 m, 0.55 m, ...)
      v(i) = 30.0 - 25.0 * i;
      a(i) = -300.0 + 250.0 * i;
    }
    if (n == 3) s(2) = s(0) + 2.0;  // 2 rad spindle twist
    u << 3.0, -2.0;
    theta = model.NominalParameters() * 1.1;
  }
};

// [r; z] at the stacked point b = [s, v, theta, a, u].
template <class Model>
void EvaluateStacked(const Model& model, const double* b, double* out) {
  constexpr int n = Model::kNumPositions, p = Model::kNumParameters;
  model.EquationsOfMotion(b, b + n, b + 2 * n + p, b + 3 * n + p, b + 2 * n, 0.0, out);
  model.Measurements(b, b + n, b + 2 * n + p, b + 3 * n + p, b + 2 * n, 0.0, out + n);
}

template <class Model>
class XyTableContractTest : public ::testing::Test {};
using XyModels = ::testing::Types<XyTableRigid, XyTableFlexible>;
TYPED_TEST_SUITE(XyTableContractTest, XyModels);

TYPED_TEST(XyTableContractTest, SizesAndNames) {
  using Model = TypeParam;
  const Model model(TestParameters());
  const ModelInfo info = model.Info();
  EXPECT_EQ(static_cast<int>(info.positions.size()), Model::kNumPositions);
  EXPECT_EQ(static_cast<int>(info.inputs.size()), Model::kNumInputs);
  EXPECT_EQ(static_cast<int>(info.parameters.size()), Model::kNumParameters);
  EXPECT_EQ(static_cast<int>(info.measurements.size()), Model::kNumMeasurements);
  EXPECT_EQ(static_cast<int>(info.equations.size()), Model::kNumPositions);
  for (const auto* group :
       {&info.positions, &info.inputs, &info.parameters, &info.measurements, &info.equations}) {
    for (const VariableInfo& variable : *group) {
      EXPECT_FALSE(variable.name.empty());
      EXPECT_FALSE(variable.unit.empty()) << variable.name;
    }
  }
}

TYPED_TEST(XyTableContractTest, AffineInAccelerationsAndInputs) {
  using Model = TypeParam;
  constexpr int n = Model::kNumPositions, l = Model::kNumMeasurements;
  const Model model(TestParameters());
  const XyPoint<Model> x(model);
  const auto a2 = (x.a * -2.0 + Eigen::Matrix<double, n, 1>::Constant(30.0)).eval();
  const auto u2 = (x.u * 3.0 - decltype(x.u)::Constant(1.0)).eval();
  const auto amid = (0.5 * (x.a + a2)).eval();
  const auto umid = (0.5 * (x.u + u2)).eval();
  Eigen::Matrix<double, n, 1> r1, r2, rmid;
  Eigen::Matrix<double, l, 1> z1, z2, zmid;
  const double* th = x.theta.data();
  model.EquationsOfMotion(x.s.data(), x.v.data(), x.a.data(), x.u.data(), th, 0.0, r1.data());
  model.EquationsOfMotion(x.s.data(), x.v.data(), a2.data(), u2.data(), th, 0.0, r2.data());
  model.EquationsOfMotion(x.s.data(), x.v.data(), amid.data(), umid.data(), th, 0.0, rmid.data());
  model.Measurements(x.s.data(), x.v.data(), x.a.data(), x.u.data(), th, 0.0, z1.data());
  model.Measurements(x.s.data(), x.v.data(), a2.data(), u2.data(), th, 0.0, z2.data());
  model.Measurements(x.s.data(), x.v.data(), amid.data(), umid.data(), th, 0.0, zmid.data());
  EXPECT_LT((rmid - 0.5 * (r1 + r2)).norm(), 1e-12 * (1.0 + r1.norm() + r2.norm()));
  EXPECT_LT((zmid - 0.5 * (z1 + z2)).norm(), 1e-12 * (1.0 + z1.norm() + z2.norm()));
}

TYPED_TEST(XyTableContractTest, JetsAgreeWithCentralDifferences) {
  using Model = TypeParam;
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                l = Model::kNumMeasurements;
  const Model model(TestParameters());
  const XyPoint<Model> x(model);
  ModelLinearization<Model> lin;
  LinearizeModel(model, x.s.data(), x.v.data(), x.a.data(), x.u.data(), x.theta.data(), 0.0,
                 &lin);
  constexpr int kSize = 3 * n + m + p;
  Eigen::Matrix<double, kSize, 1> w;
  w << x.s, x.v, x.theta, x.a, x.u;
  Eigen::Matrix<double, n + l, kSize> numeric, analytic;
  for (int j = 0; j < kSize; ++j) {
    const double step = 1e-6 * (1e-3 + std::abs(w(j)));
    Eigen::Matrix<double, kSize, 1> wp = w, wm = w;
    wp(j) += step;
    wm(j) -= step;
    Eigen::Matrix<double, n + l, 1> plus, minus;
    EvaluateStacked(model, wp.data(), plus.data());
    EvaluateStacked(model, wm.data(), minus.data());
    numeric.col(j) = (plus - minus) / (2.0 * step);
  }
  analytic << lin.J_r_x, lin.J_r_pbar, lin.J_z_x, lin.J_z_pbar;
  for (int i = 0; i < n + l; ++i) {
    for (int j = 0; j < kSize; ++j) {
      EXPECT_NEAR(analytic(i, j), numeric(i, j), 1e-6 * (1.0 + std::abs(analytic(i, j))))
          << "row " << i << " column " << j;
    }
  }
}

// The hand-derived flexible equations of motion equal M(q) a + c(q, v) + spring + friction − K i
// of the Jet Lagrangian assembled from the body velocities.
TEST(XyTableModelTest, FlexibleEquationsMatchIndependentLagrangian) {
  const XyTableParameters p = TestParameters();
  const XyTableFlexible model(p);
  const XyTableLagrangian lagrangian(p, /*with_belt_springs=*/false);
  Eigen::Matrix<double, 5, 1> theta = model.NominalParameters();
  theta(4) = 0.37;
  for (int trial = 0; trial < 5; ++trial) {
    Eigen::Vector3d s(20.0 + 13.0 * trial, 30.0 + 11.0 * trial, 20.0 + 13.0 * trial + 3.0 - trial);
    Eigen::Vector3d v(40.0 - 17.0 * trial, -25.0 + 9.0 * trial, 35.0 - 15.0 * trial);
    Eigen::Vector3d a(500.0 - 120.0 * trial, 300.0 * std::cos(trial), -450.0 + 200.0 * trial);
    Eigen::Vector2d u(4.0 - trial, 2.0 * trial - 3.0);
    Eigen::Vector3d r;
    model.EquationsOfMotion(s.data(), v.data(), a.data(), u.data(), theta.data(), 0.0, r.data());
    const Eigen::MatrixXd M = lagrangian.MassMatrix(s, theta(0), theta(1));
    Eigen::VectorXd expected = M * a + lagrangian.Coriolis(s, v, theta(0), theta(1));
    const double eps = p.friction_smoothing_rad_per_s;
    expected(0) += theta(4) * (s(0) - s(2)) + theta(2) * XySmoothSign(v(0), eps) -
                   p.torque_constant1_nm_per_a * u(0);
    expected(1) += theta(3) * XySmoothSign(v(1), eps) - p.torque_constant2_nm_per_a * u(1);
    expected(2) -= theta(4) * (s(0) - s(2));
    EXPECT_LT((r - expected).cwiseAbs().maxCoeff(), 1e-12 * (1.0 + expected.norm()))
        << "trial " << trial << ": model " << r.transpose() << " lagrangian "
        << expected.transpose();
    // The measured end-effector x and its acceleration agree with the body kinematics.
    Eigen::Matrix<double, 8, 1> z;
    model.Measurements(s.data(), v.data(), a.data(), u.data(), theta.data(), 0.0, z.data());
    EXPECT_NEAR(z(0), lagrangian.EffectorPosition(s)(0), 1e-14);
    EXPECT_NEAR(model.EffectorAccelerationX(s.data(), v.data(), a.data()),
                lagrangian.EffectorAcceleration(s, v, a)(0), 1e-12);
  }
}

// With phi3 = phi1 (infinitely stiff spindle) the sum of the flexible equations 1 and 3 is the
// rigid equation 1, and equation 2 is the rigid equation 2.
TEST(XyTableModelTest, RigidIsTheStiffLimitOfFlexible) {
  const XyTableParameters p = TestParameters();
  const XyTableFlexible flexible(p);
  const XyTableRigid rigid(p);
  const Eigen::Vector3d s(45.0, 70.0, 45.0), v(12.0, -30.0, 12.0), a(-250.0, 400.0, -250.0);
  const Eigen::Vector2d u(2.5, -1.0);
  const Eigen::Matrix<double, 5, 1> tf = flexible.NominalParameters();
  const Eigen::Vector4d tr = tf.head<4>();
  Eigen::Vector3d rf;
  Eigen::Vector2d rr;
  flexible.EquationsOfMotion(s.data(), v.data(), a.data(), u.data(), tf.data(), 0.0, rf.data());
  rigid.EquationsOfMotion(s.data(), v.data(), a.data(), u.data(), tr.data(), 0.0, rr.data());
  EXPECT_NEAR(rf(0) + rf(2), rr(0), 1e-12);
  EXPECT_NEAR(rf(1), rr(1), 1e-12);
  Eigen::Matrix<double, 8, 1> zf, zr;
  flexible.Measurements(s.data(), v.data(), a.data(), u.data(), tf.data(), 0.0, zf.data());
  rigid.Measurements(s.data(), v.data(), a.data(), u.data(), tr.data(), 0.0, zr.data());
  EXPECT_LT((zf - zr).cwiseAbs().maxCoeff(), 1e-12);
}

// EOM vanish on a motion simulated from the model itself (generic RK4 of mechanical_model.h),
// derivatives by fourth-order central differences.
TYPED_TEST(XyTableContractTest, EquationsOfMotionVanishOnSimulatedMotion) {
  using Model = TypeParam;
  constexpr int n = Model::kNumPositions;
  XyTableParameters parameters = TestParameters();
  // A soft friction sign: the test checks the equations, not how finely the differences resolve
  // a velocity reversal.
  parameters.friction_smoothing_rad_per_s = 5.0;
  const Model model(parameters);
  const auto theta = model.NominalParameters();
  const int num_samples = 1001;
  const double dt = 0.5 / (num_samples - 1);
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num_samples, 0.0, 0.5);
  auto input = [](double t, double* u) {
    u[0] = 6.0 * std::sin(2.0 * M_PI * 2.0 * t);
    u[1] = 4.0 * std::cos(2.0 * M_PI * 3.0 * t);
  };
  Eigen::Matrix<double, n, 1> s0 = Eigen::Matrix<double, n, 1>::Constant(40.0);
  s0(1) = 60.0;
  const Trajectory trajectory =
      Simulate(model, theta, s0, Eigen::Matrix<double, n, 1>::Zero(), input, times, 20);
  double worst = 0.0;
  for (int k = 2; k < num_samples - 2; ++k) {
    auto d = [&](const Eigen::MatrixXd& x) {
      return ((x.row(k - 2) - 8.0 * x.row(k - 1) + 8.0 * x.row(k + 1) - x.row(k + 2)) /
              (12.0 * dt))
          .transpose()
          .eval();
    };
    const Eigen::Matrix<double, n, 1> s = trajectory.positions.row(k).transpose();
    const Eigen::Matrix<double, n, 1> v = d(trajectory.positions);
    const Eigen::Matrix<double, n, 1> a = d(trajectory.velocities);
    const Eigen::Vector2d u = trajectory.inputs.row(k).transpose();
    Eigen::Matrix<double, n, 1> r;
    model.EquationsOfMotion(s.data(), v.data(), a.data(), u.data(), theta.data(), times(k),
                            r.data());
    worst = std::max(worst, r.cwiseAbs().maxCoeff());
  }
  EXPECT_LT(worst, 1e-6);  // torques are ~1 N m
  EXPECT_GT(trajectory.velocities.cwiseAbs().maxCoeff(), 10.0);
}

}  // namespace
}  // namespace dynid::models
