// models::Scara3Model — the 3-DOF RRP SCARA of models/scara3 in the mechanical-model interface
// (models/mechanical_model.h), so the generic recursive estimators (solvers/
// mechanical_state_space.h) can filter its joint state together with its four base parameters.
//
// Positions s = [q1, q2, d3], inputs u = [tau1, tau2, F3], parameters theta = [IZZ1, IZZ2, mr,
// m3], measurements z = [q1, q1', q2, q2', d3, d3'] (the six joint positions and velocities, in
// the order of the augmented state x1..x6 of the SCARA EKF, Urrea & Agramonte (2022) §3). Equations
// of motion r = Phi(s, v, a) theta − u with the closed-form regressor of models/scara3.h:
//   r1 = IZZ1 a1 + IZZ2 a2 + mr((2 a1 + a2) cos q2 − (v2² + 2 v1 v2) sin q2) − tau1
//   r2 = IZZ2 (a1 + a2) + mr (a1 cos q2 + v1² sin q2) − tau2
//   r3 = m3 (a3 − g) − F3
#ifndef DYNID_MODELS_SCARA3_MODEL_H_
#define DYNID_MODELS_SCARA3_MODEL_H_

#include <cmath>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"
#include "dynid/models/scara3.h"

namespace dynid::models {

class Scara3Model : public MechanicalModelBase<3, 3, 4, 6> {
 public:
  Scara3Model() = default;
  explicit Scara3Model(const Scara3Parameters& nominal, double gravity = 9.81)
      : nominal_(nominal), gravity_(gravity) {}

  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    using std::cos;
    using std::sin;
    const T c2 = cos(s[1]);
    const T s2 = sin(s[1]);
    r[0] = theta[0] * a[0] + theta[1] * a[1] +
           theta[2] * ((2.0 * a[0] + a[1]) * c2 - (v[1] * v[1] + 2.0 * v[0] * v[1]) * s2) - u[0];
    r[1] = theta[1] * (a[0] + a[1]) + theta[2] * (a[0] * c2 + v[0] * v[0] * s2) - u[1];
    r[2] = theta[3] * (a[2] - gravity_) - u[2];
  }

  template <class T>
  void Measurements(const T* s, const T* v, const T* /*a*/, const T* /*u*/, const T* /*theta*/,
                    double /*t*/, T* z) const {
    for (int j = 0; j < 3; ++j) {
      z[2 * j] = s[j];
      z[2 * j + 1] = v[j];
    }
  }

  ModelInfo Info() const;
  ParameterVector NominalParameters() const { return nominal_.AsVector(); }
  double gravity() const { return gravity_; }

 private:
  Scara3Parameters nominal_ = Scara3BaseParametersFromLinks();
  double gravity_ = 9.81;
};

// The same SCARA with its joint torques measured as well: z = [q1, q1', q2, q2', d3, d3', tau1,
// tau2, F3] (l = 9). The weighted-residual smoother (problems/weighted_residual_problem.h) treats
// u as an unknown input, so the torque record enters through these measurements.
class Scara3TorqueModel : public MechanicalModelBase<3, 3, 4, 9> {
 public:
  Scara3TorqueModel() = default;
  explicit Scara3TorqueModel(const Scara3Model& base) : base_(base) {}

  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double t, T* r) const {
    base_.EquationsOfMotion(s, v, a, u, theta, t, r);
  }

  template <class T>
  void Measurements(const T* s, const T* v, const T* a, const T* u, const T* theta, double t,
                    T* z) const {
    base_.Measurements(s, v, a, u, theta, t, z);
    for (int j = 0; j < 3; ++j) z[6 + j] = u[j];
  }

  ModelInfo Info() const;
  ParameterVector NominalParameters() const { return base_.NominalParameters(); }

 private:
  Scara3Model base_;
};

extern template void LinearizeModelInto<Scara3Model>(
    const Scara3Model&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models

#endif  // DYNID_MODELS_SCARA3_MODEL_H_
