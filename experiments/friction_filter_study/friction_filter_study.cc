// friction_filter_study — estimating a stick–slip friction force as a time-varying parameter with
// the sliding-surface filter and with the linear optimal filter (van de Molengraft (1990) §4.4).
//
// Question: can a filter built on the friction-free model m_f a + e = f, with the unknown force e
// free to vary in time, reconstruct the dry-friction force of a mass that sticks and slips — and
// what happens when the model mass is wrong (true mass 2, filter mass 1)?
// Method: the "true system" is models::SimulateStickSlip (m a + w = f, w = w_d sign(v) while
// sliding, stick while |f| <= w_s; w_s = w_d = 2 N, f = 4 sin(2 pi t) N, start at rest at s = 0).
// Measurements z = [s, a, f] at 1 kHz from realistic sensors (friction_filter_sensors.h: an
// encoder of --encoder_resolution_m, an accelerometer and a force sensor with white noise, an
// optional force-sensor delay the filters' model lacks; --sensors=ideal: the true values plus
// --noise_scale noise), through the same optional pre-filter (--prefilter_hz) for both filters.
// Both filters use models::UnknownForceMass (theta = [e]):
//  - solvers::RunSlidingSurfaceFilter, Lambda = Omega = 15 I, sigma = 0 (and sigma = 5 to show the
//    velocity offset sigma / Lambda of thesis Fig. 4.3), W = I, forward-difference measurement
//    rates, initial estimate x̂0 = [ŝ, v̂, ê] = [0.3, 0, 4], p̄0 = [â, f̂] = [8, 4] (as we read the
//    scan of the thesis);
//  - solvers::RunLinearOptimalFilter (eq. 3.16) with e time-varying (weight W_theta), the same
//    initial estimate as q0, measurement weights from the sensors' noise.
// At every jump of the true friction each estimate's lag (50 %, 90 %), overshoot and error are
// measured (friction_filter_jumps.h); --monte_carlo=N repeats it over N noise seeds with the
// optimal filter's coverage (friction_filter_monte_carlo.h), journalled and resumable
// (--monte_carlo_resume); friction_filter_study_mpi shares its runs out over MPI ranks.
// Each runs for true mass 1 and 2 (filters keep m_f = 1).
// Success: both friction estimates converge within about a second with true mass 1 (RMS error
// after --transient_s small against the 2 N friction level); with true mass 2 the estimates
// follow w + (m − m_f) a — the model error is absorbed by e (thesis Figs. 4.8, 4.12).
//
//   friction_filter_study [--out_dir=out/friction_filter_study] [--duration_s=4]
//                         [--sample_period_s=1e-3] [--lambda=15] [--omega=15] [--sigma_demo=5]
//                         [--sensors=realistic] [--prefilter_hz=0] [--seed=1]
//                         [--monte_carlo=0] [--figures=true] ...
//
// Writes results.csv / results.md (friction-estimate RMS errors and jump measures), jumps.csv,
// summary.json (flags, weights, filter summaries, errors, the optimal filter's intervals with
// their measured coverage), case_mass1.csv, case_mass2.csv (time series) and figures
// fig4_03 … fig4_12 (PNG + JSON spec); with --monte_carlo coverage.csv, monte_carlo_runs.csv,
// monte_carlo_measures.csv, coverage.png and summary.json instead.
//
// Measured data (--measurements_csv=F): header exactly t,s,a,f (s, m, m/s², N; the model's
// measurement vector; time strictly increasing, at least 20 rows) replaces the simulation: one
// case, "measured", filtered by both filters with filter mass --filter_mass. With no true
// friction, results.csv / results.md report per filter the friction estimate at the end and
// its mean and mean absolute value after --transient_s (the dry-friction level), the time series
// case_measured.csv leaves out the true columns, and the figures show the measurements instead
// of the truth (no velocity reference; no model-error figures 4.8, 4.12).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dynid/data/figure.h"
#include "experiments/common/cli.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/common/mpi_job.h"
#include "experiments/common/progress.h"
#include "experiments/friction_filter_study/friction_filter_case.h"
#include "experiments/friction_filter_study/friction_filter_coverage.h"
#include "experiments/friction_filter_study/friction_filter_filters.h"
#include "experiments/friction_filter_study/friction_filter_flags.h"
#include "experiments/friction_filter_study/friction_filter_monte_carlo.h"
#include "experiments/friction_filter_study/friction_filter_output.h"
#include "experiments/friction_filter_study/friction_filter_record.h"

