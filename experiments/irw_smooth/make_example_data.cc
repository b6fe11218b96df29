// make_example_data — regenerates the shipped example signal data/examples/encoder_positions.csv
// and its truth data/examples/encoder_truth.csv (see data/README.md).
//
// Two joint-like channels sampled at 5 kHz for 4 s and quantised by a 1e-6 rad encoder:
// q1 a TX40-like trapezoidal-velocity (smoothed bang-bang acceleration) trajectory, q2 a
// five-harmonic Fourier-series excitation. Deterministic (no random numbers).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "dynid/data/csv.h"
#include "dynid/data/example_signals.h"
#include "dynid/data/output.h"
#include "experiments/common/cli.h"

DEFINE_string(out_dir, "data/examples", "where to write the two CSV files");
DEFINE_double(duration_s, 4.0, "length in seconds");
DEFINE_double(sample_rate_hz, 5000.0, "sampling rate");
DEFINE_double(resolution_rad, 1e-6, "encoder resolution");

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv,
                         "make_example_data [--out_dir=data/examples] [--duration_s=4] "
                         "[--sample_rate_hz=5000] [--resolution_rad=1e-6]");
  namespace data = dynid::data;
  using dynid::cli::Fail;
  // The signal generators CHECK their arguments; reject bad values here with the flag's name.
  if (!(FLAGS_duration_s >= 0.1 && FLAGS_duration_s <= 3600.0)) {
    return Fail(2, "--duration_s must be in [0.1, 3600]");
  }
  if (!(FLAGS_sample_rate_hz >= 10.0 && FLAGS_sample_rate_hz <= 1e6)) {
    return Fail(2, "--sample_rate_hz must be in [10, 1e6]");
  }
  if (FLAGS_duration_s * FLAGS_sample_rate_hz > 1e8) {
    return Fail(2, "--duration_s × --sample_rate_hz: more than 1e8 samples");
  }
  if (!(FLAGS_resolution_rad > 0.0 && std::isfinite(FLAGS_resolution_rad))) {
    return Fail(2, "--resolution_rad must be a number > 0");
  }
  std::string error;
  const auto q1 = data::Tx40LikeTrajectory(FLAGS_duration_s, FLAGS_sample_rate_hz);
  const auto q2 =
      data::SampleFourierSeries(0.1, {0.5, -0.2, 0.1, 0.05, -0.03}, {0.2, 0.1, -0.08, 0.02, 0.01},
                                0.2, FLAGS_sample_rate_hz, FLAGS_duration_s);
  const Eigen::Index n = q1.time.size();
  std::string positions =
      "# dynid example: 5 kHz encoder positions [rad], see data/README.md\n"
      "t,q1,q2\n";
  std::string truth = "t,q1,q1_velocity,q1_acceleration,q2,q2_velocity,q2_acceleration\n";
  char line[256];
  const Eigen::VectorXd m1 = data::Quantize(q1.position, FLAGS_resolution_rad);
  const Eigen::VectorXd m2 = data::Quantize(q2.position, FLAGS_resolution_rad);
  for (Eigen::Index k = 0; k < n; ++k) {
    std::snprintf(line, sizeof(line), "%.4f,%.6f,%.6f\n", q1.time[k], m1[k], m2[k]);
    positions += line;
    std::snprintf(line, sizeof(line), "%.4f,%.12g,%.12g,%.12g,%.12g,%.12g,%.12g\n", q1.time[k],
                  q1.position[k], q1.velocity[k], q1.acceleration[k], q2.position[k],
                  q2.velocity[k], q2.acceleration[k]);
    truth += line;
  }
  data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error) ||
      !stage.WriteText("encoder_positions.csv", positions, &error) ||
      !stage.WriteText("encoder_truth.csv", truth, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  std::printf("wrote %s/encoder_positions.csv and encoder_truth.csv (%ld samples)\n",
              FLAGS_out_dir.c_str(), static_cast<long>(n));
  return 0;
}
