// bench_weighted_residual — throughput of the weighted-residual smoother.
//
// Question: does the Ceres transcription of van de Molengraft's optimal smoother scale linearly
// in the number of nodes N for a model of xy-table size (n = 3, m = 2, p = 5, l = 8), and how
// do the theta covariance (banded Schur complement vs ceres::Covariance) and the node covariance
// blocks compare? (One iteration of the first-order approximation on the same problem:
// bench_first_order.)
// Method: a three-inertia drive (motor 1 with dry friction and a torsion spring to inertia 3,
// motor 2 with dry friction; theta = [J1, J2, w1, w2, k]) is simulated with RK4 under two
// multisine torques at 1 kHz; Gaussian noise is added to the 8 measurements (3 angles,
// 3 accelerations, 2 torques); theta starts 20 % off. For each N the problem is built, solved
// (SPARSE_NORMAL_CHOLESKY, theta eliminated last) and timed. All code timed is single-threaded;
// times are process CPU seconds (std::clock), which other jobs on a shared machine inflate far
// less than wall-clock time (the solve's wall-clock time is printed too).
// Success: N = 10 000 solved in under 5 s on one core; time per node within 2× from
// N = 1e3 to 1e5; theta covariance under 10 % of the solve time; first-order approximation at
// least 1e6 nodes/s per iteration.
#include <ceres/problem.h>
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/parameter_covariance.h"
#include "dynid/solvers/weighted_residual_smoother.h"
#include "experiments/benchmarks/three_inertia_drive.h"
#include "experiments/common/cli.h"

DEFINE_string(sizes, "1000,10000,100000", "comma-separated node counts N");
DEFINE_double(sample_period_s, 1e-3, "node spacing (s)");
DEFINE_int32(ceres_covariance_max_nodes, 10000,
             "largest N for which ceres::Covariance is also timed");
DEFINE_int32(seed, 1, "noise seed");
DEFINE_bool(ceres, true, "time the Ceres solve and the covariances");
DEFINE_bool(node_covariance, true,
            "also time the full node covariance blocks (banded selected inversion)");
DEFINE_string(sparse_library, "suitesparse", "suitesparse or eigen (normal-equation Cholesky)");

namespace {

using dynid::experiments::ThreeInertiaDrive;

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Process CPU time (s): unlike wall-clock time it is not inflated by other jobs on the machine.
double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv, "throughput of the weighted-residual smoother");
  FLAGS_logtostderr = true;
  using namespace dynid;
  std::vector<int> sizes;
  std::string bad_size;
  if (!experiments::ParseNodeCounts(FLAGS_sizes, &sizes, &bad_size)) {
    return dynid::cli::Fail(2, "--sizes: expected node counts >= 10, got '" + bad_size + "'");
  }
  if (FLAGS_sparse_library != "suitesparse" && FLAGS_sparse_library != "eigen") {
    return dynid::cli::Fail(
        2, "--sparse_library: expected suitesparse or eigen, got '" + FLAGS_sparse_library + "'");
  }
  if (!(FLAGS_sample_period_s > 0.0)) {
    return dynid::cli::Fail(2, "--sample_period_s must be > 0");
  }
  const ThreeInertiaDrive model;
  const double h = FLAGS_sample_period_s;
  std::printf("model n=3 m=2 p=5 l=8, h = %g s, one thread, %s\n", h,
              FLAGS_sparse_library.c_str());
  std::printf("%8s %6s %9s %9s %8s %8s %6s %11s %11s %11s %11s\n", "N", "iters", "build_s",
              "solve_s", "linear_s", "jacob_s", "conv", "us_per_node", "schur_s", "ceres_cov_s",
              "cov_rel_dif");
  std::printf("(times are process CPU seconds; node_cov_s: all N node covariance blocks, 11 x 11,"
              " with theta cross-covariances)\n");
  for (const int num_nodes : sizes) {
    const experiments::ThreeInertiaDriveProblem drive =
        experiments::MakeThreeInertiaDriveProblem(num_nodes, h, FLAGS_seed);
    const problems::WeightedResidualData& data = drive.data;
    const problems::WeightedResidualWeights& weights = drive.weights;
    problems::WeightedResidualVariables variables = drive.start;

    double c0 = CpuSeconds();
    ceres::Problem problem;
    std::string error;
    problems::WeightedResidualOptions options;
    if (!problems::BuildWeightedResidualProblem(model, data, weights, options, &variables,
                                                &problem, &error)) {
      std::fprintf(stderr, "build failed: %s\n", error.c_str());
      return 1;
    }
    const double build_s = CpuSeconds() - c0;
    solvers::WeightedResidualSmootherOptions solver_options;
    solver_options.function_tolerance = 1e-10;
    solver_options.progress.log_progress = num_nodes >= 100000;
    if (FLAGS_sparse_library == "eigen") {
      solver_options.sparse_library =
          solvers::WeightedResidualSmootherOptions::SparseLibrary::kEigenSparse;
    }
    const auto t0 = std::chrono::steady_clock::now();
    c0 = CpuSeconds();
    solvers::SolverSummary summary;
    if (FLAGS_ceres) summary = solvers::SolveWeightedResidual(&problem, &variables, solver_options);
    const double solve_s = CpuSeconds() - c0;
    const double solve_wall_s = Seconds(t0);

    c0 = CpuSeconds();
    Eigen::MatrixXd information;
    if (FLAGS_ceres &&
        !solvers::ConstantParameterInformation(&problem, &variables, &information, &error)) {
      std::fprintf(stderr, "schur failed: %s\n", error.c_str());
      return 1;
    }
    const Eigen::MatrixXd schur_covariance = FLAGS_ceres ? information.inverse() : information;
    const double schur_s = CpuSeconds() - c0;
    double ceres_s = NAN, relative_difference = NAN;
    if (FLAGS_ceres && num_nodes <= FLAGS_ceres_covariance_max_nodes) {
      c0 = CpuSeconds();
      Eigen::MatrixXd covariance;
      if (solvers::ParameterCovarianceByCeres(&problem, {variables.ConstantParameterBlock()},
                                              &covariance, &error)) {
        ceres_s = CpuSeconds() - c0;
        relative_difference = (covariance - schur_covariance).norm() / covariance.norm();
      }
    }
    double node_covariance_s = NAN;
    if (FLAGS_ceres && FLAGS_node_covariance) {
      c0 = CpuSeconds();
      solvers::TrajectoryCovariance node_covariance;
      if (!solvers::NodeCovarianceBlocks(&problem, &variables, &node_covariance, &error)) {
        std::fprintf(stderr, "node covariance failed: %s\n", error.c_str());
        return 1;
      }
      node_covariance_s = CpuSeconds() - c0;
    }
    std::printf("%8d %6d %9.3f %9.3f %8.3f %8.3f %6s %11.2f %11.4f %11.4f %11.2e\n", num_nodes,
                summary.iterations, build_s, solve_s, summary.linear_solver_time_s,
                summary.jacobian_time_s, summary.converged ? "yes" : "no",
                1e6 * (build_s + solve_s) / num_nodes, schur_s, ceres_s, relative_difference);
    std::printf("         node_cov_s %.4f   solve wall-clock %.3f s\n", node_covariance_s,
                solve_wall_s);
    std::printf("         theta: ");
    for (int i = 0; i < 5; ++i) std::printf("%.4g ", variables.parameters(i, 0));
    std::printf("(true 2.2e-3 1.5e-4 0.47 0.15 2)\n");
    std::fflush(stdout);
  }
  return 0;
}
