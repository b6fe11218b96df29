// solvers::AugmentedMechanicalSystem — a mechanical model (models/mechanical_model.h) as the
// state-space system of a joint state and parameter estimator (Urrea & Agramonte (2022) §3).
//
// Augmented state x = [s; v; theta] (2n + p), input u_k held constant on [t_k, t_{k+1})
// (zero-order hold, as a digital controller applies it), constant parameters:
//   x' = f(x, u) = [v; a(s, v, u, theta); 0],  a = −M⁻¹ (h + H u)  (the model's forward dynamics).
// Its Jacobian follows from r(s, v, a, u, theta) = 0 by the implicit-function theorem,
//   ∂a/∂[s; v; theta] = −M⁻¹ ∂r/∂[s; v; theta],
// with ∂r/∂x and M = ∂r/∂a from models::LinearizeModel (exact, forward-mode autodiff).
// Measurements y_k = z(s, v, a, u_k, theta) with ∂z/∂x + ∂z/∂a ∂a/∂x.
//
// Discretisations of sample interval Δ_k = t_{k+1} − t_k in `substeps` equal steps h:
//   kForwardEuler: x ← x + h f(x)          (the SCARA EKF as published: one step of 0.01 s),
//   kRk4:          classical RK4,
// each with its exact Jacobian (chain rule through the stages). ContinuousDiscrete() returns
// the same model for solvers::RunContinuousDiscreteEkf (which integrates the moment equations).
#ifndef DYNID_SOLVERS_MECHANICAL_STATE_SPACE_H_
#define DYNID_SOLVERS_MECHANICAL_STATE_SPACE_H_

#include <limits>

#include <Eigen/Core>
#include <Eigen/LU>
#include <glog/logging.h>

#include "dynid/models/integrator.h"
#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"
#include "dynid/solvers/continuous_discrete_ekf.h"
#include "dynid/solvers/kalman_smoother.h"

namespace dynid::solvers {

enum class Discretization { kForwardEuler, kRk4 };

template <class Model>
class AugmentedMechanicalSystem {
 public:
  static constexpr int n = Model::kNumPositions;
  static constexpr int m = Model::kNumInputs;
  static constexpr int p = Model::kNumParameters;
  static constexpr int l = Model::kNumMeasurements;
  static constexpr int kStateSize = 2 * n + p;

  // times: N strictly increasing; inputs: N × m (row k applied on [t_k, t_{k+1})).
  AugmentedMechanicalSystem(const Model& model, const Eigen::VectorXd& times,
                            const Eigen::MatrixXd& inputs, Discretization discretization,
                            int substeps)
      : model_(model), times_(times), inputs_(inputs), discretization_(discretization),
        substeps_(substeps) {
    CHECK_EQ(inputs.rows(), times.size()) << "one input row per sample";
    CHECK_EQ(inputs.cols(), m) << "input columns must match the model";
    CHECK_GE(substeps, 1);
  }

  // f(x, u) and, when jac is non-null, ∂f/∂x.
  void Derivative(double t, const Eigen::VectorXd& x, const double* u, Eigen::VectorXd* f,
                  Eigen::MatrixXd* jac) const {
    const double* s = x.data();
    const double* v = x.data() + n;
    const double* theta = x.data() + 2 * n;
    const typename Model::PositionVector a = Accelerations(s, v, u, theta, t);
    f->setZero(kStateSize);
    f->segment(0, n) = x.segment(n, n);
    f->segment(n, n) = a;
    if (jac != nullptr) {
      jac->setZero(kStateSize, kStateSize);
      jac->block(0, n, n, n).setIdentity();
      jac->block(n, 0, n, kStateSize) = AccelerationJacobian(s, v, a.data(), u, theta, t);
    }
  }

  // y(x) at sample k and, when jac is non-null, ∂y/∂x.
  void Measure(int k, const Eigen::VectorXd& x, Eigen::VectorXd* y, Eigen::MatrixXd* jac) const {
    const double* s = x.data();
    const double* v = x.data() + n;
    const double* theta = x.data() + 2 * n;
    const Eigen::Matrix<double, m, 1> u_k = Input(k);
    const double* u = u_k.data();
    const double t = times_(k);
    const typename Model::PositionVector a = Accelerations(s, v, u, theta, t);
    y->resize(l);
    if (jac == nullptr) {
      model_.Measurements(s, v, a.data(), u, theta, t, y->data());
      return;
    }
    models::ModelLinearization<Model> lin;
    models::LinearizeModel(model_, s, v, a.data(), u, theta, t, &lin);
    *y = lin.measurements;
    const Eigen::Matrix<double, n, n> mass = lin.J_r_pbar.template leftCols<n>();
    const Eigen::Matrix<double, n, kStateSize> da = -mass.fullPivLu().solve(lin.J_r_x);
    *jac = lin.J_z_x + lin.J_z_pbar.template leftCols<n>() * da;
  }

