// Excitation torques for identification experiments, sampled on t_k = k ts and meant to be held
// constant over each sample interval (zero-order hold).
//
//  - PrbsSignal: a maximum-length pseudo-random binary sequence (Hovland et al.
//    (2002) Fig. 10, "piecewise random binary signal"): a Fibonacci LFSR of `register_bits` bits
//    (3 … 31, primitive feedback taps) clocked every `clock_period_s`, output offset ± amplitude.
//    The sequence repeats after 2^bits − 1 clock periods; `seed` picks the non-zero start state.
//  - SweptSineSignal: amplitude · sin(phase) with the instantaneous frequency rising linearly
//    from f0 to f1 over the record (a stand-in for Hovland et al. (2002) Fig. 5, the motor-torque
//    profile of Simulation 1, which the paper shows only as a figure: a slow-to-fast oscillating
//    torque of a few Nm), plus an offset.
#ifndef DYNID_DATA_EXCITATION_SIGNALS_H_
#define DYNID_DATA_EXCITATION_SIGNALS_H_

#include <Eigen/Core>
#include <cstdint>
#include <string>

namespace dynid::data {

struct PrbsOptions {
  double amplitude = 1.0;  // > 0, output offset ± amplitude
  double offset = 0.0;
  double clock_period_s = 1e-3;  // >= sample period
  int register_bits = 11;        // 3 … 31
  std::uint32_t seed = 1;        // LFSR start state (taken modulo 2^bits; 0 is mapped to 1)

  bool IsValid(double sample_period_s, std::string* why) const;
};

// N samples of the PRBS at sample period ts. CHECK-fails on invalid options (validate first).
Eigen::VectorXd PrbsSignal(int num_samples, double sample_period_s, const PrbsOptions& options);

struct SweptSineOptions {
  double amplitude = 1.0;
  double offset = 0.0;
  double start_frequency_hz = 0.5;  // > 0
  double end_frequency_hz = 5.0;    // > 0

  bool IsValid(double sample_period_s, std::string* why) const;
};

Eigen::VectorXd SweptSineSignal(int num_samples, double sample_period_s,
                                const SweptSineOptions& options);

}  // namespace dynid::data

#endif  // DYNID_DATA_EXCITATION_SIGNALS_H_
