// bench_first_order — throughput of one iteration of van de Molengraft's first-order
// approximation (solvers/internal/first_order_smoother.h) on a model of xy-table size (target: at
// least 1e6 nodes/s per iteration for n = 3, m = 2, p = 5, l = 8).
//
// Method: the three-inertia drive of bench_weighted_residual
// (experiments/benchmarks/three_inertia_drive.h, theta constant and estimated, 20 % off at the
// start, R0 = diag(1e4 I6, I5)). For each N, each run is a complete call (validation, per-node
// storage, linearisation of every node, forward and backward sweeps, update of the estimate) from
// the same start, with 1 and with 1 + K iterations (tolerance 0, damping 0.5). "lone" = N / time of
// the 1-iteration call (it includes allocating and first touching the per-node storage); "further"
// = K N / (time of the (1 + K)-iteration call − time of the 1-iteration call), K = --further: the
// cost of each iteration that reuses the storage. The fastest of --repeats runs is kept for each.
// Both wall-clock and process CPU time are reported: with --threads=1 they agree on an idle machine
// (CPU time is the less load-sensitive one); with more threads the wall-clock figure is the
// throughput.
//
//   bench_first_order [--sizes=1000,10000,100000] [--repeats=5] [--further=3]
//                     [--sweep=conditioned|augmented] [--threads=1]
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "dynid/solvers/internal/first_order_smoother.h"
#include "experiments/benchmarks/three_inertia_drive.h"
#include "experiments/common/cli.h"

DEFINE_string(sizes, "1000,10000,100000", "comma-separated node counts N (each >= 10)");
DEFINE_double(sample_period_s, 1e-3, "node spacing (s)");
DEFINE_int32(repeats, 5, "runs per N and iteration count; the fastest is reported");
DEFINE_int32(seed, 1, "noise seed");
DEFINE_string(sweep, "conditioned",
              "conditioned (theta solved outside a 2n-state sweep) or augmented (theta as p "
              "Riccati states); both solve the same problem");
DEFINE_bool(portable_kernels, false,
            "run the sweep's portable (SSE2) kernels even where the CPU has AVX2 + FMA");
DEFINE_int32(further, 3, "further iterations timed after the first (their mean cost is reported)");
DEFINE_int32(threads, 1,
             "threads of the first-order approximation (FirstOrderSmootherOptions::num_threads)");

namespace {

using dynid::experiments::ThreeInertiaDrive;

double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

struct Timing {
  double wall_s = INFINITY;
  double cpu_s = INFINITY;
};

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv,
                         "throughput of one iteration of the first-order approximation");
  FLAGS_logtostderr = true;
  using namespace dynid;
  std::vector<int> sizes;
  std::string bad_size;
  if (!experiments::ParseNodeCounts(FLAGS_sizes, &sizes, &bad_size)) {
    return dynid::cli::Fail(2, "--sizes: expected node counts >= 10, got '" + bad_size + "'");
  }
  if (FLAGS_sweep != "conditioned" && FLAGS_sweep != "augmented") {
    return dynid::cli::Fail(
        2, "--sweep: expected conditioned or augmented, got '" + FLAGS_sweep + "'");
  }
  if (!(FLAGS_sample_period_s > 0.0)) {
    return dynid::cli::Fail(2, "--sample_period_s: must be > 0");
  }
  if (FLAGS_further < 1) {
    return dynid::cli::Fail(2, "--further: must be >= 1, got " + std::to_string(FLAGS_further));
  }
  if (FLAGS_repeats < 1) {
    return dynid::cli::Fail(2, "--repeats: must be >= 1, got " + std::to_string(FLAGS_repeats));
  }
  solvers::FirstOrderSmootherOptions options;
  options.tolerance = 0.0;
  options.damping = 0.5;
  options.num_threads = FLAGS_threads;
  options.sweep = FLAGS_sweep == "augmented"
                      ? solvers::FirstOrderSmootherOptions::Sweep::kAugmented
                      : solvers::FirstOrderSmootherOptions::Sweep::kConditionedOnTheta;
  std::string why;
  if (!options.IsValid(&why)) {
    return dynid::cli::Fail(2, "--threads: " + why);
  }
  const ThreeInertiaDrive model;
  solvers::simd::ForcePortableKernels(FLAGS_portable_kernels);
  std::printf(
      "first-order approximation, model n=3 m=2 p=5 l=8, h = %g s, %s sweep, %d "
      "thread(s), %s kernels\n",
      FLAGS_sample_period_s, FLAGS_sweep.c_str(), FLAGS_threads,
      solvers::simd::UseWideKernels() ? "AVX2 + FMA" : "portable");
  std::printf("%8s %14s %14s %14s %14s\n", "N", "lone_wall_Mn/s", "lone_cpu_Mn/s", "more_wall_Mn/s",
              "more_cpu_Mn/s");
  for (const int num_nodes : sizes) {
    experiments::ThreeInertiaDriveProblem problem =
        experiments::MakeThreeInertiaDriveProblem(num_nodes, FLAGS_sample_period_s, FLAGS_seed);
    problem.weights.initial = Eigen::MatrixXd::Identity(11, 11);
    problem.weights.initial.topLeftCorner(6, 6) *= 1e4;
    problem.weights.initial_guess = Eigen::VectorXd::Zero(11);
    problem.weights.initial_guess.tail(5) = problem.start.parameters.col(0);
    Eigen::VectorXd theta_after_one;
    auto run = [&](int iterations) -> Timing {
      solvers::FirstOrderSmootherOptions run_options = options;
      run_options.max_iterations = iterations;
      Timing best;
      for (int repeat = 0; repeat < FLAGS_repeats; ++repeat) {
        problems::WeightedResidualVariables variables = problem.start;
        const double cpu0 = CpuSeconds();
        const auto wall0 = std::chrono::steady_clock::now();
        const solvers::FirstOrderSmootherSummary summary = solvers::internal::RunFirstOrderSmoother(
            model, problem.data, problem.weights, run_options, &variables);
        const double wall_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        const double cpu_s = CpuSeconds() - cpu0;
        if (summary.iterations != iterations || !variables.states.allFinite()) {
          std::fprintf(stderr, "first-order iterations failed at N = %d: %s\n", num_nodes,
                       summary.message.c_str());
          std::exit(1);
        }
        best.wall_s = std::min(best.wall_s, wall_s);
        best.cpu_s = std::min(best.cpu_s, cpu_s);
        if (iterations == 1) theta_after_one = variables.parameters.col(0);
      }
      return best;
    };
    const int kFurther = FLAGS_further;
    const Timing one = run(1);
    const Timing more = run(1 + kFurther);
    std::printf("%8d %14.3f %14.3f %14.3f %14.3f\n", num_nodes, num_nodes / one.wall_s / 1e6,
                num_nodes / one.cpu_s / 1e6,
                kFurther * num_nodes / (more.wall_s - one.wall_s) / 1e6,
                kFurther * num_nodes / (more.cpu_s - one.cpu_s) / 1e6);
    std::printf("         theta after one iteration:");
    for (int i = 0; i < theta_after_one.size(); ++i) std::printf(" %.15g", theta_after_one(i));
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
