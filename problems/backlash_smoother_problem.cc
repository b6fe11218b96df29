#include "dynid/problems/backlash_smoother_problem.h"
#include "dynid/problems/internal/backlash_shape_reference.h"

#include <ceres/ceres.h>
#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

namespace dynid::problems {

namespace {

// The dead-zone curve K dz(x − c; b) for Jets (the branches of DeadZoneAt below).
template <class T>
T DeadZoneCurve(const T& delta, const T* spring) {
  const T x = delta - spring[0], half = spring[1] * 0.5;
  if (x > half) return spring[2] * (x - half);
  if (x < -half) return spring[2] * (x + half);
  return T(0.0);
}

// The first-order hold's correction of the shape problem. Over [t_k, t_{k+1}] (σ = (t − t_k)/h in
// [0, 1]) Δ follows the cubic p(σ) through Δ_k, Δ_{k+1} with the slopes h (x3 − x4) of the nodes
// (Hermite), and the true torque is the curve g(σ) = K dz(p(σ) − c; b): K (p − c ∓ b/2) in
// contact, 0 in the gap, with a break where p crosses a corner c ∓ b/2. The line through the node
// values g(0), g(1) — the plain first-order hold — overestimates |g| by up to K |Δ_{k+1} − Δ_k| / 4
// where Δ crosses a corner (a bias of K: +0.10 % on Simulation 1). The line a + β σ with the
// mean M0 = ∫ g and the first moment M1 = ∫ σ g of the broken curve (a = 4 M0 − 6 M1,
// β = 12 M1 − 6 M0) moves the velocities (∫ g) and the positions (∫ (1 − σ) g) of a double
// integrator as g does. Returns [a − g(0), a + β − g(1)] (0 in the gap), to be added to the
// hold's end values tau_k, tau_{k+1}.
template <class T>
void HoldCorrection(const T* node, const T* next, const T* spring, double h, T* e0, T* e1) {
  const T d0 = node[0] - node[1], d1 = next[0] - next[1];
  const T s0 = (node[2] - node[3]) * h, s1 = (next[2] - next[3]) * h;
  const T p[4] = {d0, s0, (d1 - d0) * 3.0 - s0 * 2.0 - s1, (d0 - d1) * 2.0 + s0 + s1};
  const auto poly = [&](const T& x) { return p[0] + x * (p[1] + x * (p[2] + x * p[3])); };
  const auto slope = [&](const T& x) { return p[1] + x * (p[2] * 2.0 + x * p[3] * 3.0); };
  const T half = spring[1] * 0.5;
  const T corners[2] = {spring[0] - half, spring[0] + half};
  // Breaks: corners between the end values, located on the cubic by Newton from the chord.
  T breaks[4];
  int m = 0;
  breaks[m++] = T(0.0);
  for (const T& corner : corners) {
    if (!((corner - d0) * (corner - d1) < 0.0)) continue;
    T sigma = (corner - d0) / (d1 - d0);
    for (int it = 0; it < 4; ++it) {
      const T d = slope(sigma);
      if (!(d * d > 0.0)) break;
      const T candidate = sigma - (poly(sigma) - corner) / d;
      if (!(candidate > 0.0 && candidate < 1.0)) break;
      sigma = candidate;
    }
    breaks[m++] = sigma;
  }
  if (m == 3 && breaks[2] < breaks[1]) std::swap(breaks[1], breaks[2]);
  breaks[m++] = T(1.0);
  // ∫ σ^j p(σ) dσ over [a, b].
  const auto moment = [&](const T& a, const T& b, int j) {
    T sum(0.0), a_pow = a, b_pow = b;  // powers a^(i+j+1), b^(i+j+1)
    for (int i = 0; i < j; ++i) {
      a_pow *= a;
      b_pow *= b;
    }
    for (int i = 0; i < 4; ++i) {
      sum += p[i] * (b_pow - a_pow) / double(i + j + 1);
      a_pow *= a;
      b_pow *= b;
    }
    return sum;
  };
  T m0(0.0), m1(0.0);
  for (int i = 0; i + 1 < m; ++i) {
    const T& a = breaks[i];
    const T& b = breaks[i + 1];
    // The segment's side of the gap: at its middle (at an end when there is no break).
    const T x = (m == 2 ? d0 : poly((a + b) * 0.5)) - spring[0];
    T corner;
    if (x > half) {
      corner = corners[1];
    } else if (x < -half) {
      corner = corners[0];
    } else {
      continue;
    }
    m0 += spring[2] * (moment(a, b, 0) - corner * (b - a));
    m1 += spring[2] * (moment(a, b, 1) - corner * (b * b - a * a) * 0.5);
  }
  const T line_start = m0 * 4.0 - m1 * 6.0, line_slope = m1 * 12.0 - m0 * 6.0;
  *e0 = line_start - DeadZoneCurve(d0, spring);
  *e1 = line_start + line_slope - DeadZoneCurve(d1, spring);
}

// Interval k: dynamics defect, tau_K increment and the measurement at t_{k+1}.
template <int L>
struct IntervalResidual {
  IntervalResidual(const models::TwoMassTransmission& model, double h, int steps, bool first_order,
                   double u, const Eigen::Vector4d& dynamics_sqrt_weight, double tau_sqrt_weight,
                   double measurement_sqrt_weight, const Eigen::VectorXd& y)
      : model_(model),
        step_(h / steps),
        steps_(steps),
        first_order_(first_order),
        input_(u),
        dynamics_sqrt_weight_(dynamics_sqrt_weight),
        tau_sqrt_weight_(tau_sqrt_weight),
        measurement_sqrt_weight_(measurement_sqrt_weight) {
    for (int j = 0; j < L; ++j) measurement_[j] = y(j);
  }

