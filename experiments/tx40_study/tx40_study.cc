// tx40_study — the Stäubli TX40 study of Brunot et al. (2018): IDIM-LS and IDIM-IV with
// conventional and IRW-smoothing (IRWSM1/IRWSM2) pre-processing under three levels of prior
// knowledge.
//
// Question: how do the estimates of the 28 essential parameters, their relative standard
// deviations, the relative errors and the IDIM-IV iteration counts behave when the
// pre-processing filters are set well (omega_dyn = 10 Hz), badly (30 Hz) or not at all, and how
// close are they to the published values (Tables 2–6)? Method: Brunot et al. (2017) §2.3 and Brunot
// et al. (2018) §2 and §4 through solvers/idim.h. Default: a simulated experiment
// (experiments/tx40_study/tx40_experiment.h: closed loop at 5 kHz, encoder quantisation, torque
// noise, fixed seed) whose true parameters are known, so each table has the columns "true",
// "estimate (%σ)" and "published". Success: with good knowledge every true value lies within 3
// relative standard deviations of every method's estimate; with poor knowledge IDIM-LS degrades
// while IDIM-IV IRWSM1 does not; with no knowledge IDIM-IV IRWSM1 still converges.
//
//   tx40_study [--out_dir=out/tx40_study] [--duration_s=7] [--seed=2018] [--threads=0]
//   tx40_study --positions_csv=F --torques_csv=G [--sample_rate_hz=5000]
//              [--reference_csv=H]        (real data: columns m1..m6 each, motor side)
//
// Writes tables.md, estimates.csv, summary.json, per-scenario CSVs (torques_*, autocorrelation_*,
// estimates_*) and figures (*.png) to --out_dir, all at once at the end (nothing on failure).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/data/parallel_for.h"
#include "dynid/data/signal.h"
#include "dynid/models/tx40.h"
#include "dynid/solvers/essential_parameters.h"
#include "dynid/solvers/idim.h"
#include "experiments/common/cli.h"
#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_experiment.h"
#include "experiments/tx40_study/tx40_published.h"

DEFINE_string(out_dir, "out/tx40_study", "output folder");
DEFINE_bool(figures, true, "render PNG figures (needs python3 + matplotlib)");
DEFINE_int32(threads, 0, "worker threads for the method × scenario runs (0 = all cores)");
DEFINE_string(knowledge, "good,poor,none", "prior-knowledge levels to run (good, poor, none)");
DEFINE_string(methods, "",
              "comma-separated methods (default: the four of Brunot et al. (2018) for simulated "
              "data; for real data without a reference the trajectory-free ones). Known: "
              "idim_ls_conventional, idim_wls_conventional, idim_iv_conventional, "
              "idim_{ls,wls,iv}_irwsm{1,2}");
DEFINE_string(parameters, "base",
              "identified set: 'base' (all 55 base parameters, the 28 essential ones of Brunot "
              "et al. (2018) Table 2 listed first) or 'essential' (only those 28; on the "
              "simulated CAD robot the other base parameters are not zero, so leaving them out "
              "biases the estimates)");
// Simulation.
DEFINE_double(duration_s, 7.0, "simulated experiment length (s)");
DEFINE_int32(seed, 2018, "simulation seed (via points and torque noise)");
DEFINE_double(torque_noise_std, 0.3, "simulated joint-torque noise std (N m)");
DEFINE_bool(write_measurements, false,
            "also write the simulated motor-side positions/torques/reference as real-data CSVs");
// Real data.
DEFINE_string(positions_csv, "", "real data: motor positions (rad), columns m1..m6 in any order");
DEFINE_string(torques_csv, "", "real data: motor torques (N m), columns m1..m6 in any order");
DEFINE_string(reference_csv, "",
              "real data: motor-side reference positions (rad), columns m1..m6; enables "
              "IDIM-IV (velocities and accelerations by central differences)");
DEFINE_double(sample_rate_hz, 5000.0, "real data: sampling rate (Hz)");
DEFINE_double(pid_bandwidth_hz, 10.0,
              "real data, IDIM-IV: bandwidth of the triple-pole PID assumed for the auxiliary "
              "closed-loop model (the real controller gains are not in the data)");
// Estimation.
DEFINE_string(sample_selection, "on",
              "exclude low-velocity rows and the leading/trailing rest: on or off (on by default "
              "for real and simulated data: the simulated Coulomb friction chatters at rest just "
              "as real stiction does)");
DEFINE_double(velocity_threshold, 0.05, "sample selection: joint velocity threshold (rad/s)");
DEFINE_int32(guard_rows, 5,
             "sample selection: also exclude the rows within this many decimated rows of an "
             "excluded row of the same joint (the decimation filter smears the stiction held at "
             "rest into them); 0 = off");
DEFINE_double(guard_s, 0.04,
              "sample selection: the guard band is at least this long (s) as well: "
              "max(guard_rows, ceil(guard_s · decimated rate)) rows");
DEFINE_int32(max_iterations, 20, "IDIM-IV iteration cap (Brunot et al. (2018): 20)");
DEFINE_double(iv_tolerance, 1e-3,
              "IDIM-IV: tolerance of both relative changes (simulated torques and parameters)");

