// experiments/friction_filter_study/friction_filter_jumps — lag, overshoot and error of a
// friction estimate at the true friction's jumps (see friction_filter_jumps.h).
#include "experiments/friction_filter_study/friction_filter_jumps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace dynid::friction_filter_study {

std::vector<int> FindJumps(const Eigen::VectorXd& w, double threshold_n, int first_sample) {
  std::vector<int> jumps;
  for (Eigen::Index k = std::max(1, first_sample); k < w.size(); ++k) {
    if (std::abs(w(k) - w(k - 1)) > threshold_n) jumps.push_back(static_cast<int>(k));
  }
  return jumps;
}

std::string JumpKind(double v_before, double v_after) {
  if (v_before == 0.0 && v_after != 0.0) return "stick_to_slip";
  if (v_before != 0.0 && v_after == 0.0) return "slip_to_stick";
  if (v_before * v_after < 0.0) return "reversal";
  return "jump";
}

std::vector<JumpMeasure> MeasureJumps(const Eigen::VectorXd& times, const Eigen::VectorXd& w,
                                      const Eigen::VectorXd& velocities,
                                      const Eigen::VectorXd& estimate, double threshold_n,
                                      double window_s, int first_sample) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<int> samples = FindJumps(w, threshold_n, first_sample);
  const int num = static_cast<int>(w.size());
  std::vector<JumpMeasure> result;
  for (size_t i = 0; i < samples.size(); ++i) {
    const int k = samples[i];
    const int next = i + 1 < samples.size() ? samples[i + 1] : num;
    JumpMeasure m;
    m.sample = k;
    m.time_s = times(k);
    m.kind = velocities.size() == w.size() ? JumpKind(velocities(k - 1), velocities(k)) : "jump";
    m.size_n = w(k) - w(k - 1);
    m.lag50_s = nan;
    m.lag90_s = nan;
    double sum_squares = 0.0;
    int count = 0;
    for (int j = k; j < next && times(j) < times(k) + window_s; ++j) {
      const double remaining = (w(j) - estimate(j)) / m.size_n;
      if (std::isnan(m.lag50_s) && remaining <= 0.5) m.lag50_s = times(j) - times(k);
      if (std::isnan(m.lag90_s) && remaining <= 0.1) m.lag90_s = times(j) - times(k);
      m.overshoot_n = std::max(m.overshoot_n, -remaining * std::abs(m.size_n));
      sum_squares += (estimate(j) - w(j)) * (estimate(j) - w(j));
      ++count;
    }
    m.rms_error_n = count > 0 ? std::sqrt(sum_squares / count) : nan;
    result.push_back(m);
  }
  return result;
}

double Quantile(std::vector<double> values, double q) {
  values.erase(
      std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
      values.end());
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

double Median(std::vector<double> values) { return Quantile(std::move(values), 0.5); }

JumpSummary SummarizeJumps(const std::vector<JumpMeasure>& jumps) {
  JumpSummary s;
  s.jumps = static_cast<int>(jumps.size());
  std::vector<double> lag50, lag90, overshoot;
  double sum_squares = 0.0;
  s.max_overshoot_n = jumps.empty() ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  for (const JumpMeasure& m : jumps) {
    lag50.push_back(m.lag50_s);
    lag90.push_back(m.lag90_s);
    s.lag50_not_reached += std::isnan(m.lag50_s) ? 1 : 0;
    s.lag90_not_reached += std::isnan(m.lag90_s) ? 1 : 0;
    overshoot.push_back(m.overshoot_n);
    s.max_overshoot_n = std::max(s.max_overshoot_n, m.overshoot_n);
    sum_squares += m.rms_error_n * m.rms_error_n;
  }
  s.median_lag50_s = Median(lag50);
  s.median_lag90_s = Median(lag90);
  s.median_overshoot_n = Median(overshoot);
  s.rms_error_n = jumps.empty() ? std::numeric_limits<double>::quiet_NaN()
                                : std::sqrt(sum_squares / static_cast<double>(jumps.size()));
  return s;
}

}  // namespace dynid::friction_filter_study
