// experiments/xy_table_study/xy_table_scan — the acceleration-weight scan of xy_table_study (see
// xy_table_scan.h).
#include "experiments/xy_table_study/xy_table_scan.h"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"
#include "dynid/models/xy_table.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/first_order_smoother.h"
#include "experiments/xy_table_study/xy_table_case.h"
#include "experiments/xy_table_study/xy_table_flags.h"
#include "experiments/xy_table_study/xy_table_measures.h"

namespace dynid::xy_table_study {

namespace {

namespace models = dynid::models;
namespace problems = dynid::problems;
namespace solvers = dynid::solvers;

// Stiffness of the two-point boundary-value problem (van de Molengraft (1990) eq. 3.4) linearised
// about the estimate `v` (theta constant, so part of the state with W_theta⁻¹ = 0): with the inputs
// p̄ eliminated (S = DᵀVD, P = V − V D S⁻¹ Dᵀ V, Ã = A − B S⁻¹ DᵀV C) the Hamiltonian matrix is
//   [[Ã, W⁻¹ + B S⁻¹ Bᵀ], [Cᵀ P C, −Ãᵀ]],
// whose eigenvalues come in pairs ±μ. The largest |Re μ| over the nodes is the rate of the fastest
// mode of the forward Riccati equation (eq. 3.9) and of the unstable direction that makes
// integrating x and λ in one direction blow up. Returned: max over every 4th node of
// max |Re μ| (1/s).
template <class Model>
double HamiltonianRate(const Model& model, const problems::WeightedResidualData& d,
                       const problems::WeightedResidualWeights& w,
                       problems::WeightedResidualVariables v) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters;
  constexpr int NX = 2 * n + p, NP = n + m;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(NX, NX), B = Eigen::MatrixXd::Zero(NX, NP);
  A.block(0, n, n, n).setIdentity();
  B.block(n, 0, n, n).setIdentity();
  Eigen::MatrixXd Winv = Eigen::MatrixXd::Zero(NX, NX);
  Winv.topLeftCorner(2 * n, 2 * n) = w.kinematic.inverse();
  const Eigen::MatrixXd& V = w.residual;
  double rate = 0.0;
  for (int k = 0; k < v.num_nodes(); k += 4) {
    // C = ∂[r; z]/∂[s; v; theta] and D = ∂[r; z]/∂p̄ at node k.
    models::ModelLinearization<Model> lin;
    const double* state = v.state(k);
    const double* input = v.input(k);
    models::LinearizeModel(model, state, state + n, input, input + n, v.parameter(k), d.time(k),
                           &lin);
    Eigen::MatrixXd C(lin.J_r_x.rows() + lin.J_z_x.rows(), NX);
    C << lin.J_r_x, lin.J_z_x;
    Eigen::MatrixXd D(lin.J_r_pbar.rows() + lin.J_z_pbar.rows(), NP);
    D << lin.J_r_pbar, lin.J_z_pbar;
    const Eigen::MatrixXd S = D.transpose() * V * D;
    const Eigen::LDLT<Eigen::MatrixXd> S_factor(S);
    const Eigen::MatrixXd SiDtV = S_factor.solve(D.transpose() * V);
    const Eigen::MatrixXd At = A - B * SiDtV * C;
    Eigen::MatrixXd H(2 * NX, 2 * NX);
    H << At, Winv + B * S_factor.solve(B.transpose()), C.transpose() * (V - V * D * SiDtV) * C,
        -At.transpose();
    const Eigen::EigenSolver<Eigen::MatrixXd> eig(H, false);
    rate = std::max(rate, eig.eigenvalues().real().cwiseAbs().maxCoeff());
  }
  return rate;
}

}  // namespace

std::vector<std::string> ScanHeader() {
  return {"acceleration_weight",
          "converged",
          "iterations",
          "final_cost",
          "time_s",
          "J1",
          "w1",
          "k",
          "information_condition",
          "acceleration_cost_share",
          "a_orth_residual_rms",
          "first_order_converged",
          "first_order_iterations",
          "first_order_last_change",
          "first_order_k",
          "first_order_max_abs_variable",
          "hamiltonian_rate_per_s"};
}

