// tx40_study — the Stäubli TX40 study of Brunot et al. (2018): IDIM-LS and IDIM-IV with
// conventional and IRW-smoothing (IRWSM1/IRWSM2) pre-processing under three levels of prior
// knowledge.
//
// Question: how do the estimates of the 28 essential parameters, their relative standard
// deviations, the relative errors and the IDIM-IV iteration counts behave when the
// pre-processing filters are set well (omega_dyn = 10 Hz), badly (30 Hz) or not at all, and how
// close are they to the published values (Tables 2–6)? Method: Brunot et al. (2017) §2.3 and Brunot
// et al. (2018) §2 and §4 through solvers/idim.h. Default: a simulated experiment
// (experiments/tx40_study/tx40_experiment.h: closed loop at 5 kHz, encoder quantisation, fixed
// seed; --simulation=realistic (default) adds the friction the model does not carry, motor-side
// torque noise and LSB, --simulation=ideal keeps the model's friction and white torque noise)
// whose true parameters are known, so each table has the columns "true", "estimate (%σ)" and
// "published"; the intervals are labelled with the coverage measured by --monte_carlo=N
// (tx40_monte_carlo.h; the shipped coverage.csv). Success: on the ideal simulation, with good
// knowledge every true value lies within 3 relative standard deviations of every method's
// estimate; with poor knowledge IDIM-LS degrades while IDIM-IV IRWSM1 does not; with no
// knowledge IDIM-IV IRWSM1 still converges. On the realistic one, the relative errors come near
// the published ones and the methods differ as in Brunot et al. (2018) Tables 3–6.
//
//   tx40_study [--out_dir=out/tx40_study] [--duration_s=7] [--seed=2018] [--threads=0]
//              [--simulation=realistic|ideal] [--monte_carlo=N [--monte_carlo_threads=0]]
//   tx40_study --positions_csv=F --torques_csv=G [--sample_rate_hz=5000]
//              [--reference_csv=H]        (real data: columns m1..m6 each, motor side)
//
// Real data follow the procedure of Brunot et al. (2018): low-velocity rows excluded, no guard
// band (unless --guard_rows/--guard_s), with IDIM-LS conv. also run with the simulated study's
// guard band to show its effect; without --reference_csv, IDIM-IV uses a stated substitute
// reference (the smoothed measured positions).
//
// Writes tables.md, estimates.csv, summary.json, per-scenario CSVs (torques_*, autocorrelation_*,
// estimates_*) and figures (*.png) to --out_dir, all at once at the end (nothing on failure).
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "dynid/data/figure.h"
#include "dynid/models/tx40.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/idim.h"
#include "experiments/common/cli.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/common/mpi_job.h"
#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_flags.h"
#include "experiments/tx40_study/tx40_monte_carlo.h"
#include "experiments/tx40_study/tx40_output.h"
#include "experiments/tx40_study/tx40_record.h"
#include "experiments/tx40_study/tx40_runs.h"

