// models::FrictionMass — a mass with dry friction (van de Molengraft (1990) §4.4):
//
//   m a + w = f,   w = w_d sign(v) when v != 0; w = f when v = 0 and a = 0 (stick);
//                  w = w_s sign(f) when v = 0 and a != 0 (break-away).
//
// Two faces:
//  - FrictionMass: the smooth van de Molengraft model used by the estimators. sign(v) is replaced
//    by v / sqrt(v² + eps²) (eps = smoothing_velocity_m_per_s, the sharpness option; smaller is
//    sharper and stiffer). n = 1 (s [m]), m = 1 (f [N]), p = 2 (theta = [mass_kg, friction_n]),
//    l = 3 (z = [position, acceleration, force]).
//      r = theta0 a + theta1 sign_eps(v) − f,   z = [s, a, f].
//  - SimulateStickSlip: the non-smooth "true system" with stick and slip, for generating data.
#ifndef DYNID_MODELS_FRICTION_MASS_H_
#define DYNID_MODELS_FRICTION_MASS_H_

#include <cmath>

#include <Eigen/Core>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"

namespace dynid::models {

class FrictionMass : public MechanicalModelBase<1, 1, 2, 3> {
 public:
  struct Parameters {
    double mass_kg = 1.0;                     // > 0
    double friction_n = 2.0;                  // dynamic (Coulomb) friction w_d, >= 0
    double smoothing_velocity_m_per_s = 0.01;  // eps of the smooth sign, > 0
  };

  FrictionMass() = default;
  explicit FrictionMass(const Parameters& parameters);

  template <class T>
  void EquationsOfMotion(const T* /*s*/, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    using std::sqrt;
    const double eps = parameters_.smoothing_velocity_m_per_s;
    r[0] = theta[0] * a[0] + theta[1] * v[0] / sqrt(v[0] * v[0] + eps * eps) - u[0];
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

struct StickSlipParameters {
  double mass_kg = 1.0;             // > 0
  double static_friction_n = 2.0;   // w_s >= w_d
  double dynamic_friction_n = 2.0;  // w_d >= 0
};

// Simulates the stick–slip mass from (s0, v0) under the force f(t) with RK4 steps of at most
// `max_step_s`, locating each velocity zero crossing inside a step (secant on v, O(step²)
// accurate) and applying the stick/break-away rule there. Fills `trajectory` (measurements
// z = [s, a, f] as FrictionMass::Measurements) and, if non-null, the friction force w at each
// output time (N). At a sample with v = 0 and the mass stuck, a = 0 and w = f.
void SimulateStickSlip(const StickSlipParameters& parameters, const InputFunction& force,
                       const Eigen::VectorXd& times, double s0, double v0, double max_step_s,
                       Trajectory* trajectory, Eigen::VectorXd* friction_force);

extern template void LinearizeModelInto<FrictionMass>(
    const FrictionMass&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models

#endif  // DYNID_MODELS_FRICTION_MASS_H_
