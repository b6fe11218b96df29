// bench_weighted_residual — throughput of the weighted-residual smoother (issue 5).
//
// Question: does the Ceres transcription of van de Molengraft's optimal smoother scale linearly
// in the number of nodes N for a model of xy-table size (n = 3, m = 2, p = 5, l = 8), and how
// do the theta covariance (banded Schur complement vs ceres::Covariance) and one iteration of
// the first-order approximation (Riccati sweep) compare?
// Method: a three-inertia drive (motor 1 with dry friction and a torsion spring to inertia 3,
// motor 2 with dry friction; theta = [J1, J2, w1, w2, k]) is simulated with RK4 under two
// multisine torques at 1 kHz; Gaussian noise is added to the 8 measurements (3 angles,
// 3 accelerations, 2 torques); theta starts 20 % off. For each N the problem is built, solved
// (SPARSE_NORMAL_CHOLESKY, theta eliminated last) and timed. All code timed is single-threaded;
// times are process CPU seconds (std::clock), which other jobs on a shared machine inflate far
// less than wall-clock time (the solve's wall-clock time is printed too).
// Success (issue 5): N = 10 000 solved in under 5 s on one core; time per node within 2× from
// N = 1e3 to 1e5; theta covariance under 10 % of the solve time; first-order approximation at
// least 1e6 nodes/s per iteration.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <ceres/problem.h>
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "models/mechanical_model.h"
#include "models/model_linearization_impl.h"
#include "problems/weighted_residual_problem.h"
#include "problems/weighted_residual_problem_impl.h"
#include "solvers/first_order_smoother.h"
#include "solvers/parameter_covariance.h"
#include "solvers/weighted_residual_smoother.h"

DEFINE_string(sizes, "1000,10000,100000", "comma-separated node counts N");
DEFINE_double(sample_period_s, 1e-3, "node spacing (s)");
DEFINE_int32(ceres_covariance_max_nodes, 10000,
             "largest N for which ceres::Covariance is also timed");
DEFINE_bool(first_order, true, "also time one iteration of the first-order approximation");
DEFINE_int32(seed, 1, "noise seed");
DEFINE_bool(ceres, true, "time the Ceres solve and the covariances");
DEFINE_bool(node_covariance, true,
            "also time the full node covariance blocks (banded selected inversion)");
DEFINE_int32(first_order_repeats, 3,
             "single-iteration first-order runs per N; the fastest (process CPU time) is reported");
DEFINE_string(first_order_sweep, "conditioned",
              "conditioned (theta solved outside a 2n-state sweep) or augmented (theta as p "
              "Riccati states); both solve the same problem");
DEFINE_string(sparse_library, "suitesparse", "suitesparse or eigen (normal-equation Cholesky)");

namespace {

// Three inertias: J1 (motor 1) coupled by a torsion spring k to J3 (fixed, the far end of the
// spindle), J2 (motor 2) independent; smooth dry friction w tanh(v / 0.01) on both motors.
class ThreeInertiaDrive : public dynid::models::MechanicalModelBase<3, 2, 5, 8> {
 public:
  static constexpr double kFarInertia = 2e-3;   // J3 [kg m²]
  static constexpr double kFarDamping = 1e-3;   // [N m s/rad]
  static constexpr double kSmoothing = 1e-2;    // rad/s

  template <class T>
  void EquationsOfMotion(const T* s, const T* v, const T* a, const T* u, const T* theta,
                         double /*t*/, T* r) const {
    using std::tanh;
    const T spring = theta[4] * (s[0] - s[2]);
    r[0] = theta[0] * a[0] + theta[2] * tanh(v[0] / kSmoothing) + spring - u[0];
    r[1] = theta[1] * a[1] + theta[3] * tanh(v[1] / kSmoothing) - u[1];
    r[2] = kFarInertia * a[2] + kFarDamping * v[2] - spring;
  }

  template <class T>
  void Measurements(const T* s, const T* /*v*/, const T* a, const T* u, const T* /*theta*/,
                    double /*t*/, T* z) const {
    for (int i = 0; i < 3; ++i) z[i] = s[i];
    for (int i = 0; i < 3; ++i) z[3 + i] = a[i];
    z[6] = u[0];
    z[7] = u[1];
  }

