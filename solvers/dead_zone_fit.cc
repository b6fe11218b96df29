#include "dynid/solvers/dead_zone_fit.h"

#include <glog/logging.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include "dynid/data/parallel_for.h"

namespace dynid::solvers {

namespace {

// Where sample i of n sits on the centre knots: c_i = (1 − w) c_j + w c_{j+1} (S >= 1 segments,
// S + 1 knots), or c_i = c_0 (S = 0).
struct KnotPosition {
  int knot = 0;
  double weight = 0.0;
};

KnotPosition Locate(int i, int n, int segments) {
  if (segments == 0 || n < 2) return {};
  const double position = static_cast<double>(i) * segments / (n - 1);
  const int knot = std::min(static_cast<int>(position), segments - 1);
  return {knot, position - knot};
}

struct Params {
  std::vector<double> centers;  // knot values
  double backlash = 0.0, stiffness = 0.0;
};

// g(Δ) with tau = K g, and ∂g/∂c, ∂g/∂b.
inline double Shape(double delta, double center, double backlash, double* dg_dc, double* dg_db) {
  const double d = delta - center, half = 0.5 * backlash;
  if (d > half) {
    *dg_dc = -1.0, *dg_db = -0.5;
    return d - half;
  }
  if (d < -half) {
    *dg_dc = -1.0, *dg_db = 0.5;
    return d + half;
  }
  *dg_dc = 0.0, *dg_db = 0.0;
  return 0.0;
}

double Median(std::vector<double>* values) {
  const size_t mid = values->size() / 2;
  std::nth_element(values->begin(), values->begin() + mid, values->end());
  return (*values)[mid];
}

double Huber(double r, double threshold) {
  const double a = std::abs(r);
  return a <= threshold ? 0.5 * r * r : threshold * a - 0.5 * threshold * threshold;
}

// The normal equations of RobustFit: the knot centres couple only neighbours (tridiagonal
// block T), b and K couple to everything (the two columns B and the 2×2 block C):
//   [T  B] [x_c]   [r_c]
//   [Bᵀ C] [x_2] = [r_2].
// Solved in O(S) by the LDLᵀ factorisation of T and the 2×2 Schur complement C − Bᵀ T⁻¹ B
// (the same solution as a dense LDLᵀ of the whole matrix, up to round-off, at a cost linear in
// the number of knots instead of cubic).
struct ArrowSystem {
  std::vector<double> diag, upper;   // T(j, j), T(j, j + 1)
  std::vector<double> b_col, k_col;  // B(:, b), B(:, K)
  std::vector<double> rhs_c;         // r_c
  double cbb = 0.0, cbk = 0.0, ckk = 0.0, rhs_b = 0.0, rhs_k = 0.0;

  void Reset(int knots) {
    diag.assign(knots, 0.0);
    upper.assign(knots, 0.0);
    b_col.assign(knots, 0.0);
    k_col.assign(knots, 0.0);
    rhs_c.assign(knots, 0.0);
    cbb = cbk = ckk = rhs_b = rhs_k = 0.0;
  }

