// models::UnknownForceMass — a mass of known value driven by a measured force f and by an unknown
// force e that the estimators treat as a (time-varying) parameter (van de Molengraft (1990) §4.4).
//
// This is the filter model of the friction study: m_f a + e = f, with e the friction force (or
// anything the model lacks, e.g. the inertia error (m_true − m_f) a when the mass is wrong).
// Letting theta = [e] vary in time (process weight W_theta, or the sliding-surface filter's
// xi_theta) turns "estimate a friction law" into "track a force", which needs no friction model.
//
//   n = 1  s: position [m]
//   m = 1  u = f: measured force [N]
//   p = 1  theta = [e]: unknown force [N] (friction when m_f is right)
//   l = 3  z = [position, acceleration, force]
//
//   r = m_f a + theta0 − u                  (M = m_f, h = theta0, H = −1)
//   z = [s, a, u]                           (g = [s, 0, 0], G = e2, R = e3)
//
// The identification model is linear in (x, p̄) (C and F constant), so the sliding-surface and
// the linear optimal filters are exact on it apart from time discretisation.
#ifndef DYNID_MODELS_UNKNOWN_FORCE_MASS_H_
#define DYNID_MODELS_UNKNOWN_FORCE_MASS_H_

#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"

namespace dynid::models {

class UnknownForceMass : public MechanicalModelBase<1, 1, 1, 3> {
 public:
  struct Parameters {
    double mass_kg = 1.0;          // m_f, the model's (assumed) mass, > 0
    double nominal_force_n = 0.0;  // NominalParameters() value of e
  };

  UnknownForceMass() = default;
  explicit UnknownForceMass(const Parameters& parameters);

  template <class T>
  void EquationsOfMotion(const T* /*s*/, const T* /*v*/, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    r[0] = parameters_.mass_kg * a[0] + theta[0] - u[0];
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

extern template void LinearizeModelInto<UnknownForceMass>(
    const UnknownForceMass&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models

#endif  // DYNID_MODELS_UNKNOWN_FORCE_MASS_H_
