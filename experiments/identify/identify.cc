// identify — the dynamic parameters of any serial robot from its description (URDF, or a DH
// table in JSON/YAML) and a recording, with physically consistent estimates and held-out
// validation.
//
// Question: which inertial and drive parameters explain the recorded torques, how well are they
// determined, are they physically possible, and do they predict torques on data they were not
// fitted to? Method: the IDIM pipeline of Brunot et al. (2018) on the chain (IRW smoothing
// differentiators with the NVR fitted per joint by maximum likelihood — on the time stamps when
// they jitter —, base parameters of the measured equations, IDIM-LS and Gautier's WLS), the
// physically consistent fit of the standard parameters (log-Cholesky pseudo-inertias after
// Rucker & Wensing (2022)), and the torque prediction of the description's values and of each
// estimate on a held-out record (identify_run.h). Success: small validation errors, an LS
// estimate close to the consistent one, and parameters reported as undetermined where the
// motion does not excite them.
//
//   identify --robot=FILE.urdf|FILE.json|FILE.yaml [--chain=ROOT:TIP] [--drives=FILE]
//            --data=CSV [--validation_data=CSV | --validation_fraction=0.3]
//            [--effort_joints=a,b] [--method=ls|wls|pc|prior] [--hac_bandwidth=acf|ar1]
//            [--hac_critical=fixed_b|normal]
//            --out_dir=D
//   identify ... --monte_carlo=N [--seed=S] [--monte_carlo_threads=T] [--monte_carlo_resume]
//            [--monte_carlo_block=L] [--monte_carlo_encoder_step=D]   (identify_monte_carlo.h)
//   identify ... --coverage_csv=OUT/coverage.csv   (intervals labelled with their coverage)
//
// The CSV format is described in identify_log.h and README.md; outputs in identify_output.h.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/models/drive_description.h"
#include "dynid/models/robot_description.h"
#include "dynid/solvers/residual_analysis.h"
#include "experiments/common/cli.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/common/mpi_job.h"
#include "experiments/common/progress.h"
#include "experiments/identify/identify_log.h"
#include "experiments/identify/identify_monte_carlo.h"
#include "experiments/identify/identify_output.h"
#include "experiments/identify/identify_run.h"

DEFINE_string(robot, "",
              "robot description: URDF (.urdf, .xml; needs --chain) or DH table (.json, "
              ".yaml, .yml)");
DEFINE_string(chain, "", "URDF chain ROOT:TIP (root and tip link names)");
DEFINE_string(drives, "",
              "drive description (JSON/YAML: gears, transmission, motor constants, friction "
              "terms); default: unit gears, joint-side data, rotor inertia, viscous and Coulomb "
              "friction and a torque offset on every joint");
DEFINE_string(data, "",
              "identification record (CSV: t, q_<joint>, tau_<joint> or i_<joint>, "
              "optional dq_<joint>)");
DEFINE_string(validation_data, "",
              "held-out record in the same format (default: the last "
              "--validation_fraction of --data)");
DEFINE_double(validation_fraction, 0.3,
              "without --validation_data: the last fraction of --data held out for validation "
              "(0 = no validation), in [0, 0.9]");
DEFINE_string(effort_joints, "",
              "joints whose recorded effort is used (default: every joint with a tau_/i_ column)");
DEFINE_string(method, "pc",
              "the estimate written to parameters.csv: pc (physically consistent), ls, wls, iv "
              "(needs qref_<joint> columns) or prior; all available ones are computed and "
              "compared");
DEFINE_string(differentiator, "irwsm2",
              "irwsm1, irwsm2 (IRW smoothing, NVR by maximum likelihood) or conventional (a "
              "uniform record only)");
DEFINE_double(cutoff_hz, 0.0,
              "conventional differentiator: Butterworth cut-off of the positions (Hz; 0 = none)");
DEFINE_int32(decimation, 1, "parallel decimation factor (1 = none; > 1 needs a uniform record)");
DEFINE_double(velocity_threshold, 0.0,
              "sample selection: rows where a joint moves slower than this (rad/s or m/s) are "
              "left out of that joint's equations, with a guard band (0 = no selection)");
DEFINE_double(rest_velocity, 0.002,
              "velocities below this (rad/s or m/s) count as rest: set to zero, so the Coulomb "
              "term predicts the offset there instead of following the smoother's noise (0 = "
              "off)");