  // x = [x_c; x_b; x_K]; false when the solve breaks down (a zero pivot).
  bool Solve(Eigen::VectorXd* x) {
    const int s = static_cast<int>(diag.size());
    // T = L D Lᵀ with L unit lower bidiagonal: D_j = T_jj − L_{j−1}² D_{j−1}, L_j = T_{j,j+1}/D_j.
    std::vector<double> d(s), l(s, 0.0);
    for (int j = 0; j < s; ++j) {
      d[j] = diag[j] - (j > 0 ? l[j - 1] * l[j - 1] * d[j - 1] : 0.0);
      if (!(d[j] != 0.0) || !std::isfinite(d[j])) return false;
      if (j + 1 < s) l[j] = upper[j] / d[j];
    }
    // Y = T⁻¹ [r_c, B(:, b), B(:, K)] by forward and backward substitution.
    std::vector<double> y[3] = {rhs_c, b_col, k_col};
    for (std::vector<double>& v : y) {
      for (int j = 1; j < s; ++j) v[j] -= l[j - 1] * v[j - 1];
      for (int j = 0; j < s; ++j) v[j] /= d[j];
      for (int j = s - 2; j >= 0; --j) v[j] -= l[j] * v[j + 1];
    }
    double sbb = cbb, sbk = cbk, skk = ckk, gb = rhs_b, gk = rhs_k;
    for (int j = 0; j < s; ++j) {
      sbb -= b_col[j] * y[1][j];
      sbk -= b_col[j] * y[2][j];
      skk -= k_col[j] * y[2][j];
      gb -= b_col[j] * y[0][j];
      gk -= k_col[j] * y[0][j];
    }
    Eigen::Matrix2d schur;
    schur << sbb, sbk, sbk, skk;
    const Eigen::Vector2d x2 = schur.ldlt().solve(Eigen::Vector2d(gb, gk));
    x->resize(s + 2);
    for (int j = 0; j < s; ++j) (*x)(j) = y[0][j] - y[1][j] * x2(0) - y[2][j] * x2(1);
    (*x)(s) = x2(0);
    (*x)(s + 1) = x2(1);
    return true;
  }
};

// Residuals and shape derivatives of every fitted sample at one parameter vector (kept, so that
// an accepted trial's evaluation serves the next iteration).
struct FitEvaluation {
  std::vector<double> r, g, gc, gb;
  void Resize(int n) {
    r.resize(n);
    g.resize(n);
    gc.resize(n);
    gb.resize(n);
  }
};

// Robust (Huber IRLS) Gauss–Newton fit of (c_1 … c_S, b, K) on the samples `index` from
// `start`; knots[i] locates sample i's centre. With fix_zero_backlash, b = 0. Returns the
// robust residual scale.
double RobustFit(const Eigen::VectorXd& delta, const Eigen::VectorXd& tau,
                 const std::vector<KnotPosition>& knots, const std::vector<int>& index,
                 const Params& start, bool fix_zero_backlash, const DeadZoneFitOptions& options,
                 Params* out, int* iterations) {
  Params p = start;
  if (fix_zero_backlash) p.backlash = 0.0;
  const int n = static_cast<int>(index.size());
  const int S = static_cast<int>(p.centers.size());
  std::vector<double> abs_residual(n);
  const double tiny = 1e-12 * (1.0 + tau.cwiseAbs().maxCoeff());
  auto evaluate = [&](const Params& q, FitEvaluation* e) {
    for (int j = 0; j < n; ++j) {
      const int i = index[j];
      const KnotPosition& at = knots[i];
      const double center = at.weight == 0.0 ? q.centers[at.knot]
                                             : (1.0 - at.weight) * q.centers[at.knot] +
                                                   at.weight * q.centers[at.knot + 1];
      e->g[j] = Shape(delta(i), center, q.backlash, &e->gc[j], &e->gb[j]);
      e->r[j] = tau(i) - q.stiffness * e->g[j];
    }
  };
  auto objective = [&](const FitEvaluation& e, double threshold) {
    double sum = 0.0;
    for (int j = 0; j < n; ++j) sum += Huber(e.r[j], threshold);
    return sum;
  };
  FitEvaluation current, trial_eval;
  current.Resize(n);
  trial_eval.Resize(n);
  evaluate(p, &current);
  double scale = tiny;
  int it = 0;
  ArrowSystem system;
  Eigen::VectorXd step;
  for (; it < options.max_iterations; ++it) {
    for (int j = 0; j < n; ++j) abs_residual[j] = std::abs(current.r[j]);
    scale = std::max(1.4826 * Median(&abs_residual), tiny);
    const double threshold = options.huber_threshold * scale;
    system.Reset(S);
    for (int jj = 0; jj < n; ++jj) {
      const double r = current.r[jj], g = current.g[jj];
      const double w = std::abs(r) <= threshold ? 1.0 : threshold / std::abs(r);
      // ∂(K g)/∂(c_j, c_{j+1}, b, K) = (K gc (1 − w), K gc w, K gb, g).
      const KnotPosition& at = knots[index[jj]];
      const int j = at.knot;
      const double w1 = at.weight, w0 = 1.0 - w1;
      const double jc = p.stiffness * current.gc[jj], jb = p.stiffness * current.gb[jj];
      const double jc0 = jc * w0, jc1 = jc * w1;
      system.diag[j] += w * jc0 * jc0;
      system.b_col[j] += w * jc0 * jb;
      system.k_col[j] += w * jc0 * g;
      system.rhs_c[j] += w * jc0 * r;
      if (w1 != 0.0) {
        system.upper[j] += w * jc0 * jc1;
        system.diag[j + 1] += w * jc1 * jc1;
        system.b_col[j + 1] += w * jc1 * jb;
        system.k_col[j + 1] += w * jc1 * g;
        system.rhs_c[j + 1] += w * jc1 * r;
      }
      system.cbb += w * jb * jb;
      system.cbk += w * jb * g;
      system.ckk += w * g * g;
      system.rhs_b += w * jb * r;
      system.rhs_k += w * g * r;
    }
    if (fix_zero_backlash) {
      std::fill(system.b_col.begin(), system.b_col.end(), 0.0);
      system.cbb = 1.0;
      system.cbk = 0.0;
      system.rhs_b = 0.0;
    }
    // A small ridge keeps the step defined when a segment or a breakpoint has no samples.
    double max_diagonal = std::max(system.cbb, system.ckk);
    for (double v : system.diag) max_diagonal = std::max(max_diagonal, v);
    const double ridge = 1e-10 * (1.0 + max_diagonal);
    for (double& v : system.diag) v += ridge;
    system.cbb += ridge;
    system.ckk += ridge;
    if (!system.Solve(&step) || !step.allFinite()) break;
    const double before = objective(current, threshold);
    double alpha = 1.0, after = before;
    Params trial = p;
    for (int halving = 0; halving < 30; ++halving, alpha *= 0.5) {
      for (int c = 0; c < S; ++c) trial.centers[c] = p.centers[c] + alpha * step(c);
      trial.backlash = fix_zero_backlash ? 0.0 : std::max(0.0, p.backlash + alpha * step(S));
      trial.stiffness = p.stiffness + alpha * step(S + 1);
      evaluate(trial, &trial_eval);
      after = objective(trial_eval, threshold);
      if (after <= before) break;
    }
    if (!(after <= before)) break;
    p = trial;
    std::swap(current, trial_eval);
    if (before - after <= 1e-12 * (1.0 + before)) break;
  }
  *out = p;
  if (iterations) *iterations = it;
  return scale;
}

// Least-squares start: knot centres from local medians of Δ, then a grid over the two
// breakpoints of Δ − c_start (K in closed form for each pair).
Params GridStart(const Eigen::VectorXd& delta, const Eigen::VectorXd& tau,
                 const std::vector<KnotPosition>& knots, int segments, int grid_size) {
  const int n = static_cast<int>(delta.size());
  Params best;
  best.centers.assign(segments + 1, 0.0);
  for (int j = 0; j <= segments; ++j) {
    std::vector<double> local;
    for (int i = 0; i < n; ++i) {
      const double position = segments == 0 ? 0.0 : static_cast<double>(i) * segments / (n - 1);
      if (std::abs(position - j) <= 0.5 || segments == 0) local.push_back(delta(i));
    }
    best.centers[j] = local.empty() ? 0.0 : Median(&local);
  }
  Eigen::VectorXd centered(n);
  for (int i = 0; i < n; ++i) {
    const KnotPosition& at = knots[i];
    const double c = at.weight == 0.0 ? best.centers[at.knot]
                                      : (1.0 - at.weight) * best.centers[at.knot] +
                                            at.weight * best.centers[at.knot + 1];
    centered(i) = delta(i) - c;
  }
  std::vector<double> sorted(centered.data(), centered.data() + n);
  std::sort(sorted.begin(), sorted.end());
  const auto quantile = [&](double q) {
    return sorted[static_cast<size_t>(q * (sorted.size() - 1))];
  };
  const double lo = quantile(0.02), hi = quantile(0.98);
  double best_sse = INFINITY, shift = 0.0;
  const double tau2 = tau.squaredNorm();
  for (int i = 0; i < grid_size; ++i) {
    const double left = lo + (hi - lo) * i / (grid_size - 1);
    for (int j = i; j < grid_size; ++j) {
      const double right = lo + (hi - lo) * j / (grid_size - 1);
      const double center = 0.5 * (left + right), backlash = right - left;
      double sgg = 0.0, sgt = 0.0, gc, gb;
      for (int k = 0; k < n; ++k) {
        const double g = Shape(centered(k), center, backlash, &gc, &gb);
        sgg += g * g;
        sgt += g * tau(k);
      }
      if (!(sgg > 0.0)) continue;
      const double sse = tau2 - sgt * sgt / sgg;
      if (sse < best_sse) {
        best_sse = sse;
        shift = center;
        best.backlash = backlash;
        best.stiffness = sgt / sgg;
      }
    }
  }
  for (double& c : best.centers) c += shift;
  return best;
}

double Percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * (values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - below) * (values[above] - values[below]);
}

double StandardDeviation(const std::vector<double>& values) {
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  double sum = 0.0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / std::max<size_t>(1, values.size() - 1));
}

}  // namespace

