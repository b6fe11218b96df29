// experiments/xy_table_study/xy_table_evaluation — the identified model beyond the identification
// interval in xy_table_study: open-loop simulation with the measured currents over three
// intervals and on the circular path (Figs. 5.22–5.26).
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_EVALUATION_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_EVALUATION_H_

#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "experiments/xy_table_study/xy_table_record.h"

namespace dynid::xy_table_study {

struct Evaluation {
  Eigen::MatrixXd evaluation_rows;  // rows of evaluation.csv (three intervals)
  Eigen::MatrixXd circle_rows;      // rows of circle.csv (none without a circular path)
};

// With --evaluation, the flexible model with theta_final simulated open-loop with the measured
// currents over the interval before, the identification interval and the one after, and on the
// circular path (simulated, or --circle_csv); appends its table to md and sets
// (*summary)["evaluation"]. False (exit code 2) if --circle_csv cannot be read.
bool EvaluateIdentifiedModel(const Record& rec, const Eigen::VectorXd& theta_final,
                             std::ostringstream* md_out, nlohmann::json* summary_out,
                             Evaluation* out, std::string* error_out);

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_EVALUATION_H_
