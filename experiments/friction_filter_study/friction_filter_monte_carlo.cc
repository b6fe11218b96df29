// experiments/friction_filter_study/friction_filter_monte_carlo — the study's Monte Carlo (see
// friction_filter_monte_carlo.h).
#include "experiments/friction_filter_study/friction_filter_monte_carlo.h"

#include <glog/logging.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/friction_filter_study/friction_filter_case.h"
#include "experiments/friction_filter_study/friction_filter_coverage.h"
#include "experiments/friction_filter_study/friction_filter_jumps.h"
#include "experiments/friction_filter_study/friction_filter_measures.h"

namespace dynid::friction_filter_study {
namespace {

const char* const kFilters[2] = {"sliding_surface", "linear_optimal"};

// A measure's name and how it is read off a run's row.
struct Measure {
  const char* name;
  double (*get)(const ErrorRow& row);
};
const Measure kMeasures[] = {
    {"rms_error_n", [](const ErrorRow& r) { return r.rms_all; }},
    {"rms_error_after_transient_n", [](const ErrorRow& r) { return r.rms_after; }},
    {"rms_error_vs_w_plus_inertia_error_after_transient_n",
     [](const ErrorRow& r) { return r.rms_absorbed_after; }},
    {"rms_error_between_jumps_n", [](const ErrorRow& r) { return r.rms_between_jumps; }},
    {"rms_velocity_error_after_transient_m_per_s",
     [](const ErrorRow& r) { return r.rms_velocity_after; }},
    {"median_jump_lag50_s", [](const ErrorRow& r) { return r.jump_summary.median_lag50_s; }},
    {"median_jump_lag90_s", [](const ErrorRow& r) { return r.jump_summary.median_lag90_s; }},
    {"median_jump_overshoot_n",
     [](const ErrorRow& r) { return r.jump_summary.median_overshoot_n; }},
    {"max_jump_overshoot_n", [](const ErrorRow& r) { return r.jump_summary.max_overshoot_n; }},
    {"rms_error_in_jump_windows_n", [](const ErrorRow& r) { return r.jump_summary.rms_error_n; }},
};
constexpr int kNumMeasures = sizeof(kMeasures) / sizeof(kMeasures[0]);
// The measure the lag comparison reads.
constexpr int kLag90 = 6;

// The measures of one run per filter (index 0: sliding surface, 1: linear optimal), read back
// from the run's MonteCarloEstimate::measure entries (computed or resumed from the journal).
struct RunMeasures {
  bool done = false;
  double values[2][kNumMeasures];
};

RunMeasures ReadMeasures(const solvers::MonteCarloRun& run) {
  RunMeasures measures;
  for (auto& filter : measures.values) {
    for (double& value : filter) value = std::numeric_limits<double>::quiet_NaN();
  }
  for (const solvers::MonteCarloEstimate& e : run.estimates) {
    if (!e.measure) continue;
    for (int f = 0; f < 2; ++f) {
      if (e.estimator != kFilters[f]) continue;
      for (int m = 0; m < kNumMeasures; ++m) {
        if (e.parameter == kMeasures[m].name) {
          measures.values[f][m] = e.estimate;
          measures.done = true;
        }
      }
    }
  }
  return measures;
}

}  // namespace

bool RunMonteCarloStudy(const Record& record, const Settings& settings, const FilterSetup& setup,
                        std::string* error) {
  const int num_seeds = FLAGS_monte_carlo;
  const int num_scenarios = static_cast<int>(settings.true_masses.size());
  CHECK_EQ(std::string(kMeasures[kLag90].name), "median_jump_lag90_s");
  // The coverage times' samples (the record is uniform).
  std::vector<int> samples;
  for (double t : settings.coverage_times_s) {
    samples.push_back(static_cast<int>(std::lround(t / FLAGS_sample_period_s)));
  }
  const solvers::MonteCarloTrial trial = [&](int scenario, std::uint64_t seed,
                                             std::vector<solvers::MonteCarloEstimate>* out,
                                             std::string* why) {
    CaseRecord case_record;
    if (!MakeCaseRecord(record, settings.true_masses, static_cast<size_t>(scenario),
                        static_cast<std::int64_t>(seed), &case_record, why)) {
      return false;
    }
    FilterRuns runs;
    if (!RunFilters(setup, record.times, case_record.filter_measurements, &runs, why, {},
                    /*sigma_demo=*/false)) {
      return false;
    }
    // The run's error and jump measures travel with its estimates (journalled, listed in
    // monte_carlo_runs.csv), outside the coverage statistics.
    const CaseResult result = EvaluateCase(record, case_record, runs);
    for (int f = 0; f < 2; ++f) {
      for (const Measure& m : kMeasures) {
        solvers::MonteCarloEstimate e;
        e.estimator = kFilters[f];
        e.parameter = m.name;
        e.estimate = m.get(result.rows[f]);
        e.measure = true;
        out->push_back(e);
      }
    }
    // The friction e and velocity v at the coverage times; the optimal filter reports
    // sqrt(diag Q), the sliding-surface filter nothing.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (size_t i = 0; i < samples.size(); ++i) {
      const int k = samples[i];
      for (int f = 0; f < 2; ++f) {
        const Eigen::MatrixXd& states = f == 0 ? runs.sliding.states : runs.optimal.states;
        for (int state : {2, 1}) {
          solvers::MonteCarloEstimate e;
          e.estimator = kFilters[f];
          e.parameter = IntervalParameter(state, settings.coverage_times_s[i]);
          e.truth = state == 2 ? case_record.friction(k) : case_record.truth.velocities(k, 0);
          e.estimate = states(state, k);
          e.reported_std = f == 1 ? runs.optimal.standard_deviation(state, k) : nan;
          e.converged = f == 0 ? runs.sliding_summary.converged : true;
          out->push_back(e);
        }
      }
    }
    return true;
  };
  std::vector<std::string> names;
  for (double mass : settings.true_masses) names.push_back(ScenarioName(mass));
  cli::MonteCarloJob job;
  if (!cli::RunMonteCarloFromFlags(FLAGS_out_dir, static_cast<std::uint64_t>(FLAGS_seed),
                                   num_scenarios, trial, &job, error)) {
    return false;
  }
  if (!job.reporting) return true;
  const std::vector<solvers::MonteCarloRun>& runs = job.runs;
  std::vector<RunMeasures> measures;
  for (const solvers::MonteCarloRun& run : runs) measures.push_back(ReadMeasures(run));

