// data/model_closed_loop — closed-loop PID tracking simulation of any fully actuated mechanical
// model (models/mechanical_model.h), the counterpart of data::SimulateClosedLoop
// (data/robot_simulator.h) for a model given by its equations of motion instead of a
// models::SerialRobot.
//
// Loop, at every control instant t_k = k Δt (k = 0 … num_samples − 1):
//   1. PID per joint on e = q_ref − q (true positions, no quantisation):
//        tau = Kp e + Ki Σ e Δt + Kd (q'_ref − v),   v = (q_k − q_{k−1})/Δt (v = 0 at k = 0);
//   2. recorded: q_k and q_ref(t_k);
//   3. tau is held constant while [q, q'] is integrated over [t_k, t_k+1) by `substeps`
//      classical RK4 steps (models/integrator.h) of q'' = −M(q, θ)^{-1} r(q, q', 0, tau, θ), with
//      M and r from models::EvaluateMassMatrixAndBias (the model evaluated at time 0).
// The motion starts at rest relative to the reference, q = q_ref(0), q' = q'_ref(0), and the PID
// integral starts at the model's gravity torque at q_ref(0) divided by Ki (joints with Ki = 0
// start from zero), as data::SimulateClosedLoop with preload_integrator.
#ifndef DYNID_DATA_MODEL_CLOSED_LOOP_H_
#define DYNID_DATA_MODEL_CLOSED_LOOP_H_

#include <string>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <glog/logging.h>

#include "dynid/data/robot_simulator.h"
#include "dynid/data/trajectory.h"
#include "dynid/models/integrator.h"
#include "dynid/models/mechanical_model.h"

namespace dynid::data {

struct ModelTracking {
  Eigen::MatrixXd q, q_reference;  // num_samples × n: simulated and reference positions
  bool ok = false;                 // false: see message
  std::string message;             // why the simulation stopped early
};

// Simulates the loop above for `num_samples` (>= 1) control periods dt (s, > 0) with `substeps`
// (>= 1) RK4 steps per period. Model: n = kNumPositions = kNumInputs (one actuator per
// coordinate, units of the model's inputs); theta: the model's parameters; gains: n entries each;
// reference: n joints. Stops with ok = false when the mass matrix is not positive definite or the
// motion diverges (a non-finite position or |q| > 1e3); the rows after that are unset.
template <class Model>
ModelTracking SimulateModelClosedLoop(const Model& model,
                                      const typename Model::ParameterVector& theta,
                                      const JointTrajectory& reference, const PidGains& gains,
                                      double dt, int num_samples, int substeps) {
  constexpr int n = Model::kNumPositions;
  static_assert(Model::kNumInputs == n, "the PID loop needs one input per coordinate");
  using Vec = Eigen::Matrix<double, n, 1>;
  using State = Eigen::Matrix<double, 2 * n, 1>;
  CHECK_EQ(reference.num_joints(), n) << "reference joints";
  CHECK(gains.kp.size() == n && gains.ki.size() == n && gains.kd.size() == n) << "PID gains";
  CHECK_GT(dt, 0.0) << "control period";
  CHECK_GE(num_samples, 1) << "samples";
  CHECK_GE(substeps, 1) << "RK4 substeps";
  const Vec kp = gains.kp, ki = gains.ki, kd = gains.kd;
  ModelTracking out;
  out.q.resize(num_samples, n);
  out.q_reference.resize(num_samples, n);
  Eigen::VectorXd q_ref, qd_ref, qdd_ref;
  reference.Evaluate(0.0, &q_ref, &qd_ref, &qdd_ref);
  Vec q = q_ref, qd = qd_ref;
  // Gravity torque at rest: u = r(q, 0, 0, 0) makes r − u = 0.
  Vec gravity;
  {
    const Vec zero = Vec::Zero();
    model.EquationsOfMotion(q.data(), zero.data(), zero.data(), zero.data(), theta.data(), 0.0,
                            gravity.data());
  }
  Vec integral = Vec::Zero();
  for (int j = 0; j < n; ++j) {
    if (ki[j] != 0.0) integral[j] = gravity[j] / ki[j];
  }
  Vec q_prev = q;
  const double h = dt / substeps;
  bool ok = true;
  Vec tau;
  const auto derivative = [&](double, const State& x) {
    const Vec s = x.template head<n>(), v = x.template tail<n>();
    typename Model::MassMatrix mass;
    typename Model::PositionVector bias;
    EvaluateMassMatrixAndBias(model, s.data(), v.data(), tau.data(), theta.data(), 0.0, &mass,
                              &bias);
    State dx;
    dx.template head<n>() = v;
    Eigen::LLT<typename Model::MassMatrix> llt(mass);
    if (llt.info() != Eigen::Success) {
      ok = false;
      dx.template tail<n>().setZero();
    } else {
      dx.template tail<n>() = -llt.solve(bias);
    }
    return dx;
  };
  for (int k = 0; k < num_samples; ++k) {
    reference.Evaluate(k * dt, &q_ref, &qd_ref, &qdd_ref);
    const Vec velocity = (q - q_prev) / dt;
    const Vec e = q_ref - q;
    integral += e * dt;
    tau = kp.cwiseProduct(e) + ki.cwiseProduct(integral) + kd.cwiseProduct(qd_ref - velocity);
    q_prev = q;
    out.q.row(k) = q.transpose();
    out.q_reference.row(k) = q_ref.transpose();
    State x;
    x << q, qd;
    x = models::IntegrateRk4(derivative, 0.0, h, substeps, x);
    q = x.template head<n>();
    qd = x.template tail<n>();
    if (!ok || !q.allFinite() || q.cwiseAbs().maxCoeff() > 1e3) {
      out.message = "plant mass matrix not positive definite or motion diverged at t = " +
                    std::to_string(k * dt) + " s";
      return out;
    }
  }
  out.ok = true;
  return out;
}

}  // namespace dynid::data

#endif  // DYNID_DATA_MODEL_CLOSED_LOOP_H_