namespace {

using dynid::cli::Fail;

namespace data = dynid::data;
namespace models = dynid::models;
namespace solvers = dynid::solvers;
namespace published = dynid::experiments;

struct Method {
  std::string key, label;
  solvers::IdimEstimator estimator;
  solvers::IdimDifferentiator differentiator;
};

bool ParseMethod(const std::string& key, Method* method, std::string* error) {
  using solvers::IdimDifferentiator;
  using solvers::IdimEstimator;
  const std::vector<std::pair<std::string, IdimEstimator>> estimators = {
      {"ls", IdimEstimator::kLeastSquares},
      {"wls", IdimEstimator::kWeightedLeastSquares},
      {"iv", IdimEstimator::kInstrumentalVariables}};
  const std::vector<std::pair<std::string, IdimDifferentiator>> paths = {
      {"conventional", IdimDifferentiator::kConventional},
      {"irwsm1", IdimDifferentiator::kIrw1},
      {"irwsm2", IdimDifferentiator::kIrw2}};
  for (const auto& [e_name, e] : estimators) {
    for (const auto& [p_name, p] : paths) {
      if (key == "idim_" + e_name + "_" + p_name) {
        std::string upper = e_name;
        for (char& c : upper) c = static_cast<char>(std::toupper(c));
        method->key = key;
        method->label = "IDIM-" + upper + " " +
                        (p == IdimDifferentiator::kConventional ? std::string("conv.")
                         : p == IdimDifferentiator::kIrw1      ? std::string("IRWSM1")
                                                               : std::string("IRWSM2"));
        method->estimator = e;
        method->differentiator = p;
        return true;
      }
    }
  }
  *error = "unknown method '" + key + "'";
  return false;
}

std::string Number(double value, int precision = 4) {
  if (!std::isfinite(value)) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
  return buffer;
}

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

struct Job {
  Method method;
  dynid::experiments::PriorKnowledge knowledge;
  int system = -1;  // index into the built systems
  solvers::IdimResult result;
  bool ok = false;
  std::string error;
};

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(
      &argc, &argv,
      "tx40_study [--out_dir=D] (simulated default) | tx40_study --positions_csv=F "
      "--torques_csv=G [--sample_rate_hz=5000] [--reference_csv=H]");
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::string error;

