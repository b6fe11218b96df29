// models::RtManipulatorRigid / RtManipulatorFlexible — the rotation–translation manipulator of
// van de Molengraft (1990) §3.7 and App. D.
//
// A link of mass ml and length l slides radially (translation r, force F) in a joint that rotates
// in the horizontal plane (rotation phi, torque T, joint inertia J); the payload mp sits at the
// link tip, at radius r. theta = [payload_mass_kg] is the unknown; ml, l, J (and the joint
// stiffness k of the flexible model) are known constants of RtManipulatorParameters.
//
// Rigid (App. D1): n = 2 (s = [r, phi]), m = 2 (u = [F, T]), p = 1, l = 6:
//   M = diag(ml + mp, (ml + mp) r² − ml r l + ml l²/3 + J)
//   h = [−((ml + mp) r − ml l/2) phi'²,  2((ml + mp) r − ml l/2) r' phi'],   H = −I
// Flexible "true system" (App. D2): n = 3 (s = [r, phi, eta]), eta the link rotation, phi the
// joint (motor) rotation, spring k (phi − eta); J acts on phi only:
//   (ml + mp) r'' − ((ml + mp) r − ml l/2) eta'² − F = 0
//   J phi'' + k (phi − eta) − T = 0
//   I_link(r) eta'' + 2((ml + mp) r − ml l/2) r' eta' − k (phi − eta) = 0,
//   I_link(r) = (ml + mp) r² − ml r l + ml l²/3.
// Measurements (App. D4, unit gear ratios and motor constants), l = 6:
//   z = [r, phi, r'' − r w², r w' + 2 r' w, F, T]   with w = phi' (rigid) or eta' (flexible).
#ifndef DYNID_MODELS_RT_MANIPULATOR_H_
#define DYNID_MODELS_RT_MANIPULATOR_H_

#include <Eigen/Core>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"

namespace dynid::models {

struct RtManipulatorParameters {
  double link_mass_kg = 10.0;                  // ml > 0
  double link_length_m = 1.0;                  // l > 0
  double joint_inertia_kg_m2 = 5.0;            // J > 0
  double payload_mass_kg = 2.0;                // mp >= 0 (the nominal theta)
  double joint_stiffness_nm_per_rad = 2000.0;  // k > 0 (flexible model only)
};

class RtManipulatorRigid : public MechanicalModelBase<2, 2, 1, 6> {
 public:
  RtManipulatorRigid() = default;
  explicit RtManipulatorRigid(const RtManipulatorParameters& parameters)
      : parameters_(parameters) {}

  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    const double ml = parameters_.link_mass_kg, l = parameters_.link_length_m;
    const T total = ml + theta[0];
    const T moment = total * s[0] - 0.5 * ml * l;  // first moment of link + payload about joint
    const T inertia = total * s[0] * s[0] - ml * s[0] * l + ml * l * l / 3.0 +
                      parameters_.joint_inertia_kg_m2;
    r[0] = total * a[0] - moment * v[1] * v[1] - u[0];
    r[1] = inertia * a[1] + 2.0 * moment * v[0] * v[1] - u[1];
  }

  template <class T>
  void Measurements(const T* s, const T* v, const T* a, const T* u, const T* /*theta*/,
                    double /*t*/, T* z) const {
    z[0] = s[0];
    z[1] = s[1];
    z[2] = a[0] - s[0] * v[1] * v[1];
    z[3] = s[0] * a[1] + 2.0 * v[0] * v[1];
    z[4] = u[0];
    z[5] = u[1];
  }

  ModelInfo Info() const;
  ParameterVector NominalParameters() const;
  const RtManipulatorParameters& parameters() const { return parameters_; }

 private:
  RtManipulatorParameters parameters_;
};

class RtManipulatorFlexible : public MechanicalModelBase<3, 2, 1, 6> {
 public:
  RtManipulatorFlexible() = default;
  explicit RtManipulatorFlexible(const RtManipulatorParameters& parameters)
      : parameters_(parameters) {}

  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    const double ml = parameters_.link_mass_kg, l = parameters_.link_length_m;
    const double k = parameters_.joint_stiffness_nm_per_rad;
    const T total = ml + theta[0];
    const T moment = total * s[0] - 0.5 * ml * l;
    const T link_inertia = total * s[0] * s[0] - ml * s[0] * l + ml * l * l / 3.0;
    const T spring = k * (s[1] - s[2]);
    r[0] = total * a[0] - moment * v[2] * v[2] - u[0];
    r[1] = parameters_.joint_inertia_kg_m2 * a[1] + spring - u[1];
    r[2] = link_inertia * a[2] + 2.0 * moment * v[0] * v[2] - spring;
  }

  template <class T>
  void Measurements(const T* s, const T* v, const T* a, const T* u, const T* /*theta*/,
                    double /*t*/, T* z) const {
    z[0] = s[0];
    z[1] = s[1];
    z[2] = a[0] - s[0] * v[2] * v[2];
    z[3] = s[0] * a[2] + 2.0 * v[0] * v[2];
    z[4] = u[0];
    z[5] = u[1];
  }

  ModelInfo Info() const;
  ParameterVector NominalParameters() const;
  const RtManipulatorParameters& parameters() const { return parameters_; }

 private:
  RtManipulatorParameters parameters_;
};

// The reference motion of App. D3: lambda(t) = t³(6t² − 15t + 10) on [0, 1] (held at 0 before
// and 1 after), r = 0.25 sqrt(10 lambda² − 2 lambda + 1) m,
// phi = atan(0.75 lambda / (0.25 (1 − lambda) + epsilon)) rad — the straight line from
// (x, y) = (0.25, 0) to (0, 0.75) m, at rest at both ends. Derivatives are analytic.
struct RtReference {
  Eigen::Vector2d position;      // [r (m), phi (rad)]
  Eigen::Vector2d velocity;      // [m/s, rad/s]
  Eigen::Vector2d acceleration;  // [m/s², rad/s²]
};
RtReference RtManipulatorReference(double t, double epsilon = 1e-6);

// Open-loop inputs [F (N), T (N m)] along the reference from the rigid inverse dynamics
// u = M a + h (H = −I) with the true payload of `parameters`.
Eigen::Vector2d RtManipulatorReferenceInputs(const RtManipulatorParameters& parameters, double t,
                                             double epsilon = 1e-6);

extern template void LinearizeModelInto<RtManipulatorRigid>(
    const RtManipulatorRigid&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);
extern template void LinearizeModelInto<RtManipulatorFlexible>(
    const RtManipulatorFlexible&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models

#endif  // DYNID_MODELS_RT_MANIPULATOR_H_