int main(int argc, char** argv) {
  namespace study = dynid::friction_filter_study;
  using dynid::cli::Fail;
  // One process, or a rank of friction_filter_study_mpi's MPI job sharing out the --monte_carlo
  // runs.
  const dynid::cli::MpiJob job(&argc, &argv);
  dynid::cli::SetMonteCarloRanks(job.rank(), job.size(), dynid::cli::MpiJob::Barrier,
                                 dynid::cli::MpiJob::Gather);
  dynid::cli::ParseFlags(&argc, &argv,
                         "friction estimation by sliding-surface and optimal filters");
  FLAGS_logtostderr = true;
  std::string error;
  if (!study::ValidateFlags(&error)) return Fail(2, error);
  if (FLAGS_figures && job.rank() == 0) {
    dynid::data::StartFigureRenderer();  // loads while the study computes
  }

  // The measured record (read before anything is written) or the simulation's time grid; the
  // list flags and the filters' options.
  study::Settings settings;
  study::Record record;
  dynid::cli::Stage loading(FLAGS_measurements_csv.empty() ? "the record"
                                                           : "reading " + FLAGS_measurements_csv);
  if (!study::LoadRecord(&record, &error)) return Fail(2, error);
  loading.End();
  const double sample_period_s =
      (record.times(record.num - 1) - record.times(0)) / (record.num - 1);
  if (!study::ParseSettings(sample_period_s, &settings, &error)) return Fail(2, error);
  // A given interval time outside the record is a flag error; the default times that a shorter
  // record does not reach are left out, and the console says so.
  const bool times_given = !gflags::GetCommandLineFlagInfoOrDie("coverage_times_s").is_default;
  std::vector<double> times_in_record;
  for (double t : settings.coverage_times_s) {
    if (t >= record.times(0) && t <= record.times(record.num - 1)) {
      times_in_record.push_back(t);
      continue;
    }
    char message[200];
    std::snprintf(message, sizeof(message),
                  "--coverage_times_s: %g s is outside the record [%g, %g] s", t, record.times(0),
                  record.times(record.num - 1));
    if (times_given) return Fail(2, message);
    if (FLAGS_monte_carlo == 0) std::printf("%s: the default time is not quoted\n", message);
  }
  settings.coverage_times_s = times_in_record;
  const study::FilterSetup setup = study::MakeFilterSetup(settings);
  if (FLAGS_monte_carlo > 0) {
    // N noise seeds instead of one run: medians, spreads and the optimal filter's coverage.
    if (!study::RunMonteCarloStudy(record, settings, setup, &error)) return Fail(1, error);
    if (job.rank() == 0) std::printf("wrote %s\n", FLAGS_out_dir.c_str());
    return 0;
  }

  // The measured coverage quoted beside the optimal filter's intervals.
  study::MeasuredCoverage coverage;
  if (!study::LoadMeasuredCoverage(&coverage, &error)) return Fail(2, error);

  // Per case (each true mass, or the measured record): both filters, their errors or levels.
  std::vector<study::CaseResult> cases;
  std::vector<nlohmann::json> intervals;
  const size_t num_cases = record.measured ? 1 : settings.true_masses.size();
  dynid::cli::Stage filtering("filter runs", 3 * static_cast<int64_t>(num_cases));
  for (size_t c = 0; c < num_cases; ++c) {
    study::CaseRecord case_record;
    if (!study::MakeCaseRecord(record, settings.true_masses, c, FLAGS_seed, &case_record, &error)) {
      return Fail(2, error);
    }
    study::FilterRuns runs;
    if (!study::RunFilters(setup, record.times, case_record.filter_measurements, &runs, &error,
                           [&](int done) { filtering.Set(3 * static_cast<int64_t>(c) + done); })) {
      return Fail(1, error);
    }
    cases.push_back(study::EvaluateCase(record, case_record, runs));
    intervals.push_back(
        study::QuoteIntervals(record, case_record, runs, settings.coverage_times_s, coverage));
  }
  filtering.End();

  // The table on the console, results.csv/.md, summary.json, time series and figures.
  std::ostringstream csv, markdown;
  nlohmann::json json_rows = nlohmann::json::array();
  study::TabulateResults(record, cases, &csv, &markdown, &json_rows);
  study::PrintIntervals(intervals);
  nlohmann::json summary;
  summary["flags"] = study::FlagsJson(settings);
  summary["errors"] = json_rows;
  summary["cases"] = nlohmann::json::array();
  for (size_t c = 0; c < cases.size(); ++c) {
    nlohmann::json entry = cases[c].summary;
    entry["linear_optimal_intervals"] = intervals[c];
    entry["sliding_surface_intervals"] = "none: the sliding-surface filter reports no uncertainty";
    summary["cases"].push_back(entry);
  }
  summary["coverage_source"] = coverage.source;
  if (!study::WriteOutputs(record, cases, csv.str(), markdown.str(), summary, &error)) {
    return Fail(1, error);
  }
  std::printf("wrote %s\n", FLAGS_out_dir.c_str());
  return 0;
}
