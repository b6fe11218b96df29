// bench_irw — throughput of the IRW smoothers and of the NVR fit (performance
// figures). Single-threaded; prints samples per second and how time per sample scales with N.
//
//   bench_irw [--max_n=10000000] [--ceres_max_n=1000000]
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>

#include "dynid/solvers/irw_least_squares.h"
#include "dynid/solvers/irw_smoother.h"
#include "dynid/solvers/nvr_fit.h"
#include "experiments/benchmarks/bench_timing.h"
#include "experiments/common/cli.h"

DEFINE_int64(max_n, 10000000, "largest record length for the recursive smoother");
DEFINE_int64(ceres_max_n, 1000000, "largest record length for the Ceres and banded paths");
DEFINE_int32(repeats, 3, "repetitions per measurement (the best time is reported)");

namespace {

using dynid::benchmarks::BestSeconds;
using dynid::solvers::IrwModel;

Eigen::VectorXd Signal(int64_t n) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0.0, 1e-4);
  Eigen::VectorXd y(n);
  for (int64_t k = 0; k < n; ++k) y[k] = std::sin(2e-3 * k) + 0.3 * std::sin(7e-3 * k) + noise(rng);
  return y;
}


long PeakRssMb() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv, "throughput of the IRW smoothers and of the NVR fit");
  using namespace dynid::solvers;
  std::printf("Recursive KF/FIS smoothing (one core), NVR 1e-6\n");
  std::printf("%-6s %10s %14s %14s %12s %12s\n", "model", "N", "states Ms/s", "with std Ms/s",
              "ns/sample", "peak RSS MB");
  for (IrwModel model : {IrwModel::kIrw1, IrwModel::kIrw2}) {
    for (int64_t n = 1000; n <= FLAGS_max_n; n *= 10) {
      const Eigen::VectorXd y = Signal(n);
      IrwSmootherOptions options;
      options.model = model;
      options.nvr = 1e-6;
      IrwSmootherResult result;
      std::string error;
      const int repeats = n <= 100000 ? 20 * FLAGS_repeats : FLAGS_repeats;
      options.compute_standard_deviations = false;
      const double states = BestSeconds(
          [&] { CHECK(SmoothIrw(y, 1e-3, options, &result, &error)) << error; }, repeats);
      options.compute_standard_deviations = true;
      const double with_std = BestSeconds(
          [&] { CHECK(SmoothIrw(y, 1e-3, options, &result, &error)) << error; }, repeats);
      std::printf("%-6s %10lld %14.1f %14.1f %12.1f %12ld\n", IrwModelName(model),
                  static_cast<long long>(n), n / states / 1e6, n / with_std / 1e6,
                  states / n * 1e9, PeakRssMb());
    }
  }

  std::printf("\nNVR fit + smoothing with standard deviations (one channel)\n");
  std::printf("%-6s %-4s %10s %10s %12s %8s\n", "model", "crit", "N", "time ms", "NVR", "evals");
  for (IrwModel model : {IrwModel::kIrw1, IrwModel::kIrw2}) {
    for (NvrCriterion criterion : {NvrCriterion::kMaximumLikelihood, NvrCriterion::kGcv}) {
      for (int64_t n : {34500LL, 1000000LL}) {
        const Eigen::VectorXd y = Signal(n);
        NvrFitOptions fit_options;
        fit_options.model = model;
        fit_options.criterion = criterion;
        NvrFitSummary fit;
        IrwSmootherResult result;
        std::string error;
        const double seconds = BestSeconds(
            [&] {
              CHECK(FitNvr(y, fit_options, &fit, &error)) << error;
              IrwSmootherOptions options;
              options.model = model;
              options.nvr = fit.nvr;
              CHECK(SmoothIrw(y, 1e-3, options, &result, &error)) << error;
            },
            n < 100000 ? 5 : 1);
        std::printf("%-6s %-4s %10lld %10.1f %12.4g %8d\n", IrwModelName(model),
                    NvrCriterionName(criterion), static_cast<long long>(n), seconds * 1e3,
                    fit.nvr, fit.evaluations);
      }
    }
  }

  std::printf("\nLeast-squares paths (positions only), NVR 1e-3\n");
  std::printf("%-6s %10s %16s %16s %16s\n", "model", "N", "recursive Ms/s", "banded Ms/s",
              "Ceres Ms/s");
  for (IrwModel model : {IrwModel::kIrw1, IrwModel::kIrw2}) {
    for (int64_t n = 1000; n <= FLAGS_ceres_max_n; n *= 10) {
      const Eigen::VectorXd y = Signal(n);
      Eigen::MatrixXd states;
      std::string error;
      IrwSmootherOptions options;
      options.model = model;
      options.nvr = 1e-3;
      options.compute_standard_deviations = false;
      IrwSmootherResult result;
      const int repeats = n <= 100000 ? 5 : 1;
      const double recursive = BestSeconds(
          [&] { CHECK(SmoothIrw(y, 1e-3, options, &result, &error)) << error; }, repeats);
      const double banded = BestSeconds(
          [&] { CHECK(SmoothIrwBanded(y, model, 1e-3, &states, &error)) << error; }, repeats);
      IrwCeresSummary summary;
      const double ceres = BestSeconds(
          [&] { CHECK(SmoothIrwCeres(y, model, 1e-3, &states, &summary, &error)) << error; },
          n <= 100000 ? 2 : 1);
      std::printf("%-6s %10lld %16.2f %16.2f %16.3f\n", IrwModelName(model),
                  static_cast<long long>(n), n / recursive / 1e6, n / banded / 1e6,
                  n / ceres / 1e6);
    }
  }
  return 0;
}