  template <class T>
  bool operator()(const T* node, const T* next, T* residual) const {
    return Evaluate(node, next, static_cast<const T*>(nullptr), residual);
  }

  // With the spring block (first-order hold of the shape problem): the corner correction.
  template <class T>
  bool operator()(const T* node, const T* next, const T* spring, T* residual) const {
    return Evaluate(node, next, spring, residual);
  }

  template <class T>
  bool Evaluate(const T* node, const T* next, const T* spring, T* residual) const {
    T x[4] = {node[0], node[1], node[2], node[3]};
    T x_next[4];
    const T u(input_);
    if (first_order_) {
      // tau_K(t_k + s h) = tau_k + s (tau_{k+1} − tau_k): RK4 with the stage values of the line,
      // corrected where Δ crosses a corner of the curve (shape problem).
      T tau0 = node[4], tau1 = next[4];
      if (spring != nullptr) {
        T e0, e1;
        HoldCorrection(node, next, spring, step_ * steps_, &e0, &e1);
        tau0 += e0;
        tau1 += e1;
      }
      const T slope = (tau1 - tau0) / T(steps_);
      for (int i = 0; i < steps_; ++i) {
        const T tau_start = tau0 + T(i) * slope;
        models::TransmissionRk4StepLinearTau(model_, x, u, tau_start, tau_start + slope, step_,
                                             x_next);
        for (int j = 0; j < 4; ++j) x[j] = x_next[j];
      }
    } else {
      for (int i = 0; i < steps_; ++i) {
        models::TransmissionRk4Step(model_, x, u, node[4], step_, x_next);
        for (int j = 0; j < 4; ++j) x[j] = x_next[j];
      }
    }
    for (int j = 0; j < 4; ++j) residual[j] = dynamics_sqrt_weight_(j) * (next[j] - x[j]);
    residual[4] = tau_sqrt_weight_ * (next[4] - node[4]);
    for (int j = 0; j < L; ++j) {
      residual[5 + j] = measurement_sqrt_weight_ * (next[2 + j] - measurement_[j]);
    }
    return true;
  }

  models::TwoMassTransmission model_;
  double step_;
  int steps_;
  bool first_order_;
  double input_;
  Eigen::Vector4d dynamics_sqrt_weight_;
  double tau_sqrt_weight_;
  double measurement_sqrt_weight_;
  double measurement_[L];
};

// The first-order hold's interval cost of the shape problem with its Jacobian by hand: the same
// residuals as IntervalResidual<L> with the spring block (the same operations in the same order,
// so the same values), and derivatives by the chain rule instead of 13-dimensional Jets through
// the RK4 map. The hold's correction e0, e1 depends on the nodes only through Δ and x3 − x4 at
// both ends and on [c, b, K]: 7-dimensional Jets through HoldCorrection. The RK4 map's tangent
// with respect to (x_k, the corrected tau_K at both ends) is propagated through the stages with
// the model's analytic ∂f/∂x and ∂f/∂tau_K (TwoMassTransmission::StateJacobians).
template <int L>
class FirstOrderHoldShapeIntervalCost : public ceres::SizedCostFunction<5 + L, 5, 5, 3> {
 public:
  using Tangent = Eigen::Matrix<double, 4, 6>;  // ∂x / ∂(x_k, tau_start, tau_end)
  using Row = Eigen::Matrix<double, 1, 6>;

