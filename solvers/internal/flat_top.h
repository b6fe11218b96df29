// solvers/internal/flat_top — what the automatic block length of the moving-block bootstrap
// (block_bootstrap.h) and the autocorrelation bandwidth of the HAC covariance
// (residual_analysis.h) share: the flat-top lag-window estimates of Politis & White (2004) with
// the correction of Patton, Politis & White (2009),
//   ĝ = Σ_{|k| <= M} λ(k/M) R̂(k),   Ĝ = Σ_{|k| <= M} λ(k/M) |k| R̂(k),
// λ(u) = 1 for |u| <= 1/2, 2 (1 − |u|) for 1/2 < |u| <= 1, M = 2 m̂, with m̂ the smallest lag
// after which K_T = max(5, ceil(sqrt(log10 T))) consecutive autocorrelations lie within
// ± 2 sqrt(log10 T / T) (Politis 2003, "empirical rule of picking m"). ĝ estimates 2π times the
// spectral density at frequency zero and Ĝ its first generalised derivative; for an AR(1)
// series of coefficient ρ, (Ĝ / ĝ)² → 4ρ² / ((1 − ρ)² (1 + ρ)²), Andrews' (1991) α.
#ifndef DYNID_SOLVERS_INTERNAL_FLAT_TOP_H_
#define DYNID_SOLVERS_INTERNAL_FLAT_TOP_H_

#include <Eigen/Core>

namespace dynid::solvers::internal {

// The autocovariance lags R̂(0) … R̂(FlatTopReach(t)) that FlatTopSums reads for a series of `t`
// samples (t >= 2): twice the largest m̂ searched, ceil(sqrt(t)) + K_T, at most t − 1.
int FlatTopReach(Eigen::Index t);

struct FlatTopEstimate {
  int window = 0;      // M = 2 m̂ (at least 2, at most the reach)
  double g = 0.0;      // ĝ
  double big_g = 0.0;  // Ĝ
};

// ĝ and Ĝ from the autocovariances `r` = R̂(0) … R̂(K) of a series of `t` samples, K >=
// FlatTopReach(t) (CHECKed, as r[0] > 0). Any positive scale of `r` gives the same M and scales
// ĝ and Ĝ alike.
FlatTopEstimate FlatTopSums(const Eigen::VectorXd& r, Eigen::Index t);

// FlatTopSums of a centred series laid on its sample grid (zero where it has no sample; `n` >= 2
// samples present): R̂(k) = (1/n) Σ x_t x_{t+k} for k = 0 … FlatTopReach(n), scaled to R̂(0) = 1.
// `lag1`, when given, gets R̂(1). False, with nothing set, when the series has no variance.
bool FlatTopOfSeries(const Eigen::VectorXd& grid, Eigen::Index n, FlatTopEstimate* estimate,
                     double* lag1 = nullptr);

// Andrews' (1991) automatic Bartlett bandwidth for α = (f⁽¹⁾ / f)² and a series of n samples:
// ceil(1.1447 (α n)^{1/3}), at least 1 and at most min(3 √n, n / 3) (Politis & White's cap).
int AutomaticBartlettLags(double alpha, double n);

}  // namespace dynid::solvers::internal

#endif  // DYNID_SOLVERS_INTERNAL_FLAT_TOP_H_
