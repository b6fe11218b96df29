// ModelGridCase<Model> — a solvers::WeightGridCase (solvers/weight_grid.h) for any
// models::MechanicalModel from a GridCaseSetup: the model, its true parameters, a noise-free
// simulated trajectory, measurement noise levels, base weights, and which measurement columns
// start the trajectory unknowns.
//
// Adding a case (e.g. the xy-table) is a function that fills a GridCaseSetup<XyTable> and one
// line in the registry of experiments/weight_sweep/grid_cases.cc; the model needs
// problems::BuildWeightedResidualProblem<Model> and models::LinearizeModel<Model> instantiated
// (as every model of dynid_models has).
//
// Run(weights, seed): adds Gaussian noise (std::mt19937(seed), the same realisation for every
// grid point: common random numbers make weight comparisons sharper) to the measurements,
// starts the trajectory from the measured positions (velocities and, where unmeasured,
// accelerations by central differences; unmeasured inputs at 0) and theta at
// theta_start_factor × truth, sets q0 = [s, v at node 0; theta start] when R0 is used, solves
// with solvers::SolveWeightedResidual (one thread: the grid evaluation parallelises over points),
// and records the theta information by the banded Schur complement
// (solvers::AnalyzeIdentifiability) and residual RMS.
#ifndef DYNID_EXPERIMENTS_WEIGHT_SWEEP_MODEL_GRID_CASE_H_
#define DYNID_EXPERIMENTS_WEIGHT_SWEEP_MODEL_GRID_CASE_H_

#include <ceres/problem.h>

#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "dynid/solvers/observability.h"
#include "dynid/solvers/parameter_covariance.h"
#include "dynid/solvers/weight_grid.h"
#include "dynid/solvers/weighted_residual_smoother.h"

namespace dynid::experiments {

template <class Model>
struct GridCaseSetup {
  std::string name;
  std::string description;
  Model model;
  Eigen::VectorXd theta_true;                 // p
  models::Trajectory truth;                   // noise-free, measurements N × l
  Eigen::VectorXd noise_standard_deviation;   // l
  problems::WeightedResidualWeights weights;  // base weights (R0 may be empty)
  std::vector<int> position_columns;          // n: measurement column of each position, or −1
  std::vector<int> acceleration_columns;      // n: measurement column of each acceleration, or −1
  std::vector<int> input_columns;             // m: measurement column of each input, or −1
  // Optional: a model-specific starting trajectory from the noisy data (sizes `variables` for
  // ParameterMode::kConstant with theta = theta_start); replaces the column rule above.
  std::function<void(const problems::WeightedResidualData& data, const Eigen::VectorXd& theta_start,
                     problems::WeightedResidualVariables* variables)>
      initialize;
};

template <class Model>
class ModelGridCase : public solvers::WeightGridCase {
 public:
  static constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                       l = Model::kNumMeasurements;

  explicit ModelGridCase(GridCaseSetup<Model> setup)
      : setup_(std::move(setup)), info_(setup_.model.Info()) {
    CHECK_EQ(setup_.theta_true.size(), p) << "theta_true of case " << setup_.name;
    CHECK_EQ(setup_.truth.measurements.cols(), l) << "measurements of case " << setup_.name;
    CHECK_EQ(setup_.noise_standard_deviation.size(), l) << "noise of case " << setup_.name;
    CHECK_EQ(static_cast<int>(setup_.position_columns.size()), n) << setup_.name;
    CHECK_EQ(static_cast<int>(setup_.acceleration_columns.size()), n) << setup_.name;
    CHECK_EQ(static_cast<int>(setup_.input_columns.size()), m) << setup_.name;
  }

  std::string name() const override { return setup_.name; }
  std::string description() const override { return setup_.description; }
  const models::ModelInfo& info() const override { return info_; }
  const Eigen::VectorXd& true_parameters() const override { return setup_.theta_true; }
  const Eigen::VectorXd& noise_standard_deviation() const override {
    return setup_.noise_standard_deviation;
  }
  const problems::WeightedResidualWeights& base_weights() const override { return setup_.weights; }
  int num_nodes() const override { return static_cast<int>(setup_.truth.time.size()); }