  FirstOrderHoldShapeIntervalCost(const models::TwoMassTransmission& model, double h, int steps,
                                  double u, const Eigen::Vector4d& dynamics_sqrt_weight,
                                  double tau_sqrt_weight, double measurement_sqrt_weight,
                                  const Eigen::VectorXd& y)
      : model_(model),
        step_(h / steps),
        steps_(steps),
        input_(u),
        dynamics_sqrt_weight_(dynamics_sqrt_weight),
        tau_sqrt_weight_(tau_sqrt_weight),
        measurement_sqrt_weight_(measurement_sqrt_weight) {
    for (int j = 0; j < L; ++j) measurement_[j] = y(j);
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const double* node = parameters[0];
    const double* next = parameters[1];
    const double* spring = parameters[2];
    // The correction, with derivatives in (Δ_k, x3 − x4 at k, Δ_{k+1}, x3 − x4 at k+1, c, b, K).
    using Jet = ceres::Jet<double, 7>;
    Jet e0, e1;
    Correction(node, next, spring, &e0, &e1);
    const double tau0 = node[4] + e0.a, tau1 = next[4] + e1.a;

    // RK4 steps with tau_K linear from tau0 to tau1 (as IntervalResidual::Evaluate).
    Eigen::Vector4d x(node[0], node[1], node[2], node[3]);
    const bool tangent = jacobians != nullptr;
    Tangent D = Tangent::Zero();  // ∂x / ∂(x_k, tau0, tau1)
    if (tangent) D.leftCols<4>().setIdentity();
    const double slope = (tau1 - tau0) / double(steps_);
    for (int i = 0; i < steps_; ++i) {
      const double tau_start = tau0 + double(i) * slope;
      Row d_start = Row::Zero(), d_end = Row::Zero();
      d_start(4) = 1.0 - double(i) / steps_;
      d_start(5) = double(i) / steps_;
      d_end(4) = 1.0 - double(i + 1) / steps_;
      d_end(5) = double(i + 1) / steps_;
      Step(x, tau_start, tau_start + slope, d_start, d_end, tangent, &x, &D);
    }

    for (int j = 0; j < 4; ++j) residuals[j] = dynamics_sqrt_weight_(j) * (next[j] - x(j));
    residuals[4] = tau_sqrt_weight_ * (next[4] - node[4]);
    for (int j = 0; j < L; ++j) {
      residuals[5 + j] = measurement_sqrt_weight_ * (next[2 + j] - measurement_[j]);
    }
    if (!tangent) return true;

    // tau0 = tau_k + e0, tau1 = tau_{k+1} + e1; the residuals' x is the RK4 map's end state.
    const Eigen::Vector4d d_tau0 = D.col(4), d_tau1 = D.col(5);
    // ∂(end state)/∂ of the correction's 7 variables.
    Eigen::Matrix<double, 4, 7> d_corr;
    for (int v = 0; v < 7; ++v) d_corr.col(v) = d_tau0 * e0.v(v) + d_tau1 * e1.v(v);
    using Jacobian = Eigen::Matrix<double, 5 + L, 5, Eigen::RowMajor>;
    if (jacobians[0] != nullptr) {
      Eigen::Map<Jacobian> J(jacobians[0]);
      J.setZero();
      Eigen::Matrix<double, 4, 5> d_x = Eigen::Matrix<double, 4, 5>::Zero();
      d_x.leftCols<4>() = D.leftCols<4>();
      d_x.col(0) += d_corr.col(0);
      d_x.col(1) -= d_corr.col(0);
      d_x.col(2) += d_corr.col(1);
      d_x.col(3) -= d_corr.col(1);
      d_x.col(4) = d_tau0;
      J.template topRows<4>() = -(dynamics_sqrt_weight_.asDiagonal() * d_x);
      J(4, 4) = -tau_sqrt_weight_;
    }
    if (jacobians[1] != nullptr) {
      Eigen::Map<Jacobian> J(jacobians[1]);
      J.setZero();
      Eigen::Matrix<double, 4, 5> d_x = Eigen::Matrix<double, 4, 5>::Zero();
      d_x.col(0) = d_corr.col(2);
      d_x.col(1) = -d_corr.col(2);
      d_x.col(2) = d_corr.col(3);
      d_x.col(3) = -d_corr.col(3);
      d_x.col(4) = d_tau1;
      J.template topRows<4>() = -(dynamics_sqrt_weight_.asDiagonal() * d_x);
      for (int j = 0; j < 4; ++j) J(j, j) += dynamics_sqrt_weight_(j);
      J(4, 4) = tau_sqrt_weight_;
      for (int j = 0; j < L; ++j) J(5 + j, 2 + j) = measurement_sqrt_weight_;
    }
    if (jacobians[2] != nullptr) {
      Eigen::Map<Eigen::Matrix<double, 5 + L, 3, Eigen::RowMajor>> J(jacobians[2]);
      J.setZero();
      J.template topRows<4>() = -(dynamics_sqrt_weight_.asDiagonal() * d_corr.rightCols<3>());
    }
    return true;
  }

 private:
  // HoldCorrection with derivatives. Where no corner lies between Δ_k and Δ_{k+1} (most
  // intervals) its moments are those of the cubic itself, in closed form: 0 in the gap, and in
  // contact (g = K (p − corner), M0 = K (∫p − corner), M1 = K (∫σp − corner / 2), with
  // ∫p = (Δ_k + Δ_{k+1}) / 2 + (s_k − s_{k+1}) / 12, ∫σp = 0.15 Δ_k + 0.35 Δ_{k+1} + s_k / 30 −
  // s_{k+1} / 20, s = h (x3 − x4))
  //   e0 = K (0.1 (Δ_k − Δ_{k+1}) + 2 s_k / 15 − s_{k+1} / 30),
  //   e1 = K (0.1 (Δ_{k+1} − Δ_k) + s_k / 30 − 2 s_{k+1} / 15),
  // independent of c and b. Across a corner: HoldCorrection on 7-dimensional Jets.
  template <class Jet>
  void Correction(const double* node, const double* next, const double* spring, Jet* e0,
                  Jet* e1) const {
    const double h = step_ * steps_;
    const double d0 = node[0] - node[1], d1 = next[0] - next[1];
    const double half = spring[1] * 0.5;
    const double corners[2] = {spring[0] - half, spring[0] + half};
    bool crossing = false;
    for (double corner : corners) crossing = crossing || (corner - d0) * (corner - d1) < 0.0;
    if (!crossing) {
      // The side of the gap at Δ_k, as HoldCorrection decides it without breaks.
      const double x = d0 - spring[0];
      if (!(x > half) && !(x < -half)) {
        *e0 = Jet(0.0);
        *e1 = Jet(0.0);
        return;
      }
      const double s0 = (node[2] - node[3]) * h, s1 = (next[2] - next[3]) * h;
      const double k = spring[2];
      const double f0 = 0.1 * (d0 - d1) + s0 * (2.0 / 15.0) - s1 * (1.0 / 30.0);
      const double f1 = 0.1 * (d1 - d0) + s0 * (1.0 / 30.0) - s1 * (2.0 / 15.0);
      *e0 = Jet(k * f0);
      *e1 = Jet(k * f1);
      // Variables: Δ_k, x3 − x4 at k, Δ_{k+1}, x3 − x4 at k+1, c, b, K.
      e0->v << 0.1 * k, k * h * (2.0 / 15.0), -0.1 * k, -k * h * (1.0 / 30.0), 0.0, 0.0, f0;
      e1->v << -0.1 * k, k * h * (1.0 / 30.0), 0.1 * k, -k * h * (2.0 / 15.0), 0.0, 0.0, f1;
      return;
    }
    const Jet zero(0.0);
    const Jet node_jet[4] = {Jet(d0, 0), zero, Jet(node[2] - node[3], 1), zero};
    const Jet next_jet[4] = {Jet(d1, 2), zero, Jet(next[2] - next[3], 3), zero};
    const Jet spring_jet[3] = {Jet(spring[0], 4), Jet(spring[1], 5), Jet(spring[2], 6)};
    HoldCorrection(node_jet, next_jet, spring_jet, h, e0, e1);
  }

