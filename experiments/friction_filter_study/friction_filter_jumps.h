// experiments/friction_filter_study/friction_filter_jumps — how a friction estimate follows the
// jumps of the true friction (van de Molengraft (1990) §4.4: the optimal filter lags at a
// friction jump, the sliding-surface filter does not): per jump the lag until the estimate has
// covered 50 % and 90 % of the jump, the overshoot beyond the new level and the RMS error in a
// window after the jump. Flag-free, so that it can be tested.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_JUMPS_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_JUMPS_H_

#include <Eigen/Core>
#include <string>
#include <vector>

namespace dynid::friction_filter_study {

// One jump of the true friction w between samples k − 1 and k (k = `sample`), and how an
// estimate ê followed it. With J = w(k) − w(k − 1) and the remaining fraction
// ρ(t) = (w(t) − ê(t)) / J, the lags are the first t_j − t_k (j >= k, within the window) with
// ρ <= 0.5 and ρ <= 0.1 (NaN when not reached in the window); the overshoot is
// max(0, max_j −ρ(t_j) |J|) (N, how far the estimate went beyond the new level); the RMS error is
// that of ê − w over the window. The window is [t_k, t_k + window_s), cut at the next jump.
struct JumpMeasure {
  int sample = 0;
  double time_s = 0.0;
  std::string kind;     // "reversal", "stick_to_slip", "slip_to_stick" (from the true velocity)
  double size_n = 0.0;  // J
  double lag50_s = 0.0, lag90_s = 0.0, overshoot_n = 0.0, rms_error_n = 0.0;
};

// The samples k >= first_sample at which |w(k) − w(k − 1)| > threshold_n.
std::vector<int> FindJumps(const Eigen::VectorXd& w, double threshold_n, int first_sample);

// The jump's kind from the true velocities before (k − 1) and at k: a velocity exactly 0 is
// stick (models::SimulateStickSlip holds v = 0 while stuck).
std::string JumpKind(double v_before, double v_after);

// Each jump of FindJumps(w, threshold_n, first_sample) measured on `estimate`; velocities
// (may be empty: kind "jump") give the kinds.
std::vector<JumpMeasure> MeasureJumps(const Eigen::VectorXd& times, const Eigen::VectorXd& w,
                                      const Eigen::VectorXd& velocities,
                                      const Eigen::VectorXd& estimate, double threshold_n,
                                      double window_s, int first_sample);

// Over the jumps of one estimate: their number, the medians of the lags over the jumps where
// they were reached (NaN if none) with how many were not reached, the median and largest
// overshoot and the RMS error over all windows.
struct JumpSummary {
  int jumps = 0;
  double median_lag50_s = 0.0, median_lag90_s = 0.0;
  int lag50_not_reached = 0, lag90_not_reached = 0;
  double median_overshoot_n = 0.0, max_overshoot_n = 0.0, rms_error_n = 0.0;
};
JumpSummary SummarizeJumps(const std::vector<JumpMeasure>& jumps);

// The median of the finite values (NaN if none).
double Median(std::vector<double> values);

// The q-quantile (0 <= q <= 1, linear interpolation) of the finite values (NaN if none).
double Quantile(std::vector<double> values, double q);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_JUMPS_H_