DEFINE_double(prior_weight, 0.0,
              "physically consistent fit: weight of the pull toward the description's values "
              "(0 = none; needs a consistent description)");
DEFINE_double(pid_bandwidth_hz, 10.0,
              "IDIM-IV: bandwidth of the PID controller of the simulated closed loop, tuned on the "
              "inertia of the starting estimate (the real gains are better: --kp, --ki, --kd)");
DEFINE_string(kp, "", "IDIM-IV: proportional gains, one per joint (N m/rad or N/m)");
DEFINE_string(ki, "", "IDIM-IV: integral gains, one per joint");
DEFINE_string(kd, "", "IDIM-IV: derivative gains, one per joint");
DEFINE_int32(iv_max_iterations, 20, "IDIM-IV: iteration cap");
DEFINE_string(iv_reference, "log",
              "IDIM-IV: the closed loop's reference, 'log' (the qref_<joint> columns) or "
              "'measured' (a substitute for logs without one: the smoothed measured positions)");
DEFINE_bool(essential, false,
            "also select the essential parameters (Brunot et al. (2018) §4.1) on the LS system: "
            "the report and summary.json list them");
DEFINE_double(essential_max_error_increase, 0.005,
              "--essential: largest accepted growth of the relative error (a fraction)");
DEFINE_string(hac_bandwidth, "acf",
              "bandwidth rule of the HAC covariances (ls_hac_std, pc_hac_std, and the ls_hac, "
              "wls_hac, pc_hac and iv_hac intervals of --monte_carlo): acf (Andrews' rule with its "
              "constant from "
              "the residuals' whole autocorrelation function, flat-top estimates) or ar1 "
              "(Andrews' AR(1) plug-in from the residuals' lag-1 autocorrelation)");
DEFINE_string(hac_critical, "fixed_b",
              "critical value c of the HAC intervals estimate +- c sigma (the report's, and the "
              "ls_hac, wls_hac, pc_hac and iv_hac intervals of --monte_carlo): fixed_b (Kiefer & "
              "Vogelsang's fixed-b value of the Bartlett kernel at b = (L + 1) / N) or normal "
              "(1.96)");
DEFINE_string(out_dir, "out/identify", "output folder");
DEFINE_bool(figures, true, "render torques.png and parameters.png (needs python3 + matplotlib)");
DEFINE_int32(threads, 0, "threads for the per-joint smoothers (0 = all cores)");
DEFINE_int32(seed, 1,
             "--monte_carlo: seed of the first bootstrap run (runs --seed, --seed + 1, ...)");
DEFINE_int32(monte_carlo_block, 0,
             "--monte_carlo: block length of the moving-block bootstrap [samples] (0 = the "
             "Politis-White automatic length of the residuals' autocorrelation)");
DEFINE_double(monte_carlo_encoder_step, 0.0,
              "--monte_carlo: also perturb every position sample by a quantisation error "
              "uniform within +- step / 2 [rad, m] (0 = the measured positions)");
DEFINE_string(coverage_csv, "",
              "a coverage.csv of identify --monte_carlo at this run's flags: each interval is "
              "labelled with its measured coverage (parameters.csv, console, summary.json)");

