#include "dynid/solvers/weight_grid.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <sstream>

#include "dynid/data/parallel_for.h"

namespace dynid::solvers {

std::vector<double> WeightAxis::Values() const {
  std::vector<double> values(count);
  for (int i = 0; i < count; ++i) {
    const double f = count == 1 ? 0.0 : static_cast<double>(i) / (count - 1);
    values[i] = std::pow(10.0, std::log10(low) + f * (std::log10(high) - std::log10(low)));
  }
  if (count > 1) values.back() = high;
  if (count >= 1) values.front() = low;
  return values;
}

int NumGridPoints(const std::vector<WeightAxis>& axes) {
  int total = 1;
  for (const WeightAxis& a : axes) total *= a.count;
  return total;
}

std::vector<double> GridPointValues(const std::vector<WeightAxis>& axes, int index) {
  CHECK(index >= 0 && index < NumGridPoints(axes)) << "grid point " << index << " out of range";
  std::vector<double> values(axes.size());
  for (int d = static_cast<int>(axes.size()) - 1; d >= 0; --d) {
    values[d] = axes[d].Values()[index % axes[d].count];
    index /= axes[d].count;
  }
  return values;
}

bool ApplyGridPoint(const std::vector<WeightAxis>& axes, const std::vector<double>& values,
                    bool relative, int num_parameters, problems::WeightedResidualWeights* weights,
                    std::string* error) {
  CHECK_EQ(axes.size(), values.size()) << "expected one value per axis";
  const int two_n = static_cast<int>(weights->kinematic.rows());
  for (size_t d = 0; d < axes.size(); ++d) {
    const WeightEntry& entry = axes[d].entry;
    if (entry.matrix == WeightMatrix::kInitial && weights->initial.size() == 0) {
      weights->initial = Eigen::MatrixXd::Zero(two_n + num_parameters, two_n + num_parameters);
      weights->initial_guess = Eigen::VectorXd::Zero(two_n + num_parameters);
    }
    if (relative) {
      const double base = weights->Get(entry);
      if (base == 0.0) {
        *error = "relative grid on " + entry.name + ", whose base weight is 0";
        return false;
      }
      weights->Set(entry, base * values[d]);
    } else {
      weights->Set(entry, values[d]);
    }
  }
  return true;
}

bool WeightGridSettings::IsValid(std::string* why) const {
  std::ostringstream out;
  if (max_iterations < 1)
    out << "max_iterations must be >= 1, got " << max_iterations;
  else if (!(function_tolerance > 0.0))
    out << "function_tolerance must be > 0";
  else if (!(theta_start_factor > 0.0))
    out << "theta_start_factor must be > 0";
  else if (!(noise_scale >= 0.0))
    out << "noise_scale must be >= 0";
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

// ---------------------------------------------------------------------------- evaluation

bool EvaluateWeightGrid(
    const WeightGridCase& grid_case, const std::vector<WeightAxis>& axes,
    const WeightGridOptions& options, const std::vector<int>& tasks,
    const std::function<bool(const GridPointResult& result, std::string* error)>& on_result,
    std::vector<GridPointResult>* results, std::string* error) {
  CHECK_GE(options.num_threads, 1) << "expected at least one thread";
  CHECK_GE(options.num_seeds, 1) << "expected at least one seed";
  const int num_parameters = static_cast<int>(grid_case.true_parameters().size());
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string first_error;
  auto fail = [&](const std::string& why) {  // under `mutex`
    if (!failed) first_error = why;
    failed = true;
  };
  // After a failure the remaining tasks are skipped.
  data::ParallelFor(0, static_cast<int>(tasks.size()), options.num_threads, [&](int i) {
    if (failed) return;
    const int task = tasks[i];
    CHECK(task >= 0 && task < static_cast<int>(results->size()))
        << "task " << task << " out of range";
    GridPointResult& r = (*results)[task];
    r.point = task / options.num_seeds;
    r.seed_index = task % options.num_seeds;
    std::string why;
    problems::WeightedResidualWeights weights = grid_case.base_weights();
    if (!ApplyGridPoint(axes, GridPointValues(axes, r.point), options.relative, num_parameters,
                        &weights, &why) ||
        !grid_case.Run(weights, options.first_seed + r.seed_index, options.settings, &r, &why)) {
      std::lock_guard<std::mutex> lock(mutex);
      fail(why);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (!failed && !on_result(r, &why)) fail(why);
  });
  if (failed) *error = first_error;
  return !failed;
}

std::vector<GridPointSummary> SummarizeWeightGrid(const std::vector<GridPointResult>& results,
                                                  int num_points, const Eigen::VectorXd& truth) {
  const int p = static_cast<int>(truth.size());
  const Eigen::VectorXd scale =
      truth.cwiseAbs().unaryExpr([](double x) { return x > 0 ? x : 1.0; });
  std::vector<GridPointSummary> summaries(num_points);
  std::vector<std::vector<Eigen::VectorXd>> errors(num_points);
  for (int i = 0; i < num_points; ++i) {
    summaries[i].point = i;
    summaries[i].bias = summaries[i].spread = summaries[i].rms_error = summaries[i].predicted_rsd =
        summaries[i].sandwich_rsd = summaries[i].hac_rsd = Eigen::VectorXd::Zero(p);
  }
  for (const GridPointResult& r : results) {
    CHECK(r.point >= 0 && r.point < num_points) << "point " << r.point << " out of range";
    GridPointSummary& s = summaries[r.point];
    ++s.num_seeds;
    s.num_converged += r.converged ? 1 : 0;
    s.mean_final_cost += r.final_cost;
    s.mean_time_s += r.time_s;
    s.predicted_rsd += r.scaled_standard_deviation.cwiseQuotient(scale);
    if (r.sandwich_standard_deviation.size() == p) {
      s.sandwich_rsd += r.sandwich_standard_deviation.cwiseQuotient(scale);
    } else {
      s.sandwich_rsd.setConstant(NAN);  // a result without it (a case that does not form it)
    }
    if (r.hac_standard_deviation.size() == p) {
      s.hac_rsd += r.hac_standard_deviation.cwiseQuotient(scale);
    } else {
      s.hac_rsd.setConstant(NAN);
    }
    errors[r.point].push_back((r.theta - truth).cwiseQuotient(scale));
  }
  for (int i = 0; i < num_points; ++i) {
    GridPointSummary& s = summaries[i];
    if (s.num_seeds == 0) continue;
    s.mean_final_cost /= s.num_seeds;
    s.mean_time_s /= s.num_seeds;
    s.predicted_rsd /= s.num_seeds;
    s.sandwich_rsd /= s.num_seeds;
    s.hac_rsd /= s.num_seeds;
    for (const Eigen::VectorXd& e : errors[i]) {
      s.bias += e / s.num_seeds;
      s.rms_error += e.cwiseAbs2() / s.num_seeds;
    }
    s.rms_error = s.rms_error.cwiseSqrt();
    if (s.num_seeds > 1) {
      for (const Eigen::VectorXd& e : errors[i]) {
        s.spread += (e - s.bias).cwiseAbs2() / (s.num_seeds - 1);
      }
      s.spread = s.spread.cwiseSqrt();
    }
  }
  return summaries;
}

}  // namespace dynid::solvers
