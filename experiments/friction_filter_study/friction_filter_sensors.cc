// experiments/friction_filter_study/friction_filter_sensors — encoder, accelerometer and force
// sensor, and the shared pre-filter (see friction_filter_sensors.h).
#include "experiments/friction_filter_study/friction_filter_sensors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "dynid/data/signal.h"

namespace dynid::friction_filter_study {

double Quantise(double x, double step) { return step > 0.0 ? step * std::round(x / step) : x; }

Eigen::MatrixXd SensorMeasurements(const Eigen::VectorXd& times, const Eigen::VectorXd& positions,
                                   const Eigen::VectorXd& accelerations,
                                   const std::function<double(double)>& force,
                                   const SensorLevels& levels, std::uint64_t seed) {
  const Eigen::Index num = times.size();
  Eigen::MatrixXd z(num, 3);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (Eigen::Index k = 0; k < num; ++k) {
    const double t_force = times(k) - levels.force_delay_s;
    z(k, 0) = Quantise(positions(k), levels.encoder_resolution_m);
    z(k, 1) = accelerations(k) + levels.accelerometer_sd * normal(rng);
    z(k, 2) = (t_force >= 0.0 ? force(t_force) : 0.0) + levels.force_sd * normal(rng);
  }
  return z;
}

bool Prefilter(const Eigen::MatrixXd& z, double cutoff_hz, double sample_period_s,
               Eigen::MatrixXd* filtered, std::string* error) {
  if (cutoff_hz == 0.0) {
    *filtered = z;
    return true;
  }
  data::SecondOrderSections sos;
  if (!data::DesignButterworthLowPass(2, cutoff_hz, 1.0 / sample_period_s, &sos, error)) {
    *error = "pre-filter: " + *error;
    return false;
  }
  // Started in the steady state of the first sample: subtract it, filter from rest, add it back.
  filtered->resize(z.rows(), z.cols());
  for (Eigen::Index j = 0; j < z.cols(); ++j) {
    const double first = z.rows() > 0 ? z(0, j) : 0.0;
    const Eigen::VectorXd shifted = z.col(j).array() - first;
    filtered->col(j) = data::SosFilter(sos, shifted).array() + first;
  }
  return true;
}

}  // namespace dynid::friction_filter_study
