// models::MassSpringDamper — a linear 1-DOF mass–spring–damper in the van de Molengraft form,
// the reference model for cross-checks: with theta held fixed its identification model
// is linear, so the weighted-residual transcriptions, the Riccati sweep and a Kalman smoother
// must agree exactly.
//
//   n = 1  s: position [m]
//   m = 1  u: force [N]
//   p = 3  theta = [mass_kg, damping_ns_per_m, stiffness_n_per_m]
//   l = 3  z = [position, acceleration, force]
//
//   r = theta0 a + theta1 v + theta2 s − u                   (H = −1)
//   z = [s, a, u]                                            (g = [s, 0, 0], G = e2, R = e3)
#ifndef DYNID_MODELS_MASS_SPRING_DAMPER_H_
#define DYNID_MODELS_MASS_SPRING_DAMPER_H_

#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"

namespace dynid::models {

class MassSpringDamper : public MechanicalModelBase<1, 1, 3, 3> {
 public:
  struct Parameters {
    double mass_kg = 1.0;             // > 0
    double damping_ns_per_m = 0.4;    // >= 0
    double stiffness_n_per_m = 40.0;  // >= 0
  };

  MassSpringDamper() = default;
  explicit MassSpringDamper(const Parameters& parameters) : parameters_(parameters) {}

  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    r[0] = theta[0] * a[0] + theta[1] * v[0] + theta[2] * s[0] - u[0];
  }

  template <class T>
  void Measurements(const T* s, const T* /*v*/, const T* a, const T* u, const T* /*theta*/,
                    double /*t*/, T* z) const {
    z[0] = s[0];
    z[1] = a[0];
    z[2] = u[0];
  }

  ModelInfo Info() const;
  ParameterVector NominalParameters() const;
  const Parameters& parameters() const { return parameters_; }

 private:
  Parameters parameters_;
};

extern template void LinearizeModelInto<MassSpringDamper>(
    const MassSpringDamper&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models

#endif  // DYNID_MODELS_MASS_SPRING_DAMPER_H_
