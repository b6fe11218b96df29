// experiments/friction_filter_study/friction_filter_sensors — the sensors of van de Molengraft
// (1990) §4.4 as a real set-up has them: an incremental encoder (position quantised to its
// resolution), an accelerometer and a force sensor with white noise, and optionally a force
// sensor that lags (an effect the filters' model lacks); and the pre-processing both filters
// share (a causal Butterworth low-pass of the measurements, whose forward differences are the
// sliding-surface filter's measurement rates). Flag-free, so that it can be tested.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_SENSORS_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_SENSORS_H_

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <string>

namespace dynid::friction_filter_study {

// The sensors' levels (README.md, "Sensors": why these values).
struct SensorLevels {
  double encoder_resolution_m = 1e-5;  // one count of the encoder (m); 0 = not quantised
  double accelerometer_sd = 0.05;      // white noise of the accelerometer (m/s², per sample)
  double force_sd = 0.02;              // white noise of the force sensor (N, per sample)
  double force_delay_s = 0.0;          // the force sensor reads f(t − delay) (unmodelled)
};

// x rounded to the nearest multiple of `step` (x itself for step 0): the position an encoder
// with resolution `step` reports, error uniform in [−step/2, step/2], standard deviation
// step/√12.
double Quantise(double x, double step);

// The measurements z = [s, a, f] (N × 3) at `times` of a motion with true positions s and
// accelerations a under the force `force(t)` (taken as 0 before t = 0): s quantised, a and f
// with independent normal noise from std::mt19937_64(seed), f read at t − force_delay_s.
Eigen::MatrixXd SensorMeasurements(const Eigen::VectorXd& times, const Eigen::VectorXd& positions,
                                   const Eigen::VectorXd& accelerations,
                                   const std::function<double(double)>& force,
                                   const SensorLevels& levels, std::uint64_t seed);

// Each column of z through a causal second-order Butterworth low-pass at cutoff_hz (−3 dB) for
// samples `sample_period_s` apart, started in the steady state of its first sample; z unchanged
// for cutoff_hz = 0. False with a message for a cut-off at or above Nyquist.
bool Prefilter(const Eigen::MatrixXd& z, double cutoff_hz, double sample_period_s,
               Eigen::MatrixXd* filtered, std::string* error);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_SENSORS_H_
