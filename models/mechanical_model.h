// models::MechanicalModel — the van de Molengraft form of a mechanical system (van de
// Molengraft (1990) eqs. 2.1 and 2.5).
//
// A model has n positions s, n velocities v = s', n accelerations a = v', m inputs u and
// p constant parameters theta, and is described by two scalar-templated functions:
//
//   equations of motion   r = M(s, theta, t) a + h(s, v, theta, t) + H(s, v, theta, t) u   (n)
//   measurements          z = g(s, v, theta, t) + G(s, v, theta, t) a + R(s, v, theta, t) u (l)
//
// r = 0 on the true motion; the weighted-residual estimators allow r != 0 (the residual zeta of
// van de Molengraft (1990)) and weight it. Both functions must be affine in a and in u (the
// structure of eqs. 2.1d and 2.5; the contract test checks it); they may be arbitrarily non-linear
// in s, v, theta and t.
//
// The interface is a compile-time concept, not a virtual class, so Ceres Jets flow through the
// physics without virtual calls. A model class
//   - derives from MechanicalModelBase<n, m, p, l> (gives kNumPositions ... and vector types),
//   - has   template <class T> void EquationsOfMotion(const T* s, const T* v, const T* a,
//                                                     const T* u, const T* theta, double t,
//                                                     T* r) const;
//   - has   template <class T> void Measurements(const T* s, const T* v, const T* a,
//                                                const T* u, const T* theta, double t,
//                                                T* z) const;
//   - has   ModelInfo Info() const;            (names and units of every quantity)
//   - has   ParameterVector NominalParameters() const;   (the "true" theta of the model)
//
// Everything generic over such a model lives here (simulation, M and h + H u by evaluation)
// and in models/model_linearization.h (Jet linearisation). A model of the user's own needs only
// these public headers: no instantiation list, no macro.
#ifndef DYNID_MODELS_MECHANICAL_MODEL_H_
#define DYNID_MODELS_MECHANICAL_MODEL_H_

#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/LU>
#include <glog/logging.h>

#include "dynid/models/integrator.h"

namespace dynid::models {

// A named quantity with its unit ("r", "m").
struct VariableInfo {
  std::string name;
  std::string unit;
};

// Names and units of all quantities of a model; sizes n, m, p, l.
struct ModelInfo {
  std::string name;
  std::vector<VariableInfo> positions;     // n (velocities and accelerations derive from these)
  std::vector<VariableInfo> inputs;        // m
  std::vector<VariableInfo> parameters;    // p
  std::vector<VariableInfo> measurements;  // l
  std::vector<VariableInfo> equations;     // n: what each equation of motion balances (unit)
};

template <int N, int M, int P, int L>
class MechanicalModelBase {
 public:
  static_assert(N > 0 && M > 0 && P > 0 && L > 0, "all model dimensions must be positive");
  static constexpr int kNumPositions = N;
  static constexpr int kNumInputs = M;
  static constexpr int kNumParameters = P;
  static constexpr int kNumMeasurements = L;