bool DeadZoneFitOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  if (!(huber_threshold > 0.0))
    out << "huber_threshold must be > 0, got " << huber_threshold;
  else if (center_segments < 0)
    out << "center_segments must be >= 0, got " << center_segments;
  else if (max_iterations < 1)
    out << "max_iterations must be >= 1, got " << max_iterations;
  else if (num_threads < 1)
    out << "num_threads must be >= 1, got " << num_threads;
  else if (grid_size < 3)
    out << "grid_size must be >= 3, got " << grid_size;
  else if (bootstrap_replicates < 20) {
    out << "bootstrap_replicates must be >= 20, got " << bootstrap_replicates;
  } else if (block_length < 0)
    out << "block_length must be >= 0, got " << block_length;
  else if (!(confidence > 0.5 && confidence < 1.0)) {
    out << "confidence must be in (0.5, 1), got " << confidence;
  } else if (!(min_backlash_rad >= 0.0))
    out << "min_backlash_rad must be >= 0";
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

double DeadZoneCenterAt(const DeadZoneFit& fit, int sample, int num_samples) {
  CHECK(!fit.centers_rad.empty()) << "expected a fitted dead zone";
  const int segments = static_cast<int>(fit.centers_rad.size()) - 1;
  const KnotPosition at = Locate(sample, num_samples, segments);
  return at.weight == 0.0 ? fit.centers_rad[at.knot]
                          : (1.0 - at.weight) * fit.centers_rad[at.knot] +
                                at.weight * fit.centers_rad[at.knot + 1];
}

