// GCC 12 reports a false -Wmaybe-uninitialized inside Eigen's Householder code (trmv, used by
// BDCSVD); it is attributed to Eigen's headers, so it is silenced before the first Eigen include.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "experiments/tx40_study/tx40_experiment.h"

#include <glog/logging.h>

#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "dynid/data/trajectory.h"
#include "dynid/models/tx40.h"
#include "dynid/solvers/linear_least_squares.h"

namespace dynid::tx40_study {

using data::RobotSimulation;
using data::RobotSimulatorOptions;
using data::TrapezoidalTrajectory;
using data::TunePidGains;

bool Tx40ExperimentOptions::IsValid(std::string* why) const {
  if (!(duration_s > 0.0) || !(control_rate_hz > 0.0) || !(pid_bandwidth_hz > 0.0)) {
    *why = "duration_s, control_rate_hz and pid_bandwidth_hz must be > 0";
    return false;
  }
  if (!(position_fraction > 0.0 && position_fraction <= 1.0) ||
      !(velocity_fraction > 0.0 && velocity_fraction <= 1.0)) {
    *why = "position_fraction and velocity_fraction must be in (0, 1]";
    return false;
  }
  if (!(acceleration_per_velocity > 0.0) || !(dwell_s >= 0.0) || !(torque_noise_std_nm >= 0.0)) {
    *why = "acceleration_per_velocity must be > 0, dwell_s and torque_noise_std_nm >= 0";
    return false;
  }
  if (!(coulomb_scale >= 0.0)) {
    *why = "coulomb_scale must be >= 0";
    return false;
  }
  if (!(stribeck_ratio >= 0.0) || !std::isfinite(stribeck_ratio) ||
      !(stribeck_velocity_rad_s > 0.0) || !std::isfinite(stribeck_velocity_rad_s)) {
    *why = "stribeck_ratio must be >= 0 and stribeck_velocity_rad_s > 0";
    return false;
  }
  if (!(friction_asymmetry >= 0.0 && friction_asymmetry < 1.0) ||
      !(load_friction >= 0.0 && load_friction < 1.0)) {
    *why = "friction_asymmetry and load_friction must be in [0, 1)";
    return false;
  }
  if (!(motor_torque_noise_std_nm >= 0.0) || !std::isfinite(motor_torque_noise_std_nm) ||
      !(motor_torque_lsb_nm >= 0.0) || !std::isfinite(motor_torque_lsb_nm) ||
      !(encoder_resolution_scale >= 0.0) || !std::isfinite(encoder_resolution_scale)) {
    *why =
        "motor_torque_noise_std_nm, motor_torque_lsb_nm and encoder_resolution_scale must be "
        "finite and >= 0";
    return false;
  }
  if (condition_decimation < 1) {
    *why = "condition_decimation must be >= 1";
    return false;
  }
  return true;
}

RealisticImperfections DefaultRealisticImperfections() {
  RealisticImperfections r;
  r.stribeck_ratio = 0.5;
  r.stribeck_velocity_rad_s = 0.05;
  r.friction_asymmetry = 0.2;
  r.load_friction = 0.0;
  r.motor_torque_noise_std_nm = 0.005;
  r.motor_torque_lsb_nm = 0.002;
  r.encoder_resolution_scale = 1.0;
  return r;
}

void ApplyImperfections(const RealisticImperfections& imperfections,
                        Tx40ExperimentOptions* options) {
  options->stribeck_ratio = imperfections.stribeck_ratio;
  options->stribeck_velocity_rad_s = imperfections.stribeck_velocity_rad_s;
  options->friction_asymmetry = imperfections.friction_asymmetry;
  options->load_friction = imperfections.load_friction;
  options->motor_torque_noise_std_nm = imperfections.motor_torque_noise_std_nm;
  options->motor_torque_lsb_nm = imperfections.motor_torque_lsb_nm;
  options->encoder_resolution_scale = imperfections.encoder_resolution_scale;
  options->quantise_encoders = imperfections.encoder_resolution_scale > 0.0;
  options->torque_noise_std_nm = 0.0;
}

namespace {

double StandardParameter(const models::SerialRobot& robot, int i) {
  return robot.standard_parameters()[i];
}

// The friction of the simulated drives beyond the model's fc sign(q') + fv q' (header comment):
// per joint fc_j [a |sign(q'_j)| + r exp(−(q'_j/v_s)²) sign(q'_j)], and the same for motor 6 on
// q5' + q6' (its torque acts on joints 5 and 6).
struct UnmodelledFriction {
  Eigen::VectorXd fc;  // joints' Coulomb levels
  double fc_motor6 = 0.0;
  double ratio = 0.0, velocity = 1.0, asymmetry = 0.0, load = 0.0;
  double Excess(double fc_level, double v) const {
    const double s = v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0);
    const double x = v / velocity;
    return fc_level * (asymmetry * std::abs(s) + ratio * std::exp(-x * x) * s);
  }
  void operator()(const Eigen::VectorXd&, const Eigen::VectorXd& qd, const Eigen::VectorXd& tau,
                  Eigen::VectorXd* tau_u) const {
    for (int j = 0; j < 6; ++j) {
      const double s = qd[j] > 0.0 ? 1.0 : (qd[j] < 0.0 ? -1.0 : 0.0);
      (*tau_u)[j] = Excess(fc[j], qd[j]) + load * std::abs(tau[j]) * s;
    }
    const double m6 = Excess(fc_motor6, qd[4] + qd[5]);
    (*tau_u)[4] += m6;
    (*tau_u)[5] += m6;
  }
};

}  // namespace

