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
// Block length: MovingBlockLength chooses L from the series' lag-1 autocorrelation by the AR(1)
// plug-in rule L = ceil((1.5 α T)^{1/3}), α = 4ρ²/((1 − ρ)²(1 + ρ)²), the optimal block length of
// the moving-block bootstrap for the variance of a mean under AR(1) (Politis & White 2004, eq. 6
// with the moving-block constant D = 4/3 g(0)²); it equals Andrews' (1991) Bartlett bandwidth
// 1.1447 (α T)^{1/3} that solvers::ComputeHacCovariance uses, so the bootstrap and the HAC
// covariance assume the same correlation length.
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

// One moving-block resample of `series` (T × m, T >= 1) with blocks of `block_length` rows
// (1 <= block_length <= T). Deterministic for a given generator state: the block starts are
// drawn as rng() mod (T − L + 1), independent of the standard library's distributions.
Eigen::MatrixXd MovingBlockResample(const Eigen::MatrixXd& series, int block_length,
                                    std::mt19937_64* rng);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_BLOCK_BOOTSTRAP_H_
