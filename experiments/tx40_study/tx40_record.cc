// experiments/tx40_study/tx40_record — the identified model and the record: the simulated TX40
// experiment or the measured motor-side CSVs (see tx40_record.h).
#include "experiments/tx40_study/tx40_record.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/signal.h"
#include "dynid/models/tx40.h"
#include "dynid/solvers/idim.h"
#include "experiments/common/progress.h"
#include "experiments/tx40_study/tx40_experiment.h"
#include "experiments/tx40_study/tx40_flags.h"

namespace dynid::tx40_study {
namespace {

// Reads a motor-side CSV with the columns m1..m6 (motor 1..6), bound by name in any order so
// that swapped or mislabelled motor columns cannot be read silently as other motors.
bool ReadSixColumns(const std::string& path, const std::string& flag, Eigen::MatrixXd* values,
                    std::string* error) {
  static const std::vector<std::string> kMotorColumns = {"m1", "m2", "m3", "m4", "m5", "m6"};
  data::CsvTable table;
  std::vector<int> columns;
  if (!data::ReadCsv(path, &table, error) ||
      !data::BindColumns(table, path, kMotorColumns, &columns, error)) {
    *error = "--" + flag + ": " + *error;
    return false;
  }
  if (table.values.rows() < 2) {
    *error = "--" + flag + ": " + path + ": no data rows";
    return false;
  }
  values->resize(table.values.rows(), 6);
  for (int j = 0; j < 6; ++j) values->col(j) = table.values.col(columns[j]);
  return true;
}

}  // namespace

bool SmoothedReference(const Eigen::MatrixXd& q, double fs, double cutoff_hz,
                       std::unique_ptr<data::JointTrajectory>* reference, std::string* error) {
  data::SecondOrderSections sos;
  if (!data::DesignButterworthLowPass(4, cutoff_hz, fs, &sos, error)) return false;
  const Eigen::Index ns = q.rows();
  Eigen::MatrixXd q_ref(ns, q.cols()), qd_ref(ns, q.cols()), qdd_ref(ns, q.cols());
  for (Eigen::Index j = 0; j < q.cols(); ++j) {
    Eigen::VectorXd smoothed;
    if (!data::FiltFilt(sos, q.col(j), &smoothed, error)) return false;
    q_ref.col(j) = smoothed;
    qd_ref.col(j) = data::CentralDifference(smoothed, 1.0 / fs);
    qdd_ref.col(j) = data::CentralSecondDifference(smoothed, 1.0 / fs);
  }
  *reference = std::make_unique<solvers::SampledTrajectory>(std::move(q_ref), std::move(qd_ref),
                                                            std::move(qdd_ref), fs);
  return true;
}

std::string Number(double value, int precision) {
  if (!std::isfinite(value)) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
  return buffer;
}

bool BuildModel(const models::SerialRobot& robot, const std::string& parameters,
                solvers::IdimModel* model, std::string* error) {
  models::BaseParameterSet base;
  if (!models::ComputeKhalilBaseParameters(robot, &base, error)) return false;
  // The 28 essential parameters of Brunot et al. (2018) first (the order of Table 2), then, for
  // 'base', the other base parameters.
  std::vector<std::string> names = models::Tx40EssentialNames();
  for (const std::string& name : base.names) {
    // 'essential' with torque offsets: the offsets too (off1..off6).
    const bool offset = name.size() == 4 && name.compare(0, 3, "off") == 0;
    if ((parameters == "base" || offset) &&
        std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return solvers::IdimModel::Create(robot, base, names, model, error);
}

Tx40ExperimentOptions ExperimentOptions(const Settings& settings, std::uint32_t seed) {
  Tx40ExperimentOptions options;
  options.duration_s = settings.duration_s;
  options.seed = seed;
  if (settings.realistic) {
    ApplyImperfections(settings.imperfections, &options);
  } else {
    options.torque_noise_std_nm = settings.torque_noise_std;
  }
  return options;
}

std::string ImperfectionsText(const Tx40ExperimentOptions& options) {
  std::ostringstream text;
  if (options.stribeck_ratio == 0.0 && options.friction_asymmetry == 0.0 &&
      options.load_friction == 0.0 && options.motor_torque_noise_std_nm == 0.0 &&
      options.motor_torque_lsb_nm == 0.0) {
    text << "ideal simulation (the identified model's friction, joint-side white torque noise "
         << options.torque_noise_std_nm << " N m, encoder quantisation "
         << (options.quantise_encoders && options.encoder_resolution_scale > 0.0 ? "on" : "off")
         << ")";
    return text.str();
  }
  text << "realistic simulation (friction beyond Coulomb + viscous: Stribeck excess "
       << options.stribeck_ratio << " fc at v_s = " << options.stribeck_velocity_rad_s
       << " rad/s, direction asymmetry " << options.friction_asymmetry << " fc, load-dependent "
       << options.load_friction << " |tau|; motor-side torque noise "
       << options.motor_torque_noise_std_nm << " N m, LSB " << options.motor_torque_lsb_nm
       << " N m; encoders ";
  if (options.quantise_encoders && options.encoder_resolution_scale > 0.0) {
    text << options.encoder_resolution_scale << " × Table 1 resolution";
  } else {
    text << "not quantised";
  }
  if (options.torque_noise_std_nm > 0.0) {
    text << "; joint-side torque noise " << options.torque_noise_std_nm << " N m";
  }
  text << ")";
  return text.str();
}

namespace {

Eigen::VectorXd TrueParameters(const Settings& settings, const models::SerialRobot& robot,
                               const solvers::IdimModel& model, const Tx40Experiment& experiment) {
  const std::vector<std::string>& names = robot.parameter_names();
  if (static_cast<int>(names.size()) == experiment.theta_standard.size()) {
    return model.FromStandard(experiment.theta_standard);
  }
  // The identified robot carries torque offsets the simulated one does not: its standard
  // parameters by name, and as the offsets' truth the constant part of the unmodelled friction
  // on the rows the selection keeps (moving joints): the direction asymmetry a fc_j, plus
  // a fcm6 on joints 5 and 6 (motor 6 acts on both). The Stribeck excess is not constant and
  // has no such equivalent.
  const models::SerialRobot simulated = models::MakeTx40();
  const std::vector<std::string>& from = simulated.parameter_names();
  auto value = [&](const std::string& name) {
    const auto it = std::find(from.begin(), from.end(), name);
    CHECK(it != from.end()) << "the simulated TX40 has no parameter " << name;
    return experiment.theta_standard[it - from.begin()];
  };
  const double asymmetry = settings.realistic ? settings.imperfections.friction_asymmetry : 0.0;
  Eigen::VectorXd standard(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (name.size() == 4 && name.compare(0, 3, "off") == 0) {
      const std::string joint = name.substr(3);
      standard[i] = asymmetry * value("fc" + joint);
      if (joint == "5" || joint == "6") standard[i] += asymmetry * value("fcm6");
    } else {
      standard[i] = value(name);
    }
  }
  return model.FromStandard(standard);
}

}  // namespace

bool SimulateRecord(const Settings& settings, const models::SerialRobot& robot,
                    const solvers::IdimModel& model, std::uint32_t seed, Record* record,
                    std::string* error) {
  const Tx40ExperimentOptions options = ExperimentOptions(settings, seed);
  const double fs = options.control_rate_hz;
  record->fs = fs;
  Tx40Experiment& experiment = record->experiment;
  if (!SimulateTx40Experiment(options, &experiment, error)) return false;
  data::RobotSimulation& sim = experiment.simulation;
  const Eigen::Index num_samples = sim.time.size();
  // The recorded channels go through the real-data interface: motor side → joint side.
  models::Tx40MotorToJoint(sim.q_motor, sim.tau_motor, &record->q_measured, &record->tau_measured);
  record->theta_true = TrueParameters(settings, robot, model, experiment);
  // The reference trajectory takes the simulated reference's series (the positions are copied
  // when --write_measurements writes them at the end), and the simulation keeps only what that
  // writes: the runs need none of its other series (12 series of Ns × 6 doubles, 0.58 GB at
  // 10⁶ samples).
  Eigen::MatrixXd q_reference;
  if (settings.write_measurements) {
    q_reference = sim.q_reference;
  } else {
    q_reference = std::move(sim.q_reference);
  }
  record->reference = std::make_unique<solvers::SampledTrajectory>(
      std::move(q_reference), std::move(sim.qd_reference), std::move(sim.qdd_reference), fs);
  data::RobotSimulation kept;
  if (settings.write_measurements) {
    kept.q_reference = std::move(sim.q_reference);
    kept.q_motor = std::move(sim.q_motor);
    kept.tau_motor = std::move(sim.tau_motor);
  }
  sim = std::move(kept);
  data::RobotSimulatorOptions& controller = record->controller;
  controller.control_rate_hz = fs;
  controller.gains = data::TunePidGains(
      robot, 0.5 * (models::Tx40JointLowerLimitRad() + models::Tx40JointUpperLimitRad()),
      options.pid_bandwidth_hz);
  controller.duration_s = settings.duration_s;
  record->iv_reference = "the simulated reference trajectory";
  std::ostringstream text;
  text << "simulated TX40 experiment: " << num_samples << " samples at " << fs
       << " Hz, closed-loop PID (" << options.pid_bandwidth_hz << " Hz triple pole), "
       << ImperfectionsText(options) << ", seed " << seed << "; max tracking error "
       << Number(experiment.max_tracking_error_rad, 3) << " rad; cond(base regressor, true states) "
       << Number(experiment.base_regressor_condition)
       << "; true values: the simulated CAD set in Gautier's wrist form";
  record->data_description = text.str();
  return true;
}

int LoadRecord(const Settings& settings, const models::SerialRobot& robot,
               const solvers::IdimModel& model, Record* record, std::string* error) {
  const bool real = settings.real;
  const bool select_samples = settings.select_samples;
  Eigen::MatrixXd& q_measured = record->q_measured;
  Eigen::MatrixXd& tau_measured = record->tau_measured;
  double& fs = record->fs;
  fs = settings.sample_rate_hz;
  std::unique_ptr<data::JointTrajectory>& reference = record->reference;
  data::RobotSimulatorOptions& controller = record->controller;
  std::string& data_description = record->data_description;
  if (!real) {
    std::printf("tx40_study: simulating the TX40 experiment (%s, %.1f s at %.0f Hz, seed %d)...\n",
                settings.realistic ? "realistic" : "ideal", settings.duration_s,
                Tx40ExperimentOptions().control_rate_hz, settings.seed);
    std::fflush(stdout);
    cli::Stage stage("simulating the experiment");
    if (!SimulateRecord(settings, robot, model, static_cast<std::uint32_t>(settings.seed), record,
                        error)) {
      return 1;
    }
    stage.End();
  } else {
    Eigen::MatrixXd motor_positions, motor_torques;
    cli::Stage stage("reading the records, files", settings.reference_csv.empty() ? 2 : 3);
    if (!ReadSixColumns(settings.positions_csv, "positions_csv", &motor_positions, error)) {
      return 2;
    }
    stage.Add();
    if (!ReadSixColumns(settings.torques_csv, "torques_csv", &motor_torques, error)) return 2;
    stage.Add();
    if (motor_positions.rows() != motor_torques.rows()) {
      *error = settings.positions_csv + " has " + std::to_string(motor_positions.rows()) +
               " data rows but " + settings.torques_csv + " has " +
               std::to_string(motor_torques.rows());
      return 2;
    }
    // Controller angles are the q of models::MakeTx40 (its geometry holds the DH zero offsets
    // q2 − pi/2, q3 + pi/2), so no offset is applied here.
    models::Tx40MotorToJoint(motor_positions, motor_torques, &q_measured, &tau_measured);
    motor_positions.resize(0, 0);  // the joint-side record replaces them (96 MB at 10⁶ samples)
    motor_torques.resize(0, 0);
    if (!settings.reference_csv.empty()) {
      Eigen::MatrixXd motor_reference, q_ref, unused;
      if (!ReadSixColumns(settings.reference_csv, "reference_csv", &motor_reference, error)) {
        return 2;
      }
      if (motor_reference.rows() != q_measured.rows()) {
        *error = settings.reference_csv + " has " + std::to_string(motor_reference.rows()) +
                 " data rows, the positions " + std::to_string(q_measured.rows());
        return 2;
      }
      stage.Add();
      models::Tx40MotorToJoint(motor_reference, motor_reference, &q_ref, &unused);
      motor_reference.resize(0, 0);
      unused.resize(0, 0);
      Eigen::MatrixXd qd_ref(q_ref.rows(), 6), qdd_ref(q_ref.rows(), 6);
      for (int j = 0; j < 6; ++j) {
        qd_ref.col(j) = data::CentralDifference(q_ref.col(j), 1.0 / fs);
        qdd_ref.col(j) = data::CentralSecondDifference(q_ref.col(j), 1.0 / fs);
      }
      controller.control_rate_hz = fs;
      controller.gains =
          data::TunePidGains(robot, q_ref.row(0).transpose(), settings.pid_bandwidth_hz);
      controller.duration_s = (q_ref.rows() - 1) / fs;
      // Moved, not copied: 3 × Ns × 6 doubles (144 MB for 10⁶ samples).
      reference = std::make_unique<solvers::SampledTrajectory>(std::move(q_ref), std::move(qd_ref),
                                                               std::move(qdd_ref), fs);
      record->iv_reference = "the reference of " + settings.reference_csv;
    } else if (settings.substitute_reference) {
      // No reference trajectory: a well-tuned controller tracks its reference closely, so the
      // measured motion, smoothed, stands in for it (a stated substitute).
      if (!SmoothedReference(q_measured, fs, settings.substitute_cutoff_hz, &reference, error)) {
        *error = "--substitute_cutoff_hz: smoothing the measured positions: " + *error;
        return 2;
      }
      controller.control_rate_hz = fs;
      controller.gains =
          data::TunePidGains(robot, q_measured.row(0).transpose(), settings.pid_bandwidth_hz);
      controller.duration_s = (q_measured.rows() - 1) / fs;
      record->substitute_reference = true;
      record->iv_reference = std::string(kSubstituteReference) +
                             ": the measured joint positions through a zero-phase Butterworth "
                             "(order 4) at " +
                             Number(settings.substitute_cutoff_hz) +
                             " Hz, velocities and accelerations by central differences";
    }
    stage.End();
    data_description = "real data: " + settings.positions_csv + ", " + settings.torques_csv + " (" +
                       std::to_string(q_measured.rows()) + " samples at " + Number(fs) +
                       " Hz, motor side → joint side by the TX40 gear/coupling matrices)";
    if (reference) {
      data_description += "; IDIM-IV reference: " + record->iv_reference +
                          "; IDIM-IV auxiliary model: CAD-tuned PID at " +
                          Number(settings.pid_bandwidth_hz) +
                          " Hz (a substitute: the real controller gains are unknown)";
    } else {
      data_description += "; no IDIM-IV (no reference: --substitute_reference=false)";
    }
  }
  std::printf("tx40_study: %s\n", data_description.c_str());
  std::printf("tx40_study: %d identified parameters (%s%s), sample selection %s",
              model.num_parameters(), settings.parameters.c_str(),
              settings.torque_offsets ? ", torque offsets" : "", select_samples ? "on" : "off");
  if (select_samples) {
    std::printf(", guard band max(%d rows, %s s) (%s)", settings.guard_rows,
                Number(settings.guard_s).c_str(), settings.guard_source.c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace dynid::tx40_study
