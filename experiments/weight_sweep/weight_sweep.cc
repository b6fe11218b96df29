// weight_sweep — how do the weighting matrices of the weighted-residual smoother change its
// parameter estimates? (van de Molengraft (1990); solvers/README.md, "Pitfalls")
//
// Question: for a model with simulated data, how do bias and spread of the estimates of theta
// depend on chosen diagonal entries of W (kinematic couplings), V (equations of motion and
// measurements) and R0 (initial guess)?
// Method: a log-spaced grid over the chosen entries (--grid, Cartesian product), and at every
// grid point the smoother (problems::BuildWeightedResidualProblem + solvers::SolveWeightedResidual,
// theta constant) on --seeds Monte Carlo noise realisations of the same experiment (the same
// realisations at every point). Per (point, seed): estimates, covariance (standard deviations in
// the weights' metric and scaled by the residual variance), RMS of every residual component,
// cost, convergence, time. Per point: bias, spread and RMS of the relative errors. Also the
// observability rank tests (eqs. 2.26, 2.28) and the identifiability of theta along the
// noise-free trajectory with the base weights (solvers/observability.h).
// Success: the table is complete, every point recorded once; parallel over --threads threads
// (and over MPI ranks in weight_sweep_mpi), resumable: finished points are journalled in
// OUT_DIR/.weight_sweep_journal/ and a re-run with the same settings only computes the rest.
//
//   weight_sweep --case_name=msd|friction_mass|rt_rigid|rt_flexible|xy_flexible
//                --grid=NAME:LOW:HIGH:COUNT[,NAME:LOW:HIGH:COUNT...] [--relative]
//                [--seeds=10] [--first_seed=1] [--threads=0] [--nodes=0] [--noise_scale=1]
//                [--theta_start_factor=1.2] [--max_iterations=50] [--transcription=shooting]
//                [--trust_region=levenberg_marquardt|dogleg]
//                [--out_dir=out/weight_sweep] [--figures] [--progress] [--list_weights]
//   mpirun -np K weight_sweep_mpi <same flags>
//   weight_sweep --monte_carlo=N [--case_name=...] [--grid=...] [--first_seed=1]
//                [--monte_carlo_threads=0] [--monte_carlo_resume]
//                (coverage of the smoother's intervals at the base weights or every grid point;
//                weight_sweep_monte_carlo.h)
//
// Writes points.csv (one row per point and seed), summary.csv (one row per grid point),
// summary.json (flags, case, weights, observability, totals) and, for one or two grid axes,
// error/spread figures (error_spread.png for one axis; heatmap_<parameter>.png for two).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdio>
#include <string>

#include "experiments/common/cli.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/common/mpi_job.h"
#include "experiments/weight_sweep/weight_sweep_flags.h"
#include "experiments/weight_sweep/weight_sweep_monte_carlo.h"
#include "experiments/weight_sweep/weight_sweep_output.h"
#include "experiments/weight_sweep/weight_sweep_run.h"

int main(int argc, char** argv) {
  namespace experiments = dynid::experiments;
  const dynid::cli::MpiJob job(&argc, &argv);  // one rank unless built as weight_sweep_mpi
  const experiments::Ranks ranks{job.rank(), job.size()};
  // Only rank 0 reports, so that an MPI run prints each error once.
  auto fail = [&](int code, const std::string& message) {
    return ranks.rank == 0 ? dynid::cli::Fail(code, message) : code;
  };
  dynid::cli::ParseFlags(&argc, &argv, "weighting-matrix grids of the weighted-residual smoother");
  FLAGS_logtostderr = true;
  // --monte_carlo: the ranks share out its runs (solvers::RunMonteCarlo) instead of grid points.
  if (FLAGS_monte_carlo > 0) {
    dynid::cli::SetMonteCarloRanks(job.rank(), job.size(), dynid::cli::MpiJob::Barrier,
                                   dynid::cli::MpiJob::Gather);
  }
  std::string error;
  if (FLAGS_list_weights) {
    const auto grid_case = experiments::MakeCaseFromFlags(&error);
    if (!grid_case) return fail(2, error);
    if (ranks.rank == 0) experiments::PrintWeightEntries(*grid_case);
    return 0;
  }
  experiments::SweepSetup setup;
  if (!experiments::SetupFromFlags(&setup, &error)) return fail(2, error);
  if (FLAGS_monte_carlo > 0) {
    if (!experiments::RunWeightMonteCarlo(setup, &error)) return fail(1, error);
    return 0;
  }
  // The measured coverage quoted beside the predicted sd (exit code 2 for a bad file).
  experiments::QuotedCoverage coverage;
  if (!experiments::LoadSweepCoverage(&coverage, &error)) return fail(2, error);
  experiments::SweepRun run;
  int code = 1;
  if (!experiments::RunSweep(setup, ranks, &run, &code, &error)) return fail(code, error);
  if (ranks.rank != 0) return 0;
  if (!experiments::WriteSweepOutputs(setup, ranks, run, coverage, &error)) return fail(1, error);
  return 0;
}