int main(int argc, char** argv) {
  namespace study = dynid::tx40_study;
  using dynid::cli::Fail;
  // Freed memory stays with the allocator for the next run's matrices and decimation buffers
  // (tens of MB each, formed again in every IDIM-IV iteration) instead of going back to the
  // system after every free and faulting in again, zero-filled, page by page: blocks up to 32 MB
  // from the heap, and the heap's top given back only by the malloc_trim calls where a system's
  // matrices are released. The default run's page faults fall from 0.39 to 0.20 million and its
  // system time from 2.6–2.8 s to 1.6–1.8 s, the peak memory unchanged
  // (experiments/benchmarks/README.md).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // One process, or a rank of tx40_study_mpi's MPI job sharing out the --monte_carlo runs.
  const dynid::cli::MpiJob job(&argc, &argv);
  dynid::cli::SetMonteCarloRanks(job.rank(), job.size(), dynid::cli::MpiJob::Barrier,
                                 dynid::cli::MpiJob::Gather);
  dynid::cli::ParseFlags(
      &argc, &argv,
      "tx40_study [--out_dir=D] (simulated default) | tx40_study --positions_csv=F "
      "--torques_csv=G [--sample_rate_hz=5000] [--reference_csv=H]");
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::string error;
  // Coverage files record the HAC intervals' critical value at every value: a file measured
  // before it existed (±1.96 σ) is quoted by no run.
  dynid::cli::RecordFlagsAlways({"hac_critical"});

  // The flags, the identified model, the record (simulated experiment or measured CSVs).
  study::Settings settings;
  if (!study::ValidateFlags(&settings, &error)) return Fail(2, error);
  if (settings.figures && job.rank() == 0) dynid::data::StartFigureRenderer();  // loads meanwhile
  dynid::models::Tx40Options tx40_options;  // Gautier wrist form
  tx40_options.torque_offsets = settings.torque_offsets;
  const dynid::models::SerialRobot robot = dynid::models::MakeTx40(tx40_options);
  dynid::solvers::IdimModel model;
  if (!study::BuildModel(robot, settings.parameters, &model, &error)) return Fail(1, error);
  // --monte_carlo: the simulation over many seeds and the coverage of every interval.
  if (settings.monte_carlo > 0) {
    if (!study::RunMonteCarloStudy(settings, robot, model, &error)) return Fail(1, error);
    return 0;
  }
  // The measured coverage the single simulated run quotes beside its intervals.
  study::MeasuredCoverage coverage;
  if (!settings.real) {
    coverage.scenario = study::CoverageScenario(settings);
    // Rows are per simulation, method and knowledge level: those selections do not count.
    if (!dynid::cli::LoadQuotedCoverage(
            settings.coverage_csv, "tx40_study/coverage.csv",
            {"simulation", "methods", "knowledge", "write_measurements"}, &coverage.rows,
            &coverage.source, &coverage.other_settings, &error)) {
      return Fail(2, error);
    }
    if (!coverage.other_settings.empty()) {
      std::printf("tx40_study: the quoted coverage was not measured at this run's settings: %s\n",
                  coverage.other_settings.c_str());
    }
  }
  study::Record record;
  if (const int code = study::LoadRecord(settings, robot, model, &record, &error); code != 0) {
    return Fail(code, error);
  }

  // The simulation's series freed above lie below glibc's mmap threshold on records up to
  // ≈ 50 s (it grows to 32 MB with the blocks freed): give the free pages back before the runs.
  malloc_trim(0);

  // The pre-processed systems, then every method at every knowledge level.
  study::Runs runs;
  study::PlanJobs(settings, &runs);
  // Each knowledge level's CSVs and figures as soon as its runs are done (the renderer draws
  // them while the other levels compute).
  study::LevelOutputs level_outputs(settings, model, record, runs);
  runs.job_done = [&](const study::Job& job) { level_outputs.RunDone(job); };
  if (!study::RunJobs(settings, robot, model, record, elapsed, &runs, &error)) {
    return Fail(1, error);
  }
  // Real data: IDIM-LS conv. again with the other guard band, to show what it does to the data.
  study::Runs guard_runs;
  if (settings.guard_comparison) {
    study::Settings other = settings;
    other.guard_rows = settings.comparison_guard_rows;
    other.guard_s = settings.comparison_guard_s;
    other.methods.clear();
    for (const study::Method& method : settings.methods) {
      if (method.key == "idim_ls_conventional") other.methods.push_back(method);
    }
    std::printf(
        "tx40_study: guard-band comparison: IDIM-LS conv. with a guard band of max(%d rows, %g "
        "s)\n",
        other.guard_rows, other.guard_s);
    std::fflush(stdout);
    study::PlanJobs(other, &guard_runs);
    if (!study::RunJobs(other, robot, model, record, elapsed, &guard_runs, &error)) {
      return Fail(1, "guard-band comparison: " + error);
    }
  }
  const double compute_seconds = elapsed();

  // Tables, CSVs, figures and summary.json.
  std::string markdown, estimates;
  nlohmann::json summary;
  study::BuildTables(settings, model, record, runs,
                     settings.guard_comparison ? &guard_runs : nullptr, compute_seconds,
                     settings.real ? nullptr : &coverage, &markdown, &estimates, &summary);
  if (!study::WriteOutputs(settings, model, record, runs, markdown, estimates, elapsed,
                           &level_outputs, &summary, &error)) {
    return Fail(1, error);
  }
  std::printf(
      "tx40_study: %zu runs in %.1f s (estimation %.1f s); wrote %s/tables.md, "
      "estimates.csv, summary.json%s\n",
      runs.jobs.size(), elapsed(), compute_seconds, settings.out_dir.c_str(),
      settings.figures ? " and figures" : "");
  // A run that produced no estimate is a result (its row in tables.md says why), not an error
  // of the program: say so, exit 0.
  for (const study::Job& job : runs.jobs) {
    if (!job.ok) {
      std::cerr << "tx40_study: warning: " << job.method.label << ", "
                << dynid::experiments::PriorKnowledgeName(job.knowledge)
                << " knowledge: " << job.error << "\n";
    }
  }
  return 0;
}