  // Medians and quartiles of the measures over the seeds, per scenario and filter; and how often
  // the optimal filter's 90 % lag exceeds the sliding-surface filter's in the same run.
  std::ostringstream csv;
  csv << "scenario,filter,measure,runs,median,p25,p75\n";
  nlohmann::json json_measures = nlohmann::json::array();
  std::printf(
      "friction_filter_study Monte Carlo: %d seeds per true mass (--seed %d + 0 .. %d), "
      "%s sensors, filter mass %g kg, force delay %g s\n",
      num_seeds, FLAGS_seed, num_seeds - 1, FLAGS_sensors.c_str(), FLAGS_filter_mass,
      FLAGS_force_delay_s);
  std::printf("%-16s %-16s %-52s %10s %10s %10s\n", "scenario", "filter", "measure", "median",
              "p25", "p75");
  char buffer[512];
  for (int s = 0; s < num_scenarios; ++s) {
    for (int f = 0; f < 2; ++f) {
      for (int k = 0; k < kNumMeasures; ++k) {
        const Measure& m = kMeasures[k];
        std::vector<double> values;
        for (int i = 0; i < num_seeds; ++i) {
          const RunMeasures& run = measures[static_cast<size_t>(s) * num_seeds + i];
          if (run.done) values.push_back(run.values[f][k]);
        }
        const double median = Median(values), p25 = Quantile(values, 0.25),
                     p75 = Quantile(values, 0.75);
        std::snprintf(buffer, sizeof(buffer), "%s,%s,%s,%zu,%.17g,%.17g,%.17g\n", names[s].c_str(),
                      kFilters[f], m.name, values.size(), median, p25, p75);
        csv << buffer;
        std::printf("%-16s %-16s %-52s %10.4g %10.4g %10.4g\n", names[s].c_str(), kFilters[f],
                    m.name, median, p25, p75);
        json_measures.push_back({{"scenario", names[s]},
                                 {"filter", kFilters[f]},
                                 {"measure", m.name},
                                 {"runs", values.size()},
                                 {"median", median},
                                 {"p25", p25},
                                 {"p75", p75}});
      }
    }
  }
  nlohmann::json json_lags = nlohmann::json::array();
  for (int s = 0; s < num_scenarios; ++s) {
    int longer = 0, compared = 0;
    for (int i = 0; i < num_seeds; ++i) {
      const RunMeasures& run = measures[static_cast<size_t>(s) * num_seeds + i];
      const double sliding = run.values[0][kLag90];
      const double optimal = run.values[1][kLag90];
      if (!run.done || std::isnan(sliding) || std::isnan(optimal)) continue;
      ++compared;
      longer += optimal > sliding ? 1 : 0;
    }
    std::printf(
        "%s: the optimal filter's median 90 %% lag exceeds the sliding-surface filter's "
        "in %d of %d runs\n",
        names[s].c_str(), longer, compared);
    json_lags.push_back({{"scenario", names[s]},
                         {"optimal_lag90_longer_runs", longer},
                         {"compared_runs", compared}});
  }