double DeadZoneTorque(double delta, double center, double backlash, double stiffness) {
  double gc, gb;
  return stiffness * Shape(delta, center, backlash, &gc, &gb);
}

bool FitDeadZone(const Eigen::VectorXd& delta, const Eigen::VectorXd& tau,
                 const DeadZoneFitOptions& options, DeadZoneFit* fit, std::string* error) {
  CHECK(fit != nullptr) << "expected a fit, got nullptr";
  std::string why;
  if (!options.IsValid(&why)) {
    if (error) *error = "dead-zone fit options: " + why;
    return false;
  }
  const int n = static_cast<int>(delta.size());
  if (tau.size() != n) {
    if (error) {
      *error = "dead-zone fit: delta has " + std::to_string(n) + " values, tau " +
               std::to_string(tau.size());
    }
    return false;
  }
  if (n < 20) {
    if (error) *error = "dead-zone fit: need at least 20 pairs, got " + std::to_string(n);
    return false;
  }
  if (!delta.allFinite() || !tau.allFinite()) {
    if (error) *error = "dead-zone fit: delta or tau contains NaN or Inf";
    return false;
  }
  if (!(delta.maxCoeff() > delta.minCoeff())) {
    if (error) *error = "dead-zone fit: delta is constant, nothing to fit";
    return false;
  }
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  const int segments = std::min(options.center_segments, n / 10);
  std::vector<KnotPosition> knots(n);
  for (int i = 0; i < n; ++i) knots[i] = Locate(i, n, segments);
  const Params start = GridStart(delta, tau, knots, segments, options.grid_size);
  Params best, linear;
  *fit = DeadZoneFit();
  fit->num_points = n;
  fit->residual_scale_nm =
      RobustFit(delta, tau, knots, all, start, false, options, &best, &fit->iterations);
  RobustFit(delta, tau, knots, all, best, true, options, &linear, nullptr);
  const auto mean = [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  };
  fit->centers_rad = best.centers;
  fit->center_rad = mean(best.centers);
  fit->backlash_rad = best.backlash;
  fit->stiffness_nm_per_rad = best.stiffness;
  fit->linear_center_rad = mean(linear.centers);
  fit->linear_stiffness_nm_per_rad = linear.stiffness;

  // Moving-block bootstrap.
  const int block = options.block_length > 0
                        ? std::min(options.block_length, n)
                        : static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n))));
  const int blocks = (n + block - 1) / block;
  // The block starts of every replicate are drawn first, in order, so the replicates (fitted
  // on num_threads threads) are the same for every thread count.
  std::mt19937_64 generator(options.seed);
  std::uniform_int_distribution<int> pick(0, n - block);
  const int replicates = options.bootstrap_replicates;
  std::vector<int> firsts(static_cast<size_t>(replicates) * blocks);
  for (int& first : firsts) first = pick(generator);
  std::vector<double> centers(replicates), backlashes(replicates), stiffnesses(replicates);
  data::ParallelFor(0, replicates, options.num_threads, [&](int r) {
    std::vector<int> index;
    index.reserve(static_cast<size_t>(blocks) * block);
    for (int b = 0; b < blocks; ++b) {
      const int first = firsts[static_cast<size_t>(r) * blocks + b];
      for (int i = 0; i < block; ++i) index.push_back(first + i);
    }
    Params replicate;
    RobustFit(delta, tau, knots, index, best, false, options, &replicate, nullptr);
    centers[r] = mean(replicate.centers);
    backlashes[r] = replicate.backlash;
    stiffnesses[r] = replicate.stiffness;
  });
  const double lower_q = 0.5 * (1.0 - options.confidence), upper_q = 1.0 - lower_q;
  fit->center_lower = Percentile(centers, lower_q);
  fit->center_upper = Percentile(centers, upper_q);
  fit->backlash_lower = Percentile(backlashes, lower_q);
  fit->backlash_upper = Percentile(backlashes, upper_q);
  fit->stiffness_lower = Percentile(stiffnesses, lower_q);
  fit->stiffness_upper = Percentile(stiffnesses, upper_q);
  fit->backlash_std = StandardDeviation(backlashes);
  fit->stiffness_std = StandardDeviation(stiffnesses);

  fit->backlash_detected = fit->backlash_lower > options.min_backlash_rad;
  char text[400];
  const int percent = static_cast<int>(std::lround(100.0 * options.confidence));
  if (fit->backlash_detected) {
    std::snprintf(text, sizeof(text),
                  "backlash detected: b = %.4g rad (%d%% CI [%.4g, %.4g]), K = %.4g Nm/rad "
                  "(%d%% CI [%.4g, %.4g])",
                  fit->backlash_rad, percent, fit->backlash_lower, fit->backlash_upper,
                  fit->stiffness_nm_per_rad, percent, fit->stiffness_lower, fit->stiffness_upper);
  } else {
    std::snprintf(text, sizeof(text),
                  "no backlash detected: b = %.4g rad, %d%% CI [%.4g, %.4g] reaches %.4g rad; "
                  "linear spring K = %.4g Nm/rad",
                  fit->backlash_rad, percent, fit->backlash_lower, fit->backlash_upper,
                  options.min_backlash_rad, fit->linear_stiffness_nm_per_rad);
  }
  fit->verdict = text;
  return true;
}

}  // namespace dynid::solvers
