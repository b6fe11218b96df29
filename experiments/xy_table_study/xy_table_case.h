// XyTableCase (experiments/xy_table_study/xy_table_case.h) — the xy-table identification set-up of
// van de Molengraft (1990) §§5.5–5.6 as reusable pieces: the models, the measured data on the
// identification interval, the weights by the thesis's rule and the initial guesses, for the three
// stages (rigid model; flexible without accelerations; flexible with acceleration measurements).
// Generic tools (weight grids, identifiability studies) take an XyTableCase and call
// BuildWeightedResidualProblem with `flexible` / `rigid`, `data`, `weights[stage]` and variables
// from InitializeXyTableVariables. This file also instantiates BuildWeightedResidualProblem for
// models::XyTableRigid and models::XyTableFlexible.
//
// Weighting rule (§5.5): each weight = 1 / (order of magnitude of its term)², the order of
// magnitude being 10^round(log10(typical size)) (ThesisRuleWeight); typical sizes come from the
// data: max |measured channel| for each measurement (the term z_m), max |K_i i_i| for the
// equations of motion (torques), max |velocity| and max |acceleration| (rad/s, rad/s²; from the
// encoder differences and the accelerometers) for the kinematic residuals xi_s, xi_v. Then the
// thesis's relative adjustment: measurements are weighted `measurement_emphasis` times heavier.
// Stage weights: rigid — motor positions and currents only (as in the thesis); flexible — plus
// the end-effector position; flexible with accelerations — plus both accelerations with
// weight `acceleration_weight` (the thesis used 0.25e-4 and found > 0.0025 overflowing).
// R0 = 0 (the smoother chooses its own initial state).
#ifndef DYNID_PROBLEMS_XY_TABLE_CASE_H_
#define DYNID_PROBLEMS_XY_TABLE_CASE_H_

#include <Eigen/Core>
#include <array>
#include <string>

#include "dynid/models/xy_table.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "experiments/xy_table_study/xy_table_simulator.h"

namespace dynid::xy_table_study {

enum class XyStage { kRigid = 0, kFlexible = 1, kFlexibleWithAccelerations = 2 };
const char* XyStageName(XyStage stage);

// 1 / (10^round(log10 |magnitude|))²; CHECK-fails for magnitude <= 0 or non-finite.
double ThesisRuleWeight(double magnitude);

// Initial guesses of the thesis (van de Molengraft (1990) ch. 5): [1.280e-3, 0.600e-4, 0.370,
// 0.080] and k0 = 0.460 N m/rad (flexible: 5 values).
Eigen::VectorXd XyTableThesisInitialGuess(bool flexible);
// Published estimates: stage 0 [2.207e-3, 1.582e-4, 0.477, 0.154]; stage 1 [2.187e-3, 1.380e-4,
// 0.465, 0.152, 0.210]; stage 2 [2.099e-3, 1.437e-4, 0.461, 0.151, 0.245].
Eigen::VectorXd XyTablePublishedEstimate(XyStage stage);

struct XyTableWeightOptions {
  double measurement_emphasis = 100.0;  // > 0
  double acceleration_weight = 2.5e-5;  // >= 0, V entry of both accelerations (stage 2)
  double kinematic_emphasis = 1.0;      // > 0, factor on W (xi_s, xi_v)
  double equation_emphasis = 1.0;       // > 0, factor on the equations of motion in V
  bool IsValid(std::string* why) const;
};

// Weights of `stage` for `data` (N × 8 measurements of the xy-table layout) by the rule above.
problems::WeightedResidualWeights XyTableWeights(XyStage stage,
                                                 const problems::WeightedResidualData& data,
                                                 const models::XyTableParameters& parameters,
                                                 const XyTableWeightOptions& options);

// Sizes `variables` (kConstant) for the stage's model and fills the initial trajectory from the
// measurements: phi1, phi2 from the encoders, phi3 from x_e = r phi1 + beta r (phi3 − phi1) where
// beta = y_e/d > 0.2 (else phi1), velocities by central differences
// over ±2 samples, accelerations from the accelerometers / r, inputs = measured currents;
// theta = theta0.
void InitializeXyTableVariables(XyStage stage, const problems::WeightedResidualData& data,
                                const models::XyTableParameters& parameters,
                                const Eigen::VectorXd& theta0,
                                problems::WeightedResidualVariables* variables);

struct XyTableCaseOptions {
  XyTableTrueSystem system;             // the simulated "true" xy-table
  XyTableExperimentOptions experiment;  // path, sampling, noise
  double interval_start_s = 3.33;       // identification interval
  double interval_end_s = 4.99;
  XyTableWeightOptions weights;
};

struct XyTableCase {
  models::XyTableParameters parameters;  // model constants (and smoothing)
  models::XyTableRigid rigid;
  models::XyTableFlexible flexible;
  XyTableRecord record;                 // whole simulated record, with the truth
  int first_sample = 0;                 // record row of data.time(0)
  problems::WeightedResidualData data;  // the identification interval
  std::array<problems::WeightedResidualWeights, 3> weights;  // by XyStage
  Eigen::VectorXd rigid_theta0, flexible_theta0;             // thesis initial guesses
};

// Simulates the experiment and assembles the case. Options must be valid (CHECK).
XyTableCase MakeXyTableCase(const XyTableCaseOptions& options);

// Rows of `time` inside [start, end] (inclusive, 1e-9 slack): first index and count.
void SelectInterval(const Eigen::VectorXd& time, double start, double end, int* first, int* count);

}  // namespace dynid::xy_table_study

#endif  // DYNID_PROBLEMS_XY_TABLE_CASE_H_
