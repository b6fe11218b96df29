#include "solvers/backlash_smoother.h"

#include <ceres/ceres.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <sstream>

namespace dynid::solvers {

namespace {

class ProgressCallback : public ceres::IterationCallback {
 public:
  ProgressCallback(const BacklashSmootherOptions& options,
                   std::chrono::steady_clock::time_point start)
      : options_(options), start_(start) {}

  ceres::CallbackReturnType operator()(const ceres::IterationSummary& summary) override {
    BacklashSmootherProgress progress;
    progress.iteration = summary.iteration;
    progress.cost = summary.cost;
    progress.gradient_max_norm = summary.gradient_max_norm;
    progress.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (options_.log_progress && progress.elapsed_s >= next_log_s_) {
      LOG(INFO) << "backlash smoother: iteration " << progress.iteration << ", cost "
                << progress.cost << ", |gradient| " << progress.gradient_max_norm << ", "
                << progress.elapsed_s << " s";
      next_log_s_ = progress.elapsed_s + options_.progress_period_s;
    }
    if (options_.progress) options_.progress(progress);
    return ceres::SOLVER_CONTINUE;
  }

 private:
  const BacklashSmootherOptions& options_;
  std::chrono::steady_clock::time_point start_;
  double next_log_s_ = 0.0;
};

}  // namespace

bool BacklashSmootherOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  if (max_iterations < 1)
    out << "max_iterations must be >= 1, got " << max_iterations;
  else if (!(function_tolerance >= 0.0) || !(gradient_tolerance >= 0.0) ||
           !(parameter_tolerance >= 0.0))
    out << "tolerances must be >= 0";
  else if (!(initial_trust_region_radius > 0.0))
    out << "initial_trust_region_radius must be > 0";
  else if (num_threads < 1)
    out << "num_threads must be >= 1, got " << num_threads;
  else if (!(progress_period_s >= 0.0))
    out << "progress_period_s must be >= 0";
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

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
  const long n = data.input.size();
  problems::BacklashSmootherVariables variables;
  if (initial_states.size() > 0 || initial_tau.size() > 0) {
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
    variables.Set(initial_states, initial_tau);
  }
  ceres::Problem problem;
  if (!problems::BuildBacklashSmootherProblem(model, data, problem_options, &variables, &problem,
                                              error)) {
    return false;
  }
  ceres::Solver::Options solver_options;
  solver_options.linear_solver_type = ceres::SPARSE_NORMAL_CHOLESKY;
  solver_options.sparse_linear_algebra_library_type =
      options.use_eigen_sparse ? ceres::EIGEN_SPARSE : ceres::SUITE_SPARSE;
  solver_options.max_num_iterations = options.max_iterations;
  solver_options.function_tolerance = options.function_tolerance;
  solver_options.gradient_tolerance = options.gradient_tolerance;
  solver_options.parameter_tolerance = options.parameter_tolerance;
  solver_options.num_threads = options.num_threads;
  solver_options.initial_trust_region_radius = options.initial_trust_region_radius;
  solver_options.max_trust_region_radius = std::max(1e16, options.initial_trust_region_radius);
  solver_options.logging_type = ceres::SILENT;
  ProgressCallback callback(options, start);
  solver_options.callbacks.push_back(&callback);
  ceres::Solver::Summary summary;
  ceres::Solve(solver_options, &problem, &summary);

  BacklashSmootherSummary& s = result->summary;
  s.iterations = static_cast<int>(summary.iterations.size());
  s.initial_cost = summary.initial_cost;
  s.final_cost = summary.final_cost;
  s.linear_solver_time_s = summary.linear_solver_time_in_seconds;
  s.jacobian_time_s = summary.jacobian_evaluation_time_in_seconds;
  s.converged = summary.termination_type == ceres::CONVERGENCE;
  s.message = summary.message;
  if (summary.termination_type == ceres::FAILURE ||
      summary.termination_type == ceres::USER_FAILURE) {
    if (error) *error = "backlash smoother: Ceres failed: " + summary.message;
    s.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return false;
  }
  result->states = variables.States();
  result->tau = variables.Tau();
  result->delta = result->states.col(0) - result->states.col(1);
  const int l = static_cast<int>(data.measurements.cols());
  result->measurement_residuals = data.measurements - result->states.middleCols(2, l);
  s.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace dynid::solvers