namespace {

using dynid::cli::Fail;
namespace identify = dynid::identify;
namespace models = dynid::models;

bool ParseMethod(const std::string& text, identify::Method* method) {
  for (identify::Method m : identify::kMethods) {
    if (text == identify::MethodName(m)) {
      *method = m;
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // One process, or a rank of identify_mpi's MPI job sharing out the --monte_carlo runs.
  const dynid::cli::MpiJob job(&argc, &argv);
  dynid::cli::SetMonteCarloRanks(job.rank(), job.size(), dynid::cli::MpiJob::Barrier,
                                 dynid::cli::MpiJob::Gather);
  dynid::cli::ParseFlags(&argc, &argv,
                         "identify --robot=FILE [--chain=ROOT:TIP] [--drives=FILE] --data=CSV "
                         "[--validation_data=CSV] [--method=pc|ls|wls|prior] "
                         "[--monte_carlo=N [--seed=S] [--monte_carlo_threads=T] "
                         "[--monte_carlo_resume]] [--coverage_csv=FILE] --out_dir=D");
  // Coverage files record the HAC bandwidth rule and critical value at every value, their
  // defaults too: a file that does not name them was measured with unknown ones and is quoted
  // by no run.
  dynid::cli::RecordFlagsAlways({"hac_bandwidth", "hac_critical"});
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  // Flags first: nothing is read or computed before they are all valid.
  if (FLAGS_robot.empty()) return Fail(2, "--robot: give a URDF or DH-table file");
  if (FLAGS_data.empty()) return Fail(2, "--data: give the identification record (CSV)");
  identify::Method method;
  if (!ParseMethod(FLAGS_method, &method)) {
    return Fail(2, "--method: expected pc, ls, wls, iv or prior, got '" + FLAGS_method + "'");
  }
  identify::IdentifyOptions options;
  dynid::solvers::IdimPreprocessingOptions& pre = options.preprocessing;
  if (FLAGS_differentiator == "irwsm1") {
    pre.differentiator = dynid::solvers::IdimDifferentiator::kIrw1;
  } else if (FLAGS_differentiator == "irwsm2") {
    pre.differentiator = dynid::solvers::IdimDifferentiator::kIrw2;
  } else if (FLAGS_differentiator == "conventional") {
    pre.differentiator = dynid::solvers::IdimDifferentiator::kConventional;
  } else {
    return Fail(2, "--differentiator: expected irwsm1, irwsm2 or conventional, got '" +
                       FLAGS_differentiator + "'");
  }
  if (!(FLAGS_cutoff_hz >= 0.0) || !std::isfinite(FLAGS_cutoff_hz)) {
    return Fail(2, "--cutoff_hz must be >= 0");
  }
  pre.position_cutoff_hz = FLAGS_cutoff_hz;
  if (FLAGS_decimation < 1) return Fail(2, "--decimation must be >= 1");
  pre.decimation_factor = FLAGS_decimation;
  if (!(FLAGS_velocity_threshold >= 0.0) || !std::isfinite(FLAGS_velocity_threshold)) {
    return Fail(2, "--velocity_threshold must be >= 0");
  }
  if (FLAGS_velocity_threshold > 0.0) {
    pre.select_samples = true;
    pre.selection.velocity_threshold = Eigen::VectorXd::Constant(1, FLAGS_velocity_threshold);
  }
  if (!(FLAGS_rest_velocity >= 0.0) || !std::isfinite(FLAGS_rest_velocity)) {
    return Fail(2, "--rest_velocity must be >= 0");
  }
  pre.rest_velocity = FLAGS_rest_velocity;
  if (!(FLAGS_validation_fraction >= 0.0 && FLAGS_validation_fraction <= 0.9)) {
    return Fail(2, "--validation_fraction must be in [0, 0.9]");
  }
  if (!FLAGS_validation_data.empty() &&
      gflags::GetCommandLineFlagInfoOrDie("validation_fraction").is_default == false) {
    return Fail(2, "give --validation_data or --validation_fraction, not both");
  }
  if (!(FLAGS_prior_weight >= 0.0) || !std::isfinite(FLAGS_prior_weight)) {
    return Fail(2, "--prior_weight must be >= 0");
  }
  options.prior_weight = FLAGS_prior_weight;
  if (FLAGS_threads < 0) return Fail(2, "--threads must be >= 0");
  if (!(FLAGS_pid_bandwidth_hz > 0.0) || !std::isfinite(FLAGS_pid_bandwidth_hz)) {
    return Fail(2, "--pid_bandwidth_hz must be > 0");
  }
  options.pid_bandwidth_hz = FLAGS_pid_bandwidth_hz;
  if (FLAGS_iv_max_iterations < 1) return Fail(2, "--iv_max_iterations must be >= 1");
  options.iv.max_iterations = FLAGS_iv_max_iterations;
  if (FLAGS_iv_reference != "log" && FLAGS_iv_reference != "measured") {
    return Fail(2, "--iv_reference: expected log or measured, got '" + FLAGS_iv_reference + "'");
  }
  options.iv_reference_from_measured = FLAGS_iv_reference == "measured";
  using dynid::solvers::HacBandwidth;
  using dynid::solvers::HacCriticalValue;
  if (!dynid::cli::ParseNamed(FLAGS_hac_bandwidth,
                              {HacBandwidth::kAr1, HacBandwidth::kAutocorrelation},
                              dynid::solvers::HacBandwidthName, &options.hac_bandwidth)) {
    return Fail(2, "--hac_bandwidth: expected ar1 or acf, got '" + FLAGS_hac_bandwidth + "'");
  }
  if (!dynid::cli::ParseNamed(FLAGS_hac_critical,
                              {HacCriticalValue::kNormal, HacCriticalValue::kFixedB},
                              dynid::solvers::HacCriticalValueName, &options.hac_critical_value)) {
    return Fail(2, "--hac_critical: expected fixed_b or normal, got '" + FLAGS_hac_critical + "'");
  }
  if (!(FLAGS_essential_max_error_increase > 0.0 && FLAGS_essential_max_error_increase < 1.0)) {
    return Fail(2, "--essential_max_error_increase must be in (0, 1)");
  }
  options.essential = FLAGS_essential;
  options.essential_max_error_increase = FLAGS_essential_max_error_increase;
  options.num_threads = FLAGS_threads;
  if (!dynid::cli::ValidateMonteCarloFlags(FLAGS_out_dir, &error)) return Fail(2, error);
  if (FLAGS_seed < 0) return Fail(2, "--seed must be >= 0");
  if (FLAGS_monte_carlo_block < 0) {
    return Fail(2, "--monte_carlo_block must be >= 0 (0 = automatic)");
  }
  if (!(FLAGS_monte_carlo_encoder_step >= 0.0) || !std::isfinite(FLAGS_monte_carlo_encoder_step)) {
    return Fail(2, "--monte_carlo_encoder_step must be >= 0");
  }
  if (FLAGS_monte_carlo == 0) {
    for (const char* flag : {"monte_carlo_block", "monte_carlo_encoder_step", "seed"}) {
      if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
        return Fail(2, std::string("--") + flag + " applies to --monte_carlo=N only");
      }
    }
  } else if (!FLAGS_coverage_csv.empty()) {
    return Fail(2, "--coverage_csv is quoted by a single run, not with --monte_carlo");
  }
  identify::BootstrapOptions bootstrap;
  bootstrap.block_length = FLAGS_monte_carlo_block;
  bootstrap.encoder_step = FLAGS_monte_carlo_encoder_step;
  identify::QuotedCoverage coverage;
  if (!identify::LoadIdentifyCoverage(FLAGS_coverage_csv, &coverage, &error)) {
    return Fail(2, error);
  }
  std::string root, tip;
  const std::string extension = FLAGS_robot.substr(FLAGS_robot.find_last_of('.') + 1);
  const bool urdf = extension == "urdf" || extension == "xml";
  if (urdf) {
    if (FLAGS_chain.empty()) return Fail(2, "--chain=ROOT:TIP is needed with a URDF");
    if (!models::ParseChainSpec(FLAGS_chain, &root, &tip, &error))
      return Fail(2, "--chain: " + error);
  } else if (!FLAGS_chain.empty()) {
    return Fail(2, "--chain applies to URDF descriptions only (a DH table is one chain)");
  }
  if (FLAGS_figures && job.rank() == 0) dynid::data::StartFigureRenderer();

  // The robot.
  models::ChainDescription chain;
  if (!models::ReadChainDescription(FLAGS_robot, root, tip, &chain, &error)) return Fail(2, error);
  models::DriveDescription drives;
  if (FLAGS_drives.empty()) {
    drives = models::DefaultDrives(chain);
  } else if (!models::ReadDriveDescription(FLAGS_drives, chain, &drives, &error)) {
    return Fail(2, error);
  }
  std::optional<models::SerialRobot> robot;
  if (!models::MakeSerialRobot(chain, drives, &robot, &error)) return Fail(2, error);
  for (const auto& [flag, text, gains] :
       {std::make_tuple("kp", FLAGS_kp, &options.kp), std::make_tuple("ki", FLAGS_ki, &options.ki),
        std::make_tuple("kd", FLAGS_kd, &options.kd)}) {
    if (text.empty()) continue;
    std::vector<double> values;
    if (!dynid::cli::ParseNumberList(flag, text, robot->num_joints(), 0.0, &values, &error)) {
      return Fail(2, error);
    }
    *gains = Eigen::Map<const Eigen::VectorXd>(values.data(), robot->num_joints());
  }
  if (FLAGS_prior_weight > 0.0 && !chain.has_inertia) {
    return Fail(2,
                "--prior_weight: " + FLAGS_robot + " gives no inertial parameters to pull toward");
  }

  // The records.
  const std::vector<std::string> effort_joints = dynid::data::SplitList(FLAGS_effort_joints);
  identify::JointLog log, validation;
  {
    dynid::cli::Stage reading("reading " + FLAGS_data);
    if (!identify::ReadJointLog(FLAGS_data, chain, drives, effort_joints, &log, &error)) {
      return Fail(2, error);
    }
  }
  const std::vector<std::string> findings = log.findings;
  std::string validation_text = "none";
  if (!FLAGS_validation_data.empty()) {
    if (!identify::ReadJointLog(FLAGS_validation_data, chain, drives, effort_joints, &validation,
                                &error)) {
      return Fail(2, error);
    }
    if (validation.measured != log.measured) {
      return Fail(
          2, FLAGS_validation_data + ": its measured joints differ from those of " + FLAGS_data);
    }
    validation_text = "`" + FLAGS_validation_data + "`";
  } else if (FLAGS_validation_fraction > 0.0) {
    const int ns = log.num_samples();
    const int held_out = static_cast<int>(std::floor(FLAGS_validation_fraction * ns));
    validation = log.Slice(ns - held_out, held_out);
    log = log.Slice(0, ns - held_out);
    char text[160];
    std::snprintf(text, sizeof(text), "the last %.0f %% of the record (t >= %.4g s)",
                  100.0 * FLAGS_validation_fraction, validation.t[0]);
    validation_text = text;
  }
  std::printf("identify: %s, %d joints (%s), %d identification samples, validation: %s\n",
              robot->name().c_str(), robot->num_joints(), FLAGS_robot.c_str(), log.num_samples(),
              validation_text.c_str());
  for (const std::string& f : findings) std::printf("  note: %s\n", f.c_str());
  std::fflush(stdout);

  if (!dynid::cli::CheckOutDir(FLAGS_out_dir, &error)) return Fail(2, error);
  // --monte_carlo: the parametric bootstrap of the identification record and the coverage of
  // every method's intervals.
  if (FLAGS_monte_carlo > 0) {
    if (!identify::RunIdentifyMonteCarlo(*robot, log, options, bootstrap, FLAGS_out_dir,
                                         static_cast<std::uint64_t>(FLAGS_seed), FLAGS_figures,
                                         &error)) {
      return Fail(1, error);
    }
    return 0;
  }
  identify::IdentifyResults results;
  if (!identify::RunIdentify(*robot, log, validation, options, &results, &error)) {
    return Fail(1, error);
  }
  if (!results.Estimate(method).available) {
    return Fail(1, std::string(identify::MethodLabel(method)) +
                       " estimate not available: " + results.Estimate(method).message);
  }
  std::printf("%d base parameters of the measured equations, %lld rows, cond(X) = %.4g\n",
              results.base.size(), static_cast<long long>(results.system.x.rows()),
              results.condition_number);
  std::printf("%s", identify::ValidationTable(results).c_str());
  if (results.Estimate(identify::Method::kPc).available) {
    std::printf("IDIM-LS → nearest physically consistent estimate: Mahalanobis %.3g (σ units)\n",
                results.ls_to_pc.mahalanobis);
  }
  std::printf("%s",
              identify::CoverageConsoleLines(coverage, results.base.names, FLAGS_out_dir).c_str());

  identify::RunDescription run;
  run.robot_file = FLAGS_robot;
  run.chain = FLAGS_chain;
  run.drives_file = FLAGS_drives.empty() ? "default drives" : FLAGS_drives;
  run.data_file = FLAGS_data;
  run.validation = validation_text;
  run.differentiator = FLAGS_differentiator;
  run.hac_bandwidth = FLAGS_hac_bandwidth;
  run.hac_critical_value = options.hac_critical_value;
  run.chosen = method;
  run.drive_terms = models::DescribeDriveTerms(*robot);
  run.findings = findings;
  run.coverage = coverage;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  dynid::data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error) ||
      !identify::WriteIdentifyOutputs(*robot, results, run, FLAGS_figures, &stage, &error) ||
      !stage.Commit(&error)) {
    return Fail(1, error);
  }
  std::printf("results in %s (%.2f s)\n", FLAGS_out_dir.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}
