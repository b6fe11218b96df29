// models::TwoMassTransmission — a motor and an arm coupled by a transmission with backlash and a
// spring, the system of Hovland et al. (2002) eq. (1):
//
//   x1' = x3,  x2' = x4,
//   x3' = (u − D (x3 − x4) − tau_K(Δ) − tau_f(x3) − Kr x1) / m1,
//   x4' = (D (x3 − x4) + tau_K(Δ)) / m2,
//   tau_f = Cv x3 + Cc (2/pi) atan(alpha x3),          Δ = x1 − x2.
//
// x1, x2 motor and arm positions [rad], x3, x4 their velocities [rad/s], u the motor torque [Nm].
// tau_K(Δ) is the transmission torque [Nm]; three shapes (SpringShape):
//   kDeadZone        K (Δ − b/2) for Δ > b/2, K (Δ + b/2) for Δ < −b/2, 0 in between
//                    (total dead-zone width b, Hovland et al. (2002) Fig. 1 / Fig. 7);
//   kSmoothDeadZone  the dead zone with its two corners rounded over ±smoothing_rad
//                    (K/2 [(Δ−b/2) + sqrt((Δ−b/2)² + ε²) + (Δ+b/2) − sqrt((Δ+b/2)² + ε²)]);
//   kLinear          K Δ (no backlash; the "real axis" of Hovland et al. (2002) §7, K ≈ 67 Nm/rad).
// The paper prints pi/2 in tau_f; dynid uses 2/pi so that |tau_f| → Cc (as here).
//
// Two faces:
//  - the van de Molengraft MechanicalModel (models/mechanical_model.h): n = 2 (s = [x1, x2]),
//    m = 1 (u), p = 9 (theta = [m1, m2, D, Kr, Cv, Cc, alpha, b, K]), l = 2 (z = [x3, x4]);
//      r = [m1 a1 + D (v1 − v2) + tau_K + tau_f + Kr s1 − u;  m2 a2 − D (v1 − v2) − tau_K];
//    the shape and smoothing are fixed properties of the model object, not parameters.
//  - the estimator form used by the SAEKF and the batch smoother: tau_K is not computed but
//    given (an unknown, the augmented state p of Hovland et al. (2002) eq. 2): StateDerivative(x,
//    u, tau_K) with the Jacobians of Hovland et al. (2002) Table 1 (∂f/∂x, ∂f/∂p) in
//    StateJacobians.
//
// SimulateTransmission integrates the true system with the input held constant over each
// sample interval (zero-order hold, so estimators that hold u over the interval see exactly the
// same input) and AddVelocityNoise produces the measurements y = x3 + w or [x3 + w1, x4 + w2].
#ifndef DYNID_MODELS_TWO_MASS_TRANSMISSION_H_
#define DYNID_MODELS_TWO_MASS_TRANSMISSION_H_

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <string>

#include "dynid/models/mechanical_model.h"

namespace dynid::models {

enum class SpringShape { kDeadZone, kSmoothDeadZone, kLinear };

const char* SpringShapeName(SpringShape shape);
// "dead_zone", "smooth_dead_zone", "linear"; false with a message otherwise.
bool ParseSpringShape(const std::string& text, SpringShape* shape, std::string* error);

struct TwoMassTransmissionParameters {
  double motor_inertia_kgm2 = 0.0008;           // m1 > 0
  double arm_inertia_kgm2 = 0.001765;           // m2 > 0
  double damping_nms_per_rad = 0.01;            // D >= 0
  double position_gain_nm_per_rad = 0.0;        // Kr >= 0 (P-controller on x1)
  double viscous_friction_nms_per_rad = 0.01;   // Cv >= 0
  double coulomb_friction_nm = 0.27;            // Cc >= 0
  double friction_sharpness_s_per_rad = 100.0;  // alpha > 0
  double backlash_rad = 0.1;                    // b >= 0, total width of the dead zone
  double stiffness_nm_per_rad = 79.0;           // K >= 0
  SpringShape shape = SpringShape::kDeadZone;
  double smoothing_rad = 1e-3;  // ε > 0 (kSmoothDeadZone only)