  // One RK4 step of TransmissionRk4StepLinearTau (the same expressions) and, with `tangent`, its
  // tangent: D ← ∂(x_next)/∂(x_k, tau0, tau1) given D = ∂x/∂(…) and the rows of tau_start and
  // tau_end.
  void Step(const Eigen::Vector4d& x0, double tau_start, double tau_end, const Row& d_start,
            const Row& d_end, bool tangent, Eigen::Vector4d* x_next, Tangent* D) const {
    using State = Eigen::Vector4d;
    const double h = step_;
    const double u = input_;
    const double tau_mid = (tau_start + tau_end) * 0.5;
    State k1, k2, k3, k4;
    model_.StateDerivative(x0.data(), u, tau_start, k1.data());
    const State x1 = x0 + k1 * (0.5 * h);
    model_.StateDerivative(x1.data(), u, tau_mid, k2.data());
    const State x2 = x0 + k2 * (0.5 * h);
    model_.StateDerivative(x2.data(), u, tau_mid, k3.data());
    const State x3 = x0 + k3 * h;
    model_.StateDerivative(x3.data(), u, tau_end, k4.data());
    const State end = x0 + (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (h / 6.0);
    if (tangent) {
      const Row d_mid = (d_start + d_end) * 0.5;
      Eigen::Matrix4d A;
      Eigen::Vector4d b;
      const Tangent D0 = *D;
      model_.StateJacobians(x0, &A, &b);
      const Tangent K1 = A * D0 + b * d_start;
      model_.StateJacobians(x1, &A, &b);
      const Tangent K2 = A * (D0 + K1 * (0.5 * h)) + b * d_mid;
      model_.StateJacobians(x2, &A, &b);
      const Tangent K3 = A * (D0 + K2 * (0.5 * h)) + b * d_mid;
      model_.StateJacobians(x3, &A, &b);
      const Tangent K4 = A * (D0 + K3 * h) + b * d_end;
      *D = D0 + (K1 + K2 * 2.0 + K3 * 2.0 + K4) * (h / 6.0);
    }
    *x_next = end;
  }

  models::TwoMassTransmission model_;
  double step_;
  int steps_;
  double input_;
  Eigen::Vector4d dynamics_sqrt_weight_;
  double tau_sqrt_weight_;
  double measurement_sqrt_weight_;
  double measurement_[L];
};

// Node 0: prior and the first measurement. Linear, so the Jacobian is written by hand.
class InitialCost : public ceres::SizedCostFunction<ceres::DYNAMIC, 5> {
 public:
  InitialCost(const NodeVector& mean, const NodeVector& sqrt_weight, double measurement_sqrt_weight,
              const Eigen::VectorXd& y)
      : mean_(mean),
        sqrt_weight_(sqrt_weight),
        measurement_sqrt_weight_(measurement_sqrt_weight),
        measurement_(y) {
    set_num_residuals(5 + static_cast<int>(y.size()));
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const double* node = parameters[0];
    const int l = static_cast<int>(measurement_.size());
    for (int j = 0; j < 5; ++j) residuals[j] = sqrt_weight_(j) * (node[j] - mean_(j));
    for (int j = 0; j < l; ++j) {
      residuals[5 + j] = measurement_sqrt_weight_ * (node[2 + j] - measurement_(j));
    }
    if (jacobians != nullptr && jacobians[0] != nullptr) {
      Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, 5, Eigen::RowMajor>> J(jacobians[0], 5 + l,
                                                                              5);
      J.setZero();
      for (int j = 0; j < 5; ++j) J(j, j) = sqrt_weight_(j);
      for (int j = 0; j < l; ++j) J(5 + j, 2 + j) = measurement_sqrt_weight_;
    }
    return true;
  }