  data::OutputStage stage;
  std::vector<solvers::CoverageRow> rows;
  char title[200];
  std::snprintf(title, sizeof(title),
                "friction and velocity at chosen times: %d noise seeds from %d (filter mass %g kg)",
                num_seeds, FLAGS_seed, FLAGS_filter_mass);
  if (!stage.Open(FLAGS_out_dir, error) ||
      !solvers::WriteCoverageOutputs(runs, names, title, FLAGS_figures, &stage, &rows, error,
                                     cli::MonteCarloSettings()) ||
      !stage.WriteText("monte_carlo_measures.csv", csv.str(), error)) {
    return false;
  }
  std::printf("%s", solvers::FormatCoverageTable(rows).c_str());
  // Coverage within [0.85, 1] says the intervals are not too narrow; how much too wide they are
  // is the ratio of the reported σ to the actual spread.
  for (const solvers::CoverageRow& row : rows) {
    if (std::isfinite(row.mean_reported_std) && row.spread > 0.0 &&
        row.mean_reported_std > 3.0 * row.spread) {
      std::printf(
          "%s %s %s: the reported sigma is %.3g times the spread over the runs "
          "(intervals far wider than needed)\n",
          row.scenario.c_str(), row.estimator.c_str(), row.parameter.c_str(),
          row.mean_reported_std / row.spread);
    }
  }
  std::printf(
      "sliding_surface reports no uncertainty of its estimates: its rows give bias and "
      "spread, no coverage\n");
  std::printf("%s\n", cli::MonteCarloJobLine(job).c_str());
  nlohmann::json summary;
  summary["flags"] = FlagsJson(settings);
  nlohmann::json& monte_carlo = summary["monte_carlo"] = cli::MonteCarloJobJson(job, FLAGS_out_dir);
  monte_carlo["coverage_times_s"] = settings.coverage_times_s;
  monte_carlo["measures"] = json_measures;
  monte_carlo["optimal_lag90_longer"] = json_lags;
  monte_carlo["coverage"] = solvers::CoverageJson(rows);
  monte_carlo["sliding_surface_uncertainty"] =
      "none reported: the sliding-surface filter gives no covariance, so its coverage is not "
      "defined";
  return stage.WriteJson("summary.json", summary, error) && stage.Commit(error);
}

}  // namespace dynid::friction_filter_study
