// scara_study — parameter estimation of the 3-DOF RRP SCARA compared across estimators
// (Urrea & Agramonte (2022) §3): least squares, Hopfield neural network, EKF (as published and
// re-tuned, discrete and continuous–discrete), square-root UKF, the RTS smoothing pass of both
// filters and the project's batch weighted-residual smoother (after van de Molengraft (1990)), on
// one closed-loop record; validation by closed-loop tracking with every estimated set.
//
// Record: models::MakeScara3 (generic serial-robot model) tracks a multisine reference under a
// PID per joint (data::SimulateClosedLoop, control and sampling at 1/Δt = 100 Hz, torque held
// between samples). The recursive filters see the six joint positions and velocities with
// Gaussian noise of the published R and the applied torques; LS and HNN use the noise-free joint
// kinematics of the record and measured torques (applied torque + Gaussian noise), and LS_irw and
// HNN_irw the same noisy joint states as the filters, smoothed by IRWSM2 (scara_record.h). All
// recursive estimators run on models::Scara3Model (the closed form) through
// solvers::AugmentedMechanicalSystem, so the record comes from an independent implementation of
// the dynamics.
//
// Validation: the same PID loop (data::SimulateModelClosedLoop on the closed-form model, checked
// against data::SimulateClosedLoop with the true parameters) is run with each estimated parameter
// set as the plant; per link RMSE, IAE = ∫|e| dt and ISE = ∫ e² dt of e = q_ref − q.
//
// EKF diagnosis: a factorial over the published settings (process noise on the parameters,
// process noise on the joint states, forward Euler vs RK4) shows which one drives IZZ2 away, and
// sign statistics over --seed_repeats sensor-noise realisations (EKF from the published and from
// the tuned start, square-root UKF from the tuned start) count how often IZZ2 ends negative.
//
// Acceptance (summary.json "acceptance"): LS and the smoothers within 1 % of the truth, the UKF
// within 3 %, and the square-root UKF positive definite on every run (a UKF run that loses
// positive definiteness makes the study fail with exit code 1; a failed UKF run of the sign
// statistics makes the verdict false).
//
// Every reported σ is printed with the coverage of its 95 % interval measured by the study's
// Monte Carlo (--coverage_csv, default the shipped measurement at the default flags;
// scara_coverage.h). --monte_carlo=N repeats simulate -> estimate over N noise seeds instead of
// the single run and writes that measurement (scara_monte_carlo.h). --mismatch=gravity|friction
// makes the estimators' model wrong in one respect while the simulation keeps the truth.
//
// Measured record (--measurements_csv=F): a CSV whose header holds the columns
// t,q1,q2,d3,tau1,tau2,f3 (s; rad, rad, m; N m, N m, N) in any order, extra columns ignored, and
// optionally dq1,dq2,dd3 (rad/s, rad/s, m/s); at least 200 rows, time strictly increasing with a
// uniform step (within 1 % of the record's mean step, which replaces --dt: the filters
// discretise with one step). The q, q', q'' of the LS and HNN regressors come from IRWSM2
// (solvers/irw_smoother.h) with each joint's NVR fitted by maximum likelihood
// (solvers/nvr_fit.h). The filters and the weighted-residual smoother see the measured
// positions, the measured velocities (the IRWSM2 velocities when the CSV has none) and the
// measured torques as input; they assume the std of --measurement_std (default: the published R
// scaled by --noise_scale), and --torque_noise_std weights LS and the smoother. The simulation
// flags (--duration_s, --dt, --seed, --pid_bandwidth_hz, --seed_repeats) are errors with a
// record, and --measurement_std is one without a record. There is no truth: the
// sign statistics (they redraw the sensor noise of a simulation) and the tracking validation
// (true plant and PID gains) are left out, whatever compares with the truth is NaN (null in
// summary.json), and validation.csv holds instead the torque prediction tau_hat = Y(q, q', q'') p
// of every estimate against the measured torques (RMS error per joint, also in % of the joint's
// RMS torque).
//
// Outputs in --out_dir: record.csv, estimates.csv, table7.csv, evolution.csv, validation.csv,
// ekf_diagnosis.csv, ekf_seed_statistics.csv, summary.json and figures (*.png with their
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdio>
#include <string>

