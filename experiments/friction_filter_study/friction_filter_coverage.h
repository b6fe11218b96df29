// experiments/friction_filter_study/friction_filter_coverage — the optimal filter's intervals of
// a single run (friction e and velocity v at --coverage_times_s, estimate ± 1.96 sqrt(diag Q))
// and the measured coverage quoted beside them: the coverage.csv of --coverage_csv, or the
// shipped one (the study's 50-seed Monte Carlo at the default flags; README.md) when the run's
// settings are those it was measured with. The sliding-surface filter reports no uncertainty.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_COVERAGE_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_COVERAGE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/solvers/coverage.h"
#include "experiments/friction_filter_study/friction_filter_filters.h"
#include "experiments/friction_filter_study/friction_filter_record.h"

namespace dynid::friction_filter_study {

struct MeasuredCoverage {
  std::vector<solvers::CoverageRow> rows;
  std::string source;    // the file read (empty: none)
  std::string withheld;  // why the shipped coverage is not quoted (empty: it is, or none)
};

// The scenario name of a simulated true mass in coverage.csv, e.g. "true_mass_1kg".
std::string ScenarioName(double true_mass);

// The parameter name of the friction (state 2) or velocity (state 1) at time t, e.g.
// "friction_n_at_1.35s".
std::string IntervalParameter(int state, double t);

// Reads --coverage_csv or, at the default settings, the shipped coverage; false with a message
// for a file that cannot be read.
bool LoadMeasuredCoverage(MeasuredCoverage* coverage, std::string* error);

// The optimal filter's intervals at the times within the record, each with its measured coverage
// (or why there is none), as summary.json records them.
nlohmann::json QuoteIntervals(const Record& record, const CaseRecord& case_record,
                              const FilterRuns& runs, const std::vector<double>& times,
                              const MeasuredCoverage& coverage);

// Prints the intervals of every case (QuoteIntervals), one line each.
void PrintIntervals(const std::vector<nlohmann::json>& intervals);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_COVERAGE_H_