  // ---- Flags ----
  const bool real = !FLAGS_positions_csv.empty() || !FLAGS_torques_csv.empty();
  if (real && (FLAGS_positions_csv.empty() || FLAGS_torques_csv.empty())) {
    return Fail(2, "real data needs both --positions_csv and --torques_csv");
  }
  if (!real && !FLAGS_reference_csv.empty()) {
    return Fail(2, "--reference_csv is only used with --positions_csv/--torques_csv");
  }
  if (!(FLAGS_sample_rate_hz > 0.0) || !std::isfinite(FLAGS_sample_rate_hz)) {
    return Fail(2, "--sample_rate_hz must be > 0");
  }
  if (!(FLAGS_duration_s > 0.0) || FLAGS_duration_s > 600.0) {
    return Fail(2, "--duration_s must be in (0, 600]");
  }
  if (!(FLAGS_torque_noise_std >= 0.0)) return Fail(2, "--torque_noise_std must be >= 0");
  if (FLAGS_threads < 0) return Fail(2, "--threads must be >= 0");
  if (FLAGS_max_iterations < 1) return Fail(2, "--max_iterations must be >= 1");
  if (!(FLAGS_iv_tolerance > 0.0)) return Fail(2, "--iv_tolerance must be > 0");
  if (!(FLAGS_velocity_threshold >= 0.0)) return Fail(2, "--velocity_threshold must be >= 0");
  if (FLAGS_guard_rows < 0) return Fail(2, "--guard_rows must be >= 0");
  if (!(FLAGS_guard_s >= 0.0)) return Fail(2, "--guard_s must be >= 0");
  if (!(FLAGS_pid_bandwidth_hz > 0.0)) return Fail(2, "--pid_bandwidth_hz must be > 0");
  if (FLAGS_parameters != "essential" && FLAGS_parameters != "base") {
    return Fail(2, "--parameters must be 'essential' or 'base', got '" + FLAGS_parameters + "'");
  }
  bool select_samples = true;
  if (FLAGS_sample_selection == "off") {
    select_samples = false;
  } else if (FLAGS_sample_selection != "on") {
    return Fail(2, "--sample_selection must be on or off, got '" + FLAGS_sample_selection + "'");
  }
  std::vector<dynid::experiments::PriorKnowledge> levels;
  for (const std::string& text : data::SplitList(FLAGS_knowledge)) {
    dynid::experiments::PriorKnowledge level;
    if (!dynid::experiments::ParsePriorKnowledge(text, &level, &error)) return Fail(2, "--knowledge: " + error);
    levels.push_back(level);
  }
  if (levels.empty()) return Fail(2, "--knowledge is empty");
  const bool have_reference = !real || !FLAGS_reference_csv.empty();
  std::vector<std::string> method_keys = data::SplitList(FLAGS_methods);
  if (method_keys.empty()) {
    if (!real) {
      method_keys = {"idim_ls_conventional", "idim_iv_conventional", "idim_iv_irwsm1",
                     "idim_iv_irwsm2"};
    } else {
      method_keys = {"idim_ls_conventional", "idim_ls_irwsm1", "idim_wls_irwsm1",
                     "idim_ls_irwsm2", "idim_wls_irwsm2"};
      if (have_reference) {
        method_keys.insert(method_keys.end(),
                           {"idim_iv_conventional", "idim_iv_irwsm1", "idim_iv_irwsm2"});
      }
    }
  }
  std::vector<Method> methods;
  for (const std::string& key : method_keys) {
    Method method;
    if (!ParseMethod(key, &method, &error)) return Fail(2, "--methods: " + error);
    if (method.estimator == solvers::IdimEstimator::kInstrumentalVariables && !have_reference) {
      return Fail(2, "--methods: " + key +
                         " needs a reference trajectory (give --reference_csv with real data)");
    }
    methods.push_back(method);
  }
  const int threads = FLAGS_threads > 0
                          ? FLAGS_threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));

  // ---- Data: simulated experiment or real measurements ----
  const models::SerialRobot robot = models::MakeTx40();  // Gautier wrist form (published form)
  models::BaseParameterSet base;
  if (!models::ComputeKhalilBaseParameters(robot, &base, &error)) return Fail(1, error);
  solvers::IdimModel model;
  // The 28 essential parameters of Brunot et al. (2018) first (the order of Table 2), then, for
  // 'base', the other base parameters.
  std::vector<std::string> names = models::Tx40EssentialNames();
  if (FLAGS_parameters == "base") {
    for (const std::string& name : base.names) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  if (!solvers::IdimModel::Create(robot, base, names, &model, &error)) return Fail(1, error);

  Eigen::MatrixXd q_measured, tau_measured;
  double fs = FLAGS_sample_rate_hz;
  std::unique_ptr<data::JointTrajectory> reference;
  data::RobotSimulatorOptions controller;
  data::Tx40Experiment experiment;
  Eigen::VectorXd theta_true;  // empty for real data
  std::string data_description;
  if (!real) {
    data::Tx40ExperimentOptions options;
    options.duration_s = FLAGS_duration_s;
    options.seed = static_cast<std::uint32_t>(FLAGS_seed);
    options.torque_noise_std_nm = FLAGS_torque_noise_std;
    fs = options.control_rate_hz;
    std::printf("tx40_study: simulating the TX40 experiment (%.1f s at %.0f Hz, seed %d)...\n",
                options.duration_s, fs, FLAGS_seed);
    std::fflush(stdout);
    if (!data::SimulateTx40Experiment(options, &experiment, &error)) return Fail(1, error);
    const data::RobotSimulation& sim = experiment.simulation;
    // The recorded channels go through the real-data interface: motor side → joint side.
    models::Tx40MotorToJoint(sim.q_motor, sim.tau_motor, &q_measured, &tau_measured);
    theta_true = model.FromStandard(experiment.theta_standard);
    reference = std::make_unique<solvers::SampledTrajectory>(sim.q_reference, sim.qd_reference,
                                                             sim.qdd_reference, fs);
    controller.control_rate_hz = fs;
    controller.gains =
        data::TunePidGains(robot, 0.5 * (models::Tx40JointLowerLimitRad() +
                                         models::Tx40JointUpperLimitRad()),
                           options.pid_bandwidth_hz);
    controller.duration_s = FLAGS_duration_s;
    std::ostringstream text;
    text << "simulated TX40 experiment: " << sim.time.size() << " samples at " << fs
         << " Hz, closed-loop PID (" << options.pid_bandwidth_hz
         << " Hz triple pole), encoder quantisation " << (options.quantise_encoders ? "on" : "off")
         << ", torque noise " << options.torque_noise_std_nm << " N m, seed " << FLAGS_seed
         << "; max tracking error " << Number(experiment.max_tracking_error_rad, 3)
         << " rad; cond(base regressor, true states) " << Number(experiment.base_regressor_condition)
         << "; true values: the simulated CAD set in Gautier's wrist form";
    data_description = text.str();
  } else {
    Eigen::MatrixXd motor_positions, motor_torques;
    if (!ReadSixColumns(FLAGS_positions_csv, "positions_csv", &motor_positions, &error) ||
        !ReadSixColumns(FLAGS_torques_csv, "torques_csv", &motor_torques, &error)) {
      return Fail(2, error);
    }
    if (motor_positions.rows() != motor_torques.rows()) {
      return Fail(2, FLAGS_positions_csv + " has " + std::to_string(motor_positions.rows()) +
                         " data rows but " + FLAGS_torques_csv + " has " +
                         std::to_string(motor_torques.rows()));
    }
    // Controller angles are the q of models::MakeTx40 (its geometry holds the DH zero offsets
    // q2 − pi/2, q3 + pi/2), so no offset is applied here.
    models::Tx40MotorToJoint(motor_positions, motor_torques, &q_measured, &tau_measured);
    if (!FLAGS_reference_csv.empty()) {
      Eigen::MatrixXd motor_reference, q_ref, unused;
      if (!ReadSixColumns(FLAGS_reference_csv, "reference_csv", &motor_reference, &error)) {
        return Fail(2, error);
      }
      if (motor_reference.rows() != motor_positions.rows()) {
        return Fail(2, FLAGS_reference_csv + " has " + std::to_string(motor_reference.rows()) +
                           " data rows, the positions " + std::to_string(motor_positions.rows()));
      }
      models::Tx40MotorToJoint(motor_reference, motor_reference, &q_ref, &unused);
      Eigen::MatrixXd qd_ref(q_ref.rows(), 6), qdd_ref(q_ref.rows(), 6);
      for (int j = 0; j < 6; ++j) {
        qd_ref.col(j) = data::CentralDifference(q_ref.col(j), 1.0 / fs);
        qdd_ref.col(j) = data::CentralSecondDifference(q_ref.col(j), 1.0 / fs);
      }
      reference = std::make_unique<solvers::SampledTrajectory>(q_ref, qd_ref, qdd_ref, fs);
      controller.control_rate_hz = fs;
      controller.gains = data::TunePidGains(
          robot, q_ref.row(0).transpose(), FLAGS_pid_bandwidth_hz);
      controller.duration_s = (q_ref.rows() - 1) / fs;
    }
    data_description = "real data: " + FLAGS_positions_csv + ", " + FLAGS_torques_csv + " (" +
                       std::to_string(q_measured.rows()) + " samples at " + Number(fs) +
                       " Hz, motor side → joint side by the TX40 gear/coupling matrices)";
    if (reference) {
      data_description += "; reference " + FLAGS_reference_csv +
                          "; IDIM-IV auxiliary model: CAD-tuned PID at " +
                          Number(FLAGS_pid_bandwidth_hz) +
                          " Hz (a substitute: the real controller gains are unknown)";
    }
  }
  std::printf("tx40_study: %s\n", data_description.c_str());
  std::printf("tx40_study: %d identified parameters (%s), sample selection %s\n",
              model.num_parameters(), FLAGS_parameters.c_str(), select_samples ? "on" : "off");
  std::fflush(stdout);

  // θ^0 of IDIM-IV (Brunot et al. (2018) eq. 6 step 1): CAD inertial values, zero friction.
  Eigen::VectorXd theta0 = model.FromStandard(robot.standard_parameters());
  for (int i = 0; i < model.num_parameters(); ++i) {
    if (model.IsFrictionOrOffset(i)) theta0[i] = 0.0;
  }
  std::unique_ptr<solvers::ClosedLoopAuxiliaryModel> auxiliary;
  if (reference) {
    auxiliary = std::make_unique<solvers::ClosedLoopAuxiliaryModel>(reference.get(), controller);
  }

  // ---- Pre-processed systems: one per (differentiator, knowledge) ----
  struct SystemKey {
    solvers::IdimDifferentiator differentiator;
    dynid::experiments::PriorKnowledge knowledge;
  };
  std::vector<SystemKey> system_keys;
  std::vector<Job> jobs;
  for (dynid::experiments::PriorKnowledge level : levels) {
    for (const Method& method : methods) {
      int index = -1;
      for (size_t s = 0; s < system_keys.size(); ++s) {
        if (system_keys[s].differentiator == method.differentiator &&
            system_keys[s].knowledge == level) {
          index = static_cast<int>(s);
        }
      }
      if (index < 0) {
        index = static_cast<int>(system_keys.size());
        system_keys.push_back({method.differentiator, level});
      }
      Job job;
      job.method = method;
      job.knowledge = level;
      job.system = index;
      jobs.push_back(job);
    }
  }
  std::vector<solvers::IdimSystem> systems(system_keys.size());
  std::vector<std::string> system_errors(system_keys.size());
  std::mutex print_mutex;
  data::ParallelFor(0, static_cast<int>(system_keys.size()), threads, [&](int s) {
    solvers::IdimPreprocessingOptions options = dynid::experiments::KnowledgePreprocessing(
        system_keys[s].knowledge, system_keys[s].differentiator, fs);
    options.select_samples = select_samples;
    options.selection.velocity_threshold = Eigen::VectorXd::Constant(1, FLAGS_velocity_threshold);
    options.selection_guard_rows = FLAGS_guard_rows;
    options.selection_guard_s = FLAGS_guard_s;
    std::string why;
    const bool ok = solvers::BuildIdimSystem(model, q_measured, tau_measured, options,
                                             &systems[s], &why);
    std::lock_guard<std::mutex> lock(print_mutex);
    if (!ok) system_errors[s] = why;
    std::printf("  [%5.1f s] pre-processed %-12s %-4s knowledge: %s\n", elapsed(),
                solvers::IdimDifferentiatorName(system_keys[s].differentiator),
                dynid::experiments::PriorKnowledgeName(system_keys[s].knowledge),
                ok ? (std::to_string(systems[s].x.rows()) + " rows").c_str()
                   : ("FAILED: " + why).c_str());
    std::fflush(stdout);
  });
  for (size_t s = 0; s < system_keys.size(); ++s) {
    if (!system_errors[s].empty()) {
      return Fail(1, std::string("pre-processing (") +
                         solvers::IdimDifferentiatorName(system_keys[s].differentiator) + ", " +
                         dynid::experiments::PriorKnowledgeName(system_keys[s].knowledge) +
                         " knowledge): " + system_errors[s]);
    }
  }

  // ---- Estimation: method × knowledge ----
  // Longest runs first (IDIM-IV without decimation iterates on ~200 000 rows), so that the
  // workers finish together.
  std::vector<int> order(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) order[i] = static_cast<int>(i);
  auto cost = [&](int i) {
    const bool iv = jobs[i].method.estimator == solvers::IdimEstimator::kInstrumentalVariables;
    return (iv ? 10 : 0) + (jobs[i].knowledge == dynid::experiments::PriorKnowledge::kNone ? 5 : 0) +
           (jobs[i].method.differentiator == solvers::IdimDifferentiator::kConventional ? 1 : 0);
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost(a) > cost(b); });
  std::atomic<int> done{0};
  data::ParallelFor(0, static_cast<int>(jobs.size()), threads, [&](int position) {
    Job& job = jobs[order[position]];
    solvers::IdimRunOptions options;
    options.estimator = job.method.estimator;
    options.iv.max_iterations = FLAGS_max_iterations;
    options.iv.torque_tolerance = FLAGS_iv_tolerance;
    options.iv.parameter_tolerance = FLAGS_iv_tolerance;
    job.ok = solvers::RunIdim(model, systems[job.system], options, theta0, auxiliary.get(),
                              &job.result, &job.error);
    std::lock_guard<std::mutex> lock(print_mutex);
    ++done;
    std::printf("  [%5.1f s] %2d/%zu %-20s %-4s: %s\n", elapsed(), done.load(), jobs.size(),
                job.method.label.c_str(), dynid::experiments::PriorKnowledgeName(job.knowledge),
                job.ok ? ("relative error " + Number(100 * job.result.fit.relative_error, 3) +
                          " %, " + job.result.message)
                             .c_str()
                       : ("FAILED: " + job.error).c_str());
    std::fflush(stdout);
  });
  const double compute_seconds = elapsed();

  // ---- Tables ----
  auto true_value = [&](int i) { return theta_true.size() ? theta_true[i] : std::nan(""); };
  std::ostringstream md;
  md << "# TX40 study (Brunot et al. (2018))\n\n" << data_description << ".\n\n";
  md << "Identified: " << model.num_parameters() << " parameters (" << FLAGS_parameters
     << "). Sample selection: "
     << (select_samples ? "ON (rows with |q'_j| < " + Number(FLAGS_velocity_threshold) +
                              " rad/s and the leading/trailing rest excluded, and a guard band "
                              "of max(" + std::to_string(FLAGS_guard_rows) + " rows, " +
                              Number(FLAGS_guard_s) +
                              " s) around them; rows used per run below)"
                        : std::string("off (all decimated rows used)"))
     << ". IDIM-IV: instruments from the noise-free closed-loop simulation driven by the "
        "reference with the current estimate, same decimation; θ⁰ = CAD inertias, zero "
        "friction; tolerance "
     << Number(FLAGS_iv_tolerance) << " on both relative changes, cap " << FLAGS_max_iterations
     << ".\n\n";
  nlohmann::json summary;
  summary["data"] = data_description;
  summary["simulated"] = !real;
  summary["parameters"] = FLAGS_parameters;
  summary["sample_selection"] = select_samples;
  summary["velocity_threshold_rad_per_s"] = FLAGS_velocity_threshold;
  summary["seed"] = FLAGS_seed;
  summary["compute_seconds"] = compute_seconds;
  std::ostringstream estimates_csv;
  estimates_csv << "method,scenario,parameter,estimate,rel_std_percent,published,true\n";
  const char* table_number[3] = {"2", "4", "6"};
  for (dynid::experiments::PriorKnowledge level : levels) {
    const std::string scenario = dynid::experiments::PriorKnowledgeName(level);
    const int t = static_cast<int>(level);
    md << "## Table " << table_number[t] << " — " << scenario
       << " prior knowledge: estimate (%σ eq. 8 / σ²(XᵀX)⁻¹; %σ HAC) [published]\n\n| param | "
          "true |";
    for (const Job& job : jobs) {
      if (job.knowledge == level) md << " " << job.method.label << " |";
    }
    md << "\n|---|---|";
    for (const Job& job : jobs) {
      if (job.knowledge == level) md << "---|";
    }
    md << "\n";
    for (int i = 0; i < model.num_parameters(); ++i) {
      const std::string& name = model.names()[i];
      md << "| " << name << " | " << Number(true_value(i)) << " |";
      for (const Job& job : jobs) {
        if (job.knowledge != level) continue;
        const published::PublishedEstimate pub =
            published::PublishedValue(job.method.key, scenario, name);
        std::string cell;
        if (job.ok) {
          const double estimate = job.result.fit.theta[i];
          const double rel = job.result.fit.relative_std_percent[i];
          const bool hac = job.result.hac.success;
          const double hac_std = hac ? job.result.hac.standard_deviation[i] : std::nan("");
          cell = Number(estimate, 3) + " (" + Number(rel, 3) +
                 (hac ? "; " + Number(100.0 * hac_std / std::abs(estimate), 3) : std::string()) +
                 ")";
          if (theta_true.size() &&
              std::abs(estimate - theta_true[i]) > 3.0 * job.result.fit.standard_deviation[i]) {
            cell += " **>3σ**";
          }
          if (theta_true.size() && hac && std::abs(estimate - theta_true[i]) > 3.0 * hac_std) {
            cell += " **>3σ HAC**";
          }
          estimates_csv << job.method.key << "," << scenario << "," << name << ","
                        << Number(estimate, 10) << "," << Number(rel, 6) << ","
                        << Number(pub.estimate, 6) << "," << Number(true_value(i), 10) << "\n";
        } else {
          cell = "failed";
        }
        if (std::isfinite(pub.estimate)) {
          cell += " [" + Number(pub.estimate, 3) +
                  (std::isfinite(pub.relative_std_percent)
                       ? " (" + Number(pub.relative_std_percent, 3) + ")"
                       : std::string()) +
                  "]";
        }
        md << " " << cell << " |";
      }
      md << "\n";
    }
    md << "\n";
  }
  // Table 3 and 5 and diagnostics.
  md << "## Table 3 — relative error ||y − Xθ||/||y|| (published), and Table 5 — IDIM-IV "
        "iterations (published)\n\n| method | scenario | relative error % | iterations | "
        "converged | cond(X) | rows | residual white (Ljung–Box, per joint) | time s |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
  for (const Job& job : jobs) {
    const std::string scenario = dynid::experiments::PriorKnowledgeName(job.knowledge);
    const double pub_error = published::PublishedRelativeErrorPercent(job.method.key, scenario);
    const int pub_iterations = published::PublishedIterations(job.method.key, scenario);
    const bool iv = job.method.estimator == solvers::IdimEstimator::kInstrumentalVariables;
    nlohmann::json entry;
    entry["method"] = job.method.key;
    entry["scenario"] = scenario;
    entry["success"] = job.ok;
    std::string white_text = "-";
    if (job.ok) {
      const solvers::IdimResult& r = job.result;
      std::string per_joint;
      nlohmann::json joints = nlohmann::json::array();
      for (const solvers::BlockWhiteness& block : r.whiteness.blocks) {
        per_joint += block.white ? "w" : "N";
        joints.push_back({{"joint", block.name},
                          {"white", block.white},
                          {"p_value", block.p_value},
                          {"fraction_outside", block.fraction_outside}});
      }
      white_text = (r.whiteness.all_white ? "yes " : "NO ") + per_joint;
      entry["relative_error"] = r.fit.relative_error;
      entry["iterations"] = r.iterations;
      entry["converged"] = r.converged;
      entry["condition_number"] = r.fit.condition_number;
      entry["rows_used"] = r.fit.num_rows;
      entry["residual_white"] = r.whiteness.all_white;
      entry["whiteness"] = joints;
      entry["message"] = r.message;
      entry["time_s"] = r.time_s;
      entry["simulations"] = r.simulations;
      if (r.hac.success) {
        entry["hac_lags"] = r.hac.lags;
        entry["hac_lag1_autocorrelation"] = r.hac.rho;
        std::vector<double> hac_rel(model.num_parameters());
        for (int i = 0; i < model.num_parameters(); ++i) {
          hac_rel[i] = 100.0 * r.hac.standard_deviation[i] / std::abs(r.fit.theta[i]);
        }
        entry["rel_std_percent_hac"] = hac_rel;
      }
      entry["torque_change"] = r.torque_change;
      entry["parameter_change"] = r.parameter_change;
      const solvers::IdimSystem& system = systems[job.system];
      entry["decimation_factor"] = system.options.decimation_factor;
      entry["position_cutoff_hz"] = system.options.position_cutoff_hz;
      entry["nvr_position"] = system.nvr_position;
      entry["nvr_velocity"] = system.nvr_velocity;
      if (!system.selection_report.empty()) entry["selection"] = system.selection_report;
      if (theta_true.size()) {
        int outside = 0;
        for (int i = 0; i < model.num_parameters(); ++i) {
          if (std::abs(r.fit.theta[i] - theta_true[i]) > 3.0 * r.fit.standard_deviation[i]) {
            ++outside;
          }
        }
        entry["parameters_outside_3sigma"] = outside;
        if (r.hac.success) {
          int outside_hac = 0;
          for (int i = 0; i < model.num_parameters(); ++i) {
            outside_hac += std::abs(r.fit.theta[i] - theta_true[i]) >
                           3.0 * r.hac.standard_deviation[i];
          }
          entry["parameters_outside_3sigma_hac"] = outside_hac;
        }
        entry["parameter_error_norm_relative"] =
            (r.fit.theta - theta_true).norm() / theta_true.norm();
      }
      md << "| " << job.method.label << " | " << scenario << " | "
         << Number(100 * r.fit.relative_error, 3) << " ("
         << (std::isfinite(pub_error) ? Number(pub_error, 3) : std::string("–")) << ") | "
         << (iv ? std::to_string(r.iterations) : std::string("-"));
      if (iv && pub_iterations != 0) {
        md << " (" << (pub_iterations < 0 ? std::string("no conv.") : std::to_string(pub_iterations))
           << ")";
      }
      md << " | " << (iv ? (r.converged ? "yes" : "**NO**") : "-") << " | "
         << Number(r.fit.condition_number, 4) << " | " << r.fit.num_rows << " | " << white_text
         << " | " << Number(r.time_s, 3) << " |\n";
    } else {
      entry["error"] = job.error;
      md << "| " << job.method.label << " | " << scenario << " | failed: " << job.error
         << " | | | | | | |\n";
    }
    if (std::isfinite(pub_error)) entry["published_relative_error_percent"] = pub_error;
    summary["runs"].push_back(entry);
  }
  md << "\nWhiteness: 'w' = white, 'N' = not white (Ljung–Box, 20 lags, 5 %) per joint; the "
        "relative standard deviations of a run whose residuals are not white are not valid "
        "(Brunot et al. (2018) §4.3). Each estimate shows two relative standard deviations: "
        "the first from σ²(XᵀX)⁻¹ (LS) or Brunot et al. (2018) eq. 8 (IV), which assume white "
        "residuals; the second from the HAC (Newey–West, Andrews bandwidth) sandwich on the "
        "decimated rows, valid under correlated residuals. Entries marked **>3σ** (first) or "
        "**>3σ HAC** (second) lie more than 3 standard deviations from the true value.\n";
  // Essential parameters of THIS data set (Brunot et al. (2018) §4.1 procedure) on the first LS
  // system (good knowledge when it was run), beside the 28 of the paper.
  for (const Job& job : jobs) {
    if (job.method.estimator == solvers::IdimEstimator::kInstrumentalVariables) continue;
    solvers::EssentialParametersOptions essential_options;
    essential_options.least_squares.row_blocks = systems[job.system].blocks;
    const solvers::EssentialParametersSummary essential = solvers::SelectEssentialParameters(
        systems[job.system].x, systems[job.system].y, model.names(), essential_options);
    md << "\n## Essential parameters of these data (" << job.method.label << ", "
       << dynid::experiments::PriorKnowledgeName(job.knowledge)
       << " knowledge; removal while the relative error grows by < 0.5 points)\n\n```\n"
       << essential.Report() << "```\n";
    int in_seed = 0;
    for (const std::string& name : essential.essential_names) {
      const auto& seed_names = models::Tx40EssentialNames();
      in_seed += std::find(seed_names.begin(), seed_names.end(), name) != seed_names.end();
    }
    md << "\n" << essential.essential_names.size() << " kept, of which " << in_seed
       << " are among the 28 essential parameters of Brunot et al. (2018). The study "
          "identifies all base parameters by default (--parameters=base): leaving the others "
          "out biases the estimates of the simulated CAD robot (e.g. iam6 = 0.0114, "
          "mx3 = 0.0326 are not zero).\n";
    summary["essential_selection"] = {{"method", job.method.key},
                                      {"scenario", dynid::experiments::PriorKnowledgeName(job.knowledge)},
                                      {"success", essential.success},
                                      {"kept", essential.essential_names},
                                      {"message", essential.message}};
    break;
  }
  bool any_selection = false;
  for (size_t s = 0; s < systems.size(); ++s) {
    if (!systems[s].selection_report.empty()) {
      if (!any_selection) md << "\n## Rows used (sample selection)\n\n";
      any_selection = true;
      md << "### " << solvers::IdimDifferentiatorName(system_keys[s].differentiator) << ", "
         << dynid::experiments::PriorKnowledgeName(system_keys[s].knowledge) << " knowledge\n\n```\n"
         << systems[s].selection_report << "\n```\n";
    }
  }
  std::printf("\n%s", md.str().c_str());

  // ---- Outputs ----
  data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error) || !stage.WriteText("tables.md", md.str(), &error) ||
      !stage.WriteText("estimates.csv", estimates_csv.str(), &error)) {
    return Fail(1, error);
  }
  std::vector<std::pair<data::Figure, std::string>> figures;
  for (dynid::experiments::PriorKnowledge level : levels) {
    const std::string scenario = dynid::experiments::PriorKnowledgeName(level);
    std::vector<const Job*> level_jobs;
    for (const Job& job : jobs) {
      if (job.knowledge == level && job.ok) level_jobs.push_back(&job);
    }
    if (level_jobs.empty()) continue;
    // Measured vs estimated torques of the first IV IRWSM1 run (else the first run).
    const Job* shown = level_jobs[0];
    for (const Job* job : level_jobs) {
      if (job->method.key == "idim_iv_irwsm1") shown = job;
    }
    const solvers::IdimSystem& system = systems[shown->system];
    const int ns = system.num_samples;
    // At most ~2500 plotted samples per joint (undecimated records: every stride-th sample).
    const int stride = std::max(1, ns / 2500);
    const int shown_samples = (ns + stride - 1) / stride;
    Eigen::MatrixXd torque_table = Eigen::MatrixXd::Constant(shown_samples, 1 + 18, std::nan(""));
    std::vector<std::string> header = {"t"};
    for (int k = 0; k < shown_samples; ++k) {
      torque_table(k, 0) = k * stride / system.sample_rate_hz;
    }
    const Eigen::VectorXd estimated = system.x * shown->result.fit.theta;
    for (int j = 0; j < 6; ++j) {
      for (const char* what : {"measured", "estimated", "residual"}) {
        header.push_back(std::string(what) + "_" + std::to_string(j + 1));
      }
    }
    for (Eigen::Index r = 0; r < system.x.rows(); ++r) {
      const int j = system.blocks.BlockOf(static_cast<int>(r));
      if (system.blocks.sample_of_row[r] % stride != 0) continue;
      const int k = system.blocks.sample_of_row[r] / stride;
      torque_table(k, 1 + 3 * j) = system.y[r];
      torque_table(k, 2 + 3 * j) = estimated[r];
      torque_table(k, 3 + 3 * j) = system.y[r] - estimated[r];
    }
    // Residual autocorrelation per joint and method.
    const int lags = static_cast<int>(level_jobs[0]->result.whiteness.blocks[0].autocorrelation.size());
    Eigen::MatrixXd acf(lags, 1 + 6 * level_jobs.size());
    std::vector<std::string> acf_header = {"lag"};
    for (int k = 0; k < lags; ++k) acf(k, 0) = k;
    for (size_t m = 0; m < level_jobs.size(); ++m) {
      for (int j = 0; j < 6; ++j) {
        acf_header.push_back(level_jobs[m]->method.key + "_joint" + std::to_string(j + 1));
        acf.col(1 + 6 * m + j) = level_jobs[m]->result.whiteness.blocks[j].autocorrelation;
      }
    }
    // Estimates normalised by the truth (or by the first method's estimate on real data), ±3σ.
    // The figure shows the 28 essential parameters (the first rows); estimates.csv has all.
    const int b = std::min<int>(model.num_parameters(),
                                static_cast<int>(models::Tx40EssentialNames().size()));
    Eigen::MatrixXd est(b, 1 + 2 * level_jobs.size());
    std::vector<std::string> est_header = {"index"};
    for (int i = 0; i < b; ++i) est(i, 0) = i + 1;
    for (size_t m = 0; m < level_jobs.size(); ++m) {
      est_header.push_back(level_jobs[m]->method.key + "_ratio");
      est_header.push_back(level_jobs[m]->method.key + "_3sigma");
      for (int i = 0; i < b; ++i) {
        const double scale =
            std::abs(theta_true.size() ? theta_true[i] : level_jobs[0]->result.fit.theta[i]);
        est(i, 1 + 2 * m) = level_jobs[m]->result.fit.theta[i] / (scale > 0 ? scale : 1.0) *
                            (theta_true.size() && theta_true[i] < 0 ? -1.0 : 1.0);
        est(i, 2 + 2 * m) =
            3.0 * level_jobs[m]->result.fit.standard_deviation[i] / (scale > 0 ? scale : 1.0);
      }
    }
    const std::string torques_name = "torques_" + scenario + ".csv";
    const std::string acf_name = "autocorrelation_" + scenario + ".csv";
    const std::string est_name = "estimates_" + scenario + ".csv";
    if (!stage.WriteText(torques_name, data::FormatCsv(header, torque_table), &error) ||
        !stage.WriteText(acf_name, data::FormatCsv(acf_header, acf), &error) ||
        !stage.WriteText(est_name, data::FormatCsv(est_header, est), &error)) {
      return Fail(1, error);
    }
    if (!FLAGS_figures) continue;
    data::Figure torques;
    torques.title = shown->method.label + ", " + scenario +
                    " knowledge: measured vs estimated (decimated) joint torques and residuals" +
                    (stride > 1 ? " (every " + std::to_string(stride) + "th sample shown)"
                                : std::string());
    torques.columns = 2;
    torques.width_in = 14.0;
    for (int j = 0; j < 6; ++j) {
      const std::string s = std::to_string(j + 1);
      data::Panel panel{"joint " + s, "t [s]", "N m", {}, {}};
      panel.series.push_back(data::LineSeries(torques_name, "t", "measured_" + s, "measured"));
      panel.series.push_back(data::LineSeries(torques_name, "t", "estimated_" + s, "X θ"));
      panel.series.push_back(data::LineSeries(torques_name, "t", "residual_" + s, "residual"));
      torques.panels.push_back(panel);
    }
    figures.push_back({torques, "torques_" + scenario});
    data::Figure autocorrelation;
    autocorrelation.title = "Residual autocorrelation, " + scenario +
                            " knowledge (dashed: ±1.96/√N of the first method)";
    autocorrelation.columns = 2;
    autocorrelation.width_in = 14.0;
    for (int j = 0; j < 6; ++j) {
      data::Panel panel{"joint " + std::to_string(j + 1), "lag", "r", {}, {}};
      const double bound = level_jobs[0]->result.whiteness.blocks[j].bound;
      panel.hlines = {bound, -bound};
      for (const Job* job : level_jobs) {
        panel.series.push_back(data::LineSeries(acf_name, "lag",
                                                job->method.key + "_joint" + std::to_string(j + 1),
                                                job->method.label));
      }
      autocorrelation.panels.push_back(panel);
    }
    figures.push_back({autocorrelation, "autocorrelation_" + scenario});
    data::Figure estimates;
    estimates.title = "Essential parameters: estimate / |true| with ±3σ bars, " + scenario +
                      " knowledge (1 = true value; order of Table 2)";
    estimates.width_in = 14.0;
    estimates.panel_height_in = 4.0;
    data::Panel panel{"", "parameter index", theta_true.size() ? "estimate / true" : "estimate / first method", {}, {}};
    panel.hlines = {1.0};
    for (const Job* job : level_jobs) {
      data::Series series;
      series.csv = est_name;
      series.x = "index";
      series.y = job->method.key + "_ratio";
      series.lower = job->method.key + "_3sigma";
      series.upper = job->method.key + "_3sigma";
      series.style = "errorbar";
      series.label = job->method.label;
      panel.series.push_back(series);
    }
    estimates.panels.push_back(panel);
    figures.push_back({estimates, "estimates_" + scenario});
  }
  // Each figure is an independent python process: render them on the worker threads.
  // A figure that fails fails the run; the first failure is reported.
  std::string figure_error;
  data::ParallelFor(0, static_cast<int>(figures.size()), threads, [&](int i) {
    std::string why;
    if (!data::RenderFigure(figures[i].first, stage.Path(""), figures[i].second, &why)) {
      std::lock_guard<std::mutex> lock(print_mutex);
      if (figure_error.empty()) figure_error = why;
    }
  });
  if (!figure_error.empty()) return Fail(1, figure_error);
  if (!real && FLAGS_write_measurements) {
    const data::RobotSimulation& sim = experiment.simulation;
    const std::vector<std::string> motor = {"m1", "m2", "m3", "m4", "m5", "m6"};
    const Eigen::MatrixXd motor_reference = sim.q_reference * models::Tx40MotorFromJoint().transpose();
    if (!stage.WriteText("measured_motor_positions.csv", data::FormatCsv(motor, sim.q_motor),
                         &error) ||
        !stage.WriteText("measured_motor_torques.csv", data::FormatCsv(motor, sim.tau_motor),
                         &error) ||
        !stage.WriteText("reference_motor_positions.csv", data::FormatCsv(motor, motor_reference),
                         &error)) {
      return Fail(1, error);
    }
  }
  summary["total_seconds"] = elapsed();
  if (!stage.WriteJson("summary.json", summary, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  std::printf("tx40_study: %zu runs in %.1f s (estimation %.1f s); wrote %s/tables.md, "
              "estimates.csv, summary.json%s\n",
              jobs.size(), elapsed(), compute_seconds, FLAGS_out_dir.c_str(),
              FLAGS_figures ? " and figures" : "");
  // A run that produced no estimate is a result (its row in tables.md says why), not an error
  // of the program: say so, exit 0.
  for (const Job& job : jobs) {
    if (!job.ok) {
      std::cerr << "tx40_study: warning: " << job.method.label << ", "
                << dynid::experiments::PriorKnowledgeName(job.knowledge) << " knowledge: " << job.error
                << "\n";
    }
  }
  return 0;
}
