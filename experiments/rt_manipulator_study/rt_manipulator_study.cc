// rt_manipulator_study — the RT manipulator example of van de Molengraft (1990) §3.7.
//
// Question: can the weighted-residual estimator, built on the RIGID model of the rotation–
// translation manipulator, estimate the unknown payload mass from data of the FLEXIBLE "true
// system" — on-line with the linearised optimal filter and off-line with the smoother — and does
// de-weighting the second equation of motion and the phi measurement reveal the joint flexibility
// in the residuals (thesis Figs. 3.3–3.11)?
// Method (van de Molengraft (1990) §3.7): simulate the flexible manipulator (k = 2000 N m/rad, J on
// the joint only) along the straight line from (0.25, 0) to (0, 0.75) m with open-loop inputs from
// the rigid inverse dynamics (true payload 2 kg); measure r, phi, the radial and tangential payload
// accelerations, F and T (optionally with Gaussian noise). Estimate with the rigid model:
//  - filter: solvers::RunLinearOptimalFilter, payload as a time-varying parameter started at 0;
//  - smoother: problems::BuildWeightedResidualProblem (collocation, constant payload) solved by
//    Ceres, payload standard deviation by the HAC sandwich (--covariance; so that it follows the
//    residuals the data leave, their correlation over time included);
// for weighting 1 (all equations of motion trusted, measurements weighted by 1/order²) and
// weighting 2 (2nd equation of motion and phi measurement weighted 1e-2).
// Success: the final payload estimates are near 2 kg, closer with weighting 2; with weighting 2
// the residual of the phi measurement follows the elastic deformation phi − eta.
//
//   rt_manipulator_study [--out_dir=out/rt_manipulator_study] [--sample_period_s=1e-3]
//                        [--duration_s=1.0] [--stiffness=2000] [--noise_scale=0] [--seed=1]
//   rt_manipulator_study --measurements_csv=F [--link_mass=10] [--link_length=1]
//                        [--joint_inertia=5]
//   rt_manipulator_study --monte_carlo=N --noise_scale=S [--seed=1] [--monte_carlo_threads=0]
//
// Measured data (--measurements_csv): header exactly
//   t,r,phi,radial_acceleration,tangential_acceleration,F,T
// in s, m, rad, m/s², m/s², N, N m (the rigid model's measurement vector; time strictly
// increasing, at least 20 rows); link mass, link length and joint inertia of the rigid model
// from the flags (defaults: the thesis's manipulator). The estimators and weightings are the
// same; the outputs leave out what needs the true system (true positions, deformation, the
// residual-vs-deformation comparison, the 2 kg reference line).
//
// Writes rt_study.csv (time series), summary.json (flags, estimates, solver summaries) and
// figures rt_positions.png, rt_accelerations.png, rt_mass.png, rt_residuals.png.
// With --monte_carlo=N: the simulation and both estimators over N noise seeds, and how often the
// smoother's 95 % intervals contain the true payload (coverage.csv, monte_carlo_runs.csv,
// coverage.png, summary.json; rt_manipulator_monte_carlo.h).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "dynid/data/figure.h"
#include "dynid/models/rt_manipulator.h"
#include "experiments/common/cli.h"
#include "experiments/common/mpi_job.h"
#include "experiments/common/progress.h"
#include "experiments/rt_manipulator_study/rt_manipulator_estimates.h"
#include "experiments/rt_manipulator_study/rt_manipulator_flags.h"
#include "experiments/rt_manipulator_study/rt_manipulator_monte_carlo.h"
#include "experiments/rt_manipulator_study/rt_manipulator_output.h"
#include "experiments/rt_manipulator_study/rt_manipulator_record.h"

int main(int argc, char** argv) {
  namespace study = dynid::rt_manipulator_study;
  using dynid::cli::Fail;
  // One process, or a rank of rt_manipulator_study_mpi's MPI job sharing out --monte_carlo runs.
  const dynid::cli::MpiJob job(&argc, &argv);
  dynid::cli::SetMonteCarloRanks(job.rank(), job.size(), dynid::cli::MpiJob::Barrier,
                                 dynid::cli::MpiJob::Gather);
  dynid::cli::ParseFlags(&argc, &argv,
                         "RT manipulator payload estimation (van de Molengraft (1990) §3.7)");
  FLAGS_logtostderr = true;
  std::string error;
  if (!study::ValidateFlags(&error)) return Fail(2, error);
  if (FLAGS_figures && job.rank() == 0) dynid::data::StartFigureRenderer();  // loads meanwhile

  const dynid::models::RtManipulatorParameters parameters = study::ModelParameters();
  // --monte_carlo: the simulation over many noise seeds and the coverage of the intervals.
  if (FLAGS_monte_carlo > 0) {
    if (!study::RunMonteCarloStudy(parameters, &error)) return Fail(1, error);
    if (job.rank() == 0) std::printf("wrote %s\n", FLAGS_out_dir.c_str());
    return 0;
  }

  dynid::cli::Stage steps("study", 3);
  steps.Next("the record");  // the flexible "true system" simulated, or measured
  study::Record record;
  if (!study::LoadRecord(parameters, &record, &error)) return Fail(2, error);
  const dynid::models::RtManipulatorRigid model(study::EstimatorParameters(parameters));
  if (!study::ModelMismatchDescription().empty()) {
    std::printf("MODEL MISMATCH (the simulator keeps the truth): %s\n",
                study::ModelMismatchDescription().c_str());
  }

  // Weighting 1 (all equations trusted) and weighting 2 (2nd equation of motion and phi
  // de-weighted).
  study::Weightings weightings;
  if (!study::MakeWeightings(model, record.data, &weightings, &error)) return Fail(1, error);

  // For each weighting: the linearised optimal filter (on-line) and the smoother (off-line).
  std::vector<study::Estimate> estimates;
  steps.Next("filters and smoothers");
  const auto start = std::chrono::steady_clock::now();
  if (!study::RunEstimates(model, record.data, weightings, &estimates, &error)) {
    return Fail(1, error);
  }
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // The table on the console; rt_study.csv, figures and summary.json.
  study::PrintTable(record, estimates, elapsed_s);
  steps.Next(FLAGS_figures ? "outputs and figures" : "outputs");
  if (!study::WriteOutputs(model, record, weightings, estimates, elapsed_s, &error)) {
    return Fail(1, error);
  }
  steps.End();
  std::printf("wrote %s\n", FLAGS_out_dir.c_str());
  return 0;
}
