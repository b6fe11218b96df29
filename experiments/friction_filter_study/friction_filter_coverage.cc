// experiments/friction_filter_study/friction_filter_coverage — the optimal filter's intervals of
// a single run with their measured coverage (see friction_filter_coverage.h).
#include "experiments/friction_filter_study/friction_filter_coverage.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/solvers/coverage.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/friction_filter_study/friction_filter_flags.h"
#include "experiments/friction_filter_study/friction_filter_measures.h"

namespace dynid::friction_filter_study {

std::string ScenarioName(double true_mass) { return "true_mass_" + Format(true_mass) + "kg"; }

std::string IntervalParameter(int state, double t) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s_at_%gs", state == 2 ? "friction_n" : "velocity_m_per_s", t);
  return name;
}

bool LoadMeasuredCoverage(MeasuredCoverage* coverage, std::string* error) {
  coverage->rows.clear();
  coverage->source.clear();
  coverage->withheld.clear();
  // A coverage measured at other settings says nothing of this run's intervals: not quoted. The
  // true masses (scenarios), the coverage times (rows by name) and the jump and error measures'
  // settings do not change a run's intervals.
  std::string difference;
  if (!cli::LoadQuotedCoverage(
          FLAGS_coverage_csv, "friction_filter_study/coverage.csv",
          {"true_masses", "coverage_times_s", "jump_threshold_n", "jump_window_s", "transient_s"},
          &coverage->rows, &coverage->source, &difference, error)) {
    return false;
  }
  if (!difference.empty()) {
    coverage->withheld = "coverage not measured for this setting (" + difference + ")";
    coverage->rows.clear();
    coverage->source.clear();
  }
  return true;
}

nlohmann::json QuoteIntervals(const Record& record, const CaseRecord& case_record,
                              const FilterRuns& runs, const std::vector<double>& times,
                              const MeasuredCoverage& coverage) {
  nlohmann::json intervals = nlohmann::json::array();
  const std::string scenario =
      record.measured ? std::string("measured") : ScenarioName(case_record.true_mass);
  for (double t : times) {
    if (t < record.times(0) || t > record.times(record.num - 1)) continue;
    // The sample nearest to t.
    const double* begin = record.times.data();
    int k = static_cast<int>(std::lower_bound(begin, begin + record.num, t) - begin);
    if (k > 0 && (k == record.num || t - record.times(k - 1) < record.times(k) - t)) --k;
    for (int state : {2, 1}) {
      const std::string parameter = IntervalParameter(state, t);
      solvers::MonteCarloEstimate estimate;
      estimate.estimate = runs.optimal.states(state, k);
      estimate.reported_std = runs.optimal.standard_deviation(state, k);
      double lower = 0.0, upper = 0.0;
      solvers::ReportedInterval(estimate, &lower, &upper);
      const solvers::CoverageRow* row =
          solvers::FindCoverageRow(coverage.rows, scenario, "linear_optimal", parameter);
      const std::string label =
          row != nullptr ? solvers::CoverageLabel(*row)
                         : (!coverage.withheld.empty() ? coverage.withheld
                                                       : std::string("coverage not measured"));
      intervals.push_back({{"scenario", scenario},
                           {"parameter", parameter},
                           {"time_s", record.times(k)},
                           {"estimate", estimate.estimate},
                           {"reported_std", estimate.reported_std},
                           {"lower", lower},
                           {"upper", upper},
                           {"coverage", label},
                           {"coverage_source", coverage.source}});
    }
  }
  return intervals;
}

void PrintIntervals(const std::vector<nlohmann::json>& intervals) {
  for (const nlohmann::json& per_case : intervals) {
    for (const nlohmann::json& i : per_case) {
      std::printf("%s linear_optimal %s: %.4g, 95 %% interval [%.4g, %.4g]; %s\n",
                  i["scenario"].get<std::string>().c_str(),
                  i["parameter"].get<std::string>().c_str(), i["estimate"].get<double>(),
                  i["lower"].get<double>(), i["upper"].get<double>(),
                  i["coverage"].get<std::string>().c_str());
    }
  }
  std::printf("sliding_surface: no intervals (the filter reports no uncertainty)\n");
}

}  // namespace dynid::friction_filter_study
