#include "dynid/data/robot_simulator.h"

#include <cmath>
#include <random>
#include <utility>

#include <Eigen/LU>
#include <glog/logging.h>

#include "dynid/models/integrator.h"

namespace dynid::data {

PidGains TunePidGains(const models::SerialRobot& robot, const Eigen::VectorXd& q_nominal,
                      double bandwidth_hz) {
  CHECK_GT(bandwidth_hz, 0.0) << "PID bandwidth";
  Eigen::MatrixXd mass;
  robot.MassMatrix(q_nominal, &mass);
  const double w = 2.0 * M_PI * bandwidth_hz;
  PidGains gains;
  gains.kd = 3.0 * w * mass.diagonal();
  gains.kp = 3.0 * w * w * mass.diagonal();
  gains.ki = w * w * w * mass.diagonal();
  return gains;
}

bool RobotSimulatorOptions::IsValid(int n, std::string* why) const {
  auto sized = [n](const Eigen::VectorXd& v) { return v.size() == 0 || v.size() == n; };
  if (!(control_rate_hz > 0.0) || !std::isfinite(control_rate_hz)) {
    *why = "control_rate_hz must be finite and > 0";
    return false;
  }
  if (integration_substeps < 1) {
    *why = "integration_substeps must be >= 1";
    return false;
  }
  if (gains.kp.size() != n || gains.ki.size() != n || gains.kd.size() != n) {
    *why = "PID gains must have " + std::to_string(n) + " entries each";
    return false;
  }
  if (!sized(encoder_resolution_rad) || !sized(torque_noise_std) || !sized(torque_bias)) {
    *why = "encoder_resolution_rad, torque_noise_std, torque_bias: empty or " + std::to_string(n) +
           " entries";
    return false;
  }
  if ((encoder_resolution_rad.size() > 0 && !(encoder_resolution_rad.array() > 0.0).all()) ||
      (torque_noise_std.size() > 0 && !(torque_noise_std.array() >= 0.0).all())) {
    *why = "encoder resolutions must be > 0 and torque noise levels >= 0";
    return false;
  }
  if (motor_from_joint.size() > 0) {
    if (motor_from_joint.rows() != n || motor_from_joint.cols() != n) {
      *why = "motor_from_joint must be " + std::to_string(n) + " × " + std::to_string(n);
      return false;
    }
    if (Eigen::FullPivLU<Eigen::MatrixXd>(motor_from_joint).rank() < n) {
      *why = "motor_from_joint must be invertible";
      return false;
    }
  }
  return true;
}

bool SimulateClosedLoop(const models::SerialRobot& robot, const JointTrajectory& reference,
                        const RobotSimulatorOptions& options, RobotSimulation* out,
                        std::string* error) {
  CHECK(out != nullptr);
  CHECK(error != nullptr);
  const int n = robot.num_joints();
  if (reference.num_joints() != n) {
    *error = "reference has " + std::to_string(reference.num_joints()) + " joints, robot " +
             std::to_string(n);
    return false;
  }
  if (!options.IsValid(n, error)) return false;
  const double dt = 1.0 / options.control_rate_hz;
  const double duration = options.duration_s > 0.0 ? options.duration_s : reference.duration();
  const int num_samples = static_cast<int>(std::floor(duration / dt + 1e-9)) + 1;

  RobotSimulation& sim = *out;
  const unsigned asked = options.recorded_series;
  // The motor-side series are formed from the joint-side measured ones at the end (one matrix
  // product, as for the full record), so those are recorded when either side is asked for.
  unsigned recorded = asked;
  if (asked & kRecordQMotor) recorded |= kRecordQMeasured;
  if (asked & kRecordTauMotor) recorded |= kRecordTauMeasured;
  const auto record = [recorded](RecordedSeries series) { return (recorded & series) != 0; };
  sim.time.resize(num_samples);
  const std::pair<RecordedSeries, Eigen::MatrixXd*> series[] = {
      {kRecordQReference, &sim.q_reference},
      {kRecordQdReference, &sim.qd_reference},
      {kRecordQddReference, &sim.qdd_reference},
      {kRecordQ, &sim.q},
      {kRecordQd, &sim.qd},
      {kRecordQdd, &sim.qdd},
      {kRecordTau, &sim.tau},
      {kRecordQMeasured, &sim.q_measured},
      {kRecordTauMeasured, &sim.tau_measured},
      {kRecordQMotor, &sim.q_motor},
      {kRecordTauMotor, &sim.tau_motor}};
  for (const auto& [bit, m] : series) {
    if (record(bit) && bit != kRecordQMotor && bit != kRecordTauMotor) {
      m->resize(num_samples, n);
    } else {
      m->resize(0, 0);
    }
  }
  std::mt19937 rng(options.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto quantise = [&](const Eigen::VectorXd& q) {
    if (options.encoder_resolution_rad.size() == 0) return Eigen::VectorXd(q);
    return Eigen::VectorXd(
        (q.array() / options.encoder_resolution_rad.array()).round() *
        options.encoder_resolution_rad.array());
  };

  Eigen::VectorXd q_ref, qd_ref, qdd_ref;
  reference.Evaluate(0.0, &q_ref, &qd_ref, &qdd_ref);
  Eigen::VectorXd q = q_ref, qd = qd_ref;
  Eigen::VectorXd integral = Eigen::VectorXd::Zero(n);
  // One workspace for every dynamics evaluation of the run (4 per RK4 substep).
  models::SerialRobotData data(robot);
  if (options.preload_integrator) {
    Eigen::VectorXd gravity;
    robot.GravityTorques(q_ref, &data, &gravity);
    for (int j = 0; j < n; ++j) {
      if (options.gains.ki[j] != 0.0) integral[j] = gravity[j] / options.gains.ki[j];
    }
  }
  Eigen::VectorXd q_meas_previous = quantise(q);
  Eigen::VectorXd tau(n), qdd(n), a(n), state(2 * n), tau_u(n), tau_net(n);
  // The torque that moves the robot: the applied torque less the unmodelled one, if any.
  const auto net_torque = [&](const Eigen::VectorXd& qx,
                              const Eigen::VectorXd& qdx) -> const Eigen::VectorXd& {
    if (!options.unmodelled_torque) return tau;
    tau_u.setZero();
    options.unmodelled_torque(qx, qdx, tau, &tau_u);
    tau_net = tau - tau_u;
    return tau_net;
  };
  const double h = dt / options.integration_substeps;
  for (int k = 0; k < num_samples; ++k) {
    const double t = k * dt;
    reference.Evaluate(t, &q_ref, &qd_ref, &qdd_ref);
    const Eigen::VectorXd q_meas = quantise(q);
    const Eigen::VectorXd velocity =
        options.velocity_from_encoder ? Eigen::VectorXd((q_meas - q_meas_previous) / dt) : qd;
    const Eigen::VectorXd e = q_ref - q_meas;
    integral += e * dt;
    tau = options.gains.kp.cwiseProduct(e) + options.gains.ki.cwiseProduct(integral) +
          options.gains.kd.cwiseProduct(qd_ref - velocity);
    q_meas_previous = q_meas;
    robot.ForwardDynamics(q, qd, net_torque(q, qd), &data, &qdd);

    sim.time[k] = t;
    if (record(kRecordQReference)) sim.q_reference.row(k) = q_ref.transpose();
    if (record(kRecordQdReference)) sim.qd_reference.row(k) = qd_ref.transpose();
    if (record(kRecordQddReference)) sim.qdd_reference.row(k) = qdd_ref.transpose();
    if (record(kRecordQ)) sim.q.row(k) = q.transpose();
    if (record(kRecordQd)) sim.qd.row(k) = qd.transpose();
    if (record(kRecordQdd)) sim.qdd.row(k) = qdd.transpose();
    if (record(kRecordTau)) sim.tau.row(k) = tau.transpose();
    if (record(kRecordQMeasured)) sim.q_measured.row(k) = q_meas.transpose();
    // The noise draws feed only tau_measured (the loop uses tau): skipped with it.
    if (record(kRecordTauMeasured)) {
      Eigen::VectorXd tau_meas = tau;
      if (options.torque_bias.size() > 0) tau_meas += options.torque_bias;
      if (options.torque_noise_std.size() > 0) {
        for (int j = 0; j < n; ++j) tau_meas[j] += options.torque_noise_std[j] * normal(rng);
      }
      sim.tau_measured.row(k) = tau_meas.transpose();
    }
    if (k + 1 == num_samples) break;

    // Zero-order hold of tau over the control period, classical RK4 on [q, q']. The first stage
    // is at (q, q', tau) of this sample, whose accelerations qdd were just computed for the
    // record: they are reused (the same numbers; one forward dynamics in five per sample less
    // with one substep).
    bool first_stage = true;
    const auto derivative = [&](double, const Eigen::VectorXd& x) {
      Eigen::VectorXd dx(2 * n);
      dx.head(n) = x.tail(n);
      if (first_stage) {
        first_stage = false;
        dx.tail(n) = qdd;
        return dx;
      }
      const Eigen::VectorXd qx = x.head(n), qdx = x.tail(n);
      robot.ForwardDynamics(qx, qdx, net_torque(qx, qdx), &data, &a);
      dx.tail(n) = a;
      return dx;
    };
    state << q, qd;
    state = models::IntegrateRk4(derivative, t, h, options.integration_substeps, state);
    q = state.head(n);
    qd = state.tail(n);
    if (!q.allFinite() || !qd.allFinite()) {
      *error = "simulation diverged at t = " + std::to_string(t + dt) +
               " s (check gains and control rate)";
      return false;
    }
  }
  const Eigen::MatrixXd r = options.motor_from_joint.size() > 0
                                ? options.motor_from_joint
                                : Eigen::MatrixXd::Identity(n, n);
  // Rows are samples: q_mᵀ = qᵀ Rᵀ; tau = Rᵀ tau_m ⇒ tau_mᵀ = tauᵀ R^{-1}.
  if (asked & kRecordQMotor) sim.q_motor = sim.q_measured * r.transpose();
  if (asked & kRecordTauMotor) sim.tau_motor = sim.tau_measured * r.inverse();
  if (!(asked & kRecordQMeasured)) sim.q_measured.resize(0, 0);
  if (!(asked & kRecordTauMeasured)) sim.tau_measured.resize(0, 0);
  return true;
}

}  // namespace dynid::data
