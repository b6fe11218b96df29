// experiments/scara_study/scara_record — the simulated or measured record of scara_study (see
// scara_record.h).
#include "experiments/scara_study/scara_record.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/models/scara3.h"
#include "dynid/solvers/irw_smoother.h"
#include "dynid/solvers/nvr_fit.h"

namespace dynid::scara_study {

namespace {

// The required columns in the order used below, and the optional velocities.
const std::vector<std::string> kMeasuredColumns = {"t", "q1", "q2", "d3", "tau1", "tau2", "f3"};
const std::vector<std::string> kVelocityColumns = {"dq1", "dq2", "dd3"};
constexpr int kMinMeasuredRows = 200;

// 0-based index of `name` in the header, -1 when absent.
int ColumnIndex(const data::CsvTable& table, const std::string& name) {
  const auto it = std::find(table.header.begin(), table.header.end(), name);
  return it == table.header.end() ? -1 : static_cast<int>(it - table.header.begin());
}

// The indexes of the required columns, then those of the velocity columns when all three are
// there; false naming the first missing column, or the missing part of the velocities.
bool FindMeasuredColumns(const data::CsvTable& table, const std::string& path,
                         std::vector<int>* indexes, std::string* error) {
  indexes->clear();
  for (const std::string& name : kMeasuredColumns) {
    indexes->push_back(ColumnIndex(table, name));
    if (indexes->back() < 0) {
      *error = path + ":1: missing column '" + name +
               "' (the header needs t,q1,q2,d3,tau1,tau2,f3, optionally dq1,dq2,dd3)";
      return false;
    }
  }
  std::string missing;
  for (const std::string& name : kVelocityColumns) {
    const int index = ColumnIndex(table, name);
    if (index < 0) missing += (missing.empty() ? "" : ",") + name;
    if (index >= 0) indexes->push_back(index);
  }
  const size_t velocities_found = indexes->size() - kMeasuredColumns.size();
  if (velocities_found != 0 && velocities_found != kVelocityColumns.size()) {
    *error = path + ":1: missing column(s) " + missing +
             " (give the velocities dq1,dq2,dd3 all three or none)";
    return false;
  }
  return true;
}

// Time strictly increasing and uniform to 1 % of the mean step per line (the step goes to
// *step); `time_column` is the 0-based column of t in the file, named in the messages.
bool CheckMeasuredTime(const data::CsvTable& table, const std::string& path, int time_column,
                       double* step, std::string* error) {
  return data::CheckTimeColumnIncreasing(table, path, error, time_column, true) &&
         data::CheckUniformTimeStep(table, path, time_column, true, 0.01,
                                    "the filters discretise with one step", step, error);
}

// IRWSM2 of each joint position with its NVR fitted by maximum likelihood: sim.q, qd, qdd of
// the record (the kinematics of the regressors); the fits go to record->source.
bool SmoothJointPositions(const MeasuredColumns& columns, Record* record, std::string* error) {
  const std::vector<std::string> names = {"q1", "q2", "d3"};
  solvers::NvrFitOptions fit_options;
  fit_options.model = solvers::IrwModel::kIrw2;
  fit_options.criterion = solvers::NvrCriterion::kMaximumLikelihood;
  std::vector<solvers::NvrFitSummary> fits;
  std::vector<solvers::IrwSmootherResult> smoothed;
  if (!solvers::SmoothColumnsWithFittedNvr(columns.positions, columns.step, fit_options, false,
                                           names, &fits, &smoothed, error)) {
    return false;
  }
  for (int j = 0; j < 3; ++j) {
    if (fits[j].at_bound) {
      std::cerr << "scara_study: warning: the NVR of " << names[j] << " (" << fits[j].nvr
                << ") lies at the edge of the search interval\n";
    }
  }
  data::RobotSimulation& sim = record->sim;
  const int num = static_cast<int>(columns.time.size());
  sim.q.resize(num, 3);
  sim.qd.resize(num, 3);
  sim.qdd.resize(num, 3);
  for (int j = 0; j < 3; ++j) {
    sim.q.col(j) = smoothed[j].position;
    sim.qd.col(j) = smoothed[j].velocity;
    sim.qdd.col(j) = smoothed[j].acceleration;
    record->source["irw"][names[j]] = {{"model", "irwsm2"},
                                       {"nvr", fits[j].nvr},
                                       {"nvr_at_search_bound", fits[j].at_bound},
                                       {"sigma", std::sqrt(smoothed[j].sigma2)},
                                       {"log_likelihood", fits[j].log_likelihood}};
  }
  return true;
}

// IRWSM2 of each column of `signals` (Ns × 3) with its NVR fitted by maximum likelihood, on one
// thread (a Monte Carlo runs records in parallel); the fits go to (*fits)[names[j]].
bool SmoothFitted(const Eigen::MatrixXd& signals, double step,
                  const std::vector<std::string>& names,
                  std::vector<solvers::IrwSmootherResult>* smoothed, nlohmann::json* fits,
                  std::string* error) {
  solvers::NvrFitOptions fit_options;
  fit_options.model = solvers::IrwModel::kIrw2;
  fit_options.criterion = solvers::NvrCriterion::kMaximumLikelihood;
  std::vector<solvers::NvrFitSummary> summaries;
  if (!solvers::SmoothColumnsWithFittedNvr(signals, step, fit_options, false, names, &summaries,
                                           smoothed, error, 1)) {
    return false;
  }
  for (size_t j = 0; j < names.size(); ++j) {
    (*fits)[names[j]] = {{"model", "irwsm2"},
                         {"nvr", summaries[j].nvr},
                         {"nvr_at_search_bound", summaries[j].at_bound},
                         {"sigma", std::sqrt((*smoothed)[j].sigma2)}};
  }
  return true;
}

// The kinematics of LS_irw and HNN_irw from what the filters see (Record::q_irw).
bool SmoothNoisyJointStates(Record* record, std::string* error) {
  const Eigen::MatrixXd& y = record->y;
  const Eigen::MatrixXd positions = y(Eigen::all, std::vector<int>{0, 2, 4});
  const Eigen::MatrixXd velocities = y(Eigen::all, std::vector<int>{1, 3, 5});
  std::vector<solvers::IrwSmootherResult> from_positions, from_velocities;
  record->irw_fits = nlohmann::json::object();
  if (!SmoothFitted(positions, record->dt, {"q1", "q2", "d3"}, &from_positions, &record->irw_fits,
                    error) ||
      !SmoothFitted(velocities, record->dt, {"dq1", "dq2", "dd3"}, &from_velocities,
                    &record->irw_fits, error)) {
    *error = "IRWSM2 of the noisy joint states: " + *error;
    return false;
  }
  const int num = record->num;
  record->q_irw.resize(num, 3);
  record->qd_irw.resize(num, 3);
  record->qdd_irw.resize(num, 3);
  for (int j = 0; j < 3; ++j) {
    record->q_irw.col(j) = from_positions[j].position;
    record->qd_irw.col(j) = from_velocities[j].position;
    record->qdd_irw.col(j) = from_velocities[j].velocity;
  }
  return true;
}

void DescribeSimulatedRecord(const Record& record, nlohmann::json* summary) {
  nlohmann::json& s = *summary;
  s["flags"] = EstimatorFlags();
  s["flags"]["duration_s"] = FLAGS_duration_s;
  s["flags"]["dt"] = FLAGS_dt;
  s["flags"]["seed"] = FLAGS_seed;
  s["flags"]["pid_bandwidth_hz"] = FLAGS_pid_bandwidth_hz;
  s["flags"]["seed_repeats"] = FLAGS_seed_repeats;
  s["irw_kinematics"] = {
      {"used_by", "LS_irw, HNN_irw"},
      {"q", "IRWSM2 of the noisy measured positions"},
      {"qd_qdd", "IRWSM2 of the noisy measured velocities (smoothed signal and its derivative)"},
      {"fits", record.irw_fits}};
  const int num = record.num;
  const data::RobotSimulation& sim = record.sim;
  s["samples"] = num;
  for (int j = 0; j < 3; ++j) {
    s["pid_gains"].push_back({{"joint", j + 1},
                              {"kp", record.gains.kp[j]},
                              {"ki", record.gains.ki[j]},
                              {"kd", record.gains.kd[j]}});
  }
  for (int i = 0; i < 6; ++i) s["measurement_std"].push_back(record.r_std(i));
  const Eigen::Vector4d& truth = record.truth;
  s["true_parameters"] = {
      {"IZZ1", truth(0)}, {"IZZ2", truth(1)}, {"mr", truth(2)}, {"m3", truth(3)}};
  Eigen::Vector3d rms_tau;
  for (int j = 0; j < 3; ++j) rms_tau(j) = std::sqrt(sim.tau.col(j).squaredNorm() / num);
  s["torque_rms"] = {rms_tau(0), rms_tau(1), rms_tau(2)};
  s["tracking_error_rms_identification_run"] = {
      std::sqrt((sim.q_reference - sim.q).col(0).squaredNorm() / num),
      std::sqrt((sim.q_reference - sim.q).col(1).squaredNorm() / num),
      std::sqrt((sim.q_reference - sim.q).col(2).squaredNorm() / num)};
}

// RMS of each column of an Ns × 3 signal.
Eigen::Vector3d RmsPerJoint(const Eigen::MatrixXd& signal) {
  return (signal.colwise().squaredNorm().transpose() / signal.rows()).cwiseSqrt();
}

void DescribeMeasuredRecord(const Record& record, nlohmann::json* summary) {
  nlohmann::json& s = *summary;
  s["flags"] = EstimatorFlags();
  s["flags"]["measurements_csv"] = FLAGS_measurements_csv;
  s["flags"]["measurement_std"] = FLAGS_measurement_std;
  s["samples"] = record.num;
  s["record"] = record.source;
  s["record"]["left_out"] = {"true_parameters and errors against them",
                             "EKF sign statistics (they redraw the sensor noise of a simulation)",
                             "closed-loop tracking validation (true plant and PID gains)"};
  for (int i = 0; i < 6; ++i) s["measurement_std"].push_back(record.r_std(i));
  s["measurement_std_source"] =
      FLAGS_measurement_std.empty() ? "published R scaled by --noise_scale" : "--measurement_std";
  s["true_parameters"] = nullptr;
  const Eigen::Vector3d rms_tau = RmsPerJoint(record.sim.tau_measured);
  s["torque_rms"] = {rms_tau(0), rms_tau(1), rms_tau(2)};
}

}  // namespace

// One draw per entry in row order: the record and the sign statistics draw their noise alike.
Eigen::MatrixXd AddMeasurementNoise(const Eigen::MatrixXd& y_clean, const Vector6d& r_std,
                                    std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::MatrixXd y(y_clean.rows(), 6);
  for (int k = 0; k < y_clean.rows(); ++k) {
    for (int i = 0; i < 6; ++i) y(k, i) = y_clean(k, i) + r_std(i) * g(rng);
  }
  return y;
}

bool SimulateRecord(const data::JointTrajectory& reference, const Eigen::Vector3d& torque_noise,
                    std::uint64_t seed, Record* record, std::string* error) {
  const models::SerialRobot robot = models::MakeScara3(SimulatedLinkData());
  record->truth = models::Scara3BaseParametersFromLinks().AsVector();
  record->torque_noise = torque_noise;
  data::RobotSimulatorOptions sim_options;
  sim_options.control_rate_hz = 1.0 / FLAGS_dt;
  sim_options.integration_substeps = 10;
  sim_options.gains =
      data::TunePidGains(robot, Eigen::Vector3d(0.0, 0.0, 0.15), FLAGS_pid_bandwidth_hz);
  sim_options.torque_noise_std = torque_noise;
  sim_options.seed = static_cast<std::uint32_t>(seed);
  record->gains = sim_options.gains;
  if (!data::SimulateClosedLoop(robot, reference, sim_options, &record->sim, error)) {
    *error = "closed-loop simulation: " + *error;
    return false;
  }
  const data::RobotSimulation& sim = record->sim;
  const int num = static_cast<int>(sim.time.size());
  record->num = num;
  record->dt = FLAGS_dt;
  record->duration_s = FLAGS_duration_s;
  record->kinematics = "noise-free q, q', q'' of the record";
  record->r_std = PublishedMeasurementStd();
  record->r_paper = record->r_std.array().square().matrix().asDiagonal();
  record->y_clean.resize(num, 6);
  for (int k = 0; k < num; ++k) {
    for (int j = 0; j < 3; ++j) {
      record->y_clean(k, 2 * j) = sim.q(k, j);
      record->y_clean(k, 2 * j + 1) = sim.qd(k, j);
    }
  }
  record->y =
      AddMeasurementNoise(record->y_clean, record->r_std, static_cast<std::uint32_t>(seed) + 17u);
  return SmoothNoisyJointStates(record, error);
}

bool ReadMeasuredColumns(const std::string& path, MeasuredColumns* columns, std::string* error) {
  data::CsvTable table;
  if (!data::ReadCsv(path, &table, error)) return false;
  std::vector<int> indexes;
  if (!FindMeasuredColumns(table, path, &indexes, error)) return false;
  const int rows = static_cast<int>(table.values.rows());
  if (rows < kMinMeasuredRows) {
    *error = path + ": expected at least " + std::to_string(kMinMeasuredRows) + " data rows, got " +
             std::to_string(rows);
    return false;
  }
  if (!CheckMeasuredTime(table, path, indexes[0], &columns->step, error)) return false;
  const auto pick = [&table, &indexes](int first) {
    Eigen::MatrixXd m(table.values.rows(), 3);
    for (int j = 0; j < 3; ++j) m.col(j) = table.values.col(indexes[first + j]);
    return m;
  };
  columns->path = path;
  columns->time = table.values.col(indexes[0]);
  columns->positions = pick(1);
  columns->torques = pick(4);
  if (indexes.size() > kMeasuredColumns.size()) columns->velocities = pick(7);
  return true;
}

bool MakeMeasuredRecord(const MeasuredColumns& columns, const Eigen::Vector3d& torque_noise,
                        const Vector6d& r_std, Record* record, std::string* error) {
  const int num = static_cast<int>(columns.time.size());
  const bool has_velocities = columns.velocities.size() > 0;
  record->measured = true;
  record->truth.setConstant(std::numeric_limits<double>::quiet_NaN());
  record->torque_noise = torque_noise;
  record->num = num;
  record->dt = columns.step;
  record->duration_s = columns.time(num - 1) - columns.time(0);
  record->kinematics = "IRWSM2 q, q', q'' of the measured positions (NVR by maximum likelihood)";
  record->r_std = r_std;
  record->r_paper = record->r_std.array().square().matrix().asDiagonal();
  record->source = {{"measurements_csv", columns.path},
                    {"sample_period_s", columns.step},
                    {"duration_s", record->duration_s},
                    {"regressor_kinematics", "irwsm2"},
                    {"filter_velocities", has_velocities ? "measured" : "irwsm2"}};
  if (!SmoothJointPositions(columns, record, error)) return false;
  data::RobotSimulation& sim = record->sim;
  sim.time = columns.time;
  sim.q_measured = columns.positions;
  sim.tau = columns.torques;
  sim.tau_measured = columns.torques;
  const Eigen::MatrixXd& velocities = has_velocities ? columns.velocities : sim.qd;
  record->y.resize(num, 6);
  for (int j = 0; j < 3; ++j) {
    record->y.col(2 * j) = columns.positions.col(j);
    record->y.col(2 * j + 1) = velocities.col(j);
  }
  return true;
}

void DescribeRecord(const Record& record, nlohmann::json* summary) {
  if (record.measured) {
    DescribeMeasuredRecord(record, summary);
  } else {
    DescribeSimulatedRecord(record, summary);
  }
}

}  // namespace dynid::scara_study
