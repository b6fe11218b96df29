// experiments/scara_study/scara_output — what scara_study writes and prints: the tables
// (estimates.csv, table7.csv beside the published values, evolution.csv of the parameters over
// time, record.csv) and the estimates in summary.json, the figures (*.png with their
// *.figure.json, like the published Figs. 7–12; with a measured record the torque prediction) and
// the digest on stdout.
#ifndef DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_OUTPUT_H_
#define DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_OUTPUT_H_

#include <string>
#include <vector>

#include "dynid/data/output.h"
#include "experiments/scara_study/scara_estimators.h"
#include "experiments/scara_study/scara_record.h"

namespace dynid::scara_study {

// estimates.csv, table7.csv, evolution.csv, record.csv and summary.json "estimates".
void TabulateResults(const Record& record, const EstimatorRuns& runs, Results* results);

// The CSV files of `csv` into the stage (torque_prediction.csv when there is one).
bool WriteCsvFiles(const CsvFiles& csv, data::OutputStage* stage, std::string* error);

// The figures of the study into the stage: the "true" series only with a truth, the torque
// prediction only without (for the estimates in torque_methods); false with the message of the
// first figure that could not be rendered (the ones after it are not attempted).
// The titles of the figures with ±2σ bands carry the σ's measured coverage.
bool RenderFigures(const data::OutputStage& stage, bool with_truth,
                   const std::vector<std::string>& torque_methods, const MeasuredCoverage& coverage,
                   std::string* error);

// The table of estimates, every reported σ with its measured coverage, the UKF verdict, the EKF
// explanation and the sign statistics on stdout.
void PrintDigest(const Record& record, const Results& results);

}  // namespace dynid::scara_study

#endif  // DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_OUTPUT_H_
