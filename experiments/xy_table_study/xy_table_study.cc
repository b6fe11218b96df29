// xy_table_study — global identification of the belt-driven xy-table (van de Molengraft (1990)
// ch. 5).
//
// Question: does the weighted-residual smoother, given the rigid and the flexible xy-table models
// (models/xy_table.h), find effective inertias, dry frictions and the spindle stiffness from a
// closed-loop point-to-point experiment, do its residuals reveal what the models lack (an ~11 Hz
// belt pre-stress mode under the slides, spindle damping), and is the identified model useful
// beyond the identification interval?
// Method: data from experiments/xy_table_study/xy_table_simulator.h (true system with belt springs
// and damping, PD control, cubic strokes of 0.83 s, six times forward and backward; noise as
// documented there) or from --measurements_csv. On [3.33, 4.99] s,
// problems::BuildWeightedResidualProblem + solvers::SolveWeightedResidual with the thesis's weight
// rule (experiments/xy_table_study/xy_table_case.h), each stage by the dogleg after a smoothing
// continuation of the friction model (xy_table_solve.h): stage 1 rigid model (motor positions and
// currents), stage 2 flexible model (+ end-effector position), stage 3 flexible model with
// acceleration measurements; initial guesses of the thesis; covariances by the banded Schur
// complement, reported as the HAC sandwich (--covariance). Then: residuals as % of each
// measurement's range, elastic deformation estimated vs true, residual spectrum (peak frequency), a
// scan of the acceleration weight (the thesis's solver overflowed above ~0.0025), open-loop
// simulation of the identified model with the measured currents over three intervals and on a
// circular path, and the end-effector path reconstructed without position measurements
// (accelerations + model; by the smoother with theta fixed and on-line by the linear optimal
// filter). Success: residuals below ~2–3 % of the ranges; stiffness estimate below the spindle's
// (the belt springs act in series); the 11 Hz mode visible in the residuals.
//
//   xy_table_study [--out_dir=out/xy_table_study] [--measurements_csv=F [--circle_csv=G]]
//                  [--interval_start_s=3.33] [--interval_end_s=4.99] [--duration_s=9.96]
//                  [--sample_period_s=0.002] [--noise_scale=1] [--seed=4]
//                  [--measurement_emphasis=100] [--acceleration_weight=2.5e-5]
//                  [--acceleration_weight_sweep=2.5e-5,2.5e-4,...] [--evaluation=true]
//                  [--transcription=shooting|collocation] [--max_iterations=300] [--figures=true]
//                  [--trust_region=dogleg|levenberg_marquardt] [--smoothing_continuation=10,4,2]
//                  [--friction_smoothing=0.05] [--first_order_r0_factor=0.01]
//                  [--first_order_damping=1]
//                  [--truth=drawn|thesis] [--truth_seed=1] [--truth_spread=0.2]
//                  [--model_transverse_mass_scale=1] [--viscous_friction=0] [--coverage_csv=F]
//   xy_table_study --monte_carlo=N [--monte_carlo_threads=0] [--monte_carlo_resume] [--seed=4]
//                  [truth/mismatch flags] [--monte_carlo_acceleration_weights=0.0025,0.25]
//   mpirun -np K xy_table_study_mpi --monte_carlo=N ...
//
// Truth: by default the simulated table is drawn around the thesis-centred values (each of J1,
// J2, w1, w2, spindle stiffness and damping, belt stiffness and damping and far-wheel inertia
// uniformly within ±--truth_spread, seeded by --truth_seed + --seed − 4; xy_table_simulator.h);
// --truth=thesis keeps the thesis's stage-3 estimates as the truth (the published comparison).
// Mismatch: the estimators' transverse slideway mass (a known constant) ×
// --model_transverse_mass_scale; an unmodelled effect: viscous friction on both motors
// (--viscous_friction). With --monte_carlo=N: the three stages (and stage 3 at
// --monte_carlo_acceleration_weights) over N seeds, coverage of their intervals and the
// acceleration measurements' effect (xy_table_monte_carlo.h), journalled and resumable. A single
// run labels its ± with the measured coverage (the shipped coverage.csv, or --coverage_csv).
//
// CSV input (--measurements_csv, --circle_csv): header exactly
//   t,x_effector,y_effector,acceleration_along,acceleration_orthogonal,phi1,phi2,i1,i2
// in s, m, m, m/s², m/s², rad, rad, A, A (time strictly increasing; the layout of the models'
// measurement vector; encoder zeros such that x = r phi1, y = r phi2 at rest).
// Writes tables.md, summary.json, interval.csv (estimates, residuals, deformation and the
// reconstruction on the identification interval), sweep.csv (acceleration-weight scan),
// evaluation.csv, circle.csv (if any) and figures (*.png + *.figure.json).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dynid/data/figure.h"
#include "experiments/common/cli.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/common/mpi_job.h"
#include "experiments/common/progress.h"
#include "experiments/xy_table_study/xy_table_coverage.h"
#include "experiments/xy_table_study/xy_table_evaluation.h"
#include "experiments/xy_table_study/xy_table_flags.h"
#include "experiments/xy_table_study/xy_table_monte_carlo.h"
#include "experiments/xy_table_study/xy_table_output.h"
#include "experiments/xy_table_study/xy_table_record.h"
#include "experiments/xy_table_study/xy_table_scan.h"
#include "experiments/xy_table_study/xy_table_stages.h"

