#include "dynid/solvers/backlash_smoother.h"

#include "dynid/solvers/parameter_covariance.h"

#include <ceres/ceres.h>
#include <glog/logging.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <vector>

#include "dynid/solvers/internal/ceres_progress.h"

namespace dynid::solvers {

bool BacklashSmootherOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  if (max_iterations < 1)
    out << "max_iterations must be >= 1, got " << max_iterations;
  else if (!(function_tolerance >= 0.0) || !(gradient_tolerance >= 0.0) ||
           !(parameter_tolerance >= 0.0))
    out << "tolerances must be >= 0";
  else if (!(initial_trust_region_radius > 0.0))
    out << "initial_trust_region_radius must be > 0";
  else if (!(settle_function_tolerance >= 0.0))
    out << "settle_function_tolerance must be >= 0";
  else if (!(refine_trust_region_radius >= 0.0))
    out << "refine_trust_region_radius must be >= 0 (0: one phase)";
  else if (num_threads < 1)
    out << "num_threads must be >= 1, got " << num_threads;
  std::string message;
  if (out.str().empty() && !progress.IsValid(&message)) out << message;
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

namespace {

// Sets the nodes from the optional start (N × 4 states and N tau values, or both empty).
bool SetStart(long n, const Eigen::MatrixXd& initial_states, const Eigen::VectorXd& initial_tau,
              problems::BacklashSmootherVariables* variables, std::string* error) {
  if (initial_states.size() == 0 && initial_tau.size() == 0) return true;
  if (initial_states.rows() != n || initial_states.cols() != 4 || initial_tau.size() != n) {
    if (error) {
      std::ostringstream out;
      out << "backlash smoother: initial states must be " << n << " × 4 and initial tau " << n
          << " values, got " << initial_states.rows() << " × " << initial_states.cols() << " and "
          << initial_tau.size();
      *error = out.str();
    }
    return false;
  }
  variables->Set(initial_states, initial_tau);
  return true;
}

// Solves a built problem and fills `result` from the nodes. False when Ceres fails.
// Two phases (see BacklashSmootherOptions): a settling phase from the huge trust region, stopped
// by settle_function_tolerance, then Levenberg–Marquardt restarted from
// refine_trust_region_radius with the final tolerances. Bounds (b >= 0 in the shape problem) make
// Ceres follow every step with a projected Armijo line search; quadratic interpolation keeps it
// to cost evaluations (the default cubic one evaluates the Jacobian at every trial point).
// `watch` (optional) runs after every iteration with the parameter blocks updated, and may end
// the solve (USER_SUCCESS, counted as converged).
bool SolveAndCollect(const problems::BacklashSmootherData& data,
                     const BacklashSmootherOptions& options,
                     std::chrono::steady_clock::time_point start,
                     const problems::BacklashSmootherVariables& variables, ceres::Problem* problem,
                     BacklashSmootherResult* result, std::string* error,
                     ceres::IterationCallback* watch = nullptr) {
  ceres::Solver::Options solver_options;
  solver_options.linear_solver_type = ceres::SPARSE_NORMAL_CHOLESKY;
  solver_options.sparse_linear_algebra_library_type =
      options.use_eigen_sparse ? ceres::EIGEN_SPARSE : ceres::SUITE_SPARSE;
  solver_options.gradient_tolerance = options.gradient_tolerance;
  solver_options.parameter_tolerance = options.parameter_tolerance;
  solver_options.num_threads = options.num_threads;
  solver_options.line_search_interpolation_type = ceres::QUADRATIC;
  solver_options.logging_type = ceres::SILENT;
  internal::CeresProgress callback("backlash smoother", options.progress, start);
  solver_options.callbacks.push_back(&callback);
  if (watch != nullptr) {
    solver_options.callbacks.push_back(watch);
    solver_options.update_state_every_iteration = true;
  }

  SolverSummary& s = result->summary;
  s = SolverSummary();
  const bool two_phases = options.refine_trust_region_radius > 0.0;
  std::ostringstream message;
  ceres::Solver::Summary summary;
  for (int phase = two_phases ? 0 : 1; phase < 2; ++phase) {
    const bool settling = phase == 0;
    solver_options.max_num_iterations = options.max_iterations - s.iterations;
    solver_options.function_tolerance =
        settling ? std::max(options.settle_function_tolerance, options.function_tolerance)
                 : options.function_tolerance;
    solver_options.initial_trust_region_radius =
        settling || !two_phases ? options.initial_trust_region_radius
                                : options.refine_trust_region_radius;
    solver_options.max_trust_region_radius =
        std::max(1e16, solver_options.initial_trust_region_radius);
    callback.set_iteration_offset(s.iterations);
    ceres::Solve(solver_options, problem, &summary);
    // Iteration 0 of each phase is the evaluation at its start, not a step.
    s.iterations += std::max(0, static_cast<int>(summary.iterations.size()) - 1);
    if (settling || !two_phases) s.initial_cost = summary.initial_cost;
    s.final_cost = summary.final_cost;
    s.linear_solver_time_s += summary.linear_solver_time_in_seconds;
    s.jacobian_time_s += summary.jacobian_evaluation_time_in_seconds;
    if (two_phases) message << (settling ? "settling: " : "; refinement: ");
    message << summary.message;
    if (summary.termination_type == ceres::FAILURE ||
        summary.termination_type == ceres::USER_FAILURE) {
      s.message = message.str();
      if (error) *error = "backlash smoother: Ceres failed: " + s.message;
      s.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return false;
    }
    s.converged = summary.termination_type == ceres::CONVERGENCE ||
                  summary.termination_type == ceres::USER_SUCCESS;
    // A settling phase that ran out of iterations ends the solve unconverged; one ended by
    // `watch` ends it for the caller to act on.
    if (!s.converged || s.iterations >= options.max_iterations ||
        summary.termination_type == ceres::USER_SUCCESS) {
      break;
    }
  }
  s.message = message.str();
  result->states = variables.States();
  result->tau = variables.Tau();
  result->delta = result->states.col(0) - result->states.col(1);
  const int l = static_cast<int>(data.measurements.cols());
  result->measurement_residuals = data.measurements - result->states.middleCols(2, l);
  s.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

// The covariance of the tangent entries `free` of the last parameter block `tail` (3 values,
// the others held) of a least-squares problem whose other blocks are the `num_nodes` contiguous
// nodes of 5 values at `nodes`, each residual block touching at most two consecutive nodes (and
// the tail): the inverse of the `free` rows and columns of the Schur complement
// S = H_tt − H_tn H_nn⁻¹ H_nt of H = JᵀJ. H is accumulated from the residual blocks' Jacobians
// into its block-tridiagonal node part, node–tail columns and tail block, and the nodes are
// eliminated in order by block Cholesky (O(N), 5 × 5 blocks). False with a message when H_nn is
// not positive definite or S is singular.
bool TailBlockCovariance(const ceres::Problem& problem, const double* nodes, int num_nodes,
                         const double* tail, const std::vector<int>& free,
                         Eigen::MatrixXd* covariance, std::string* why) {
  using Block = Eigen::Matrix<double, 5, 5>;
  using Border = Eigen::Matrix<double, 5, 3>;
  std::vector<Block> diagonal(num_nodes, Block::Zero()), upper(num_nodes, Block::Zero());
  std::vector<Border> border(num_nodes, Border::Zero());
  Eigen::Matrix3d tail_tail = Eigen::Matrix3d::Zero();
  std::vector<ceres::ResidualBlockId> ids;
  problem.GetResidualBlocks(&ids);
  std::vector<double*> blocks;
  std::vector<double> residuals, jacobian_values;
  for (ceres::ResidualBlockId id : ids) {
    problem.GetParameterBlocksForResidualBlock(id, &blocks);
    const ceres::CostFunction* cost = problem.GetCostFunctionForResidualBlock(id);
    const int m = cost->num_residuals();
    const int num_blocks = static_cast<int>(blocks.size());
    residuals.resize(m);
    jacobian_values.resize(static_cast<size_t>(m) * 5 * num_blocks);
    std::vector<double*> jacobians(num_blocks);
    std::vector<int> node_index(num_blocks);  // -1: the tail
    for (int b = 0; b < num_blocks; ++b) {
      jacobians[b] = jacobian_values.data() + static_cast<size_t>(m) * 5 * b;
      if (blocks[b] == tail) {
        node_index[b] = -1;
      } else {
        const std::ptrdiff_t offset = blocks[b] - nodes;
        CHECK(offset >= 0 && offset % 5 == 0 && offset / 5 < num_nodes)
            << "expected a node or the tail block";
        node_index[b] = static_cast<int>(offset / 5);
      }
    }
    if (!cost->Evaluate(blocks.data(), residuals.data(), jacobians.data())) {
      *why = "the Jacobian could not be evaluated";
      return false;
    }
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    for (int a = 0; a < num_blocks; ++a) {
      const int size_a = node_index[a] < 0 ? 3 : 5;
      const Eigen::Map<const RowMajor> J_a(jacobians[a], m, size_a);
      for (int b = 0; b < num_blocks; ++b) {
        const int size_b = node_index[b] < 0 ? 3 : 5;
        const Eigen::Map<const RowMajor> J_b(jacobians[b], m, size_b);
        const int i = node_index[a], j = node_index[b];
        if (i < 0 && j < 0) {
          tail_tail.noalias() += J_a.transpose() * J_b;
        } else if (i >= 0 && j < 0) {
          border[i].noalias() += J_a.transpose() * J_b;
        } else if (i >= 0 && j == i) {
          diagonal[i].noalias() += J_a.transpose() * J_b;
        } else if (i >= 0 && j == i + 1) {
          upper[i].noalias() += J_a.transpose() * J_b;
        } else if (i >= 0 && j >= 0 && std::abs(i - j) > 1) {
          *why = "a residual block couples non-consecutive nodes";
          return false;
        }
      }
    }
  }
  // Block elimination: M_k = D_k − U_{k−1}ᵀ M_{k−1}⁻¹ U_{k−1}, B̃_k = B_k − U_{k−1}ᵀ M_{k−1}⁻¹ B̃_{k−1},
  // S = H_tt − Σ B̃_kᵀ M_k⁻¹ B̃_k.
  Eigen::Matrix3d schur_all = tail_tail;
  Eigen::LLT<Block> previous;
  Border previous_border = Border::Zero();
  for (int k = 0; k < num_nodes; ++k) {
    Block M = diagonal[k];
    Border B = border[k];
    if (k > 0) {
      const Block& U = upper[k - 1];
      M.noalias() -= U.transpose() * previous.solve(U);
      B.noalias() -= U.transpose() * previous.solve(previous_border);
    }
    previous.compute(M);
    if (previous.info() != Eigen::Success) {
      *why = "the information matrix of the trajectory is not positive definite";
      return false;
    }
    schur_all.noalias() -= B.transpose() * previous.solve(B);
    previous_border = B;
  }
  schur_all = (0.5 * (schur_all + schur_all.transpose())).eval();
  const int f = static_cast<int>(free.size());
  Eigen::MatrixXd schur(f, f);
  for (int i = 0; i < f; ++i) {
    for (int j = 0; j < f; ++j) schur(i, j) = schur_all(free[i], free[j]);
  }
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(schur);
  const Eigen::VectorXd d = ldlt.vectorD();
  if (ldlt.info() != Eigen::Success || !(d.minCoeff() > 1e-12 * d.cwiseAbs().maxCoeff())) {
    *why = "the spring parameters are not determined by the data (singular information)";
    return false;
  }
  *covariance = ldlt.solve(Eigen::MatrixXd::Identity(f, f));
  return true;
}

// Ends a solve once b has stayed on its bound 0 for `patience` successive successful steps.
class BoundWatch : public ceres::IterationCallback {
 public:
  BoundWatch(const double* backlash, int patience) : backlash_(backlash), patience_(patience) {}

  ceres::CallbackReturnType operator()(const ceres::IterationSummary& summary) override {
    if (!summary.step_is_successful) return ceres::SOLVER_CONTINUE;
    count_ = *backlash_ <= 0.0 ? count_ + 1 : 0;
    triggered_ = count_ >= patience_;
    return triggered_ ? ceres::SOLVER_TERMINATE_SUCCESSFULLY : ceres::SOLVER_CONTINUE;
  }
  bool triggered() const { return triggered_; }

 private:
  const double* backlash_;
  int patience_;
  int count_ = 0;
  bool triggered_ = false;
};

// dC/db of the whole cost at the current values (b's manifold and bound ignored).
double BacklashDerivative(ceres::Problem* problem, double* spring) {
  ceres::Problem::EvaluateOptions evaluate;
  problem->GetParameterBlocks(&evaluate.parameter_blocks);
  double cost = 0.0;
  std::vector<double> gradient;
  const bool ok = problem->Evaluate(evaluate, &cost, nullptr, &gradient, nullptr);
  CHECK(ok) << "the shape problem could not be evaluated";
  // The gradient follows evaluate.parameter_blocks; find the spring's offset in it.
  int offset = 0;
  for (double* block : evaluate.parameter_blocks) {
    if (block == spring) return gradient[offset + 1];
    offset += problem->ParameterBlockTangentSize(block);
  }
  LOG(FATAL) << "the spring block is not in the problem";
  return 0.0;
}

// The shape solve with b >= 0 as an active-set method. Ceres handles a bound by projecting the
// unconstrained step and line-searching along it, which crawls once the bound is active: the
// step keeps pointing into b < 0 and only the other unknowns' share of it survives the
// projection (measured on the linear-spring case, 20 000 samples: 39 iterations, still
// lowering the cost by 1e-4 per step when the tolerance stopped it). So once b has stayed at 0
// for two successful steps the solve stops, b is held at 0 (a subset manifold, no bound: plain
// Levenberg–Marquardt) and the rest is solved; then the sign of dC/db checks the constraint —
// b is released (and the bounded solve resumed) only if the cost would decrease for b > 0.
bool SolveAndCollectWithBound(const problems::BacklashSmootherData& data,
                              const problems::BacklashShapeOptions& shape_options,
                              const BacklashSmootherOptions& options,
                              std::chrono::steady_clock::time_point start,
                              const problems::BacklashSmootherVariables& variables, double* spring,
                              ceres::Problem* problem, BacklashSmootherResult* result,
                              std::string* error) {
  if (shape_options.hold_backlash_at_zero) {
    return SolveAndCollect(data, options, start, variables, problem, result, error);
  }
  SolverSummary total;
  std::ostringstream message;
  // At most two releases: the bound is either active at the solution or it is not.
  for (int round = 0; round < 3; ++round) {
    BoundWatch watch(spring + 1, 2);
    BacklashSmootherOptions round_options = options;
    round_options.max_iterations = options.max_iterations - total.iterations;
    if (round_options.max_iterations < 1) break;
    if (!SolveAndCollect(data, round_options, start, variables, problem, result, error, &watch)) {
      return false;
    }
    const SolverSummary& s = result->summary;
    if (round == 0) total.initial_cost = s.initial_cost;
    total.iterations += s.iterations;
    total.linear_solver_time_s += s.linear_solver_time_s;
    total.jacobian_time_s += s.jacobian_time_s;
    message << (round > 0 ? "; " : "")
            << (watch.triggered() ? "b stayed on its bound 0 for 2 steps" : s.message);
    if (!watch.triggered()) break;
    // b held at 0.
    spring[1] = 0.0;
    problem->SetManifold(spring, new ceres::SubsetManifold(3, {1}));
    BacklashSmootherOptions held_options = options;
    held_options.max_iterations = std::max(1, options.max_iterations - total.iterations);
    if (!SolveAndCollect(data, held_options, start, variables, problem, result, error)) {
      return false;
    }
    total.iterations += result->summary.iterations;
    total.linear_solver_time_s += result->summary.linear_solver_time_s;
    total.jacobian_time_s += result->summary.jacobian_time_s;
    message << "; b on its bound 0, held there: " << result->summary.message;
    problem->SetManifold(spring, nullptr);
    const double slope = BacklashDerivative(problem, spring);
    if (!(slope < 0.0) || !result->summary.converged) break;
    message << "; dC/db = " << slope << " < 0 at b = 0: b released";
  }
  total.final_cost = result->summary.final_cost;
  total.converged = result->summary.converged;
  total.message = message.str();
  total.time_s = result->summary.time_s;
  result->summary = total;
  return true;
}

}  // namespace

bool RunBacklashSmoother(const models::TwoMassTransmission& model,
                         const problems::BacklashSmootherData& data,
                         const problems::BacklashSmootherProblemOptions& problem_options,
                         const BacklashSmootherOptions& options,
                         const Eigen::MatrixXd& initial_states, const Eigen::VectorXd& initial_tau,
                         BacklashSmootherResult* result, std::string* error) {
  CHECK(result != nullptr) << "expected a result, got nullptr";
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  if (!options.IsValid(&why)) {
    if (error) *error = "backlash smoother options: " + why;
    return false;
  }
  problems::BacklashSmootherVariables variables;
  if (!SetStart(data.input.size(), initial_states, initial_tau, &variables, error)) return false;
  ceres::Problem problem;
  if (!problems::BuildBacklashSmootherProblem(model, data, problem_options, &variables, &problem,
                                              error)) {
    return false;
  }
  return SolveAndCollect(data, options, start, variables, &problem, result, error);
}

bool RunBacklashShapeSmoother(
    const models::TwoMassTransmission& model, const problems::BacklashSmootherData& data,
    const problems::BacklashSmootherProblemOptions& problem_options,
    const problems::BacklashShapeOptions& shape_options, const BacklashSmootherOptions& options,
    const Eigen::MatrixXd& initial_states, const Eigen::VectorXd& initial_tau,
    const Eigen::Vector3d& initial_spring, BacklashShapeResult* result, std::string* error) {
  CHECK(result != nullptr) << "expected a result, got nullptr";
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  if (!options.IsValid(&why)) {
    if (error) *error = "backlash smoother options: " + why;
    return false;
  }
  problems::BacklashSmootherVariables variables;
  if (!SetStart(data.input.size(), initial_states, initial_tau, &variables, error)) return false;
  Eigen::Vector3d spring = initial_spring;
  ceres::Problem problem;
  if (!problems::BuildBacklashShapeProblem(model, data, problem_options, shape_options, &variables,
                                           spring.data(), &problem, error)) {
    return false;
  }
  if (!SolveAndCollectWithBound(data, shape_options, options, start, variables, spring.data(),
                                &problem, &result->smoother, error)) {
    return false;
  }
  result->spring = spring;
  // The library's rule (ResidualVarianceFactor): residual components with non-zero weight minus
  // free unknowns. A prior component with infinite std is a zero-weight row of the problem, and
  // so is every interval block's tau_K increment row here (the curve replaces the random walk:
  // weight 0). Counting those N − 1 rows as data halved the factor on Simulation 1 (one
  // measured velocity: N − 2 degrees of freedom, not 2N − 3) and put it at 2/3 of its value on
  // Simulation 2 (2N − 2, not 3N − 3).
  const int zero_weight_rows =
      static_cast<int>(
          (problem_options.prior_std.array() == std::numeric_limits<double>::infinity()).count()) +
      variables.num_samples - 1;
  const double factor = ResidualVarianceFactor(problem, result->smoother.summary.final_cost,
                                               problem.NumResiduals() - zero_weight_rows);
  result->posterior_variance_factor = std::isnan(factor) ? 0.0 : factor;

  // Covariance of [c, b, K] (held entries: zero rows and columns).
  const auto covariance_start = std::chrono::steady_clock::now();
  result->spring_covariance.setZero();
  result->spring_std.setZero();
  result->covariance_valid = false;
  result->b_on_bound = false;
  if (!result->smoother.summary.converged) {
    result->covariance_note = "not computed: the solve did not converge";
  } else {
    // The [c, b, K] entries with a covariance: b held at 0 (its manifold's tangent is [c, K]) or
    // on its bound 0 (an active constraint, treated as held) has none.
    const bool b_on_bound = !shape_options.hold_backlash_at_zero && spring(1) <= 0.0;
    result->b_on_bound = b_on_bound;
    const std::vector<int> free_entries = shape_options.hold_backlash_at_zero || b_on_bound
                                              ? std::vector<int>{0, 2}
                                              : std::vector<int>{0, 1, 2};
    Eigen::MatrixXd tangent_covariance;
    if (!TailBlockCovariance(problem, variables.node(0), variables.num_samples, spring.data(),
                             free_entries, &tangent_covariance, &why)) {
      result->covariance_note = "not computed: " + why;
    } else {
      // s² (JᵀJ)⁻¹ with s² = max(1, posterior variance factor): the weights are trusted when
      // the fit is as good as they claim or better, and widened by the misfit otherwise.
      const double scale = std::max(1.0, result->posterior_variance_factor);
      for (size_t i = 0; i < free_entries.size(); ++i) {
        for (size_t j = 0; j < free_entries.size(); ++j) {
          result->spring_covariance(free_entries[i], free_entries[j]) =
              scale * tangent_covariance(i, j);
        }
      }
      result->spring_std = result->spring_covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
      result->covariance_valid = true;
      std::ostringstream note;
      note << "s² (JᵀJ)⁻¹ with the residual weights as the noise model, s² = max(1, posterior "
              "variance factor "
           << result->posterior_variance_factor << ")";
      if (b_on_bound) note << "; b is on its bound 0 (no backlash in the data) and held there";
      result->covariance_note = note.str();
    }
  }
  result->covariance_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - covariance_start).count();
  result->smoother.summary.time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace dynid::solvers