  bool IsValid(std::string* why) const;
};

// Hovland et al. (2002) Simulation 1 (m1 = 0.006442, m2 = 0.023454, D = 0.01, Kr = 1, Cv = 0.2,
// Cc = 0, b = 0.2 rad, K = 37 Nm/rad) and Simulation 2 (m1 = 0.0008, m2 = 0.001765, D = 0.01,
// Kr = 0, Cv = 0.01, Cc = 0.27, alpha = 100, b = 0.1 rad, K = 79 Nm/rad).
TwoMassTransmissionParameters HovlandSimulation1Parameters();
TwoMassTransmissionParameters HovlandSimulation2Parameters();

class TwoMassTransmission : public MechanicalModelBase<2, 1, 9, 2> {
 public:
  static constexpr int kStateSize = 4;  // x = [x1, x2, x3, x4]
  using State = Eigen::Matrix<double, 4, 1>;

  TwoMassTransmission() = default;
  explicit TwoMassTransmission(const TwoMassTransmissionParameters& parameters);

  // tau_K(Δ) for backlash b and stiffness K in the given shape (ε for the smooth shape).
  template <class T>
  static T SpringTorque(const T& delta, const T& backlash, const T& stiffness, SpringShape shape,
                        double smoothing) {
    using std::sqrt;
    const T half = backlash * 0.5;
    switch (shape) {
      case SpringShape::kLinear:
        return stiffness * delta;
      case SpringShape::kSmoothDeadZone: {
        const T right = delta - half, left = delta + half;
        const double e2 = smoothing * smoothing;
        return stiffness * 0.5 * (right + sqrt(right * right + e2) + left - sqrt(left * left + e2));
      }
      case SpringShape::kDeadZone:
      default:
        if (delta > half) return stiffness * (delta - half);
        if (delta < -half) return stiffness * (delta + half);
        return T(0.0);
    }
  }

  // tau_f(x3) = Cv x3 + Cc (2/pi) atan(alpha x3).
  template <class T>
  static T FrictionTorque(const T& velocity, const T& viscous, const T& coulomb,
                          const T& sharpness) {
    using std::atan;
    return viscous * velocity + coulomb * (2.0 / M_PI) * atan(sharpness * velocity);
  }

  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    const T tau_k = SpringTorque(T(s[0] - s[1]), theta[7], theta[8], parameters_.shape,
                                 parameters_.smoothing_rad);
    const T tau_f = FrictionTorque(v[0], theta[4], theta[5], theta[6]);
    const T damper = theta[2] * (v[0] - v[1]);
    r[0] = theta[0] * a[0] + damper + tau_k + tau_f + theta[3] * s[0] - u[0];
    r[1] = theta[1] * a[1] - damper - tau_k;
  }

  template <class T>
  void Measurements(const T* /*s*/, const T* v, const T* /*a*/, const T* /*u*/, const T* /*theta*/,
                    double /*t*/, T* z) const {
    z[0] = v[0];
    z[1] = v[1];
  }

  // Estimator form: x' = f(x, u, tau_K) with tau_K given (Hovland et al. (2002) eq. 2 without
  // noise), using the model's own parameter values. x and xdot have 4 values.
  template <class T>
  void StateDerivative(const T* x, const T& u, const T& tau_k, T* xdot) const {
    const TwoMassTransmissionParameters& p = parameters_;
    const T damper = p.damping_nms_per_rad * (x[2] - x[3]);
    const T tau_f = FrictionTorque(x[2], T(p.viscous_friction_nms_per_rad),
                                   T(p.coulomb_friction_nm), T(p.friction_sharpness_s_per_rad));
    xdot[0] = x[2];
    xdot[1] = x[3];
    xdot[2] =
        (u - damper - tau_k - tau_f - p.position_gain_nm_per_rad * x[0]) / p.motor_inertia_kgm2;
    xdot[3] = (damper + tau_k) / p.arm_inertia_kgm2;
  }

  // ∂f/∂x (4×4) and ∂f/∂tau_K (4) of StateDerivative at x (analytic; tested against Jets).
  void StateJacobians(const State& x, Eigen::Matrix4d* J_f_x, Eigen::Vector4d* J_f_tau) const;

  // The true tau_K(x1 − x2) of this model.
  double TrueSpringTorque(double delta) const {
    return SpringTorque(delta, parameters_.backlash_rad, parameters_.stiffness_nm_per_rad,
                        parameters_.shape, parameters_.smoothing_rad);
  }