  // x_{k+1} = Φ_k(x_k) and its Jacobian.
  //
  // RK4 goes through the library's one integrator (models::Rk4Step). With the Jacobian it
  // integrates the variational system d/dt [x, S] = [f(x), (∂f/∂x) S] from S = I over each
  // substep, whose RK4 step is the chain rule through the four stages:
  //   S = I + (h/6)(D1 + 2 D2 + 2 D3 + D4),  D1 = A1, D2 = A2 (I + (h/2) D1),
  //   D3 = A3 (I + (h/2) D2), D4 = A4 (I + h D3),  A_i = ∂f/∂x at stage i;
  // the substeps' S multiply into ∂Φ_k/∂x_k.
  void Transition(int k, const Eigen::VectorXd& x0, Eigen::VectorXd* x1,
                  Eigen::MatrixXd* jac) const {
    const Eigen::Matrix<double, m, 1> u_k = Input(k);
    const double* u = u_k.data();
    const double h = (times_(k + 1) - times_(k)) / substeps_;
    Eigen::VectorXd x = x0;
    Eigen::MatrixXd big_f;
    if (jac != nullptr) big_f = Eigen::MatrixXd::Identity(kStateSize, kStateSize);
    Eigen::VectorXd f;
    Eigen::MatrixXd a;
    for (int i = 0; i < substeps_; ++i) {
      const double t = times_(k) + i * h;
      if (discretization_ == Discretization::kForwardEuler) {
        Derivative(t, x, u, &f, jac ? &a : nullptr);
        x += h * f;
        if (jac) big_f = (Eigen::MatrixXd::Identity(kStateSize, kStateSize) + h * a) * big_f;
      } else if (jac == nullptr) {
        const auto rate = [&](double tt, const Eigen::VectorXd& xx) {
          Derivative(tt, xx, u, &f, nullptr);
          return f;
        };
        x = models::Rk4Step(rate, t, h, x);
      } else {
        // Column 0 is the state, columns 1..2n+p the substep's sensitivity S.
        Eigen::MatrixXd xs(kStateSize, kStateSize + 1);
        xs.col(0) = x;
        xs.rightCols(kStateSize).setIdentity();
        const auto rate = [&](double tt, const Eigen::MatrixXd& state) {
          Derivative(tt, state.col(0), u, &f, &a);
          Eigen::MatrixXd rates(kStateSize, kStateSize + 1);
          rates.col(0) = f;
          rates.rightCols(kStateSize) = a * state.rightCols(kStateSize);
          return rates;
        };
        xs = models::Rk4Step(rate, t, h, xs);
        x = xs.col(0);
        big_f = xs.rightCols(kStateSize) * big_f;
      }
    }
    *x1 = x;
    if (jac) *jac = big_f;
  }

  DiscreteStateSpaceSystem Discrete() const {
    DiscreteStateSpaceSystem sys;
    sys.state_size = kStateSize;
    sys.measurement_size = l;
    sys.transition = [this](int k, const Eigen::VectorXd& x, Eigen::VectorXd* xn,
                            Eigen::MatrixXd* jac) { Transition(k, x, xn, jac); };
    sys.measurement = [this](int k, const Eigen::VectorXd& x, Eigen::VectorXd* y,
                             Eigen::MatrixXd* jac) { Measure(k, x, y, jac); };
    return sys;
  }

  ContinuousDiscreteSystem ContinuousDiscrete() const {
    ContinuousDiscreteSystem sys;
    sys.state_size = kStateSize;
    sys.measurement_size = l;
    sys.dynamics = [this](int k, double t, const Eigen::VectorXd& x, Eigen::VectorXd* f,
                          Eigen::MatrixXd* jac) {
      const Eigen::Matrix<double, m, 1> u = Input(k);
      Derivative(t, x, u.data(), f, jac);
    };
    sys.measurement = [this](int k, const Eigen::VectorXd& x, Eigen::VectorXd* y,
                             Eigen::MatrixXd* jac) { Measure(k, x, y, jac); };
    return sys;
  }

  // Forward dynamics; NaN when the mass matrix is singular at this state (a filter's sigma
  // point or estimate can reach such parameters; the filter then stops with a message instead
  // of the program aborting).
  typename Model::PositionVector Accelerations(const double* s, const double* v, const double* u,
                                               const double* theta, double t) const {
    typename Model::MassMatrix mass;
    typename Model::PositionVector bias;
    models::EvaluateMassMatrixAndBias(model_, s, v, u, theta, t, &mass, &bias);
    Eigen::FullPivLU<typename Model::MassMatrix> lu(mass);
    if (!lu.isInvertible()) {
      return Model::PositionVector::Constant(std::numeric_limits<double>::quiet_NaN());
    }
    return -lu.solve(bias);
  }

 private:
  Eigen::Matrix<double, m, 1> Input(int k) const { return inputs_.row(k).transpose(); }

  Eigen::Matrix<double, n, kStateSize> AccelerationJacobian(const double* s, const double* v,
                                                            const double* a, const double* u,
                                                            const double* theta,
                                                            double t) const {
    models::ModelLinearization<Model> lin;
    models::LinearizeModel(model_, s, v, a, u, theta, t, &lin);
    const Eigen::Matrix<double, n, n> mass = lin.J_r_pbar.template leftCols<n>();
    return -mass.fullPivLu().solve(lin.J_r_x);
  }

  Model model_;
  Eigen::VectorXd times_;
  Eigen::MatrixXd inputs_;
  Discretization discretization_;
  int substeps_;
};

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_MECHANICAL_STATE_SPACE_H_
