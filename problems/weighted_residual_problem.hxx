// Definition of problems::BuildWeightedResidualProblem and its cost functors, included by
// weighted_residual_problem.h (as Pinocchio keeps its algorithms' templates in .hxx files): any
// model, the library's or a user's, instantiates the builder by including that header.
#ifndef DYNID_PROBLEMS_WEIGHTED_RESIDUAL_PROBLEM_HXX_
#define DYNID_PROBLEMS_WEIGHTED_RESIDUAL_PROBLEM_HXX_

#include <cmath>
#include <memory>
#include <string>

#include <ceres/autodiff_cost_function.h>
#include <ceres/cost_function.h>
#include <ceres/problem.h>
#include <glog/logging.h>

namespace dynid::problems {
namespace internal {

// zeta at one node: sqrt(w_k V) [−(M a + h + H u); z_m − (g + G a + R u)].
// Parameter blocks: state_k (2n), input_k (n + m), theta (p).
template <class Model>
class NodeResidual {
 public:
  static constexpr int n = Model::kNumPositions, m = Model::kNumInputs,
                       p = Model::kNumParameters, l = Model::kNumMeasurements;
  using SqrtWeight = Eigen::Matrix<double, n + l, n + l>;

  NodeResidual(const Model& model, double t, const Eigen::Matrix<double, l, 1>& measured,
               const SqrtWeight& sqrt_weight)
      : model_(model), t_(t), measured_(measured), sqrt_weight_(sqrt_weight),
        diagonal_(sqrt_weight.isDiagonal()) {}

  template <class T>
  bool operator()(const T* state, const T* input, const T* theta, T* residual) const {
    T r[n], z[l];
    model_.EquationsOfMotion(state, state + n, input, input + n, theta, t_, r);
    model_.Measurements(state, state + n, input, input + n, theta, t_, z);
    Eigen::Matrix<T, n + l, 1> zeta;
    for (int i = 0; i < n; ++i) zeta(i) = -r[i];
    for (int i = 0; i < l; ++i) zeta(n + i) = measured_(i) - z[i];
    Eigen::Map<Eigen::Matrix<T, n + l, 1>> out(residual);
    // Diagonal weights (the common case) cost n + l products instead of (n + l)² Jet products.
    if (diagonal_) {
      for (int i = 0; i < n + l; ++i) out(i) = sqrt_weight_(i, i) * zeta(i);
    } else {
      out = sqrt_weight_.template cast<T>() * zeta;
    }
    return true;
  }

  static ceres::CostFunction* Create(const Model& model, double t,
                                     const Eigen::Matrix<double, l, 1>& measured,
                                     const SqrtWeight& sqrt_weight) {
    return new ceres::AutoDiffCostFunction<NodeResidual, n + l, 2 * n, n + m, p>(
        new NodeResidual(model, t, measured, sqrt_weight));
  }

 private:
  const Model model_;
  const double t_;
  const Eigen::Matrix<double, l, 1> measured_;
  const SqrtWeight sqrt_weight_;
  const bool diagonal_;
};

// Shooting xi on [t_k, t_{k+1}] (closed-form RK4, see the header): sqrt(W h) [xi_s; xi_v].
// Parameter blocks: state_k, state_{k+1} (2n each), input_k (n + m).
template <int n, int m>
class ShootingKinematicResidual {
 public:
  using SqrtWeight = Eigen::Matrix<double, 2 * n, 2 * n>;
  ShootingKinematicResidual(double h, const SqrtWeight& sqrt_weight)
      : h_(h), sqrt_weight_(sqrt_weight), diagonal_(sqrt_weight.isDiagonal()) {}

  template <class T>
  bool operator()(const T* x0, const T* x1, const T* input, T* residual) const {
    Eigen::Matrix<T, 2 * n, 1> xi;
    for (int i = 0; i < n; ++i) {
      xi(i) = (x1[i] - x0[i]) / h_ - 0.5 * (x0[n + i] + x1[n + i]);
      xi(n + i) = (x1[n + i] - x0[n + i]) / h_ - input[i];
    }
    Eigen::Map<Eigen::Matrix<T, 2 * n, 1>> out(residual);
    if (diagonal_) {
      for (int i = 0; i < 2 * n; ++i) out(i) = sqrt_weight_(i, i) * xi(i);
    } else {
      out = sqrt_weight_.template cast<T>() * xi;
    }
    return true;
  }

  static ceres::CostFunction* Create(double h, const SqrtWeight& sqrt_weight) {
    return new ceres::AutoDiffCostFunction<ShootingKinematicResidual, 2 * n, 2 * n, 2 * n, n + m>(
        new ShootingKinematicResidual(h, sqrt_weight));
  }