#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "experiments/common/cli.h"
#include "experiments/common/mpi_job.h"
#include "experiments/common/progress.h"
#include "experiments/scara_study/scara_coverage.h"
#include "experiments/scara_study/scara_ekf_diagnosis.h"
#include "experiments/scara_study/scara_estimators.h"
#include "experiments/scara_study/scara_flags.h"
#include "experiments/scara_study/scara_monte_carlo.h"
#include "experiments/scara_study/scara_output.h"
#include "experiments/scara_study/scara_record.h"
#include "experiments/scara_study/scara_validation.h"

int main(int argc, char** argv) {
  namespace study = dynid::scara_study;
  using dynid::cli::Fail;
  // One process, or a rank of scara_study_mpi's MPI job sharing out the --monte_carlo runs.
  const dynid::cli::MpiJob job(&argc, &argv);
  dynid::cli::SetMonteCarloRanks(job.rank(), job.size(), dynid::cli::MpiJob::Barrier,
                                 dynid::cli::MpiJob::Gather);
  dynid::cli::ParseFlags(
      &argc, &argv,
      "scara_study [--duration_s=30] [--seed=S] [--out_dir=D] [--noise_scale=1] "
      "[--q_param=0] [--ukf_alpha=1] ...\n"
      "scara_study --measurements_csv=F [--out_dir=D] [--measurement_std=6 values] "
      "[--q_param=0] ...");
  FLAGS_logtostderr = true;

  // The flags, and a measured record's CSV: exit code 2 naming the flag or the file:line:column.
  std::string error;
  const bool measured = !FLAGS_measurements_csv.empty();
  Eigen::Vector3d torque_noise;
  study::Vector6d measured_std;
  study::MeasuredColumns columns;
  if (!study::ValidateFlags(measured, &torque_noise, &measured_std, &error) ||
      (measured && !study::ReadMeasuredColumns(FLAGS_measurements_csv, &columns, &error))) {
    return Fail(2, error);
  }
  study::Results results;
  if (FLAGS_monte_carlo == 0 && !study::LoadMeasuredCoverage(&results.coverage, &error)) {
    return Fail(2, error);
  }
  if (FLAGS_figures && job.rank() == 0) dynid::data::StartFigureRenderer();  // loads meanwhile
  // --monte_carlo: the simulation over many noise seeds and the coverage of every interval.
  if (FLAGS_monte_carlo > 0) {
    if (!study::RunMonteCarloStudy(torque_noise, &error)) return Fail(1, error);
    if (job.rank() == 0) std::printf("scara_study: wrote %s\n", FLAGS_out_dir.c_str());
    return 0;
  }
  dynid::data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error)) return Fail(1, error);
  const auto wall_start = std::chrono::steady_clock::now();

  // The record: the simulated closed loop, or the measured one.
  dynid::cli::Stage steps("study", 5);
  steps.Next(measured ? "the record" : "simulating the record");
  const study::MultisineReference reference(FLAGS_duration_s);
  study::Record record;
  if (measured ? !study::MakeMeasuredRecord(columns, torque_noise, measured_std, &record, &error)
               : !study::SimulateRecord(reference, torque_noise, FLAGS_seed, &record, &error)) {
    return Fail(1, error);
  }
  study::DescribeRecord(record, &results.summary);

  // The estimators on it, the EKF diagnosis, the validation of every estimate.
  study::EstimatorRuns runs(record);
  steps.Next("estimators");
  if (!study::RunEstimators(record, &runs, &results, &error)) return Fail(1, error);
  steps.Next("EKF diagnosis");
  const int ukf_seed_failures = study::DiagnoseEkf(record, runs, &results);
  steps.Next("validation");
  if (!study::Validate(record, reference, runs, &results, &error)) return Fail(1, error);

  // Tables, acceptance, figures, summary.json, the digest.
  study::TabulateResults(record, runs, &results);
  study::JudgeAcceptance(record, runs, ukf_seed_failures, &results);
  steps.Next(FLAGS_figures ? "outputs and figures" : "outputs");
  if (!study::WriteCsvFiles(results.csv, &stage, &error) ||
      (FLAGS_figures &&
       !study::RenderFigures(stage, !measured, results.csv.torque_prediction_methods,
                             results.coverage, &error))) {
    return Fail(1, error);
  }
  results.summary["wall_time_s"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (!stage.WriteJson("summary.json", results.summary, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  steps.End();
  study::PrintDigest(record, results);
  return 0;
}