  dynid::models::ModelInfo Info() const {
    dynid::models::ModelInfo info;
    info.name = "three_inertia_drive";
    info.positions = {{"phi1", "rad"}, {"phi2", "rad"}, {"phi3", "rad"}};
    info.inputs = {{"T1", "N m"}, {"T2", "N m"}};
    info.parameters = {{"J1", "kg m^2"}, {"J2", "kg m^2"}, {"w1", "N m"}, {"w2", "N m"},
                       {"k", "N m/rad"}};
    for (const char* name : {"phi1_m", "phi2_m", "phi3_m"}) info.measurements.push_back({name, "rad"});
    for (const char* name : {"a1_m", "a2_m", "a3_m"}) info.measurements.push_back({name, "rad/s^2"});
    info.measurements.push_back({"T1_m", "N m"});
    info.measurements.push_back({"T2_m", "N m"});
    info.equations = {{"motor1", "N m"}, {"motor2", "N m"}, {"far_end", "N m"}};
    return info;
  }
  ParameterVector NominalParameters() const {
    ParameterVector theta;
    theta << 2.2e-3, 1.5e-4, 0.47, 0.15, 2.0;
    return theta;
  }
};

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Process CPU time (s): unlike wall-clock time it is not inflated by other jobs on the machine.
double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

DYNID_INSTANTIATE_WEIGHTED_RESIDUAL_PROBLEM(ThreeInertiaDrive);
template void dynid::models::LinearizeModel<ThreeInertiaDrive>(
    const ThreeInertiaDrive&, const double*, const double*, const double*, const double*,
    const double*, double, dynid::models::ModelLinearization<ThreeInertiaDrive>*);

int main(int argc, char** argv) {
  google::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  using namespace dynid;
  std::vector<int> sizes;
  {
    std::stringstream in(FLAGS_sizes);
    std::string item;
    while (std::getline(in, item, ',')) {
      const int size = std::atoi(item.c_str());
      if (size < 10) {
        std::fprintf(stderr, "--sizes: expected node counts >= 10, got '%s'\n", item.c_str());
        return 1;
      }
      sizes.push_back(size);
    }
  }
  if (FLAGS_sparse_library != "suitesparse" && FLAGS_sparse_library != "eigen") {
    std::fprintf(stderr, "--sparse_library: expected suitesparse or eigen, got '%s'\n",
                 FLAGS_sparse_library.c_str());
    return 1;
  }
  if (FLAGS_first_order_sweep != "conditioned" && FLAGS_first_order_sweep != "augmented") {
    std::fprintf(stderr, "--first_order_sweep: expected conditioned or augmented, got '%s'\n",
                 FLAGS_first_order_sweep.c_str());
    return 1;
  }
  if (!(FLAGS_sample_period_s > 0.0)) {
    std::fprintf(stderr, "--sample_period_s must be > 0\n");
    return 1;
  }
  const ThreeInertiaDrive model;
  const ThreeInertiaDrive::ParameterVector theta_true = model.NominalParameters();
  const double h = FLAGS_sample_period_s;
  std::printf("model n=3 m=2 p=5 l=8, h = %g s, one thread, %s\n", h,
              FLAGS_sparse_library.c_str());
  std::printf("%8s %6s %9s %9s %8s %8s %6s %11s %11s %11s %11s %13s\n", "N", "iters", "build_s",
              "solve_s", "linear_s", "jacob_s", "conv", "us_per_node", "schur_s", "ceres_cov_s",
              "cov_rel_dif", "riccati_Mn/s");
  std::printf("(times are process CPU seconds; node_cov_s: all N node covariance blocks, 11 x 11,"
              " with theta cross-covariances; riccati_Mn/s: N / CPU time of one lone first-order"
              " iteration (a complete call), fastest of --first_order_repeats; further"
              " iterations: the marginal cost of iterations 2-4 of one call)\n");
  for (const int num_nodes : sizes) {
    const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num_nodes, 0.0, h * (num_nodes - 1));
    auto input = [](double t, double* u) {
      u[0] = 0.8 * std::sin(2.0 * M_PI * 1.3 * t) + 0.4 * std::sin(2.0 * M_PI * 3.7 * t + 1.0);
      u[1] = 0.3 * std::sin(2.0 * M_PI * 0.9 * t) + 0.2 * std::sin(2.0 * M_PI * 5.1 * t + 0.5);
    };
    const models::Trajectory truth =
        models::Simulate(model, theta_true, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(),
                         input, times, 4);
    std::mt19937 rng(FLAGS_seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::Matrix<double, 8, 1> sigma;
    sigma << 1e-4, 1e-4, 1e-4, 0.5, 0.5, 0.5, 1e-2, 1e-2;
    problems::WeightedResidualData data{times, truth.measurements};
    for (int k = 0; k < num_nodes; ++k) {
      for (int j = 0; j < 8; ++j) data.measurements(k, j) += sigma(j) * normal(rng);
    }
    problems::WeightedResidualWeights weights;
    weights.kinematic = (Eigen::Matrix<double, 6, 1>() << 1e6, 1e6, 1e6, 1e2, 1e2, 1e2)
                            .finished()
                            .asDiagonal();
    Eigen::Matrix<double, 11, 1> v;
    v << 1e4, 1e4, 1e4, sigma.cwiseAbs2().cwiseInverse() / h;
    weights.residual = v.asDiagonal();
    problems::WeightedResidualVariables variables;
    problems::ResizeVariables(3, 2, 1.2 * theta_true, num_nodes,
                              problems::ParameterMode::kConstant, &variables);
    for (int k = 0; k < num_nodes; ++k) {
      variables.states.col(k).head(3) = data.measurements.row(k).head(3).transpose();
      variables.inputs.col(k).head(3) = data.measurements.row(k).segment(3, 3).transpose();
      variables.inputs.col(k).tail(2) = data.measurements.row(k).tail(2).transpose();
    }
    const problems::WeightedResidualVariables start = variables;

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
    solver_options.log_progress = num_nodes >= 100000;
    if (FLAGS_sparse_library == "eigen") {
      solver_options.sparse_library =
          solvers::WeightedResidualSmootherOptions::SparseLibrary::kEigenSparse;
    }
    const auto t0 = std::chrono::steady_clock::now();
    c0 = CpuSeconds();
    solvers::WeightedResidualSmootherSummary summary;
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
    double riccati_rate = NAN, riccati_further_rate = NAN;
    Eigen::VectorXd riccati_theta;  // theta after the one iteration (a check on the sweep)
    if (FLAGS_first_order) {
      weights.initial = Eigen::MatrixXd::Identity(11, 11);
      weights.initial.topLeftCorner(6, 6) *= 1e4;
      weights.initial_guess = Eigen::VectorXd::Zero(11);
      weights.initial_guess.tail(5) = 1.2 * theta_true;
      // Each run is a complete call (validation, per-node storage, linearisation of every
      // node, forward and backward sweeps, update of the estimate) from the same start, with
      // 1 and with 1 + kFurther iterations (tolerance 0, so all of them run; damped so that the
      // iterate stays finite from this poor start). The first gives the cost of a lone
      // iteration, which includes allocating and first touching the per-node storage (page
      // faults); the difference gives the cost of each further iteration, which reuses it.
      constexpr int kFurther = 3;
      auto run = [&](int iterations, Eigen::VectorXd* theta) -> double {
        solvers::FirstOrderSmootherOptions fo;
        fo.max_iterations = iterations;
        fo.tolerance = 0.0;
        fo.damping = 0.5;
        fo.sweep = FLAGS_first_order_sweep == "augmented"
                       ? solvers::FirstOrderSmootherOptions::Sweep::kAugmented
                       : solvers::FirstOrderSmootherOptions::Sweep::kConditionedOnTheta;
        double best_cpu_s = INFINITY;
        for (int repeat = 0; repeat < std::max(1, FLAGS_first_order_repeats); ++repeat) {
          problems::WeightedResidualVariables riccati = start;
          const double cpu0 = CpuSeconds();
          const solvers::FirstOrderSmootherSummary fo_summary =
              solvers::RunFirstOrderSmoother(model, data, weights, fo, &riccati);
          const double cpu_s = CpuSeconds() - cpu0;
          if (fo_summary.iterations != iterations || !riccati.states.allFinite()) {
            std::fprintf(stderr, "first-order iterations failed: %s\n",
                         fo_summary.message.c_str());
            return NAN;
          }
          best_cpu_s = std::min(best_cpu_s, cpu_s);
          if (theta != nullptr) *theta = riccati.parameters.col(0);
        }
        return best_cpu_s;
      };
      const double one_s = run(1, &riccati_theta);
      const double more_s = run(1 + kFurther, nullptr);
      riccati_rate = num_nodes / one_s / 1e6;
      riccati_further_rate = kFurther * num_nodes / (more_s - one_s) / 1e6;
    }
    std::printf("%8d %6d %9.3f %9.3f %8.3f %8.3f %6s %11.2f %11.4f %11.4f %11.2e %13.3f\n",
                num_nodes, summary.iterations, build_s, solve_s, summary.linear_solver_time_s,
                summary.jacobian_time_s, summary.converged ? "yes" : "no",
                1e6 * (build_s + solve_s) / num_nodes, schur_s, ceres_s, relative_difference,
                riccati_rate);
    std::printf("         node_cov_s %.4f   solve wall-clock %.3f s   riccati further iterations"
                " %.3f M nodes/s\n",
                node_covariance_s, solve_wall_s, riccati_further_rate);
    std::printf("         theta: ");
    for (int i = 0; i < 5; ++i) std::printf("%.4g ", variables.parameters(i, 0));
    std::printf("(true 2.2e-3 1.5e-4 0.47 0.15 2)\n");
    if (riccati_theta.size() == 5) {
      std::printf("         theta after one first-order iteration: ");
      for (int i = 0; i < 5; ++i) std::printf("%.15g ", riccati_theta(i));
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  return 0;
}
