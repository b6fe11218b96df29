// models::XyTableRigid / XyTableFlexible — the belt-driven xy-table of van de Molengraft (1990)
// ch. 5 and App. E, as identification models in the van de Molengraft form
// (models/mechanical_model.h).
//
// Geometry (all lengths in m, the small-angle kinematics below are the model's definition):
//   Two parallel slideways along x, a distance d apart (at y = 0 and y = d). On each runs a slide
//   of mass ms. Motor 1 (angle phi1, inertia J1, dry friction torque w1, torque constant K1)
//   drives the slide at y = 0 by a belt over a wheel of radius r: x_A = r phi1. The same motor
//   drives, through a torsion-flexible spindle (stiffness k; its far end turns by phi3), the belt
//   of the slide at y = d: x_B = r phi3. A transverse slideway (mass mt, uniform, length l, from
//   y = 0 to y = l, so it overhangs the second slide when l > d) rests on both slides; its slope
//   is c = (x_B − x_A)/d = r (phi3 − phi1)/d (small). The end-effector (mass me) runs on it,
//   belt-driven by motor 2 (phi2, J2, w2, K2): its distance from the first slideway is
//   y_e = r phi2 and
//       x_e = x_A + beta (x_B − x_A),   beta = y_e / d = r phi2 / d,   y_e = r phi2.
//   Encoder zeros are chosen so that x = r phi1, y = r phi2 at rest without deformation.
//
// Flexible model: n = 3 (s = [phi1, phi2, phi3]), m = 2 (u = [i1, i2], A),
// p = 5 (theta = [J1 kg m², J2 kg m², w1 N m, w2 N m, k N m/rad]), l = 8.
// Lagrange derivation. Kinetic energy (the transverse slideway's points at distance eta from the
// first slideway move with x' = (1 − eta/d) x_A' + (eta/d) x_B'; integrated over eta ∈ [0, l]):
//   T = ½ J1 w1² + ½ J2 w2² + ½ ms r² (w1² + w3²)
//     + ½ mt r² (a11 w1² + 2 a13 w1 w3 + a33 w3²) + ½ me (X² + r² w2²),
//   a11 = 1 − l/d + l²/(3d²),  a13 = l/(2d) − l²/(3d²),  a33 = l²/(3d²)   (a11 + 2a13 + a33 = 1),
//   X = x_e' = r [(1 − beta) w1 + beta w3 + c w2]      (w_i = phi_i').
// Potential V = ½ k (phi1 − phi3)². Generalised forces: K1 i1 − w1 sgn(w1) on phi1,
// K2 i2 − w2 sgn(w2) on phi2 (friction sits in the motors). Since
//   X' = x_e'' = r [(1 − beta) a1 + beta a3 + c a2] + 2 r² w2 (w3 − w1)/d
// and d/dt(∂T_e/∂w_i) − ∂T_e/∂phi_i collapses to me X' ∂X/∂w_i (the phi-derivatives of X cancel
// the time-derivatives of its coefficients), the equations of motion r = M a + h + H u are
//   r1 = (J1 + r²(ms + mt a11)) a1 + r² mt a13 a3 + me r (1 − beta) X' + k (phi1 − phi3)
//        + w1 sgn(w1) − K1 i1
//   r2 = (J2 + me r²) a2 + me r c X' + w2 sgn(w2) − K2 i2
//   r3 = r² mt a13 a1 + r² (ms + mt a33) a3 + me r beta X' − k (phi1 − phi3)
// i.e. M = diag(J1 + r²(ms + mt a11), J2 + me r², r²(ms + mt a33)) + off-diagonal mt a13 r² (1,3)
// plus me r² vvᵀ-type terms with v = [1 − beta, c, beta] (M_ij += me r² v_i v_j, M22 += me r²),
// h = me r v · 2 r² w2 (w3 − w1)/d + spring + friction, H = −diag(K1, K2) on rows 1–2.
// The test (tests/models/xy_table_test.cc) checks this against an independent Lagrangian built
// by automatic differentiation of the mass matrix (XyTableLagrangian below).
//
// Rigid model (eq. 5.4): phi3 = phi1 (c = 0), n = 2 (s = [phi1, phi2]), p = 4 (theta without k):
//   r1 = ((2 ms + mt + me) r² + J1) a1 + w1 sgn(w1) − K1 i1
//   r2 = (me r² + J2) a2 + w2 sgn(w2) − K2 i2.
//
// Measurements (l = 8, van de Molengraft (1990) eq. 5.3):
//   z = [x_e, y_e, a_along, a_orth, phi1, phi2, i1, i2]
// with the end-effector acceleration (X', r a2) projected on the transverse slideway's direction
// (c, 1)/sqrt(1 + c²) (a_along) and on its normal (1, −c)/sqrt(1 + c²) (a_orth, ≈ x-direction).
// Rigid: x_e = r phi1, a_along = r a2, a_orth = r a1.
//
// Dry friction: sgn(w) is replaced by the smooth w / sqrt(w² + eps²) with
// eps = friction_smoothing_rad_per_s (the sharpness option). Bias: for |w| ≫ eps the smooth
// friction is w_i (1 − eps²/(2w²) + …); near reversals (|w| ≲ 3 eps) it under-states |friction|,
// so the estimated w_i absorbs the average defect over the time spent there. With the default
// eps = 0.05 rad/s and reversal accelerations of ~500 rad/s² that time is ~0.3 ms per reversal
// (study: --friction_smoothing to vary it).
#ifndef DYNID_MODELS_XY_TABLE_H_
#define DYNID_MODELS_XY_TABLE_H_

