// experiments/xy_table_study/xy_table_output — what xy_table_study reports: the stages' table of
// estimates (with the thesis's), residuals as % of the measured ranges, peak frequencies and
// deformation (tables.md and summary.json), the acceleration-weight scan's table, and the files
// written to --out_dir (interval.csv, sweep.csv, evaluation.csv, circle.csv, figures, tables.md,
// summary.json).
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_OUTPUT_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_OUTPUT_H_

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/xy_table_study/xy_table_coverage.h"
#include "experiments/xy_table_study/xy_table_evaluation.h"
#include "experiments/xy_table_study/xy_table_record.h"
#include "experiments/xy_table_study/xy_table_scan.h"
#include "experiments/xy_table_study/xy_table_stages.h"

namespace dynid::xy_table_study {

// Starts md with its title and the stages' tables (each stage's ± labelled with its measured
// coverage, and the true values of a simulated record); sets (*summary)["stages"].
void ReportStages(const Record& rec, const std::vector<StageResult>& stages,
                  const MeasuredCoverage& coverage, std::ostringstream* md_out,
                  nlohmann::json* summary_out);

// Appends the scan's table to md and its rows to (*summary)["acceleration_weight_sweep"] (nothing
// if scan is empty).
void ReportScan(const std::vector<double>& scan, const ScanResult& result,
                std::ostringstream* md_out, nlohmann::json* summary_out);

// Writes the CSV files, the figures (--figures), tables.md and summary.json to --out_dir.
// False (exit code 1) with a message otherwise.
bool WriteOutputs(const Record& rec, const std::vector<StageResult>& stages,
                  const ScanResult& scan_result, const Evaluation& evaluation,
                  const Reconstruction& path, const std::ostringstream& md,
                  const nlohmann::json& summary, std::string* error_out);

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_OUTPUT_H_
