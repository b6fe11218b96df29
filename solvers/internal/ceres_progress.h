// A ceres::IterationCallback that reports a solver's progress the dynid way (solver_summary.h):
// the callback after every iteration, a LOG(INFO) line at the first iteration and then at most
// every progress_period_s. Shared by the Ceres-based solvers.
#ifndef DYNID_SOLVERS_INTERNAL_CERES_PROGRESS_H_
#define DYNID_SOLVERS_INTERNAL_CERES_PROGRESS_H_

#include <chrono>
#include <string>

#include <ceres/iteration_callback.h>

#include "dynid/solvers/solver_summary.h"

namespace dynid::solvers::internal {

class CeresProgress : public ceres::IterationCallback {
 public:
  // `label` starts every log line ("weighted-residual smoother"); elapsed time counts from
  // `start`. `options` must outlive the callback.
  CeresProgress(std::string label, const ProgressOptions& options,
                std::chrono::steady_clock::time_point start);

  // Iterations of earlier phases, so that the reported count runs on across phases.
  void set_iteration_offset(int offset) { iteration_offset_ = offset; }

  ceres::CallbackReturnType operator()(const ceres::IterationSummary& summary) override;

 private:
  const std::string label_;
  const ProgressOptions& options_;
  const std::chrono::steady_clock::time_point start_;
  double next_log_s_ = 0.0;
  int iteration_offset_ = 0;
};

}  // namespace dynid::solvers::internal

#endif  // DYNID_SOLVERS_INTERNAL_CERES_PROGRESS_H_
