#include "dynid/data/excitation_signals.h"

#include <glog/logging.h>

#include <cmath>
#include <sstream>

namespace dynid::data {

namespace {

// Feedback taps (1-based bit positions) of primitive polynomials, one per register length, so
// that the LFSR runs through all 2^bits − 1 non-zero states.
std::uint32_t TapMask(int bits) {
  static const int kTaps[32][4] = {
      {0, 0, 0, 0},   {0, 0, 0, 0},    {0, 0, 0, 0},    {3, 2, 0, 0},    {4, 3, 0, 0},
      {5, 3, 0, 0},   {6, 5, 0, 0},    {7, 6, 0, 0},    {8, 6, 5, 4},    {9, 5, 0, 0},
      {10, 7, 0, 0},  {11, 9, 0, 0},   {12, 11, 10, 4}, {13, 12, 11, 8}, {14, 13, 12, 2},
      {15, 14, 0, 0}, {16, 15, 13, 4}, {17, 14, 0, 0},  {18, 11, 0, 0},  {19, 18, 17, 14},
      {20, 17, 0, 0}, {21, 19, 0, 0},  {22, 21, 0, 0},  {23, 18, 0, 0},  {24, 23, 22, 17},
      {25, 22, 0, 0}, {26, 6, 2, 1},   {27, 5, 2, 1},   {28, 25, 0, 0},  {29, 27, 0, 0},
      {30, 6, 4, 1},  {31, 28, 0, 0}};
  // The register shifts right and the feedback enters at the top, so the stage of tap t
  // (x^t of the polynomial) is bit (bits − t).
  std::uint32_t mask = 0;
  for (int tap : kTaps[bits]) {
    if (tap > 0) mask |= 1u << (bits - tap);
  }
  return mask;
}

}  // namespace

bool PrbsOptions::IsValid(double sample_period_s, std::string* why) const {
  std::ostringstream out;
  if (!(amplitude > 0.0) || !std::isfinite(amplitude)) {
    out << "PRBS amplitude must be > 0, got " << amplitude;
  } else if (!std::isfinite(offset)) {
    out << "PRBS offset must be finite";
  } else if (!(clock_period_s >= sample_period_s) || !std::isfinite(clock_period_s)) {
    out << "PRBS clock period must be >= the sample period " << sample_period_s << " s, got "
        << clock_period_s;
  } else if (register_bits < 3 || register_bits > 31) {
    out << "PRBS register length must be 3 … 31 bits, got " << register_bits;
  }
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

Eigen::VectorXd PrbsSignal(int num_samples, double sample_period_s, const PrbsOptions& options) {
  std::string why;
  CHECK(options.IsValid(sample_period_s, &why)) << why;
  CHECK_GE(num_samples, 0) << "expected a non-negative sample count, got " << num_samples;
  const std::uint32_t full = (1u << options.register_bits) - 1u;
  const std::uint32_t mask = TapMask(options.register_bits);
  std::uint32_t state = options.seed & full;
  if (state == 0) state = 1;
  Eigen::VectorXd u(num_samples);
  long clock = -1;
  double level = 0.0;
  for (int k = 0; k < num_samples; ++k) {
    // Small epsilon so that t_k exactly on a clock edge starts the new bit despite round-off.
    const long tick =
        static_cast<long>(std::floor(k * sample_period_s / options.clock_period_s + 1e-9));
    while (clock < tick) {
      level = (state & 1u) ? 1.0 : -1.0;
      // Fibonacci LFSR: the new bit is the parity of the tapped bits, shifted in at the top.
      const std::uint32_t feedback = __builtin_parity(state & mask);
      state = ((state >> 1) | (feedback << (options.register_bits - 1))) & full;
      ++clock;
    }
    u(k) = options.offset + options.amplitude * level;
  }
  return u;
}

bool SweptSineOptions::IsValid(double sample_period_s, std::string* why) const {
  std::ostringstream out;
  const double nyquist = 0.5 / sample_period_s;
  if (!std::isfinite(amplitude) || !std::isfinite(offset)) {
    out << "swept-sine amplitude and offset must be finite";
  } else if (!(start_frequency_hz > 0.0) || !(end_frequency_hz > 0.0)) {
    out << "swept-sine frequencies must be > 0";
  } else if (!(start_frequency_hz < nyquist) || !(end_frequency_hz < nyquist)) {
    out << "swept-sine frequencies must be below the Nyquist frequency " << nyquist << " Hz";
  }
  if (out.str().empty()) return true;
  if (why) *why = out.str();
  return false;
}

Eigen::VectorXd SweptSineSignal(int num_samples, double sample_period_s,
                                const SweptSineOptions& options) {
  std::string why;
  CHECK(options.IsValid(sample_period_s, &why)) << why;
  CHECK_GE(num_samples, 0) << "expected a non-negative sample count, got " << num_samples;
  const double duration = std::max(1, num_samples - 1) * sample_period_s;
  const double rate = (options.end_frequency_hz - options.start_frequency_hz) / duration;
  Eigen::VectorXd u(num_samples);
  for (int k = 0; k < num_samples; ++k) {
    const double t = k * sample_period_s;
    const double phase = 2.0 * M_PI * (options.start_frequency_hz * t + 0.5 * rate * t * t);
    u(k) = options.offset + options.amplitude * std::sin(phase);
  }
  return u;
}

}  // namespace dynid::data
