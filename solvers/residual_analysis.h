// solvers/residual_analysis — is the residual white? (Brunot et al. (2018) §4.3, Figs. 4–5)
//
// The standard deviations σ² (XᵀX)^{-1} and eq. 8 assume serially uncorrelated residuals;
// Brunot et al. (2018) shows that with a badly set decimation filter the residual autocorrelation
// lies far outside the ±1.96/sqrt(N) band and the reported %σ are not valid. This module computes,
// per joint block, the normalised autocorrelation up to a maximum lag with those bounds and gives a
// verdict.
//
// Verdict (documented choice): the Ljung–Box portmanteau test,
//   Q = N (N + 2) Σ_{k=1}^{L} r_k² / (N − k)  ~  χ²(L) under whiteness,
// white when its p-value >= significance (default 0.05). The fraction of lags outside
// ±1.96/sqrt(N) is reported beside it (about 5 % is expected for white noise), because it is what
// the paper's figures show, but it does not decide: with few lags it is too coarse a statistic.
#ifndef DYNID_SOLVERS_RESIDUAL_ANALYSIS_H_
#define DYNID_SOLVERS_RESIDUAL_ANALYSIS_H_

#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

#include "dynid/solvers/linear_least_squares.h"

namespace dynid::solvers {

struct WhitenessOptions {
  int max_lag = 20;            // L >= 1
  double significance = 0.05;  // Ljung–Box level, in (0, 1)
  bool IsValid(std::string* why) const;
};

struct BlockWhiteness {
  std::string name;                 // block name ("joint 1")
  int num_samples = 0;              // N (rows of the block)
  Eigen::VectorXd autocorrelation;  // r_0 = 1, r_1, ..., r_L
  double bound = 0.0;               // 1.96 / sqrt(N)
  double fraction_outside = 0.0;    // fraction of lags 1..L with |r_k| > bound
  double ljung_box_q = 0.0;
  double p_value = 0.0;
  bool white = false;
};

struct WhitenessSummary {
  bool success = false;  // false: bad options or a block too short (message says which)
  std::string message;
  std::vector<BlockWhiteness> blocks;
  bool all_white = false;
  // One line per block: "joint 1: N = 1400, 3/20 lags outside ±0.052, Ljung–Box Q = 45.1,
  // p = 0.001 → NOT white".
  std::string Report() const;
};

// Normalised sample autocorrelation r_k = Σ_{t} (x_t − x̄)(x_{t+k} − x̄) / Σ_t (x_t − x̄)²,
// k = 0..max_lag (biased estimator, as in Box–Jenkins and Matlab's autocorr). CHECKs
// max_lag < x.size(). A constant signal gives r_0 = 1 and r_k = 0.
Eigen::VectorXd Autocorrelation(const Eigen::VectorXd& x, int max_lag);

// P(χ²(dof) > statistic) by the regularised incomplete gamma function (series / continued
// fraction, ~1e-14 accurate).
double ChiSquareSurvival(double statistic, int dof);

// P(F(dof1, dof2) > statistic) by the regularised incomplete beta function (continued
// fraction, ~1e-13 accurate); used for the F test of the essential-parameter selection.
double FisherSurvival(double statistic, int dof1, int dof2);

// Whiteness of `residual` (N_t rows) per block of `blocks` (rows of a block taken in row order,
// which is time order for the stacked layouts). A block needs more than max_lag + 1 rows; blocks
// without any row (a joint whose torque is not measured) are left out.
WhitenessSummary AnalyseResidualWhiteness(const Eigen::VectorXd& residual, const RowBlocks& blocks,
                                          const WhitenessOptions& options);

// Covariance of a linear estimator that stays valid when the residuals are serially correlated
// (heteroskedasticity- and autocorrelation-consistent, "HAC"; Newey & West 1987 with Andrews'
// 1991 automatic bandwidth). For θ̂ = (ZᵀX)^{-1} Zᵀ y — LS: Z = X; IDIM-IV: Z = the
// instruments; weighted LS: Z = W X — and its residual e = y − X θ̂:
//   Cov = A Ω Aᵀ,  A = (ZᵀX)^{-1},
//   Ω = Σ_blocks Σ_{t,s in block} w(|k_t − k_s|) (z_t e_t)(z_s e_s)ᵀ,  w(l) = 1 − l/(L+1), l ≤ L
// (Bartlett weights; k_t = blocks.sample_of_row, or the row's rank inside its block when that is
// empty; samples removed by a selection count as zero terms; blocks are independent).
// Ω is formed exactly as HᵀH/(L+1) with H the moving sums of L+1 consecutive z_t e_t, so the cost
// is O(N_t b²) whatever L. lags > 0 fixes L; lags = 0 chooses it by Andrews' (1991, §6) automatic
// rule for the Bartlett kernel, L = ceil(1.1447 (α N)^{1/3}), N the mean rows per block, with α
// estimated from the residual as `bandwidth` says (below). With white residuals (α ≈ 0) this is
// close to the classical σ²(ZᵀX)^{-1}ZᵀZ(XᵀZ)^{-1} sandwich; under positive correlation it is
// larger — where eq. 8 and σ²(XᵀX)^{-1} are optimistic.
//
// α = (f⁽¹⁾ / f)², f the spectral density of the residual at frequency zero and f⁽¹⁾ its
// generalised derivative Σ |k| R(k) / 2π (Andrews 1991 §5, q = 1):
enum class HacBandwidth {
  // Andrews' AR(1) plug-in: α = 4ρ²/((1−ρ)²(1+ρ)²), ρ the mean lag-1 autocorrelation of the
  // residual over the blocks (clamped to |ρ| ≤ 0.99); L at most N/2. It sees the lag-1 value
  // only: a slowly decaying autocorrelation with a modest lag-1 value (model error along a
  // trajectory) gets a short L and too small σ.
  kAr1,
  // α from the whole autocorrelation function, nonparametrically (Andrews 1991 §6 suggests
  // such plug-ins; Politis 2003, 2011): per block, the flat-top lag-window estimates
  // ĝ = Σ λ(k/M) R̂(k) and Ĝ = Σ λ(k/M) |k| R̂(k) of Politis & White (2004) with the correction
  // of Patton, Politis & White (2009) (M = 2 m̂ by Politis' (2003) empirical rule on the
  // autocorrelations;
  // R̂ of the centred residual over the pairs of rows k samples apart, scaled to R̂(0) = 1), and
  // α = Σ_blocks Ĝ² / Σ_blocks ĝ² (Andrews' pooling of the components' α, §6, with unit
  // weights). For an AR(1) residual (Ĝ/ĝ)² → Andrews' α, so both rules agree; and
  // 1.1447 = (3/2)^{1/3} makes L the Politis–White block length of the residual
  // (block_bootstrap.h). L at most min(3 √N, N / 3), Politis & White's cap. Cost O(N^{3/2}) per
  // block beyond the sandwich (the autocovariances up to lag 2 (√N + 5)).
  kAutocorrelation,
};
// "ar1", "acf".
const char* HacBandwidthName(HacBandwidth bandwidth);

// The two-sided 95 % critical value c of the HAC intervals θ̂_k ± c σ_k (HacCriticalValue95):
enum class HacCriticalValue {
  // The normal quantile 1.96: the HAC σ taken as exact, as when the bandwidth is a vanishing
  // fraction of the sample (Newey & West 1987; Andrews 1991).
  kNormal,
  // Kiefer & Vogelsang's (2005) fixed-b critical value of the Bartlett kernel: the limit of the
  // t statistic with the bandwidth held at a fixed fraction b of the sample. At a long bandwidth
  // the HAC σ is biased down (the residuals are orthogonal to the regressors, so the long sums
  // of z_t e_t partly cancel) and random; the nonstandard limit accounts for both. Their fitted
  // 97.5 % quantile, cv(b) = 1.96 + 2.9694 b + 0.4160 b² − 0.5324 b³ (0 < b ≤ 1), at
  // b = (L + 1) / N, N the mean rows per block (the weights 1 − l/(L + 1) vanish at bN = L + 1).
  // Derived for the location model and stationary regressors (b = 0.04: 2.08; b = 0.25: 2.72).
  kFixedB,
};
// "normal", "fixed_b".
const char* HacCriticalValueName(HacCriticalValue rule);

struct HacScoreCovariance {
  bool success = false;
  std::string message;
  int lags = 0;                     // L used
  double rho = 0.0;                 // mean lag-1 residual autocorrelation
  double alpha = 0.0;               // α of the bandwidth rule (0 when lags were given)
  double bandwidth_fraction = 0.0;  // b = (L + 1) / N, N the mean rows per block
  Eigen::MatrixXd omega;            // Ω, b × b
};
struct HacCovariance : HacScoreCovariance {
  Eigen::MatrixXd covariance;  // A Ω Aᵀ
  Eigen::VectorXd standard_deviation;
};
// c of the intervals θ̂_k ± c σ_k of `hac` by `rule` (the fixed-b value at b capped at 1).
double HacCriticalValue95(const HacScoreCovariance& hac, HacCriticalValue rule);

HacCovariance ComputeHacCovariance(const Eigen::MatrixXd& z, const Eigen::MatrixXd& x,
                                   const Eigen::VectorXd& residual, const RowBlocks& blocks,
                                   int lags = 0, HacBandwidth bandwidth = HacBandwidth::kAr1);

// The same covariance with Z handed over in pieces rather than held: `z_rows` calls its
// consumer with every row of Z exactly once, rows first_row … first_row + piece.rows() − 1 at a
// time, each block's rows in increasing order (pieces of different blocks may interleave, as a
// joint-major stack formed sample chunk by sample chunk does); `ztx` is the b × b product ZᵀX.
// Memory O(blocks · (L + batch_rows) · b) beyond the residual and the row map, so the
// instruments of a long undecimated record can be formed chunk by chunk from a simulation.
// ComputeHacCovariance is this with pieces of Z.
using HacRowConsumer =
    std::function<void(Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece)>;
// Returns false when the rows cannot be formed (then the covariance fails with that message).
using HacRowSource = std::function<bool(const HacRowConsumer& consume, std::string* error)>;
HacCovariance ComputeHacCovarianceFromRows(const HacRowSource& z_rows, const Eigen::MatrixXd& ztx,
                                           const Eigen::VectorXd& residual, const RowBlocks& blocks,
                                           int lags = 0,
                                           HacBandwidth bandwidth = HacBandwidth::kAr1,
                                           int batch_rows = 512);

// The middle of that sandwich alone: the long-run covariance of the scores g_t = z_t e_t,
// Ω = Σ_blocks Σ_{t,s in block} w(|k_t − k_s|) g_t g_sᵀ, with L chosen as above (lags, bandwidth)
// and Z (N_t × `columns`) handed over in pieces as above. For an
// estimator that is not of the form (ZᵀX)^{-1} Zᵀ y — a non-linear least-squares fit with
// Jacobian rows z_t at its solution and Gauss–Newton information H — the HAC covariance is
// H⁺ Ω H⁺ (FitPhysicallyConsistent does this).
HacScoreCovariance ComputeHacScoreCovariance(const HacRowSource& z_rows, Eigen::Index columns,
                                             const Eigen::VectorXd& residual,
                                             const RowBlocks& blocks, int lags = 0,
                                             HacBandwidth bandwidth = HacBandwidth::kAr1,
                                             int batch_rows = 512);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_RESIDUAL_ANALYSIS_H_