int main(int argc, char** argv) {
  namespace study = dynid::xy_table_study;
  using dynid::cli::Fail;
  // One process, or a rank of xy_table_study_mpi's MPI job sharing out the --monte_carlo runs.
  const dynid::cli::MpiJob job(&argc, &argv);
  dynid::cli::SetMonteCarloRanks(job.rank(), job.size(), dynid::cli::MpiJob::Barrier,
                                 dynid::cli::MpiJob::Gather);
  dynid::cli::ParseFlags(&argc, &argv,
                         "xy-table global identification (van de Molengraft (1990) ch. 5)");
  FLAGS_logtostderr = true;
  // Coverage files record the covariance form at every value, so that a file measured with one
  // form (hac, sandwich, variance_factor) is never quoted for another.
  dynid::cli::RecordFlagsAlways({"covariance"});
  std::string error;
  std::vector<double> scan, monte_carlo_weights;
  if (!study::ValidateFlags(&scan, &monte_carlo_weights, &error)) return Fail(2, error);
  if (FLAGS_figures && job.rank() == 0) {
    dynid::data::StartFigureRenderer();  // loads while the study computes
  }
  // --monte_carlo: the three stages over many seeds and the coverage of their intervals.
  if (FLAGS_monte_carlo > 0) {
    if (!study::RunMonteCarloStudy(monte_carlo_weights, &error)) return Fail(1, error);
    return 0;
  }
  // The measured coverage quoted beside the single run's ± (exit code 2 for a bad file).
  study::MeasuredCoverage coverage;
  if (!study::LoadCoverage(FLAGS_measurements_csv.empty(), &coverage, &error)) {
    return Fail(2, error);
  }
  const auto start_time = std::chrono::steady_clock::now();

  // The record (simulated or measured) and its identification interval.
  dynid::cli::Stage steps("study", 6);
  steps.Next("the record");
  study::Record record;
  if (!study::LoadRecord(&record, &error)) return Fail(2, error);

  // Stages 1–3: rigid, flexible, flexible with accelerations; their tables.
  std::vector<study::StageResult> stages;
  std::vector<dynid::problems::WeightedResidualWeights> weights;
  steps.Next("identification stages 1-3");
  if (!study::RunIdentificationStages(record, &stages, &weights, &error)) return Fail(1, error);
  nlohmann::json summary;
  summary["flags"] = study::FlagsJson(record.simulated);
  summary["num_nodes"] = record.count;
  if (record.simulated) summary["true_system"] = study::TrueSystemJson(record);
  std::ostringstream md;
  summary["model_mismatch"] = study::ModelMismatchJson();
  study::ReportStages(record, stages, coverage, &md, &summary);

  // The acceleration-weight scan (the thesis's overflow above ~0.0025).
  study::ScanResult scan_result;
  steps.Next("acceleration-weight scan");
  if (!study::RunAccelerationWeightScan(record, stages, scan, &scan_result, &error)) {
    return Fail(1, error);
  }
  study::ReportScan(scan, scan_result, &md, &summary);

  // The identified model beyond the fit: open-loop simulation, path reconstruction.
  const Eigen::VectorXd theta_final = stages[2].theta;
  study::Evaluation evaluation;
  steps.Next("open-loop evaluation");
  if (!study::EvaluateIdentifiedModel(record, theta_final, &md, &summary, &evaluation, &error)) {
    return Fail(2, error);
  }
  study::Reconstruction path;
  steps.Next("path reconstruction");
  if (!study::ReconstructPath(record, weights[2], theta_final, &md, &summary, &path, &error)) {
    return Fail(1, error);
  }
  summary["elapsed_s"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();

  // tables.md, summary.json, CSV files and figures; the tables on the console.
  steps.Next(FLAGS_figures ? "outputs and figures" : "outputs");
  if (!study::WriteOutputs(record, stages, scan_result, evaluation, path, md, summary, &error)) {
    return Fail(1, error);
  }
  steps.End();
  std::cout << md.str();
  return 0;
}
