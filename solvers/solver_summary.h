// What every iterative solver of dynid reports: progress after each iteration (to a callback
// and, at a chosen period, to the log) and a summary at the end. The batch estimators built on
// Ceres (the weighted-residual smoother, the backlash smoother) share these types, so that a
// program reports the progress and the outcome of any of them the same way. Long computations
// that are counted in work items rather than iterations (samples of a filter pass, evaluations
// of a fit, runs) report through the same callback, with `iteration` the items done of `total`.
#ifndef DYNID_SOLVERS_SOLVER_SUMMARY_H_
#define DYNID_SOLVERS_SOLVER_SUMMARY_H_

#include <functional>
#include <string>

namespace dynid::solvers {

// The state after one iteration of an iterative solver.
struct IterationProgress {
  int iteration = 0;               // 0 = the starting point; runs on across a solver's phases
  int total = 0;                   // iterations or items it will take (0 = unknown)
  double cost = 0.0;               // the objective (Ceres' ½‖r‖²)
  double gradient_max_norm = 0.0;  // max-norm of the gradient
  double elapsed_s = 0.0;          // wall time since the solve began
};

// Called after every iteration; must be cheap and must not throw.
using ProgressCallback = std::function<void(const IterationProgress&)>;

// How a solver reports its progress (a member `progress` of its Options).
struct ProgressOptions {
  bool log_progress = false;       // LOG(INFO) lines: at the first iteration, then every period
  double progress_period_s = 1.0;  // minimum wall time between two log lines (>= 0)
  ProgressCallback callback;       // called after every iteration (may be empty)
  bool IsValid(std::string* why) const;
};

// The outcome of an iterative solve.
struct SolverSummary {
  bool converged = false;  // stopped on one of its tolerances (not on an iteration cap or failure)
  int iterations = 0;      // iterations taken, all phases
  double initial_cost = 0.0;
  double final_cost = 0.0;
  double time_s = 0.0;                // wall time of the whole solve
  double linear_solver_time_s = 0.0;  // of which in the linear solver
  double jacobian_time_s = 0.0;       // of which evaluating Jacobians
  std::string message;                // why it stopped, or what went wrong
};

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_SOLVER_SUMMARY_H_
