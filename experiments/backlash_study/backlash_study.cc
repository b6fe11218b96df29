// backlash_study — backlash and spring identification in a two-mass robot transmission
// (Hovland et al. (2002)).
//
// Question: from the motor torque and measured velocities of a motor–arm pair, how large is the
// backlash b and how stiff is the spring K, without assuming the shape of the transmission torque
// tau_K(Δ)? Method: tau_K is an unknown random walk (intensity Q_pp) estimated as an augmented
// state, (a) recursively by the SAEKF of Hovland et al. (2002) Table 1
// (solvers/continuous_discrete_ekf.h), (b) by the batch smoother over the whole record
// (problems/backlash_smoother_problem.h, solved by Ceres from the SAEKF start); b and K then come
// from a robust dead-zone fit of the (Δ, tau_K) pairs with block-bootstrap confidence intervals
// (solvers/dead_zone_fit.h); (c) the shape-constrained smoother (estimator smoother_shape, the
// reported result) solves the batch problem again with tau_K tied to that dead-zone curve,
// estimating [c, b, K] with the states, with intervals from the Schur-complement covariance
// (solvers/backlash_smoother.h). Cases:
//   sim1    Hovland et al. (2002) Simulation 1: m1 = 0.006442, m2 = 0.023454, D = 0.01, Kr = 1,
//           Cv = 0.2, Cc = 0, b = 0.2 rad, K = 37 Nm/rad; Q_pp = 1, R = 2.5e-4, Q_xx = 0;
//           motor velocity measured only; a swept-sine torque (the paper's Fig. 5 profile is
//           not tabulated).
//   sim2    Hovland et al. (2002) Simulation 2: m1 = 0.0008, m2 = 0.001765, D = 0.01, Kr = 0,
//           Cc = 0.27, Cv = 0.01, alpha = 100, b = 0.1 rad, K = 79 Nm/rad; Q_pp = 100, R = 1,
//           Q_xx = diag(0, 0, 1000, 0); motor and arm velocity measured; PRBS torque.
//   linear  the Simulation 2 axis with a backlash-free linear spring K = 67 Nm/rad (the real axis
//           of Hovland et al. (2002) §7); must be reported as "no backlash detected".
// Success: smoother b and K within 10 % on sim2, within 20 % on sim1 (or an explanation
// with figures), the linear case backlash-free; a Q_pp scan shows the sensitivity.
//
//   backlash_study [--cases=sim1,sim2,linear] [--samples=N] [--seed=S] [--out_dir=D]
//                  [--qpp_factors=0.1,1,10] [--figures=true]
//   backlash_study --measurements_csv=F [--motor_inertia=…] [--arm_inertia=…] [--damping=…]
//                  [--position_gain=…] [--viscous_friction=…] [--coulomb_friction=…]
//                  [--friction_sharpness=…] [--qpp=…] [--measurement_variance=…] [--qxx=…]
//   backlash_study --monte_carlo=N [--cases=…] [--seed=S] [--monte_carlo_threads=0]
//   backlash_study … [--model_arm_inertia_scale=1.1] [--model_motor_inertia_scale=…]
//                  [--model_damping_scale=…] [--model_friction_scale=…] [--encoder_counts=N]
//
// Model mismatch (simulated cases): the --model_*_scale flags perturb the estimators' model
// (m2, m1, D, motor Cv and Cc as factors of the true values) while the simulator keeps the
// truth; --encoder_counts=N adds an effect the estimators' model lacks (the measured velocities
// are backward differences of N-count encoder readings). The console, results.csv
// (model_mismatch) and summary.json ("model_mismatch") state them, and the shipped coverage,
// measured with the exact model, is not quoted under them ("coverage not measured for this
// setting"; --coverage_csv quotes a coverage measured at that setting).
//
// Measured data (--measurements_csv): one record with the header t,u,x3 (motor velocity
// measured) or t,u,x3,x4 (motor and arm velocity), in s, N m, rad/s, rad/s; time strictly
// increasing with a uniform step (within 1 % of the record's mean step: the SAEKF and the
// smoother hold u over each sample interval); at least 100 rows. u_k is the torque applied over
// [t_k, t_{k+1}). The mechanical parameters other than b and K are known a priori (Hovland et al.
// (2002) §7) and come from the flags (defaults: the Simulation 2 axis), the covariances from --qxx,
// --qpp, --measurement_variance. The record is the only case (named "measured"); the Q_pp scan
// runs on it; there is no truth, so errors against it are not reported (NaN in results.csv).
//
// Writes D/<case>_series.csv (every k-th sample, k so that at most --max_plot_rows rows), D/<case>_
// tau_vs_delta.png (Figs. 7, 12), D/<case>_tau_vs_time.png (Fig. 8), D/<case>_errors.png
// (Fig. 11), D/qpp_sweep.csv (long form), D/qpp_sweep_<case>.csv and .png (b, K errors and
// tau_K RMS error against Q_pp), D/results.csv and D/summary.json (flags, seeds, every estimate
// with its interval, solver summaries, wall and CPU times). For a measured record the columns
// and figure series that need the true system (true states, tau_K, errors) are left out.
// With --monte_carlo=N: every case over N noise seeds and how often each estimator's 95 %
// intervals of b and K contain the truth (coverage.csv, monte_carlo_runs.csv, coverage.png,
// summary.json; backlash_monte_carlo.h).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "experiments/backlash_study/backlash_case.h"
#include "experiments/backlash_study/backlash_coverage.h"
#include "experiments/backlash_study/backlash_estimators.h"
#include "experiments/backlash_study/backlash_flags.h"
#include "experiments/backlash_study/backlash_monte_carlo.h"
#include "experiments/backlash_study/backlash_output.h"
#include "experiments/backlash_study/backlash_qpp_scan.h"
#include "experiments/common/cli.h"
#include "experiments/common/mpi_job.h"
#include "experiments/common/progress.h"

