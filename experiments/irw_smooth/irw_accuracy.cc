// irw_accuracy — how well do the IRW smoothers differentiate, compared with the
// conventional method tuned with hindsight?
//
// Question: with no knowledge of the signal's bandwidth, do IRWSM1/IRWSM2 with a data-driven
// NVR (maximum likelihood or GCV) estimate velocity and acceleration as well as a
// Butterworth(4) filtfilt + central-difference differentiator whose cut-off was chosen
// knowing the truth? Success: RMS error of the default IRW criterion within 1.5x the
// best Butterworth result for velocity and acceleration.
// Cases: a TX40-like trapezoidal-velocity joint trajectory (5 kHz, encoder 1e-6 rad) and a
// Fourier-series excitation trajectory (5 kHz, same encoder). Margin: 0.1 s at both ends.
// Output: --out_dir/accuracy.csv, accuracy.json, and a printed table.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/example_signals.h"
#include "dynid/data/output.h"
#include "dynid/solvers/derivative_accuracy.h"
#include "experiments/common/cli.h"

DEFINE_double(duration_s, 8.0, "length of each test trajectory in seconds");
DEFINE_double(resolution_rad, 1e-6, "encoder resolution (quantisation step) in rad");
DEFINE_double(sample_rate_hz, 5000.0, "sampling rate in Hz");
DEFINE_string(out_dir, "out/irw_accuracy", "output folder");

namespace {

using dynid::solvers::DerivativeErrors;

struct NamedCase {
  std::string name;
  dynid::solvers::AccuracyCase data;
};

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv,
                         "Differentiator accuracy: IRW smoothing vs Butterworth + differences");
  using dynid::cli::Fail;
  if (!(FLAGS_duration_s >= 1.0 && FLAGS_duration_s <= 3600.0)) {
    return Fail(2, "--duration_s must be in [1, 3600]");
  }
  if (!(FLAGS_resolution_rad > 0.0 && std::isfinite(FLAGS_resolution_rad))) {
    return Fail(2, "--resolution_rad must be a number > 0");
  }
  if (!(FLAGS_sample_rate_hz >= 10.0 && FLAGS_sample_rate_hz <= 1e6)) {
    return Fail(2, "--sample_rate_hz must be in [10, 1e6]");
  }
  std::vector<NamedCase> cases;
  {
    const auto s = dynid::data::Tx40LikeTrajectory(FLAGS_duration_s, FLAGS_sample_rate_hz);
    cases.push_back({"trapezoidal", {dynid::data::Quantize(s.position, FLAGS_resolution_rad),
                                     s.velocity, s.acceleration, FLAGS_sample_rate_hz,
                                     static_cast<int>(0.1 * FLAGS_sample_rate_hz)}});
  }
  {
    const auto s = dynid::data::SampleFourierSeries(0.1, {0.5, -0.2, 0.1, 0.05, -0.03},
                                                    {0.2, 0.1, -0.08, 0.02, 0.01}, 0.2,
                                                    FLAGS_sample_rate_hz, FLAGS_duration_s);
    cases.push_back({"fourier", {dynid::data::Quantize(s.position, FLAGS_resolution_rad),
                                 s.velocity, s.acceleration, FLAGS_sample_rate_hz,
                                 static_cast<int>(0.1 * FLAGS_sample_rate_hz)}});
  }
  using dynid::solvers::IrwModel;
  using dynid::solvers::NvrCriterion;
  struct Variant {
    IrwModel model;
    NvrCriterion criterion;
    bool twice;
    double gamma;
  };
  const double default_gamma = dynid::solvers::NvrFitOptions().gcv_gamma;
  const std::vector<Variant> variants = {
      {IrwModel::kIrw1, NvrCriterion::kMaximumLikelihood, false, 1.0},
      {IrwModel::kIrw1, NvrCriterion::kGcv, false, 1.0},
      {IrwModel::kIrw1, NvrCriterion::kGcv, false, default_gamma},
      {IrwModel::kIrw1, NvrCriterion::kMaximumLikelihood, true, 1.0},
      {IrwModel::kIrw1, NvrCriterion::kGcv, true, default_gamma},
      {IrwModel::kIrw2, NvrCriterion::kMaximumLikelihood, false, 1.0},
      {IrwModel::kIrw2, NvrCriterion::kGcv, false, 1.0},
      {IrwModel::kIrw2, NvrCriterion::kGcv, false, default_gamma},
  };
  nlohmann::json json;
  json["flags"] = {{"duration_s", FLAGS_duration_s},
                   {"resolution_rad", FLAGS_resolution_rad},
                   {"sample_rate_hz", FLAGS_sample_rate_hz}};
  std::string csv = "case,method,velocity_rms,acceleration_rms,velocity_setting,"
                    "acceleration_setting,velocity_ratio_to_best_butterworth,"
                    "acceleration_ratio_to_best_butterworth\n";
  std::string error;
  for (const NamedCase& c : cases) {
    DerivativeErrors best;
    if (!dynid::solvers::BestButterworthErrors(c.data, dynid::solvers::LogGrid(1.0, 1000.0, 12),
                                               &best, &error)) {
      std::cerr << "error: " << error << "\n";
      return 1;
    }
    std::vector<DerivativeErrors> rows = {best};
    for (const Variant& v : variants) {
      DerivativeErrors e;
      dynid::solvers::NvrFitOptions fit;
      fit.model = v.model;
      fit.criterion = v.criterion;
      fit.gcv_gamma = v.gamma;
      if (!dynid::solvers::IrwDerivativeErrors(c.data, fit, v.twice, &e, &error)) {
        std::cerr << "error: " << error << "\n";
        return 1;
      }
      rows.push_back(e);
    }
    std::printf("\n%s trajectory (%.0f Hz, encoder %.1e rad), RMS errors over the interior\n",
                c.name.c_str(), FLAGS_sample_rate_hz, FLAGS_resolution_rad);
    std::printf("  %-58s %12s %8s %12s %8s  %s\n", "method", "vel rad/s", "x best",
                "acc rad/s2", "x best", "setting (NVR or Hz) vel / acc");
    for (const DerivativeErrors& e : rows) {
      const double rv = e.velocity_rms / best.velocity_rms;
      const double ra = e.acceleration_rms / best.acceleration_rms;
      std::printf("  %-58s %12.3e %8.2f %12.3e %8.2f  %.3g / %.3g\n", e.method.c_str(),
                  e.velocity_rms, rv, e.acceleration_rms, ra, e.velocity_setting,
                  e.acceleration_setting);
      char line[512];
      std::snprintf(line, sizeof(line), "%s,%s,%.6e,%.6e,%.6e,%.6e,%.4f,%.4f\n", c.name.c_str(),
                    e.method.c_str(), e.velocity_rms, e.acceleration_rms, e.velocity_setting,
                    e.acceleration_setting, rv, ra);
      csv += line;
      json["cases"][c.name].push_back({{"method", e.method},
                                       {"velocity_rms", e.velocity_rms},
                                       {"acceleration_rms", e.acceleration_rms},
                                       {"velocity_setting", e.velocity_setting},
                                       {"acceleration_setting", e.acceleration_setting},
                                       {"velocity_ratio_to_best_butterworth", rv},
                                       {"acceleration_ratio_to_best_butterworth", ra}});
    }
  }
  dynid::data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error) || !stage.WriteText("accuracy.csv", csv, &error) ||
      !stage.WriteJson("accuracy.json", json, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  std::printf("\nwrote %s/accuracy.csv and accuracy.json\n", FLAGS_out_dir.c_str());
  return 0;
}