  using PositionVector = Eigen::Matrix<double, N, 1>;
  using InputVector = Eigen::Matrix<double, M, 1>;
  using ParameterVector = Eigen::Matrix<double, P, 1>;
  using MeasurementVector = Eigen::Matrix<double, L, 1>;
  using MassMatrix = Eigen::Matrix<double, N, N>;
};

// u(t): writes the m inputs at time t.
using InputFunction = std::function<void(double t, double* u)>;

// A sampled motion of a model. Row k belongs to time(k).
struct Trajectory {
  Eigen::VectorXd time;          // N_samples, seconds
  Eigen::MatrixXd positions;     // N_samples × n
  Eigen::MatrixXd velocities;    // N_samples × n
  Eigen::MatrixXd accelerations; // N_samples × n
  Eigen::MatrixXd inputs;        // N_samples × m
  Eigen::MatrixXd measurements;  // N_samples × l (noise-free)
};

// Mass matrix M (n×n) and bias b = h + H u (n) at (s, v, u, theta, t), from n + 1 evaluations of
// the equations of motion (exact because r is affine in a).
template <class Model>
void EvaluateMassMatrixAndBias(const Model& model, const double* s, const double* v,
                               const double* u, const double* theta, double t,
                               typename Model::MassMatrix* mass,
                               typename Model::PositionVector* bias) {
  constexpr int n = Model::kNumPositions;
  typename Model::PositionVector a = Model::PositionVector::Zero();
  model.EquationsOfMotion(s, v, a.data(), u, theta, t, bias->data());
  typename Model::PositionVector r;
  for (int j = 0; j < n; ++j) {
    a.setZero();
    a(j) = 1.0;
    model.EquationsOfMotion(s, v, a.data(), u, theta, t, r.data());
    mass->col(j) = r - *bias;
  }
}

// Forward dynamics: the a that makes r = 0, a = -M^{-1} (h + H u). CHECK-fails when M is
// singular at this state (a modelling error, not a data error).
template <class Model>
typename Model::PositionVector SolveAccelerations(const Model& model, const double* s,
                                                  const double* v, const double* u,
                                                  const double* theta, double t) {
  typename Model::MassMatrix mass;
  typename Model::PositionVector bias;
  EvaluateMassMatrixAndBias(model, s, v, u, theta, t, &mass, &bias);
  Eigen::FullPivLU<typename Model::MassMatrix> lu(mass);
  CHECK(lu.isInvertible()) << "mass matrix of " << model.Info().name << " singular at t = " << t;
  return -lu.solve(bias);
}

// Simulates the model from (s0, v0) under u(t) with classical RK4, `substeps` steps between
// consecutive output times (times strictly increasing, at least one). The inputs are evaluated
// at the RK4 stage times, so a smooth u(t) keeps fourth-order accuracy.
template <class Model>
Trajectory Simulate(const Model& model, const typename Model::ParameterVector& theta,
                    const typename Model::PositionVector& s0,
                    const typename Model::PositionVector& v0, const InputFunction& input,
                    const Eigen::VectorXd& times, int substeps) {
  constexpr int n = Model::kNumPositions;
  constexpr int m = Model::kNumInputs;
  constexpr int l = Model::kNumMeasurements;
  using Vec = typename Model::PositionVector;
  using State = Eigen::Matrix<double, 2 * n, 1>;
  CHECK_GE(times.size(), 1) << "expected at least one output time, got 0";
  CHECK_GE(substeps, 1) << "expected substeps >= 1, got " << substeps;
  const int num_samples = static_cast<int>(times.size());

  typename Model::InputVector u;
  auto derivative = [&](double t, const State& x) {
    input(t, u.data());
    const Vec s = x.template head<n>();
    const Vec v = x.template tail<n>();
    State dx;
    dx.template head<n>() = v;
    dx.template tail<n>() = SolveAccelerations(model, s.data(), v.data(), u.data(), theta.data(), t);
    return dx;
  };

  Trajectory out;
  out.time = times;
  out.positions.resize(num_samples, n);
  out.velocities.resize(num_samples, n);
  out.accelerations.resize(num_samples, n);
  out.inputs.resize(num_samples, m);
  out.measurements.resize(num_samples, l);

  State x;
  x << s0, v0;
  for (int k = 0; k < num_samples; ++k) {
    if (k > 0) {
      const double t0 = times(k - 1);
      const double h = (times(k) - t0) / substeps;
      CHECK_GT(h, 0.0) << "expected strictly increasing times at sample " << k;
      x = IntegrateRk4(derivative, t0, h, substeps, x);
    }
    const double t = times(k);
    const Vec s = x.template head<n>();
    const Vec v = x.template tail<n>();
    input(t, u.data());
    const Vec a = SolveAccelerations(model, s.data(), v.data(), u.data(), theta.data(), t);
    typename Model::MeasurementVector z;
    model.Measurements(s.data(), v.data(), a.data(), u.data(), theta.data(), t, z.data());
    out.positions.row(k) = s.transpose();
    out.velocities.row(k) = v.transpose();
    out.accelerations.row(k) = a.transpose();
    out.inputs.row(k) = u.transpose();
    out.measurements.row(k) = z.transpose();
  }
  return out;
}

}  // namespace dynid::models

#endif  // DYNID_MODELS_MECHANICAL_MODEL_H_