#include <cmath>
#include <string>

#include <Eigen/Core>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"

namespace dynid::models {

// Known constants (local identification, van de Molengraft (1990) eq. E.4) and the smoothing
// option.
struct XyTableParameters {
  double slide_mass_kg = 2.3;              // ms > 0, each of the two slides
  double transverse_mass_kg = 8.5;         // mt > 0, transverse slideway
  double effector_mass_kg = 2.3;           // me > 0
  double transverse_length_m = 1.25;       // l > 0
  double slideway_distance_m = 1.0;        // d > 0
  double wheel_radius_m = 0.01;            // r > 0, all belt wheels
  double torque_constant1_nm_per_a = 0.258;  // K1 > 0
  double torque_constant2_nm_per_a = 0.056;  // K2 > 0
  double friction_smoothing_rad_per_s = 0.05;  // eps of the smooth sign, > 0
  // Nominal theta (used for simulation and as the "true" values of NominalParameters): the
  // thesis's estimates with acceleration measurements (van de Molengraft (1990)).
  double inertia1_kg_m2 = 2.099e-3;
  double inertia2_kg_m2 = 1.437e-4;
  double friction1_nm = 0.461;
  double friction2_nm = 0.151;
  double spindle_stiffness_nm_per_rad = 0.245;

  bool IsValid(std::string* why) const;
  // Coefficients of the transverse slideway's kinetic energy (header comment).
  double A11() const;
  double A13() const;
  double A33() const;
};

// Smooth sign w / sqrt(w² + eps²).
template <class T>
T XySmoothSign(const T& w, double eps) {
  using std::sqrt;
  return w / sqrt(w * w + eps * eps);
}

class XyTableRigid : public MechanicalModelBase<2, 2, 4, 8> {
 public:
  XyTableRigid() = default;
  explicit XyTableRigid(const XyTableParameters& parameters) : parameters_(parameters) {}

  template <class T>
  void EquationsOfMotion(const T* /*s*/, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    const XyTableParameters& p = parameters_;
    const double rr = p.wheel_radius_m * p.wheel_radius_m;
    const double eps = p.friction_smoothing_rad_per_s;
    const double total = 2.0 * p.slide_mass_kg + p.transverse_mass_kg + p.effector_mass_kg;
    r[0] = (total * rr + theta[0]) * a[0] + theta[2] * XySmoothSign(v[0], eps) -
           p.torque_constant1_nm_per_a * u[0];
    r[1] = (p.effector_mass_kg * rr + theta[1]) * a[1] + theta[3] * XySmoothSign(v[1], eps) -
           p.torque_constant2_nm_per_a * u[1];
  }

  template <class T>
  void Measurements(const T* s, const T* /*v*/, const T* a, const T* u, const T* /*theta*/,
                    double /*t*/, T* z) const {
    const double radius = parameters_.wheel_radius_m;
    z[0] = radius * s[0];
    z[1] = radius * s[1];
    z[2] = radius * a[1];
    z[3] = radius * a[0];
    z[4] = s[0];
    z[5] = s[1];
    z[6] = u[0];
    z[7] = u[1];
  }

  ModelInfo Info() const;
  ParameterVector NominalParameters() const;
  const XyTableParameters& parameters() const { return parameters_; }

 private:
  XyTableParameters parameters_;
};

class XyTableFlexible : public MechanicalModelBase<3, 2, 5, 8> {
 public:
  XyTableFlexible() = default;
  explicit XyTableFlexible(const XyTableParameters& parameters) : parameters_(parameters) {}

