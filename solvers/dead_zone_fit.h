// solvers::FitDeadZone — backlash size and spring stiffness from (Δ, tau_K) pairs (Hovland et al.
// (2002) Figs. 7, 12 and §7): the estimated transmission torque plotted against the
// motor–arm position difference Δ = x1 − x2 traces a dead zone of total width b (the backlash)
// with slope K (the spring) outside it. The fitted curve is
//
//   tau = K (Δ − c − b/2)  for Δ − c > b/2,   K (Δ − c + b/2)  for Δ − c < −b/2,   0 otherwise,
//
// with centre c (the zero of Δ is only known up to the initial condition), b >= 0 and K.
// Optionally the centre may drift: with center_segments = S >= 1, c(t) is piecewise linear in
// the sample index with S equal segments (S + 1 knot values c_j), sharing b and K. This absorbs
// the slow error of an estimated Δ = ∫(x3 − x4) dt when the positions are not observable
// (only velocities are measured and tau_K is a free unknown), which would otherwise
// smear the corners and shrink b.
//
// Method:
//  1. start: a grid over the two breakpoints (c ∓ b/2 between the 2 % and 98 % quantiles of Δ)
//     with K in closed form (linear least squares for fixed breakpoints); the best pair starts
//  2. a robust Gauss–Newton fit of (c, b, K): Huber loss with threshold huber_threshold × the
//     residual scale (1.4826 × median absolute residual, re-estimated every iteration), by
//     iteratively reweighted least squares with step halving; b is projected onto b >= 0.
//  3. confidence intervals by the moving-block bootstrap: the pairs come from a smoother or
//     filter and are strongly correlated in time, so whole blocks of `block_length` consecutive
//     samples are resampled (default ceil(sqrt(N))); each replicate is refitted from the
//     estimate of step 2; the intervals are the percentile intervals at `confidence`.
//  4. verdict: backlash is detected when the lower confidence bound of b exceeds
//     min_backlash_rad; otherwise "no backlash detected" and the transmission is reported as a
//     linear spring with the stiffness of the b = 0 fit (tau = K (Δ − c)).
// The input pairs must be in time order (for the block bootstrap).
#ifndef DYNID_SOLVERS_DEAD_ZONE_FIT_H_
#define DYNID_SOLVERS_DEAD_ZONE_FIT_H_

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

namespace dynid::solvers {

struct DeadZoneFitOptions {
  double huber_threshold = 1.345;  // in robust residual scales, > 0
  int max_iterations = 100;        // Gauss–Newton iterations per fit, >= 1
  int center_segments = 0;         // S >= 0 (0 = one constant centre; at most N/10 used)
  int grid_size = 40;              // breakpoint grid points per axis for the start, >= 3
  int bootstrap_replicates = 200;  // >= 20
  int block_length = 0;            // samples per bootstrap block; 0 = ceil(sqrt(N))
  double confidence = 0.95;        // in (0.5, 1)
  std::uint64_t seed = 1;          // bootstrap generator seed
  int num_threads = 1;             // threads for the bootstrap refits, >= 1 (same result for any)
  double min_backlash_rad = 0.0;   // practical-significance threshold of the verdict, >= 0

  bool IsValid(std::string* why) const;
};

struct DeadZoneFit {
  double center_rad = 0.0;          // mean of the knot centres
  std::vector<double> centers_rad;  // S + 1 knot centres (time order; 1 value for S = 0)
  double backlash_rad = 0.0;
  double stiffness_nm_per_rad = 0.0;
  // Percentile bootstrap intervals at options.confidence, and bootstrap standard deviations.
  double center_lower = 0.0, center_upper = 0.0;
  double backlash_lower = 0.0, backlash_upper = 0.0;
  double stiffness_lower = 0.0, stiffness_upper = 0.0;
  double backlash_std = 0.0, stiffness_std = 0.0;
  double residual_scale_nm = 0.0;  // robust scale of the fit residuals
  // The b = 0 (linear spring) fit tau = K (Δ − c).
  double linear_stiffness_nm_per_rad = 0.0;
  double linear_center_rad = 0.0;
  bool backlash_detected = false;
  std::string verdict;  // one sentence for reports
  int num_points = 0;
  int iterations = 0;  // Gauss–Newton iterations of the main fit
};

// The fitted centre c at sample k of the N pairs that were fitted.
double DeadZoneCenterAt(const DeadZoneFit& fit, int sample, int num_samples);

// tau of the dead-zone curve above at delta.
double DeadZoneTorque(double delta, double center, double backlash, double stiffness);

// Fits delta, tau (same length N >= 20, finite, in time order). Returns false with `error` on bad
// input (sizes, NaN, Δ without spread) or invalid options.
bool FitDeadZone(const Eigen::VectorXd& delta, const Eigen::VectorXd& tau,
                 const DeadZoneFitOptions& options, DeadZoneFit* fit, std::string* error);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_DEAD_ZONE_FIT_H_