 private:
  NodeVector mean_;
  NodeVector sqrt_weight_;
  double measurement_sqrt_weight_;
  Eigen::VectorXd measurement_;
};

Eigen::Vector4d DynamicsSqrtWeight(const BacklashSmootherProblemOptions& options, double h) {
  const Eigen::Vector4d q = options.state_noise_intensity.cwiseMax(options.state_noise_floor);
  return (q * h).cwiseSqrt().cwiseInverse();
}

// The interval cost with an explicit random-walk weight (0 drops the increment residual);
// with_spring: the first-order hold's corner correction, parameter blocks (node_k, node_{k+1},
// spring).
ceres::CostFunction* MakeIntervalCost(const models::TwoMassTransmission& model,
                                      const BacklashSmootherProblemOptions& options, double h,
                                      double input, const Eigen::VectorXd& next_measurement,
                                      double tau_sqrt_weight, bool with_spring = false,
                                      bool automatic = false) {
  const Eigen::Vector4d w_x = DynamicsSqrtWeight(options, h);
  const double w_y = 1.0 / std::sqrt(options.measurement_variance);
  const int steps = options.rk4_steps_per_sample;
  const bool first_order = options.tau_hold == TauHold::kFirstOrder;
  if (with_spring && !automatic) {
    CHECK(first_order) << "the corner correction belongs to the first-order hold";
    if (next_measurement.size() == 1) {
      return new FirstOrderHoldShapeIntervalCost<1>(model, h, steps, input, w_x, tau_sqrt_weight,
                                                    w_y, next_measurement);
    }
    CHECK_EQ(next_measurement.size(), 2)
        << "expected 1 or 2 measurements, got " << next_measurement.size();
    return new FirstOrderHoldShapeIntervalCost<2>(model, h, steps, input, w_x, tau_sqrt_weight, w_y,
                                                  next_measurement);
  }
  if (with_spring) {
    CHECK(first_order) << "the corner correction belongs to the first-order hold";
    if (next_measurement.size() == 1) {
      return new ceres::AutoDiffCostFunction<IntervalResidual<1>, 6, 5, 5, 3>(
          new IntervalResidual<1>(model, h, steps, true, input, w_x, tau_sqrt_weight, w_y,
                                  next_measurement));
    }
    CHECK_EQ(next_measurement.size(), 2)
        << "expected 1 or 2 measurements, got " << next_measurement.size();
    return new ceres::AutoDiffCostFunction<IntervalResidual<2>, 7, 5, 5, 3>(new IntervalResidual<2>(
        model, h, steps, true, input, w_x, tau_sqrt_weight, w_y, next_measurement));
  }
  if (next_measurement.size() == 1) {
    return new ceres::AutoDiffCostFunction<IntervalResidual<1>, 6, 5, 5>(new IntervalResidual<1>(
        model, h, steps, first_order, input, w_x, tau_sqrt_weight, w_y, next_measurement));
  }
  CHECK_EQ(next_measurement.size(), 2)
      << "expected 1 or 2 measurements, got " << next_measurement.size();
  return new ceres::AutoDiffCostFunction<IntervalResidual<2>, 7, 5, 5>(new IntervalResidual<2>(
      model, h, steps, first_order, input, w_x, tau_sqrt_weight, w_y, next_measurement));
}

// The dead-zone curve dz(x) = K (x ∓ b/2) outside the gap, 0 inside (x = Δ − c), its integral
// F(x) = K/2 (x ∓ b/2)² outside, 0 inside, and their derivatives. The branches are those of
// TwoMassTransmission::SpringTorque (kDeadZone).
struct CurvePoint {
  double value = 0.0;  // dz(x), or F(x) when integral
  double d_x = 0.0;    // d/dx (= −d/dc)
  double d_b = 0.0;    // d/db
  double d_k = 0.0;    // d/dK
};

CurvePoint DeadZoneAt(double delta, const double* spring) {
  const double x = delta - spring[0], half = 0.5 * spring[1], k = spring[2];
  CurvePoint p;
  if (x > half) {
    p = {k * (x - half), k, -0.5 * k, x - half};
  } else if (x < -half) {
    p = {k * (x + half), k, 0.5 * k, x + half};
  }
  return p;
}

CurvePoint DeadZoneIntegralAt(double delta, const double* spring) {
  const double x = delta - spring[0], half = 0.5 * spring[1], k = spring[2];
  CurvePoint p;
  if (x > half) {
    const double e = x - half;
    p = {0.5 * k * e * e, k * e, -0.5 * k * e, 0.5 * e * e};
  } else if (x < -half) {
    const double e = x + half;
    p = {0.5 * k * e * e, k * e, 0.5 * k * e, 0.5 * e * e};
  }
  return p;
}

// tau_K,k − (the curve K dz(Δ − c; b) at Δ_k, at the interval midpoint ½ (Δ_k + Δ_{k+1}), or
// averaged over the interval with Δ linear in time), weighted. The residual involves the nodes
// only through Δ = x1 − x2 and tau_K, so the Jacobian is written by hand (a few flops instead of
// 13-dimensional Jets; checked against numeric differences in the tests).
class NodeShapeCost : public ceres::SizedCostFunction<1, 5, 3> {
 public:
  explicit NodeShapeCost(double sqrt_weight) : w_(sqrt_weight) {}

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const double* node = parameters[0];
    const double* spring = parameters[1];
    const CurvePoint c = DeadZoneAt(node[0] - node[1], spring);
    residuals[0] = w_ * (node[4] - c.value);
    if (jacobians == nullptr) return true;
    if (jacobians[0] != nullptr) {
      double* j = jacobians[0];
      j[0] = -w_ * c.d_x;
      j[1] = w_ * c.d_x;
      j[2] = j[3] = 0.0;
      j[4] = w_;
    }
    if (jacobians[1] != nullptr) {
      jacobians[1][0] = w_ * c.d_x;
      jacobians[1][1] = -w_ * c.d_b;
      jacobians[1][2] = -w_ * c.d_k;
    }
    return true;
  }

