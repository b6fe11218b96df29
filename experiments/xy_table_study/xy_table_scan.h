// experiments/xy_table_study/xy_table_scan — the smoother runs of xy_table_study after the three
// stages: the acceleration-weight scan (the thesis's solver overflowed above ~0.0025: for each
// weight, stage 3 from the stage-2 estimate by the weighted-residual smoother and by the thesis's
// iterated first-order approximation, the share of the acceleration terms in the cost and the
// stiffness of the linearised boundary-value problem), and the end-effector path reconstructed
// without position measurements, by the smoother with theta fixed and on-line by the linear
// optimal filter (Fig. 5.27).
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_SCAN_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_SCAN_H_

#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dynid/problems/weighted_residual_problem.h"
#include "experiments/xy_table_study/xy_table_record.h"
#include "experiments/xy_table_study/xy_table_stages.h"

namespace dynid::xy_table_study {

struct ScanResult {
  Eigen::MatrixXd scan_table;                     // one row per weight, columns ScanHeader()
  std::vector<std::string> first_order_messages;  // the first-order approximation's, per weight
};

// The columns of sweep.csv (and of ScanResult::scan_table).
std::vector<std::string> ScanHeader();

// The scan over the acceleration weights in scan (--acceleration_weight_sweep), from
// stages[1].theta; --first_order_r0_factor, --first_order_damping.
bool RunAccelerationWeightScan(const Record& rec, const std::vector<StageResult>& stages,
                               const std::vector<double>& scan, ScanResult* out,
                               std::string* error);

struct Reconstruction {
  StageResult reconstruction;  // the smoother with theta fixed
  Eigen::MatrixXd online_xy;   // N × 2 filtered end-effector position (empty if the filter failed)
};

// The end-effector path reconstructed from accelerations, encoders, currents and the flexible
// model with theta_final (positions weighted 0, accelerations by the rule; stage3_weights
// otherwise): by the smoother and by the linear optimal filter; appends the RMS errors to md and
// sets (*summary)["reconstruction"]. False (exit code 1) if the smoother cannot run.
bool ReconstructPath(const Record& rec, const problems::WeightedResidualWeights& stage3_weights,
                     const Eigen::VectorXd& theta_final, std::ostringstream* md_out,
                     nlohmann::json* summary_out, Reconstruction* out, std::string* error_out);

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_SCAN_H_