  bool Run(const problems::WeightedResidualWeights& weights, int seed,
           const solvers::WeightGridSettings& settings, solvers::GridPointResult* result,
           std::string* error) const override {
    std::string why;
    if (!settings.IsValid(&why)) {
      *error = "grid settings: " + why;
      return false;
    }
    const auto start = std::chrono::steady_clock::now();
    const int num_nodes = this->num_nodes();
    const Eigen::VectorXd& time = setup_.truth.time;
    problems::WeightedResidualData data{time, setup_.truth.measurements};
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int k = 0; k < num_nodes; ++k) {
      for (int j = 0; j < l; ++j) {
        data.measurements(k, j) +=
            settings.noise_scale * setup_.noise_standard_deviation(j) * normal(rng);
      }
    }
    problems::WeightedResidualVariables variables;
    const Eigen::VectorXd theta_start = settings.theta_start_factor * setup_.theta_true;
    if (setup_.initialize) {
      setup_.initialize(data, theta_start, &variables);
    } else {
      problems::ResizeVariables(n, m, theta_start, num_nodes, problems::ParameterMode::kConstant,
                                &variables);
      Initialize(data, &variables);
    }
    problems::WeightedResidualWeights w = weights;
    if (w.initial.size() > 0) {
      w.initial_guess.resize(2 * n + p);
      w.initial_guess << variables.states.col(0), theta_start;
    }
    problems::WeightedResidualOptions options;
    options.transcription = settings.transcription;
    options.parameter_mode = problems::ParameterMode::kConstant;
    ceres::Problem problem;
    if (!problems::BuildWeightedResidualProblem(setup_.model, data, w, options, &variables,
                                                &problem, error)) {
      return false;
    }
    solvers::WeightedResidualSmootherOptions solver_options;
    solver_options.max_iterations = settings.max_iterations;
    solver_options.function_tolerance = settings.function_tolerance;
    solver_options.num_threads = 1;
    solver_options.trust_region = settings.trust_region;
    const solvers::SolverSummary summary =
        solvers::SolveWeightedResidual(&problem, &variables, solver_options);
    solvers::GridPointResult r;
    r.seed = seed;
    r.converged = summary.converged;
    r.iterations = summary.iterations;
    r.initial_cost = summary.initial_cost;
    r.final_cost = summary.final_cost;
    r.theta = variables.parameters.col(0);
    r.standard_deviation = r.scaled_standard_deviation = r.sandwich_standard_deviation =
        r.hac_standard_deviation = Eigen::VectorXd::Constant(p, NAN);
    r.condition_number = NAN;
    Eigen::MatrixXd information;
    std::string information_error;
    if (r.theta.allFinite() && solvers::ConstantParameterInformation(
                                   &problem, &variables, &information, &information_error)) {
      const solvers::IdentifiabilityReport report =
          solvers::AnalyzeIdentifiability(information, r.theta, ParameterNames());
      r.identifiable = report.identifiable;
      r.condition_number = report.condition_number;
      r.standard_deviation = report.standard_deviation;
      const double factor = std::sqrt(solvers::ResidualVarianceFactor(
          problem, summary.final_cost, problems::CountWeightedResiduals(w, data, options)));
      r.scaled_standard_deviation = report.standard_deviation * factor;
      solvers::SandwichCovariance sandwich;
      if (solvers::ConstantParameterSandwichCovariance(&problem, &variables, info(), w, &sandwich,
                                                       &information_error)) {
        r.sandwich_standard_deviation = sandwich.standard_deviation;
        r.hac_standard_deviation = sandwich.hac_standard_deviation;
        r.hac_critical_value_95 = sandwich.hac_critical_value_95;
      }
    }
    Eigen::MatrixXd zeta, xi;
    problems::ComputeWeightedResiduals(setup_.model, data, variables, &zeta, &xi);
    r.zeta_rms = (zeta.colwise().squaredNorm() / num_nodes).cwiseSqrt().transpose();
    r.xi_rms = (xi.leftCols(2 * n).colwise().squaredNorm() / std::max(1, num_nodes - 1))
                   .cwiseSqrt()
                   .transpose();
    r.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int point = result->point, seed_index = result->seed_index;
    *result = r;
    result->point = point;
    result->seed_index = seed_index;
    return true;
  }

  bool Observability(const problems::WeightedResidualWeights& weights,
                     solvers::ObservabilityReport* report, std::string* error) const override {
    if (!solvers::AnalyzeObservability(setup_.model, setup_.truth, setup_.theta_true,
                                       solvers::ObservabilityOptions(), report, error)) {
      return false;
    }
    report->has_parameters = solvers::ParameterIdentifiabilityAlongTrajectory(
        setup_.model, setup_.truth, setup_.theta_true, weights, problems::Transcription::kShooting,
        1e-10, &report->parameters, error);
    return report->has_parameters;
  }

 private:
  std::vector<std::string> ParameterNames() const {
    std::vector<std::string> names;
    for (const auto& q : info_.parameters) names.push_back(q.name + " [" + q.unit + "]");
    return names;
  }

  // Starting trajectory from the measurements (central differences for derivatives).
  void Initialize(const problems::WeightedResidualData& data,
                  problems::WeightedResidualVariables* variables) const {
    const int num_nodes = static_cast<int>(data.time.size());
    auto difference = [&](const Eigen::VectorXd& x) {
      Eigen::VectorXd dx(num_nodes);
      for (int k = 0; k < num_nodes; ++k) {
        const int k0 = std::max(k - 1, 0), k1 = std::min(k + 1, num_nodes - 1);
        dx(k) = (x(k1) - x(k0)) / (data.time(k1) - data.time(k0));
      }
      return dx;
    };
    for (int i = 0; i < n; ++i) {
      Eigen::VectorXd s = Eigen::VectorXd::Zero(num_nodes);
      if (setup_.position_columns[i] >= 0) s = data.measurements.col(setup_.position_columns[i]);
      const Eigen::VectorXd v = difference(s);
      const Eigen::VectorXd a =
          setup_.acceleration_columns[i] >= 0
              ? Eigen::VectorXd(data.measurements.col(setup_.acceleration_columns[i]))
              : difference(v);
      variables->states.row(i) = s.transpose();
      variables->states.row(n + i) = v.transpose();
      variables->inputs.row(i) = a.transpose();
    }
    for (int j = 0; j < m; ++j) {
      if (setup_.input_columns[j] >= 0) {
        variables->inputs.row(n + j) = data.measurements.col(setup_.input_columns[j]).transpose();
      }
    }
  }

  GridCaseSetup<Model> setup_;
  models::ModelInfo info_;
};

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_WEIGHT_SWEEP_MODEL_GRID_CASE_H_
