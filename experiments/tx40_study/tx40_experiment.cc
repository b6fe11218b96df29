// GCC 12 reports a false -Wmaybe-uninitialized inside Eigen's Householder code (trmv, used by
// BDCSVD); it is attributed to Eigen's headers, so it is silenced before the first Eigen include.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "experiments/tx40_study/tx40_experiment.h"

#include <cmath>
#include <random>
#include <vector>

#include <Eigen/SVD>
#include <glog/logging.h>

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
  if (condition_decimation < 1) {
    *why = "condition_decimation must be >= 1";
    return false;
  }
  return true;
}

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
  if (options.quantise_encoders) {
    sim_options.encoder_resolution_rad = models::Tx40EncoderResolutionRad();
  }
  sim_options.torque_noise_std = Eigen::VectorXd::Constant(6, options.torque_noise_std_nm);
  sim_options.motor_from_joint = models::Tx40MotorFromJoint();
  sim_options.seed = options.seed;
  sim_options.duration_s = options.duration_s;
  if (!SimulateClosedLoop(robot, reference, sim_options, &out->simulation, error)) return false;
  out->simulator_options = sim_options;

  if (!models::ComputeKhalilBaseParameters(robot, &out->base, error)) return false;
  out->theta_standard = robot.standard_parameters();
  out->theta_base = out->base.Reduce(out->theta_standard);
  const RobotSimulation& sim = out->simulation;
  const int ns = static_cast<int>(sim.time.size());
  const int decimated = (ns + options.condition_decimation - 1) / options.condition_decimation;
  Eigen::MatrixXd q(decimated, 6), qd(decimated, 6), qdd(decimated, 6);
  for (int k = 0; k < decimated; ++k) {
    q.row(k) = sim.q.row(k * options.condition_decimation);
    qd.row(k) = sim.qd.row(k * options.condition_decimation);
    qdd.row(k) = sim.qdd.row(k * options.condition_decimation);
  }
  Eigen::MatrixXd x, x_base;
  robot.StackedRegressor(q, qd, qdd, &x);
  out->base.SelectColumns(x, &x_base);
  out->base_regressor_condition = solvers::ConditionNumber(x_base, false);
  out->base_regressor_condition_normalised = solvers::ConditionNumber(x_base, true);
  out->max_tracking_error_rad = (sim.q_reference - sim.q).cwiseAbs().maxCoeff();
  return true;
}

}  // namespace dynid::tx40_study
