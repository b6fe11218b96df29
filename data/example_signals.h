// Reference signals with exact derivatives, for differentiator accuracy studies and the
// shipped example data (data/README.md says how each shipped file was made).
//
// - Smoothed bang-bang acceleration ("trapezoidal velocity") moves, as the TX40 experiments of
//   Brunot et al. (2018) §4.1 use: each move is an acceleration pulse A sin^2(pi t / tau) of width
//   tau, a cruise at v = A tau / 2, the opposite pulse, then a dwell. Position, velocity and
//   acceleration are evaluated in closed form.
// - A finite Fourier series q(t) = q0 + sum_k a_k sin(k w t) + b_k cos(k w t), the usual
//   periodic excitation trajectory.
// - Encoder quantisation: round to the nearest multiple of the resolution.
#ifndef DYNID_DATA_EXAMPLE_SIGNALS_H_
#define DYNID_DATA_EXAMPLE_SIGNALS_H_

#include <vector>

#include <Eigen/Core>

namespace dynid::data {

struct SignalWithDerivatives {
  Eigen::VectorXd time, position, velocity, acceleration;
};

struct BangBangMove {
  double displacement;    // signed, position units
  double pulse_width_s;   // tau > 0
  double cruise_s;        // >= 0
  double dwell_s;         // rest after the move, >= 0
};

// Samples the concatenated moves at `sample_rate_hz` for `duration_s` (rest after the last
// move), starting at rest at `start_position`.
SignalWithDerivatives SampleBangBangMoves(const std::vector<BangBangMove>& moves,
                                          double start_position, double sample_rate_hz,
                                          double duration_s);

// A TX40-like joint trajectory: back-and-forth moves of 1.2 rad peaking near 2 rad/s
// (accelerations ~ 16 rad/s^2), 5 kHz, `duration_s` seconds.
SignalWithDerivatives Tx40LikeTrajectory(double duration_s, double sample_rate_hz = 5000.0);

// Finite Fourier series with fundamental `fundamental_hz`; sin and cos coefficients per
// harmonic k = 1..K.
SignalWithDerivatives SampleFourierSeries(double offset, const std::vector<double>& sin_coeffs,
                                          const std::vector<double>& cos_coeffs,
                                          double fundamental_hz, double sample_rate_hz,
                                          double duration_s);

// Rounds every sample to the nearest multiple of `resolution` (> 0).
Eigen::VectorXd Quantize(const Eigen::VectorXd& signal, double resolution);

}  // namespace dynid::data

#endif  // DYNID_DATA_EXAMPLE_SIGNALS_H_