 private:
  double w_;
};

class IntervalShapeCost : public ceres::SizedCostFunction<1, 5, 5, 3> {
 public:
  IntervalShapeCost(double sqrt_weight, bool average) : w_(sqrt_weight), average_(average) {}

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const double* node = parameters[0];
    const double* next = parameters[1];
    const double* spring = parameters[2];
    const double d0 = node[0] - node[1], d1 = next[0] - next[1];
    double curve = 0.0, d_d0 = 0.0, d_d1 = 0.0;  // curve and its derivatives in Δ_k, Δ_{k+1}
    double d_c = 0.0, d_b = 0.0, d_k = 0.0;
    // Below 1e-9 rad of travel the average equals the midpoint value to ~1e-9 K.
    if (average_ && std::abs(d1 - d0) > 1e-9) {
      // [F(Δ_{k+1}) − F(Δ_k)] / (Δ_{k+1} − Δ_k), with F' = dz.
      const CurvePoint f0 = DeadZoneIntegralAt(d0, spring), f1 = DeadZoneIntegralAt(d1, spring);
      const double inv = 1.0 / (d1 - d0);
      curve = (f1.value - f0.value) * inv;
      d_d1 = (f1.d_x - curve) * inv;
      d_d0 = (curve - f0.d_x) * inv;
      d_c = -(f1.d_x - f0.d_x) * inv;
      d_b = (f1.d_b - f0.d_b) * inv;
      d_k = (f1.d_k - f0.d_k) * inv;
    } else {
      const CurvePoint m = DeadZoneAt(0.5 * (d0 + d1), spring);
      curve = m.value;
      d_d0 = d_d1 = 0.5 * m.d_x;
      d_c = -m.d_x;
      d_b = m.d_b;
      d_k = m.d_k;
    }
    residuals[0] = w_ * (node[4] - curve);
    if (jacobians == nullptr) return true;
    if (jacobians[0] != nullptr) {
      double* j = jacobians[0];
      j[0] = -w_ * d_d0;
      j[1] = w_ * d_d0;
      j[2] = j[3] = 0.0;
      j[4] = w_;
    }
    if (jacobians[1] != nullptr) {
      double* j = jacobians[1];
      j[0] = -w_ * d_d1;
      j[1] = w_ * d_d1;
      j[2] = j[3] = j[4] = 0.0;
    }
    if (jacobians[2] != nullptr) {
      jacobians[2][0] = -w_ * d_c;
      jacobians[2][1] = -w_ * d_b;
      jacobians[2][2] = -w_ * d_k;
    }
    return true;
  }

 private:
  double w_;
  bool average_;
};

// Validates, initialises the nodes if needed and adds the prior/measurement/dynamics blocks;
// the tau_K increments carry weight tau_sqrt_weight (0: none). With a spring block and a
// first-order hold the dynamics carry the corner correction.
bool AddTrajectoryBlocks(const models::TwoMassTransmission& model, const BacklashSmootherData& data,
                         const BacklashSmootherProblemOptions& options, double tau_sqrt_weight,
                         BacklashSmootherVariables* variables, ceres::Problem* problem,
                         std::string* error, double* spring = nullptr) {
  CHECK(variables != nullptr && problem != nullptr) << "expected variables and a problem";
  CHECK_EQ(problem->NumResidualBlocks(), 0) << "expected an empty problem";
  std::string why;
  if (!options.IsValid(&why)) {
    if (error) *error = "backlash smoother options: " + why;
    return false;
  }
  if (!ValidateBacklashSmootherData(data, &why)) {
    if (error) *error = "backlash smoother data: " + why;
    return false;
  }
  const int n = static_cast<int>(data.input.size());
  const int l = static_cast<int>(data.measurements.cols());
  if (variables->num_samples != n || static_cast<int>(variables->values.size()) != 5 * n) {
    variables->num_samples = n;
    variables->values.assign(5 * n, 0.0);
    for (int k = 0; k < n; ++k) {
      double* node = variables->node(k);
      node[2] = data.measurements(k, 0);
      node[3] = l == 2 ? data.measurements(k, 1) : data.measurements(k, 0);
    }
  }
  for (int k = 0; k < n; ++k) problem->AddParameterBlock(variables->node(k), 5);
  problem->AddResidualBlock(
      CreateBacklashInitialCost(options, data.measurements.row(0).transpose()), nullptr,
      variables->node(0));
  const bool corners = spring != nullptr && options.tau_hold == TauHold::kFirstOrder;
  if (corners) problem->AddParameterBlock(spring, 3);
  for (int k = 0; k + 1 < n; ++k) {
    ceres::CostFunction* cost =
        MakeIntervalCost(model, options, data.sample_period_s, data.input(k),
                         data.measurements.row(k + 1).transpose(), tau_sqrt_weight, corners);
    if (corners) {
      problem->AddResidualBlock(cost, nullptr, variables->node(k), variables->node(k + 1), spring);
    } else {
      problem->AddResidualBlock(cost, nullptr, variables->node(k), variables->node(k + 1));
    }
  }
  return true;
}

double RandomWalkSqrtWeight(const BacklashSmootherProblemOptions& options, double h) {
  return 1.0 / std::sqrt(options.tau_noise_intensity * h);
}

}  // namespace