 private:
  const double h_;
  const SqrtWeight sqrt_weight_;
  const bool diagonal_;
};

// Collocation xi on element [t_k, t_{k+1}] with linear interpolation, at the two Gauss points:
// sqrt(W h / 2) [xi(τ_1); xi(τ_2)]. Parameter blocks: state_k, state_{k+1}, input_k, input_{k+1}.
template <int n, int m>
class CollocationKinematicResidual {
 public:
  using SqrtWeight = Eigen::Matrix<double, 2 * n, 2 * n>;
  CollocationKinematicResidual(double h, const SqrtWeight& sqrt_weight)
      : h_(h), sqrt_weight_(sqrt_weight), diagonal_(sqrt_weight.isDiagonal()) {}

  template <class T>
  bool operator()(const T* x0, const T* x1, const T* input0, const T* input1,
                  T* residual) const {
    const double offset = 0.5 / std::sqrt(3.0);
    for (int g = 0; g < 2; ++g) {
      const double c = g == 0 ? 0.5 - offset : 0.5 + offset;  // local coordinate in [0, 1]
      Eigen::Matrix<T, 2 * n, 1> xi;
      for (int i = 0; i < n; ++i) {
        const T v = (1.0 - c) * x0[n + i] + c * x1[n + i];
        const T a = (1.0 - c) * input0[i] + c * input1[i];
        xi(i) = (x1[i] - x0[i]) / h_ - v;
        xi(n + i) = (x1[n + i] - x0[n + i]) / h_ - a;
      }
      Eigen::Map<Eigen::Matrix<T, 2 * n, 1>> out(residual + 2 * n * g);
      if (diagonal_) {
        for (int i = 0; i < 2 * n; ++i) out(i) = sqrt_weight_(i, i) * xi(i);
      } else {
        out = sqrt_weight_.template cast<T>() * xi;
      }
    }
    return true;
  }

  static ceres::CostFunction* Create(double h, const SqrtWeight& sqrt_weight) {
    return new ceres::AutoDiffCostFunction<CollocationKinematicResidual, 4 * n, 2 * n, 2 * n,
                                           n + m, n + m>(
        new CollocationKinematicResidual(h, sqrt_weight));
  }

 private:
  const double h_;
  const SqrtWeight sqrt_weight_;
  const bool diagonal_;
};

// xi_theta on [t_k, t_{k+1}]: sqrt(W_theta h) (theta_{k+1} − theta_k) / h (both transcriptions).
template <int p>
class ParameterDriftResidual {
 public:
  using SqrtWeight = Eigen::Matrix<double, p, p>;
  ParameterDriftResidual(double h, const SqrtWeight& sqrt_weight)
      : h_(h), sqrt_weight_(sqrt_weight) {}

  template <class T>
  bool operator()(const T* theta0, const T* theta1, T* residual) const {
    Eigen::Matrix<T, p, 1> xi;
    for (int i = 0; i < p; ++i) xi(i) = (theta1[i] - theta0[i]) / h_;
    Eigen::Map<Eigen::Matrix<T, p, 1>> out(residual);
    out = sqrt_weight_.template cast<T>() * xi;
    return true;
  }

  static ceres::CostFunction* Create(double h, const SqrtWeight& sqrt_weight) {
    return new ceres::AutoDiffCostFunction<ParameterDriftResidual, p, p, p>(
        new ParameterDriftResidual(h, sqrt_weight));
  }

 private:
  const double h_;
  const SqrtWeight sqrt_weight_;
};

// sqrt(R0) (x_0 − q0) over one or two blocks; linear, so the Jacobian is the constant factor.
class InitialResidual : public ceres::CostFunction {
 public:
  InitialResidual(const Eigen::MatrixXd& sqrt_weight, const Eigen::VectorXd& initial_guess,
                  const std::vector<int>& block_sizes)
      : sqrt_weight_(sqrt_weight), initial_guess_(initial_guess), block_sizes_(block_sizes) {
    set_num_residuals(static_cast<int>(sqrt_weight.rows()));
    *mutable_parameter_block_sizes() = block_sizes;
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    Eigen::VectorXd x(initial_guess_.size());
    int offset = 0;
    for (size_t b = 0; b < block_sizes_.size(); ++b) {
      x.segment(offset, block_sizes_[b]) =
          Eigen::Map<const Eigen::VectorXd>(parameters[b], block_sizes_[b]);
      offset += block_sizes_[b];
    }
    Eigen::Map<Eigen::VectorXd>(residuals, num_residuals()) = sqrt_weight_ * (x - initial_guess_);
    if (jacobians != nullptr) {
      offset = 0;
      for (size_t b = 0; b < block_sizes_.size(); ++b) {
        if (jacobians[b] != nullptr) {
          Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
              jacobians[b], num_residuals(), block_sizes_[b]) =
              sqrt_weight_.middleCols(offset, block_sizes_[b]);
        }
        offset += block_sizes_[b];
      }
    }
    return true;
  }

