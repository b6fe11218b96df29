// experiments/backlash_study/backlash_output — what backlash_study reports of one case: its rows
// of the printed table and of results.csv, its summary.json entry, D/<case>_series.csv and its
// figures; and a dead-zone fit as summary.json records it.
#ifndef DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_OUTPUT_H_
#define DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_OUTPUT_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "dynid/data/output.h"
#include "dynid/solvers/dead_zone_fit.h"
#include "experiments/backlash_study/backlash_case.h"
#include "experiments/backlash_study/backlash_coverage.h"
#include "experiments/backlash_study/backlash_estimators.h"

namespace dynid::backlash_study {

// A dead-zone fit (estimates, intervals, verdict) as summary.json records it.
nlohmann::json FitJson(const solvers::DeadZoneFit& fit);

// The header line of results.csv.
std::string ResultsCsvHeader();

// Prints the number of cases and the header of the console table.
void PrintTableHeader(size_t num_cases);

// One case's estimates: prints its rows of the console table, appends them to results_csv and
// its entry (settings, solver summaries, estimates) to (*summary)["cases"]. Every estimator's
// row carries the measured coverage of its intervals of b and K (`coverage`).
void ReportCase(const Case& config, int samples, const CaseRun& run,
                const MeasuredCoverage& coverage, nlohmann::json* summary,
                std::string* results_csv);

// D/<case>_series.csv (every k-th sample, at most --max_plot_rows rows) and, with --figures,
// D/<case>_tau_vs_delta.png, D/<case>_tau_vs_time.png, D/<case>_errors.png.
bool WriteCaseOutputs(const CaseRun& run, data::OutputStage* stage, std::string* error);

}  // namespace dynid::backlash_study

#endif  // DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_OUTPUT_H_
