#include "dynid/data/example_signals.h"

#include <cmath>

#include <glog/logging.h>

namespace dynid::data {
namespace {

// Acceleration pulse A sin^2(pi t / tau) on [0, tau] and its first two integrals from 0.
struct Pulse {
  double amplitude, width;
  double Acceleration(double t) const {
    const double s = std::sin(M_PI * t / width);
    return amplitude * s * s;
  }
  double Velocity(double t) const {
    return amplitude * (0.5 * t - width / (4.0 * M_PI) * std::sin(2.0 * M_PI * t / width));
  }
  double Position(double t) const {
    const double c = width * width / (8.0 * M_PI * M_PI);
    return amplitude * (0.25 * t * t + c * (std::cos(2.0 * M_PI * t / width) - 1.0));
  }
};

}  // namespace

SignalWithDerivatives SampleBangBangMoves(const std::vector<BangBangMove>& moves,
                                          double start_position, double sample_rate_hz,
                                          double duration_s) {
  CHECK_GT(sample_rate_hz, 0.0);
  CHECK_GT(duration_s, 0.0);
  const int n = static_cast<int>(std::floor(duration_s * sample_rate_hz)) + 1;
  SignalWithDerivatives s;
  s.time = Eigen::VectorXd::LinSpaced(n, 0.0, (n - 1) / sample_rate_hz);
  s.position = Eigen::VectorXd::Constant(n, start_position);
  s.velocity = Eigen::VectorXd::Zero(n);
  s.acceleration = Eigen::VectorXd::Zero(n);
  double move_start = 0.0;
  double base = start_position;
  for (const BangBangMove& move : moves) {
    CHECK_GT(move.pulse_width_s, 0.0);
    CHECK_GE(move.cruise_s, 0.0);
    CHECK_GE(move.dwell_s, 0.0);
    const double tau = move.pulse_width_s;
    // Displacement = v (tau + cruise) with v = A tau / 2.
    const double cruise_velocity = move.displacement / (tau + move.cruise_s);
    const Pulse pulse{2.0 * cruise_velocity / tau, tau};
    const double t_decel = tau + move.cruise_s;
    const double t_end = t_decel + tau;
    const double accel_distance = pulse.Position(tau);
    for (int k = 0; k < n; ++k) {
      const double t = s.time[k] - move_start;
      if (t < 0.0) continue;
      double p, v, a;
      if (t <= tau) {
        p = pulse.Position(t);
        v = pulse.Velocity(t);
        a = pulse.Acceleration(t);
      } else if (t <= t_decel) {
        p = accel_distance + cruise_velocity * (t - tau);
        v = cruise_velocity;
        a = 0.0;
      } else if (t <= t_end) {
        const double u = t - t_decel;
        p = accel_distance + cruise_velocity * move.cruise_s + cruise_velocity * u -
            pulse.Position(u);
        v = cruise_velocity - pulse.Velocity(u);
        a = -pulse.Acceleration(u);
      } else {
        p = move.displacement;
        v = 0.0;
        a = 0.0;
      }
      s.position[k] = base + p;
      s.velocity[k] = v;
      s.acceleration[k] = a;
    }
    base += move.displacement;
    move_start += t_end + move.dwell_s;
  }
  return s;
}

SignalWithDerivatives Tx40LikeTrajectory(double duration_s, double sample_rate_hz) {
  std::vector<BangBangMove> moves;
  double sign = 1.0;
  for (double t = 0.0; t < duration_s; t += 1.05) {
    moves.push_back({1.2 * sign, 0.25, 0.35, 0.2});
    sign = -sign;
  }
  return SampleBangBangMoves(moves, -0.6, sample_rate_hz, duration_s);
}

SignalWithDerivatives SampleFourierSeries(double offset, const std::vector<double>& sin_coeffs,
                                          const std::vector<double>& cos_coeffs,
                                          double fundamental_hz, double sample_rate_hz,
                                          double duration_s) {
  CHECK_EQ(sin_coeffs.size(), cos_coeffs.size());
  const int n = static_cast<int>(std::floor(duration_s * sample_rate_hz)) + 1;
  SignalWithDerivatives s;
  s.time = Eigen::VectorXd::LinSpaced(n, 0.0, (n - 1) / sample_rate_hz);
  s.position = Eigen::VectorXd::Constant(n, offset);
  s.velocity = Eigen::VectorXd::Zero(n);
  s.acceleration = Eigen::VectorXd::Zero(n);
  const double w = 2.0 * M_PI * fundamental_hz;
  for (size_t h = 0; h < sin_coeffs.size(); ++h) {
    const double kw = (h + 1) * w;
    for (int i = 0; i < n; ++i) {
      const double sn = std::sin(kw * s.time[i]);
      const double cs = std::cos(kw * s.time[i]);
      s.position[i] += sin_coeffs[h] * sn + cos_coeffs[h] * cs;
      s.velocity[i] += kw * (sin_coeffs[h] * cs - cos_coeffs[h] * sn);
      s.acceleration[i] += -kw * kw * (sin_coeffs[h] * sn + cos_coeffs[h] * cs);
    }
  }
  return s;
}

Eigen::VectorXd Quantize(const Eigen::VectorXd& signal, double resolution) {
  CHECK_GT(resolution, 0.0);
  return (signal / resolution).array().round() * resolution;
}

}  // namespace dynid::data