bool BacklashSmootherProblemOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  if (!state_noise_intensity.allFinite() || !(state_noise_intensity.array() >= 0.0).all()) {
    out << "Q_xx must be finite and >= 0";
  } else if (!state_noise_floor.allFinite() || !(state_noise_floor.array() > 0.0).all()) {
    out << "the Q_xx floor must be finite and > 0";
  } else if (!(tau_noise_intensity > 0.0) || !std::isfinite(tau_noise_intensity)) {
    out << "Q_pp must be > 0, got " << tau_noise_intensity;
  } else if (!(measurement_variance > 0.0) || !std::isfinite(measurement_variance)) {
    out << "R must be > 0, got " << measurement_variance;
  } else if (!prior_mean.allFinite()) {
    out << "the prior mean must be finite";
  } else if (!(prior_std.array() > 0.0).all() || prior_std.hasNaN()) {
    out << "prior standard deviations must be > 0 (+inf drops a component)";
  } else if (rk4_steps_per_sample < 1) {
    out << "rk4_steps_per_sample must be >= 1, got " << rk4_steps_per_sample;
  }
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

void BacklashSmootherVariables::Set(const Eigen::MatrixXd& states, const Eigen::VectorXd& tau) {
  CHECK_EQ(states.cols(), 4) << "expected 4 state columns, got " << states.cols();
  CHECK_EQ(states.rows(), tau.size()) << "expected as many tau values as state rows";
  num_samples = static_cast<int>(tau.size());
  values.resize(5 * num_samples);
  for (int k = 0; k < num_samples; ++k) {
    for (int j = 0; j < 4; ++j) values[5 * k + j] = states(k, j);
    values[5 * k + 4] = tau(k);
  }
}

Eigen::MatrixXd BacklashSmootherVariables::States() const {
  Eigen::MatrixXd states(num_samples, 4);
  for (int k = 0; k < num_samples; ++k) {
    for (int j = 0; j < 4; ++j) states(k, j) = values[5 * k + j];
  }
  return states;
}

Eigen::VectorXd BacklashSmootherVariables::Tau() const {
  Eigen::VectorXd tau(num_samples);
  for (int k = 0; k < num_samples; ++k) tau(k) = values[5 * k + 4];
  return tau;
}

bool ValidateBacklashSmootherData(const BacklashSmootherData& data, std::string* error) {
  std::ostringstream out;
  const long n = data.input.size();
  if (!(data.sample_period_s > 0.0) || !std::isfinite(data.sample_period_s)) {
    out << "sample period must be > 0, got " << data.sample_period_s;
  } else if (n < 2) {
    out << "need at least 2 samples, got " << n;
  } else if (data.measurements.rows() != n) {
    out << "expected " << n << " measurement rows (one per input sample), got "
        << data.measurements.rows();
  } else if (data.measurements.cols() != 1 && data.measurements.cols() != 2) {
    out << "expected 1 (x3) or 2 (x3, x4) measurement columns, got " << data.measurements.cols();
  } else if (!data.input.allFinite() || !data.measurements.allFinite()) {
    out << "input or measurements contain NaN or Inf";
  }
  if (out.str().empty()) return true;
  if (error) *error = out.str();
  return false;
}

ceres::CostFunction* CreateBacklashIntervalCost(const models::TwoMassTransmission& model,
                                                const BacklashSmootherProblemOptions& options,
                                                double sample_period_s, double input,
                                                const Eigen::VectorXd& next_measurement) {
  return MakeIntervalCost(model, options, sample_period_s, input, next_measurement,
                          RandomWalkSqrtWeight(options, sample_period_s));
}

ceres::CostFunction* CreateBacklashShapeIntervalCost(const models::TwoMassTransmission& model,
                                                     const BacklashSmootherProblemOptions& options,
                                                     double sample_period_s, double input,
                                                     const Eigen::VectorXd& next_measurement) {
  CHECK(options.tau_hold == TauHold::kFirstOrder)
      << "the shape problem's interval cost with the spring block is the first-order hold's";
  return MakeIntervalCost(model, options, sample_period_s, input, next_measurement, 0.0, true);
}

ceres::CostFunction* CreateBacklashInitialCost(const BacklashSmootherProblemOptions& options,
                                               const Eigen::VectorXd& first_measurement) {
  CHECK(first_measurement.size() == 1 || first_measurement.size() == 2)
      << "expected 1 or 2 measurements, got " << first_measurement.size();
  // 1/inf = 0 drops a component.
  const NodeVector w = options.prior_std.cwiseInverse();
  return new InitialCost(options.prior_mean, w, 1.0 / std::sqrt(options.measurement_variance),
                         first_measurement);
}

