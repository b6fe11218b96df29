// solvers:: the moving-block bootstrap of a multichannel series (Künsch 1989): resamples
// residuals that are serially correlated (coloured) and correlated between channels, so that a
// parametric bootstrap of a real record keeps the residuals' colour and cross-channel structure.
//
// A series of T rows (a row = one time step of every channel) is resampled by concatenating
// blocks of L consecutive rows whose first rows are drawn uniformly from [0, T − L], and cutting
// the result to T rows. Whole rows move together, so the correlation between channels (at every
// lag shorter than a block) is kept exactly inside each block, and the autocorrelation of each
// channel up to lag L − 1 is kept except across the joins. L = 1 is the ordinary (i.i.d.)
// bootstrap, which keeps the marginal distribution and the lag-0 cross-channel correlation only.
//
// Block length, two rules:
//  - MovingBlockLength: from the series' lag-1 autocorrelation by the AR(1) plug-in rule
//    L = ceil((1.5 α T)^{1/3}), α = 4ρ²/((1 − ρ)²(1 + ρ)²), the optimal block length of the
//    moving-block bootstrap for the variance of a mean under AR(1) (Politis & White 2004 with the
//    moving-block constant D = 4/3 g(0)²). It equals Andrews' (1991) Bartlett bandwidth
//    1.1447 (α T)^{1/3} that solvers::ComputeHacCovariance uses by default (HacBandwidth::kAr1):
//    a bootstrap with this length assumes the same correlation structure as the HAC covariance
//    it would check, so it cannot
//    reveal a correlation the AR(1) rule misses (a slowly decaying autocorrelation with a modest
//    lag-1 value, as model error along a trajectory gives).
//  - PolitisWhiteBlockLength: the automatic rule of Politis & White (2004) with the correction of
//    Patton, Politis & White (2009), from the autocorrelation function itself: m̂ = the smallest
//    lag after which K_T = max(5, sqrt(log10 T)) consecutive autocorrelations lie within
//    ± 2 sqrt(log10 T / T); with the flat-top window λ over |k| <= M = 2 m̂,
//    Ĝ = Σ λ(k/M) |k| R̂(k), ĝ = Σ λ(k/M) R̂(k), L = (2 Ĝ² / ((4/3) ĝ²))^{1/3} T^{1/3}, at most
//    min(3 sqrt(T), T / 3). Per column; the series' length is the largest over its columns (the
//    blocks move all columns together, so they must be long enough for the most correlated).
//    Its α = (Ĝ/ĝ)² is what ComputeHacCovariance's HacBandwidth::kAutocorrelation estimates
//    (pooled over blocks rather than the largest), so a bootstrap with this length shares that
//    rule's assumption in turn (both compute the flat-top sums by the same code).
#ifndef DYNID_SOLVERS_BLOCK_BOOTSTRAP_H_
#define DYNID_SOLVERS_BLOCK_BOOTSTRAP_H_

#include <Eigen/Core>
#include <cstdint>
#include <random>

namespace dynid::solvers {

// The mean lag-1 autocorrelation of the columns of `series` (each column's mean removed) over
// the columns that are finite and not constant; 0 when there is none.
double MeanLagOneAutocorrelation(const Eigen::MatrixXd& series);

// The block length for `series` (T rows): the AR(1) plug-in rule above with ρ =
// MeanLagOneAutocorrelation clamped to [−0.99, 0.99], at least 1 and at most T / 4.
int MovingBlockLength(const Eigen::MatrixXd& series);

// The Politis–White (2004, 2009) automatic block length of `series` (see above): the largest
// over its finite, non-constant columns, at least 1 (1 when there is no such column).
int PolitisWhiteBlockLength(const Eigen::MatrixXd& series);

// One moving-block resample of `series` (T × m, T >= 1) with blocks of `block_length` rows
// (1 <= block_length <= T). Deterministic for a given generator state: the block starts are
// drawn as rng() mod (T − L + 1), independent of the standard library's distributions.
Eigen::MatrixXd MovingBlockResample(const Eigen::MatrixXd& series, int block_length,
                                    std::mt19937_64* rng);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_BLOCK_BOOTSTRAP_H_