int main(int argc, char** argv) {
  namespace study = dynid::backlash_study;
  using dynid::cli::Fail;
  // One process, or a rank of backlash_study_mpi's MPI job sharing out the --monte_carlo runs.
  const dynid::cli::MpiJob job(&argc, &argv);
  dynid::cli::SetMonteCarloRanks(job.rank(), job.size(), dynid::cli::MpiJob::Barrier,
                                 dynid::cli::MpiJob::Gather);
  dynid::cli::ParseFlags(
      &argc, &argv,
      "backlash_study [--cases=sim1,sim2,linear] [--samples=N] [--seed=S] [--out_dir=D] "
      "[--qpp_factors=0.1,1,10]");
  FLAGS_logtostderr = true;

  // The flags, the cases they select (simulated, or the measured record), the Q_pp factors.
  std::string error;
  std::vector<study::Case> cases, scan_cases;
  std::vector<double> qpp_factors;
  if (!study::ValidateFlags(&cases, &scan_cases, &qpp_factors, &error)) return Fail(2, error);
  if (FLAGS_figures && job.rank() == 0) dynid::data::StartFigureRenderer();  // loads meanwhile
  // --monte_carlo: every case over many noise seeds and the coverage of the intervals. One seed
  // per thread already uses the cores, so the dead-zone bootstrap runs on one thread unless
  // --fit_threads says otherwise (its intervals are the same for any count).
  if (FLAGS_monte_carlo > 0) {
    if (gflags::GetCommandLineFlagInfoOrDie("fit_threads").is_default) FLAGS_fit_threads = 1;
    if (!study::RunMonteCarloStudy(cases, &error)) return Fail(1, error);
    if (job.rank() == 0) std::printf("backlash_study: wrote %s\n", FLAGS_out_dir.c_str());
    return 0;
  }
  // The measured coverage of each estimator's intervals, quoted beside them.
  study::MeasuredCoverage coverage;
  if (!study::LoadMeasuredCoverage(&coverage, &error)) return Fail(2, error);
  dynid::data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error)) return Fail(1, error);

  // Each case: the estimators on its record, its table rows and summary entry, CSV and figures.
  nlohmann::json summary;
  summary["flags"] = study::FlagsJson();
  summary["model_mismatch"] = study::ModelMismatchJson();
  if (!coverage.withheld.empty()) summary["measured_coverage_note"] = coverage.withheld;
  if (!coverage.other_settings.empty()) {
    summary["measured_coverage_other_settings"] = coverage.other_settings;
    std::printf("the quoted coverage was not measured at this run's settings: %s\n",
                coverage.other_settings.c_str());
  }
  std::string results_csv = study::ResultsCsvHeader();
  study::PrintTableHeader(cases.size());
  dynid::cli::Stage steps("study", static_cast<int64_t>(cases.size()) + 1);
  for (const study::Case& config : cases) {
    steps.Next("case " + config.name);
    const int samples = FLAGS_samples > 0 ? FLAGS_samples : config.default_samples;
    study::CaseRun run;
    if (!study::RunCase(config, samples, config.tau_noise_intensity, study::NoiseSeed(config.name),
                        &run, &error)) {
      return Fail(1, config.name + ": " + error);
    }
    study::ReportCase(config, samples, run, coverage, &summary, &results_csv);
    if (!study::WriteCaseOutputs(run, &stage, &error)) return Fail(1, error);
  }

  // The Q_pp scan, then results.csv and summary.json.
  steps.Next("Q_pp scan");
  if (!study::RunQppScan(qpp_factors, scan_cases, &stage, &summary, &error)) return Fail(1, error);
  if (!stage.WriteText("results.csv", results_csv, &error) ||
      !stage.WriteJson("summary.json", summary, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  steps.End();
  std::printf("backlash_study: wrote %s\n", FLAGS_out_dir.c_str());
  return 0;
}