bool RunAccelerationWeightScan(const Record& rec, const std::vector<StageResult>& stages,
                               const std::vector<double>& scan, ScanResult* out,
                               std::string* error) {
  const problems::WeightedResidualData& d = rec.d;
  const models::XyTableParameters& parameters = rec.parameters;
  const XyTableCaseOptions& case_options = rec.case_options;
  const models::XyTableFlexible flexible(parameters);
  const int N = rec.count;
  Eigen::MatrixXd& scan_table = out->scan_table;
  std::vector<std::string>& first_order_messages = out->first_order_messages;
  scan_table.resize(scan.size(), 17);
  for (size_t i = 0; i < scan.size(); ++i) {
    XyTableWeightOptions wopt = case_options.weights;
    wopt.acceleration_weight = scan[i];
    const problems::WeightedResidualWeights w =
        XyTableWeights(XyStage::kFlexibleWithAccelerations, d, parameters, wopt);
    StageResult r;
    if (!RunStage(flexible, XyStage::kFlexibleWithAccelerations, d, w, parameters, stages[1].theta,
                  problems::ParameterMode::kConstant, &r, error)) {
      *error = "sweep: " + *error;
      return false;
    }
    // Share of the acceleration terms in the final cost: Σ w_k V_acc zeta² / 2 / cost.
    const Eigen::VectorXd wk = problems::TrapezoidalNodeWeights(d.time);
    double acc_cost = 0.0;
    for (int k = 0; k < N; ++k) {
      acc_cost += 0.5 * wk(k) * scan[i] *
                  (r.zeta(k, 3 + 2) * r.zeta(k, 3 + 2) + r.zeta(k, 3 + 3) * r.zeta(k, 3 + 3));
    }
    // The thesis's method: the iterated first-order approximation (Riccati sweeps), same
    // weights, R0 small (--first_order_r0_factor × the rule weight of each initial-state element
    // and parameter).
    problems::WeightedResidualWeights wf = w;
    problems::WeightedResidualVariables fv;
    InitializeXyTableVariables(XyStage::kFlexibleWithAccelerations, d, parameters, stages[1].theta,
                               &fv);
    Eigen::VectorXd r0(11), q0(11);
    q0 << fv.states.col(0), stages[1].theta;
    for (int e = 0; e < 11; ++e) {
      r0(e) = FLAGS_first_order_r0_factor * ThesisRuleWeight(std::max(std::abs(q0(e)), 1e-3));
    }
    wf.initial = r0.asDiagonal();
    wf.initial_guess = q0;
    solvers::FirstOrderSmootherOptions fo;
    fo.max_iterations = 30;
    fo.damping = FLAGS_first_order_damping;
    fo.tolerance = 1e-8;
    const solvers::FirstOrderSmootherSummary fs =
        solvers::RunFirstOrderSmoother(flexible, d, wf, fo, &fv);
    const bool finite = fv.states.allFinite() && fv.parameters.allFinite();
    double largest = 0.0;
    if (finite) {
      largest = std::max(fv.states.cwiseAbs().maxCoeff(), fv.inputs.cwiseAbs().maxCoeff());
    }
    const double hamiltonian_rate = HamiltonianRate(flexible, d, w, r.variables);
    scan_table.row(i) << scan[i], r.summary.converged ? 1.0 : 0.0, r.summary.iterations,
        r.summary.final_cost, r.summary.time_s, r.theta(0), r.theta(2), r.theta(4), r.condition,
        acc_cost / std::max(r.summary.final_cost, 1e-300), Rms(r.zeta.col(3 + 3)),
        fs.converged ? 1.0 : 0.0, fs.iterations, fs.last_change, finite ? fv.parameters(4, 0) : NAN,
        finite ? largest : INFINITY, hamiltonian_rate;
    first_order_messages.push_back(fs.message);
  }
  return true;
}