 private:
  const Eigen::MatrixXd sqrt_weight_;
  const Eigen::VectorXd initial_guess_;
  const std::vector<int> block_sizes_;
};

}  // namespace internal

template <class Model>
bool BuildWeightedResidualProblem(const Model& model, const WeightedResidualData& data,
                                  const WeightedResidualWeights& weights,
                                  const WeightedResidualOptions& options,
                                  WeightedResidualVariables* variables, ceres::Problem* problem,
                                  std::string* error) {
  CHECK(variables != nullptr) << "expected variables, got nullptr";
  CHECK(problem != nullptr) << "expected a problem, got nullptr";
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                l = Model::kNumMeasurements;
  if (!ValidateWeightedResidualInputs(n, m, p, l, data, weights, options, *variables, error)) {
    return false;
  }
  Eigen::MatrixXd sqrt_kinematic, sqrt_residual, sqrt_parameter, sqrt_initial;
  std::string why;
  if (!SquareRootFactor(weights.kinematic, true, &sqrt_kinematic, &why)) {
    *error = "kinematic weight W: " + why;
    return false;
  }
  if (!SquareRootFactor(weights.residual, false, &sqrt_residual, &why)) {
    *error = "residual weight V: " + why;
    return false;
  }
  const ParameterMode mode = options.parameter_mode;
  if (mode == ParameterMode::kTimeVarying &&
      !SquareRootFactor(weights.parameter, true, &sqrt_parameter, &why)) {
    *error = "parameter weight W_theta: " + why;
    return false;
  }
  const bool has_initial = weights.initial.size() > 0 && weights.initial.cwiseAbs().maxCoeff() > 0;
  if (has_initial && !SquareRootFactor(weights.initial, false, &sqrt_initial, &why)) {
    *error = "initial weight R0: " + why;
    return false;
  }

  const int num_nodes = static_cast<int>(data.time.size());
  const Eigen::VectorXd node_weights = TrapezoidalNodeWeights(data.time);
  const Eigen::Matrix<double, 2 * n, 2 * n> sqrt_w = sqrt_kinematic;
  const Eigen::Matrix<double, n + l, n + l> sqrt_v = sqrt_residual;

  // Blocks are added in node order; Ceres keeps that order for the Jacobian columns.
  for (int k = 0; k < num_nodes; ++k) {
    problem->AddParameterBlock(variables->state(k), 2 * n);
    problem->AddParameterBlock(variables->input(k), n + m);
    if (mode == ParameterMode::kTimeVarying) problem->AddParameterBlock(variables->parameter(k), p);
  }
  if (mode != ParameterMode::kTimeVarying) {
    problem->AddParameterBlock(variables->parameter(0), p);
    if (mode == ParameterMode::kFixed) problem->SetParameterBlockConstant(variables->parameter(0));
  }

  for (int k = 0; k < num_nodes; ++k) {
    const Eigen::Matrix<double, l, 1> measured = data.measurements.row(k).transpose();
    problem->AddResidualBlock(
        internal::NodeResidual<Model>::Create(model, data.time(k), measured,
                                              std::sqrt(node_weights(k)) * sqrt_v),
        nullptr, variables->state(k), variables->input(k), variables->parameter(k));
  }
  for (int k = 0; k + 1 < num_nodes; ++k) {
    const double h = data.time(k + 1) - data.time(k);
    if (options.transcription == Transcription::kShooting) {
      problem->AddResidualBlock(
          internal::ShootingKinematicResidual<n, m>::Create(h, std::sqrt(h) * sqrt_w), nullptr,
          variables->state(k), variables->state(k + 1), variables->input(k));
    } else {
      problem->AddResidualBlock(
          internal::CollocationKinematicResidual<n, m>::Create(h, std::sqrt(0.5 * h) * sqrt_w),
          nullptr, variables->state(k), variables->state(k + 1), variables->input(k),
          variables->input(k + 1));
    }
    if (mode == ParameterMode::kTimeVarying) {
      const Eigen::Matrix<double, p, p> sqrt_wp = std::sqrt(h) * sqrt_parameter;
      problem->AddResidualBlock(internal::ParameterDriftResidual<p>::Create(h, sqrt_wp), nullptr,
                                variables->parameter(k), variables->parameter(k + 1));
    }
  }
  if (has_initial) {
    std::vector<double*> blocks = {variables->state(0)};
    std::vector<int> sizes = {2 * n};
    if (mode != ParameterMode::kFixed) {
      blocks.push_back(variables->parameter(0));
      sizes.push_back(p);
    }
    problem->AddResidualBlock(
        new internal::InitialResidual(sqrt_initial, weights.initial_guess, sizes), nullptr,
        blocks);
  }
  return true;
}

}  // namespace dynid::problems

#endif  // DYNID_PROBLEMS_WEIGHTED_RESIDUAL_PROBLEM_HXX_
