// solvers/residual_analysis — is the residual white? (METHODS.md §4; seed 000 §4.3, Figs. 4–5)
//
// The standard deviations σ² (XᵀX)^{-1} and eq. 8 assume serially uncorrelated residuals;
// seed 000 shows that with a badly set decimation filter the residual autocorrelation lies far
// outside the ±1.96/sqrt(N) band and the reported %σ are not valid. This module computes, per
// joint block, the normalised autocorrelation up to a maximum lag with those bounds and gives a
// verdict.
//
// Verdict (documented choice): the Ljung–Box portmanteau test,
//   Q = N (N + 2) Σ_{k=1}^{L} r_k² / (N − k)  ~  χ²(L) under whiteness,
// white when its p-value >= significance (default 0.05). The fraction of lags outside
// ±1.96/sqrt(N) is reported beside it (about 5 % is expected for white noise), because it is what
// the seed's figures show, but it does not decide: with few lags it is too coarse a statistic.
#ifndef DYNID_SOLVERS_RESIDUAL_ANALYSIS_H_
#define DYNID_SOLVERS_RESIDUAL_ANALYSIS_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "solvers/linear_least_squares.h"

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
// which is time order for the stacked layouts). A block needs more than max_lag + 1 rows.
WhitenessSummary AnalyseResidualWhiteness(const Eigen::VectorXd& residual, const RowBlocks& blocks,
                                          const WhitenessOptions& options);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_RESIDUAL_ANALYSIS_H_
