// experiments/friction_filter_study/friction_filter_output — what friction_filter_study reports:
// the table of friction-estimate errors (or, measured, levels) on the console and as results.csv,
// results.md and summary.json rows, and the output folder (results, case time series, figures
// fig4_03 … fig4_12, summary.json).
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_OUTPUT_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_OUTPUT_H_

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/friction_filter_study/friction_filter_case.h"
#include "experiments/friction_filter_study/friction_filter_record.h"

namespace dynid::friction_filter_study {

// Prints the table and appends it to csv (results.csv), markdown (results.md) and json_rows
// (summary.json "errors").
void TabulateResults(const Record& record, const std::vector<CaseResult>& cases,
                     std::ostringstream* csv, std::ostringstream* markdown,
                     nlohmann::json* json_rows);

// jumps.csv: one row per (case, filter, friction jump) with its lags, overshoot and RMS error.
std::string JumpsCsv(const std::vector<CaseResult>& cases);

// Writes results.csv, results.md, the cases' time series, the figures (--figures) and
// summary.json to --out_dir; false with a message on a failure.
bool WriteOutputs(const Record& record, const std::vector<CaseResult>& cases,
                  const std::string& csv, const std::string& markdown,
                  const nlohmann::json& summary, std::string* error);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_OUTPUT_H_