bool ReconstructPath(const Record& rec, const problems::WeightedResidualWeights& stage3_weights,
                     const Eigen::VectorXd& theta_final, std::ostringstream* md_out,
                     nlohmann::json* summary_out, Reconstruction* out, std::string* error_out) {
  std::ostringstream& md = *md_out;
  nlohmann::json& summary = *summary_out;
  std::string& error = *error_out;
  const problems::WeightedResidualData& d = rec.d;
  const models::XyTableParameters& parameters = rec.parameters;
  const models::XyTableFlexible flexible(parameters);
  const int N = rec.count;
  StageResult& reconstruction = out->reconstruction;
  Eigen::MatrixXd& online_xy = out->online_xy;
  problems::WeightedResidualWeights w = stage3_weights;
  const double acc_order = std::max(d.measurements.col(2).cwiseAbs().maxCoeff(),
                                    d.measurements.col(3).cwiseAbs().maxCoeff());
  const models::ModelInfo flexible_info = flexible.Info();
  const double acc_weight = FLAGS_measurement_emphasis * ThesisRuleWeight(acc_order);
  for (const char* name : {"V.z.x_effector", "V.z.y_effector"}) {
    if (!w.Set(flexible_info, name, 0.0, &error)) {
      error = "reconstruction: " + error;
      return false;
    }
  }
  for (const char* name : {"V.z.acceleration_along", "V.z.acceleration_orthogonal"}) {
    if (!w.Set(flexible_info, name, acc_weight, &error)) {
      error = "reconstruction: " + error;
      return false;
    }
  }
  if (!RunStage(flexible, XyStage::kFlexibleWithAccelerations, d, w, parameters, theta_final,
                problems::ParameterMode::kFixed, &reconstruction, &error)) {
    error = "reconstruction: " + error;
    return false;
  }
  const double ex = Rms(reconstruction.model_z.col(0) - d.measurements.col(0));
  const double ey = Rms(reconstruction.model_z.col(1) - d.measurements.col(1));
  const double ex_rigid =
      Rms(parameters.wheel_radius_m * d.measurements.col(4) - d.measurements.col(0));
  md << "\nEnd-effector path reconstructed from accelerations, encoders, currents and the "
        "identified model (positions not used): RMS error x "
     << Fmt(1e3 * ex) << " mm, y " << Fmt(1e3 * ey)
     << " mm (x = r phi1 alone: " << Fmt(1e3 * ex_rigid) << " mm).\n";
  summary["reconstruction"] = {{"x_rms_error_m", ex},
                               {"y_rms_error_m", ey},
                               {"x_from_phi1_rms_error_m", ex_rigid},
                               {"converged", reconstruction.summary.converged}};
  // On-line, as in the thesis: the linear optimal filter (forward Riccati sweep) with the same
  // weights and theta fixed, R0 from the rule on the initial state (1e-2 × 1/order²).
  problems::WeightedResidualVariables init;
  InitializeXyTableVariables(XyStage::kFlexible, d, parameters, theta_final, &init);
  Eigen::VectorXd r0(6);
  for (int e = 0; e < 6; ++e) {
    r0(e) = 1e-2 * ThesisRuleWeight(std::max(std::abs(init.states(e, 0)), 1e-3));
  }
  w.initial = r0.asDiagonal();
  w.initial_guess = init.states.col(0);
  solvers::LinearOptimalFilterOptions filter_options;
  solvers::LinearOptimalFilterResult filtered;
  const models::XyTableFlexible::ParameterVector fixed_theta = theta_final;
  if (solvers::RunLinearOptimalFilter(flexible, d, w, problems::ParameterMode::kFixed, fixed_theta,
                                      filter_options, &filtered, &error) &&
      filtered.states.allFinite()) {
    online_xy.resize(N, 2);
    for (int k = 0; k < N; ++k) {
      const double* x = filtered.states.col(k).data();
      const double* pbar = filtered.inputs.col(k).data();
      double z[8];
      flexible.Measurements(x, x + 3, pbar, pbar + 3, theta_final.data(), d.time(k), z);
      online_xy(k, 0) = z[0];
      online_xy(k, 1) = z[1];
    }
    const double fx = Rms(online_xy.col(0) - d.measurements.col(0));
    const double fy = Rms(online_xy.col(1) - d.measurements.col(1));
    md << "On-line with the linear optimal filter (same weights): RMS error x " << Fmt(1e3 * fx)
       << " mm, y " << Fmt(1e3 * fy) << " mm.\n";
    summary["reconstruction"]["filter_x_rms_error_m"] = fx;
    summary["reconstruction"]["filter_y_rms_error_m"] = fy;
  } else {
    md << "On-line with the linear optimal filter: failed (" << error << ").\n";
    summary["reconstruction"]["filter_error"] = error.empty() ? "non-finite estimate" : error;
    error.clear();
  }
  return true;
}

}  // namespace dynid::xy_table_study
