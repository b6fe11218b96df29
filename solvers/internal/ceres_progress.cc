#include "dynid/solvers/internal/ceres_progress.h"

#include <utility>

#include <glog/logging.h>

namespace dynid::solvers::internal {

CeresProgress::CeresProgress(std::string label, const ProgressOptions& options,
                             std::chrono::steady_clock::time_point start)
    : label_(std::move(label)), options_(options), start_(start) {}

ceres::CallbackReturnType CeresProgress::operator()(const ceres::IterationSummary& summary) {
  IterationProgress progress;
  progress.iteration = iteration_offset_ + summary.iteration;
  progress.cost = summary.cost;
  progress.gradient_max_norm = summary.gradient_max_norm;
  progress.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (options_.callback) options_.callback(progress);
  if (options_.log_progress && progress.elapsed_s >= next_log_s_) {
    LOG(INFO) << label_ << ": iteration " << progress.iteration << ", cost " << progress.cost
              << ", |gradient|max " << progress.gradient_max_norm << ", " << progress.elapsed_s
              << " s";
    next_log_s_ = progress.elapsed_s + options_.progress_period_s;
  }
  return ceres::SOLVER_CONTINUE;
}

}  // namespace dynid::solvers::internal