  ModelInfo Info() const;
  ParameterVector NominalParameters() const;
  const TwoMassTransmissionParameters& parameters() const { return parameters_; }

 private:
  TwoMassTransmissionParameters parameters_;
};

// A simulated record of the true system on the sample grid t_k = k ts (k = 0 … N−1).
struct TransmissionRecord {
  double sample_period_s = 0.0;
  Eigen::VectorXd time;           // N, s
  Eigen::VectorXd input;          // N, Nm; u_k held on [t_k, t_{k+1})
  Eigen::MatrixXd states;         // N × 4, [x1, x2, x3, x4]
  Eigen::VectorXd delta;          // N, x1 − x2 [rad]
  Eigen::VectorXd spring_torque;  // N, the true tau_K(Δ_k) [Nm]
};

// Integrates the true system from x0 with the zero-order-hold input samples `input` (N >= 1),
// classical RK4 with `substeps` steps per sample interval (the dead-zone corners are not
// located; use enough substeps, error O(h²) at each corner crossing).
TransmissionRecord SimulateTransmission(const TwoMassTransmission& model,
                                        const Eigen::VectorXd& input, double sample_period_s,
                                        const TwoMassTransmission::State& x0, int substeps);

// One RK4 step of length h of x' = f(x, u, tau_K) with u and tau_K constant (the transition map
// shared by the SAEKF prediction and the batch smoother's dynamics residual).
template <class T>
void TransmissionRk4Step(const TwoMassTransmission& model, const T* x, const T& u, const T& tau_k,
                         double h, T* x_next) {
  using State = Eigen::Matrix<T, 4, 1>;
  const auto f = [&](double, const State& s) {
    State dx;
    model.StateDerivative(s.data(), u, tau_k, dx.data());
    return dx;
  };
  const State x0 = Eigen::Map<const State>(x);
  Eigen::Map<State> next(x_next);
  next = Rk4Step(f, 0.0, h, x0);
}

// One RK4 step of length h with u constant and tau_K linear in time from tau_start (at the start
// of the step) to tau_end (at its end): the stages take tau_start, the mean of the two, tau_end
// (a first-order hold of tau_K; the map of the smoother's first-order transcription).
template <class T>
void TransmissionRk4StepLinearTau(const TwoMassTransmission& model, const T* x, const T& u,
                                  const T& tau_start, const T& tau_end, double h, T* x_next) {
  using State = Eigen::Matrix<T, 4, 1>;
  const T tau_mid = (tau_start + tau_end) * 0.5;
  const State x0 = Eigen::Map<const State>(x);
  State k1, k2, k3, k4;
  model.StateDerivative(x0.data(), u, tau_start, k1.data());
  const State x1 = x0 + k1 * (0.5 * h);
  model.StateDerivative(x1.data(), u, tau_mid, k2.data());
  const State x2 = x0 + k2 * (0.5 * h);
  model.StateDerivative(x2.data(), u, tau_mid, k3.data());
  const State x3 = x0 + k3 * h;
  model.StateDerivative(x3.data(), u, tau_end, k4.data());
  Eigen::Map<State> next(x_next);
  next = x0 + (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (h / 6.0);
}

// Measured velocities: column 0 = x3 + w1, and (measure_arm_velocity) column 1 = x4 + w2, with
// w ~ N(0, variance) independent, from a fixed-seed generator. Returns N × 1 or N × 2.
Eigen::MatrixXd AddVelocityNoise(const TransmissionRecord& record, bool measure_arm_velocity,
                                 double variance, std::uint64_t seed);

// Velocities as an incremental encoder on each shaft gives them: the positions x1 (and, with
// measure_arm_velocity, x2) read to the nearest multiple of q = 2 pi / counts_per_revolution
// (> 0) and differenced over one sample, v_k = (Q(x_k) − Q(x_{k−1})) / ts for k >= 1, v_0 = v_1
// (N >= 2). Against the true velocity this adds the quantisation error (at most q / ts) and the
// half-sample lag of the backward difference. Returns N × 1 ([x1']) or N × 2 ([x1', x2']).
Eigen::MatrixXd EncoderVelocities(const TransmissionRecord& record, bool measure_arm_velocity,
                                  int counts_per_revolution);

}  // namespace dynid::models

#endif  // DYNID_MODELS_TWO_MASS_TRANSMISSION_H_