  // End-effector x acceleration X' = r[(1 − beta) a1 + beta a3 + c a2] + 2 r² w2 (w3 − w1)/d.
  template <class T>
  T EffectorAccelerationX(const T* s, const T* v, const T* a) const {
    const double radius = parameters_.wheel_radius_m, d = parameters_.slideway_distance_m;
    const T beta = radius * s[1] / d;
    const T slope = radius * (s[2] - s[0]) / d;
    return radius * ((1.0 - beta) * a[0] + beta * a[2] + slope * a[1]) +
           2.0 * radius * radius * v[1] * (v[2] - v[0]) / d;
  }

  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    const XyTableParameters& p = parameters_;
    const double radius = p.wheel_radius_m, rr = radius * radius, d = p.slideway_distance_m;
    const double eps = p.friction_smoothing_rad_per_s;
    const double ms = p.slide_mass_kg, mt = p.transverse_mass_kg, me = p.effector_mass_kg;
    const T beta = radius * s[1] / d;
    const T slope = radius * (s[2] - s[0]) / d;
    const T x_acc = EffectorAccelerationX(s, v, a);
    const T spring = theta[4] * (s[0] - s[2]);
    r[0] = (theta[0] + rr * (ms + mt * p.A11())) * a[0] + rr * mt * p.A13() * a[2] +
           me * radius * (1.0 - beta) * x_acc + spring + theta[2] * XySmoothSign(v[0], eps) -
           p.torque_constant1_nm_per_a * u[0];
    r[1] = (theta[1] + me * rr) * a[1] + me * radius * slope * x_acc +
           theta[3] * XySmoothSign(v[1], eps) - p.torque_constant2_nm_per_a * u[1];
    r[2] = rr * mt * p.A13() * a[0] + rr * (ms + mt * p.A33()) * a[2] +
           me * radius * beta * x_acc - spring;
  }

  template <class T>
  void Measurements(const T* s, const T* v, const T* a, const T* u, const T* /*theta*/,
                    double /*t*/, T* z) const {
    using std::sqrt;
    const double radius = parameters_.wheel_radius_m, d = parameters_.slideway_distance_m;
    const T beta = radius * s[1] / d;
    const T slope = radius * (s[2] - s[0]) / d;
    const T x_acc = EffectorAccelerationX(s, v, a);
    const T y_acc = radius * a[1];
    const T norm = sqrt(1.0 + slope * slope);
    z[0] = radius * s[0] + beta * radius * (s[2] - s[0]);
    z[1] = radius * s[1];
    z[2] = (slope * x_acc + y_acc) / norm;
    z[3] = (x_acc - slope * y_acc) / norm;
    z[4] = s[0];
    z[5] = s[1];
    z[6] = u[0];
    z[7] = u[1];
  }

  ModelInfo Info() const;
  ParameterVector NominalParameters() const;
  const XyTableParameters& parameters() const { return parameters_; }

 private:
  XyTableParameters parameters_;
};

// An independent Lagrangian of the same geometry with optional belt pre-stress springs under the
// two slides (the "true system" of experiments/xy_table_study/xy_table_simulator.h): generalised
// coordinates q = [phi1, phi2, phi3] (with_belt_springs = false) or [phi1, phi2, phi3, uA, uB]
// (slide displacements relative to their belts, m): x_A = r phi1 + uA, x_B = r phi3 + uB. The mass
// matrix is assembled from the velocity Jacobians of the bodies (motors, slides, transverse
// slideway, end-effector), the Coriolis/centrifugal column from its derivatives by automatic
// differentiation (c_i = Σ_jk (∂M_ij/∂q_k − ½ ∂M_jk/∂q_i) v_j v_k).
class XyTableLagrangian {
 public:
  // `spindle_end_inertia_kg_m2` (>= 0) adds a rotor inertia J3 on phi3 (the far belt wheel);
  // with belt springs it must be positive, since otherwise phi3 carries no inertia of its own
  // (x_B = r phi3 + uB) and M is singular.
  XyTableLagrangian(const XyTableParameters& parameters, bool with_belt_springs,
                    double spindle_end_inertia_kg_m2 = 0.0)
      : parameters_(parameters), size_(with_belt_springs ? 5 : 3),
        spindle_end_inertia_(spindle_end_inertia_kg_m2) {}
  int size() const { return size_; }
  // M(q) (size × size) with inertias J1, J2.
  Eigen::MatrixXd MassMatrix(const Eigen::VectorXd& q, double J1, double J2) const;
  // Coriolis/centrifugal forces c(q, v) (size).
  Eigen::VectorXd Coriolis(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double J1,
                           double J2) const;
  // End-effector position [x_e, y_e] and acceleration [x_e'', y_e''] from q, v, a.
  Eigen::Vector2d EffectorPosition(const Eigen::VectorXd& q) const;
  Eigen::Vector2d EffectorAcceleration(const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                       const Eigen::VectorXd& a) const;

 private:
  XyTableParameters parameters_;
  int size_;
  double spindle_end_inertia_;
};

extern template void LinearizeModelInto<XyTableRigid>(
    const XyTableRigid&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);
extern template void LinearizeModelInto<XyTableFlexible>(
    const XyTableFlexible&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models

#endif  // DYNID_MODELS_XY_TABLE_H_