bool SimulateTx40Experiment(const Tx40ExperimentOptions& options, Tx40Experiment* out,
                            std::string* error) {
  CHECK(out != nullptr);
  CHECK(error != nullptr);
  if (!options.IsValid(error)) return false;
  models::Tx40Options tx40_options;
  tx40_options.coupling_form = options.coupling_form;
  models::SerialRobot robot = models::MakeTx40(tx40_options);
  if (options.coulomb_scale != 1.0) {
    Eigen::VectorXd theta = robot.standard_parameters();
    for (int i = 0; i < robot.num_parameters(); ++i) {
      const models::ParameterKind kind = robot.parameter_info()[i].kind;
      if (kind == models::ParameterKind::kFc || kind == models::ParameterKind::kCoupledFc) {
        theta[i] *= options.coulomb_scale;
      }
    }
    robot.SetStandardParameters(theta);
  }
  const Eigen::VectorXd lower = models::Tx40JointLowerLimitRad();
  const Eigen::VectorXd upper = models::Tx40JointUpperLimitRad();
  const Eigen::VectorXd vmax = options.velocity_fraction * models::Tx40VelocityLimitRadPerS();
  const Eigen::VectorXd amax = options.acceleration_per_velocity * vmax;
  const Eigen::VectorXd centre = 0.5 * (lower + upper);
  const Eigen::VectorXd half = 0.5 * options.position_fraction * (upper - lower);

  // Random via points until the moves fill the requested duration.
  std::mt19937 rng(options.seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<Eigen::VectorXd> via = {centre};
  TrapezoidalTrajectory reference;
  while (true) {
    Eigen::VectorXd point(6);
    for (int j = 0; j < 6; ++j) point[j] = centre[j] + half[j] * unit(rng);
    via.push_back(point);
    if (!TrapezoidalTrajectory::Create(via, vmax, amax, options.dwell_s, &reference, error)) {
      return false;
    }
    if (reference.duration() >= options.duration_s) break;
  }
  std::string why;
  if (!reference.WithinLimits(lower, upper, models::Tx40VelocityLimitRadPerS(), 1e-3, &why)) {
    *error = "reference violates the TX40 limits: " + why;
    return false;
  }

  RobotSimulatorOptions sim_options;
  sim_options.control_rate_hz = options.control_rate_hz;
  sim_options.gains = TunePidGains(robot, centre, options.pid_bandwidth_hz);
  if (options.quantise_encoders && options.encoder_resolution_scale > 0.0) {
    sim_options.encoder_resolution_rad =
        options.encoder_resolution_scale * models::Tx40EncoderResolutionRad();
  }
  if (options.stribeck_ratio > 0.0 || options.friction_asymmetry > 0.0 ||
      options.load_friction > 0.0) {
    UnmodelledFriction friction;
    friction.fc = Eigen::VectorXd::Zero(6);
    for (int i = 0; i < robot.num_parameters(); ++i) {
      const models::ParameterInfo& info = robot.parameter_info()[i];
      if (info.kind == models::ParameterKind::kFc)
        friction.fc[info.joint] = StandardParameter(robot, i);
      if (info.kind == models::ParameterKind::kCoupledFc)
        friction.fc_motor6 = StandardParameter(robot, i);
    }
    friction.ratio = options.stribeck_ratio;
    friction.velocity = options.stribeck_velocity_rad_s;
    friction.asymmetry = options.friction_asymmetry;
    friction.load = options.load_friction;
    sim_options.unmodelled_torque = friction;
  }
  sim_options.torque_noise_std = Eigen::VectorXd::Constant(6, options.torque_noise_std_nm);
  sim_options.motor_from_joint = models::Tx40MotorFromJoint();
  sim_options.seed = options.seed;
  sim_options.duration_s = options.duration_s;
  if (!SimulateClosedLoop(robot, reference, sim_options, &out->simulation, error)) return false;
  // The auxiliary model of IDIM-IV is the identified model: no unmodelled torque in the stored
  // options.
  sim_options.unmodelled_torque = nullptr;
  out->simulator_options = sim_options;
  if (options.motor_torque_noise_std_nm > 0.0 || options.motor_torque_lsb_nm > 0.0) {
    // The motor-side torque measurement: noise, then the sensor's LSB; the joint-side measured
    // torque follows (tau = Rᵀ tau_m, rows: tau_meas = tau_m R).
    data::RobotSimulation& sim = out->simulation;
    std::mt19937 noise_rng(options.seed ^ 0x5bd1e995u);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (Eigen::Index k = 0; k < sim.tau_motor.rows(); ++k) {
      for (Eigen::Index j = 0; j < sim.tau_motor.cols(); ++j) {
        double value = sim.tau_motor(k, j);
        if (options.motor_torque_noise_std_nm > 0.0) {
          value += options.motor_torque_noise_std_nm * normal(noise_rng);
        }
        if (options.motor_torque_lsb_nm > 0.0) {
          value = options.motor_torque_lsb_nm * std::round(value / options.motor_torque_lsb_nm);
        }
        sim.tau_motor(k, j) = value;
      }
    }
    sim.tau_measured = sim.tau_motor * models::Tx40MotorFromJoint();
  }

  if (!models::ComputeKhalilBaseParameters(robot, &out->base, error)) return false;
  out->theta_standard = robot.standard_parameters();
  out->theta_base = out->base.Reduce(out->theta_standard);
  const RobotSimulation& sim = out->simulation;
  const int ns = static_cast<int>(sim.time.size());
  const int decimated = (ns + options.condition_decimation - 1) / options.condition_decimation;
  // The base regressor (6 · decimated × 55, joint-major rows: 264 MB for 10⁶ samples) formed
  // kConditionChunk samples at a time, so that the standard regressor (81 columns, 389 MB) is
  // never whole; each row depends on its sample only, so x_base is the same as formed at once.
  constexpr int kConditionChunk = 1024;
  Eigen::MatrixXd x_base(6 * static_cast<Eigen::Index>(decimated), out->base.size());
  {
    Eigen::MatrixXd q, qd, qdd, x, x_chunk;
    models::SerialRobotData data(robot);
    for (int start = 0; start < decimated; start += kConditionChunk) {
      const int m = std::min(kConditionChunk, decimated - start);
      q.resize(m, 6);
      qd.resize(m, 6);
      qdd.resize(m, 6);
      for (int k = 0; k < m; ++k) {
        const int sample = (start + k) * options.condition_decimation;
        q.row(k) = sim.q.row(sample);
        qd.row(k) = sim.qd.row(sample);
        qdd.row(k) = sim.qdd.row(sample);
      }
      robot.StackedRegressor(q, qd, qdd, &data, &x);
      out->base.SelectColumns(x, &x_chunk);
      for (int j = 0; j < 6; ++j) {
        x_base.middleRows(static_cast<Eigen::Index>(j) * decimated + start, m) =
            x_chunk.middleRows(static_cast<Eigen::Index>(j) * m, m);
      }
    }
  }
  out->base_regressor_condition = solvers::ConditionNumber(x_base, false);
  // With unit-norm columns: solvers::ConditionNumber's operations on x_base itself (its copy and
  // that of the QR would add 2 × 264 MB at 10⁶ samples).
  for (Eigen::Index c = 0; c < x_base.cols(); ++c) {
    const double norm = x_base.col(c).norm();
    if (norm > 0.0) x_base.col(c) /= norm;
  }
  const Eigen::HouseholderQR<Eigen::Ref<Eigen::MatrixXd>> qr(x_base);
  const Eigen::Index b = x_base.cols();
  const Eigen::MatrixXd r = qr.matrixQR().topLeftCorner(b, b).triangularView<Eigen::Upper>();
  const Eigen::VectorXd singular_values = Eigen::JacobiSVD<Eigen::MatrixXd>(r).singularValues();
  const double smallest = singular_values(b - 1);
  out->base_regressor_condition_normalised =
      smallest > 0.0 ? singular_values(0) / smallest : std::numeric_limits<double>::infinity();
  out->max_tracking_error_rad = (sim.q_reference - sim.q).cwiseAbs().maxCoeff();
  return true;
}

}  // namespace dynid::tx40_study