bool BuildBacklashSmootherProblem(const models::TwoMassTransmission& model,
                                  const BacklashSmootherData& data,
                                  const BacklashSmootherProblemOptions& options,
                                  BacklashSmootherVariables* variables, ceres::Problem* problem,
                                  std::string* error) {
  return AddTrajectoryBlocks(model, data, options,
                             RandomWalkSqrtWeight(options, data.sample_period_s), variables,
                             problem, error);
}

bool BacklashShapeOptions::IsValid(std::string* why) const {
  if (shape_residual_std_nm > 0.0 && std::isfinite(shape_residual_std_nm)) return true;
  if (why) {
    *why = "the shape residual std must be finite and > 0, got " +
           std::to_string(shape_residual_std_nm);
  }
  return false;
}

ceres::CostFunction* CreateBacklashShapeCost(double shape_residual_std_nm) {
  CHECK_GT(shape_residual_std_nm, 0.0) << "expected a positive shape residual std";
  return new NodeShapeCost(1.0 / shape_residual_std_nm);
}

ceres::CostFunction* CreateBacklashIntervalShapeCost(double shape_residual_std_nm,
                                                     ShapeCurvePoint point) {
  CHECK_GT(shape_residual_std_nm, 0.0) << "expected a positive shape residual std";
  CHECK(point != ShapeCurvePoint::kNode) << "expected an interval curve point";
  return new IntervalShapeCost(1.0 / shape_residual_std_nm,
                               point == ShapeCurvePoint::kIntervalAverage);
}

const char* TauHoldName(TauHold hold) { return hold == TauHold::kFirstOrder ? "first" : "zero"; }

bool ParseTauHold(const std::string& text, TauHold* hold, std::string* error) {
  for (TauHold candidate : {TauHold::kZeroOrder, TauHold::kFirstOrder}) {
    if (text == TauHoldName(candidate)) {
      *hold = candidate;
      return true;
    }
  }
  if (error) *error = "unknown hold '" + text + "' (zero, first)";
  return false;
}

const char* ShapeCurvePointName(ShapeCurvePoint point) {
  switch (point) {
    case ShapeCurvePoint::kNode:
      return "node";
    case ShapeCurvePoint::kIntervalMidpoint:
      return "midpoint";
    case ShapeCurvePoint::kIntervalAverage:
    default:
      return "average";
  }
}

bool ParseShapeCurvePoint(const std::string& text, ShapeCurvePoint* point, std::string* error) {
  for (ShapeCurvePoint candidate : {ShapeCurvePoint::kNode, ShapeCurvePoint::kIntervalMidpoint,
                                    ShapeCurvePoint::kIntervalAverage}) {
    if (text == ShapeCurvePointName(candidate)) {
      *point = candidate;
      return true;
    }
  }
  if (error) *error = "unknown curve point '" + text + "' (node, midpoint, average)";
  return false;
}

bool BuildBacklashShapeProblem(const models::TwoMassTransmission& model,
                               const BacklashSmootherData& data,
                               const BacklashSmootherProblemOptions& options,
                               const BacklashShapeOptions& shape_options,
                               BacklashSmootherVariables* variables, double* spring,
                               ceres::Problem* problem, std::string* error) {
  CHECK(spring != nullptr) << "expected the spring block [c, b, K]";
  std::string why;
  if (!shape_options.IsValid(&why)) {
    if (error) *error = "backlash shape options: " + why;
    return false;
  }
  if (!std::isfinite(spring[0]) || !std::isfinite(spring[1]) || !std::isfinite(spring[2])) {
    if (error) *error = "backlash shape problem: the initial [c, b, K] must be finite";
    return false;
  }
  if (!AddTrajectoryBlocks(model, data, options, 0.0, variables, problem, error, spring)) {
    return false;
  }
  problem->AddParameterBlock(spring, 3);
  if (shape_options.hold_backlash_at_zero) {
    spring[1] = 0.0;
    problem->SetManifold(spring, new ceres::SubsetManifold(3, {1}));
  } else {
    spring[1] = std::max(spring[1], 0.0);
    problem->SetParameterLowerBound(spring, 1, 0.0);
  }
  const int n = variables->num_samples;
  const double sigma = shape_options.shape_residual_std_nm;
  for (int k = 0; k < n; ++k) {
    // A first-order hold interpolates tau_K between the nodes: each node meets the curve at Δ_k.
    if (options.tau_hold == TauHold::kZeroOrder &&
        shape_options.curve_point != ShapeCurvePoint::kNode && k + 1 < n) {
      problem->AddResidualBlock(CreateBacklashIntervalShapeCost(sigma, shape_options.curve_point),
                                nullptr, variables->node(k), variables->node(k + 1), spring);
    } else {
      problem->AddResidualBlock(CreateBacklashShapeCost(sigma), nullptr, variables->node(k),
                                spring);
    }
  }
  return true;
}

}  // namespace dynid::problems

namespace dynid::problems::internal {

ceres::CostFunction* CreateBacklashShapeIntervalCostWithAutomaticDerivatives(
    const models::TwoMassTransmission& model, const BacklashSmootherProblemOptions& options,
    double sample_period_s, double input, const Eigen::VectorXd& next_measurement) {
  CHECK(options.tau_hold == TauHold::kFirstOrder)
      << "the shape problem's interval cost with the spring block is the first-order hold's";
  return MakeIntervalCost(model, options, sample_period_s, input, next_measurement, 0.0, true,
                          true);
}

}  // namespace dynid::problems::internal
