// solvers::RunFirstOrderSmoother and solvers::RunLinearOptimalFilter — van de Molengraft's
// first-order approximation of the weighted-residual optimal estimator (van de Molengraft (1990)
// §3.3–3.5) and the linear optimal filter (van de Molengraft (1990) eq. 3.16).
//
// Both work on the multiple-shooting discretisation of problems/weighted_residual_problem.h
// (zeta at the nodes with trapezoidal weights w_k V, xi piecewise constant with weight h_k W,
// x_{k+1} = (I + hA) x_k + h (I + hA/2)(B p̄_k + xi_k)), so that for the same data and weights
// they minimise exactly the functional the Ceres transcription kShooting minimises.
//
// The first-order approximation linearises zeta about the current estimate (x̄, p̄̄):
//     zeta_k ≈ y_k − C_k x_k − D_k p̄_k,   C = ∂(f + F p̄)/∂x, D = F, y = zeta̅ + C x̄ + D p̄̄,
// and solves the resulting linear–quadratic problem by a forward Riccati sweep and a backward
// sweep (the discrete counterpart of eqs. 3.9–3.10). The forward sweep first eliminates p̄_k
// at each node (the thesis's L12 = B(DᵀVD)⁻¹Bᵀ + W⁻¹ and L21 = Cᵀ(V − VD(DᵀVD)⁻¹DᵀV)C):
//     p̄_k | x_k ~ (DᵀV_kD)⁻¹DᵀV_k (y_k − C_k x_k)  with information DᵀV_kD,
// leaving a Kalman-type update with the measurement information Cᵀ V⊥ C and a transition
// x_{k+1} = (Φ − ΓB K_p C) x_k + ΓB K_p y + Γ(B δ + xi). Q_k (the "uncertainty" of van de
// Molengraft (1990) §3.3) starts at R0⁻¹, so R0 must be positive definite. The backward sweep is
// the Rauch–Tung–Striebel smoother written on the adjoint lambda (riccati_sweep.h); p̄_k is then
// recovered from x_k, x_{k+1}. The nodes are linearised as the forward sweep reaches them (no
// per-node linearisations are stored). Iterating the
// linearisation (successive substitution) with numerical damping alpha ∈ (0, 1] (§3.5) converges
// to a stationary point of the discretised functional (a Gauss–Newton fixed point).
//
// kConstant theta is by default conditioned out of the sweep (constant_parameter_sweep.h: a
// 2n-state sweep carrying theta's sensitivities, theta from a p × p system) or, with
// FirstOrderSmootherOptions::Sweep::kAugmented, a state with zero process noise (the same
// solution); kTimeVarying theta is a state with process weight W_theta; kFixed theta is not
// estimated. F(x)ᵀ V F(x) must be regular at every node (van de Molengraft (1990)
// §3.2: V ≥ 0 with FᵀVF regular).
//
// The linear optimal filter runs only the forward sweep, re-linearising at each node about the
// predicted state (iterated `relinearizations` times), and returns x̂(t_k | t_0..t_k) and p̂(t_k):
// the on-line estimator of van de Molengraft (1990) §3.7.
#ifndef DYNID_SOLVERS_INTERNAL_FIRST_ORDER_SMOOTHER_H_
#define DYNID_SOLVERS_INTERNAL_FIRST_ORDER_SMOOTHER_H_

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "dynid/models/model_linearization.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/first_order_smoother.h"
#include "dynid/solvers/internal/constant_parameter_sweep.h"
#include "dynid/solvers/internal/node_pipeline.h"
#include "dynid/solvers/internal/riccati_sweep.h"
#include "dynid/solvers/internal/simd_kernels.h"

namespace dynid::solvers {

// Linearises the model's zeta at node `k` about (state, input, theta) into *node; NX = 2n
// (theta fixed) or 2n + p (theta estimated, then part of the state).
// (Always inlined: the sweeps call it inside their per-instruction-set node functions.)
template <class Model, int NX>
DYNID_ALWAYS_INLINE void LinearizeNode(
    const Model& model, const problems::WeightedResidualData& data, int k, const double* state,
    const double* input, const double* theta,
    NodeLinearization<NX, Model::kNumPositions + Model::kNumInputs,
                      Model::kNumPositions + Model::kNumMeasurements>* node) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, l = Model::kNumMeasurements;
  constexpr bool estimated = NX > 2 * n;
  if constexpr (estimated && n + m > 1) {
    // The Jacobians' rows go straight into C and D (same row-major rows), r and z into y.
    double* const y = node->y.data();
    models::LinearizeModelInto(
        model, state, state + n, input, input + n, theta, data.time(k),
        models::LinearizationTarget{y, y + n, node->C.data(), node->D.data(),
                                    node->C.data() + n * NX, node->D.data() + n * (n + m)});
  } else {
    models::ModelLinearization<Model> lin;
    models::LinearizeModel(model, state, state + n, input, input + n, theta, data.time(k), &lin);
    node->C.template topRows<n>() = lin.J_r_x.template leftCols<NX>();
    node->C.template bottomRows<l>() = lin.J_z_x.template leftCols<NX>();
    node->D.template topRows<n>() = lin.J_r_pbar;
    node->D.template bottomRows<l>() = lin.J_z_pbar;
    node->y.template head<n>() = lin.equations;
    node->y.template tail<l>() = lin.measurements;
  }
  Eigen::Matrix<double, NX, 1> x;
  x.template head<2 * n>() = Eigen::Map<const Eigen::Matrix<double, 2 * n, 1>>(state);
  if constexpr (estimated) {
    x.template tail<NX - 2 * n>() = Eigen::Map<const Eigen::Matrix<double, NX - 2 * n, 1>>(theta);
  }
  const Eigen::Matrix<double, n + m, 1> pbar =
      Eigen::Map<const Eigen::Matrix<double, n + m, 1>>(input);
  // y = zeta + C x + D p̄ with zeta = [−r; z_measured − z]; lazyProduct: coefficient-based
  // (Eigen's default sends these through its GEMV kernel).
  node->y.template head<n>() = -node->y.template head<n>();
  node->y.template tail<l>() = data.measurements.row(k).transpose() - node->y.template tail<l>();
  node->y += node->C.lazyProduct(x) + node->D.lazyProduct(pbar);
}

// As above into the rows of the elimination (NodeRows, riccati_sweep.h; theta estimated): the
// Jacobians' rows with p̄'s columns as [u; a], zeta in the last column and the point
// [u; a; x; 1], so that the elimination forms y = zeta + C x + D p̄ on packets.
template <class Model, int NX>
DYNID_ALWAYS_INLINE void LinearizeNode(
    const Model& model, const problems::WeightedResidualData& data, int k, const double* state,
    const double* input, const double* theta,
    NodeRows<NX, Model::kNumPositions + Model::kNumInputs,
             Model::kNumPositions + Model::kNumMeasurements>* node) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                l = Model::kNumMeasurements;
  static_assert(NX == 2 * n + p, "the rows carry theta's columns");
  using Rows = std::remove_pointer_t<decltype(node)>;
  constexpr int kZeta = Rows::kColumns - 1, kStride = Rows::kPaddedColumns, kP = n + m;
  double* const equations = node->rows.v[0];
  double* const measurements = node->rows.v[n];
  models::LinearizeModelInto(
      model, state, state + n, input, input + n, theta, data.time(k),
      models::LinearizationTarget{equations + kZeta, measurements + kZeta, equations + kP,
                                  equations, measurements + kP, measurements, kStride,
                                  /*inputs_first=*/true});
  // zeta = [−r; z_measured − z].
  for (int i = 0; i < n; ++i) node->zeta(i) = -node->zeta(i);
  for (int i = 0; i < l; ++i) node->zeta(n + i) = data.measurements(k, i) - node->zeta(n + i);
  double* const point = node->point.v[0];
  for (int i = 0; i < m; ++i) point[i] = input[n + i];
  for (int i = 0; i < n; ++i) point[m + i] = input[i];
  for (int i = 0; i < 2 * n; ++i) point[kP + i] = state[i];
  for (int i = 0; i < p; ++i) point[kP + 2 * n + i] = theta[i];
}

// As above, returning the linearisation.
template <class Model, int NX>
NodeLinearization<NX, Model::kNumPositions + Model::kNumInputs,
                  Model::kNumPositions + Model::kNumMeasurements>
LinearizeNode(const Model& model, const problems::WeightedResidualData& data, int k,
              const double* state, const double* input, const double* theta) {
  NodeLinearization<NX, Model::kNumPositions + Model::kNumInputs,
                    Model::kNumPositions + Model::kNumMeasurements>
      node;
  LinearizeNode<Model, NX>(model, data, k, state, input, theta, &node);
  return node;
}

namespace internal {

// Checks data, weights and variables of a recursive solver of Model against the shooting
// transcription (the discretisation the first-order approximation and forward–backward shooting
// share); false with the reason in *why.
template <class Model>
bool ValidateShootingInputs(const problems::WeightedResidualData& data,
                            const problems::WeightedResidualWeights& weights,
                            const problems::WeightedResidualVariables& variables,
                            std::string* why) {
  problems::WeightedResidualOptions problem_options;
  problem_options.transcription = problems::Transcription::kShooting;
  problem_options.parameter_mode = variables.mode;
  return problems::ValidateWeightedResidualInputs(Model::kNumPositions, Model::kNumInputs,
                                                  Model::kNumParameters, Model::kNumMeasurements,
                                                  data, weights, problem_options, variables, why);
}

template <class Model, int NX>
FirstOrderSmootherSummary RunFirstOrderSmootherFixed(
    const Model& model, const problems::WeightedResidualData& data,
    const problems::WeightedResidualWeights& weights, const FirstOrderSmootherOptions& options,
    problems::WeightedResidualVariables* variables) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                l = Model::kNumMeasurements;
  const auto start = std::chrono::steady_clock::now();
  FirstOrderSmootherSummary summary;
  std::string why;
  // Constant theta: the sweep conditioned on theta (2n states, constant_parameter_sweep.h);
  // otherwise theta (if estimated) is part of the Riccati state.
  constexpr bool kConditioned = NX > 2 * n;
  using Augmented = RiccatiSweep<n, NX, n + m, n + l>;
  using Conditioned = ConstantParameterSweep<n, (kConditioned ? NX - 2 * n : 1), n + m, n + l>;
  const bool conditioned = kConditioned && variables->mode == problems::ParameterMode::kConstant &&
                           options.sweep == FirstOrderSmootherOptions::Sweep::kConditionedOnTheta;
  std::unique_ptr<Augmented> augmented;
  std::unique_ptr<Conditioned> conditioned_sweep;
  if (conditioned) {
    if constexpr (kConditioned) {
      conditioned_sweep = std::make_unique<Conditioned>(weights);
      if (!conditioned_sweep->Initialize(&why)) {
        summary.message = why;
        return summary;
      }
    }
  } else {
    augmented = std::make_unique<Augmented>(variables->mode, weights);
    if (!augmented->Initialize(&why)) {
      summary.message = why;
      return summary;
    }
  }
  const int num_nodes = variables->num_nodes();
  Eigen::MatrixXd states, inputs;
  for (int iteration = 1; iteration <= options.max_iterations; ++iteration) {
    // Each node is linearised about the current estimate as the forward sweep reaches it.
    // (node: a NodeLinearization for the augmented sweep, NodeRows for the conditioned one)
    auto linearize = [&](int k, auto* node) DYNID_LAMBDA_INLINE {
      LinearizeNode<Model, NX>(model, data, k, variables->state(k), variables->input(k),
                               variables->parameter(k), node);
    };
    bool ok = false;
    if (conditioned) {
      if constexpr (kConditioned) {
        ok = conditioned_sweep->SmoothLinearized(data.time, linearize, &states, &inputs, &why,
                                                 options.num_threads);
      }
    } else {
      ok = augmented->SmoothLinearized(data.time, linearize, &states, &inputs, &why);
    }
    if (!ok) {
      summary.message = why;
      summary.iterations = iteration;
      return summary;
    }
    // Damped successive substitution (van de Molengraft (1990) eq. 3.23), node ranges on the
    // threads.
    const double alpha = options.damping;
    const int threads = num_nodes >= 2 * kMinNodesPerThread ? options.num_threads : 1;
    std::vector<double> range_change(threads, 0.0), range_scale(threads, 0.0);
    // (Types named outside the lambda: GCC 12 fails on n, m inside it.)
    using VecState = Eigen::Matrix<double, 2 * n, 1>;
    using VecInput = Eigen::Matrix<double, n + m, 1>;
    using VecTheta = Eigen::Matrix<double, p, 1>;
    ParallelRanges(num_nodes, threads, [&](int t, int begin, int end) {
      double change = 0.0, scale = 0.0;
      constexpr int kStates = VecState::RowsAtCompileTime, kInputs = VecInput::RowsAtCompileTime;
      for (int k = begin; k < end; ++k) {
        // (Fixed-size column blocks: a dynamic column costs several times as much here.)
        auto state = variables->states.template block<kStates, 1>(0, k);
        auto input = variables->inputs.template block<kInputs, 1>(0, k);
        const VecState dx = alpha * (states.template block<kStates, 1>(0, k) - state);
        const VecInput dp = alpha * (inputs.template block<kInputs, 1>(0, k) - input);
        state += dx;
        input += dp;
        change = std::max({change, dx.cwiseAbs().maxCoeff(), dp.cwiseAbs().maxCoeff()});
        scale = std::max({scale, state.cwiseAbs().maxCoeff(), input.cwiseAbs().maxCoeff()});
        if constexpr (NX > VecState::RowsAtCompileTime) {
          if (variables->mode == problems::ParameterMode::kTimeVarying) {
            const VecTheta dtheta =
                alpha * (states.col(k).template tail<VecTheta::RowsAtCompileTime>() -
                         variables->parameters.col(k));
            variables->parameters.col(k) += dtheta;
            change = std::max(change, dtheta.cwiseAbs().maxCoeff());
          }
        }
      }
      range_change[t] = change;
      range_scale[t] = scale;
    });
    double change = *std::max_element(range_change.begin(), range_change.end());
    const double scale = *std::max_element(range_scale.begin(), range_scale.end());
    if constexpr (NX > 2 * n) {
      if (variables->mode == problems::ParameterMode::kConstant) {
        // theta has no process noise: the smoothed value is the same at every node; take node 0.
        const VecTheta dtheta =
            alpha * (states.col(0).template tail<p>() - variables->parameters.col(0));
        variables->parameters.col(0) += dtheta;
        change = std::max(change, dtheta.cwiseAbs().maxCoeff());
      }
    }
    summary.iterations = iteration;
    summary.last_change = change;
    if (change <= options.tolerance * (1.0 + scale)) {
      summary.converged = true;
      break;
    }
  }
  summary.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.message = summary.converged ? "converged" : "reached max_iterations";
  return summary;
}

// Runs the iterated first-order approximation from the estimate in `variables` (its
// linearisation point; sized by problems::ResizeVariables). R0 must be positive definite.
template <class Model>
FirstOrderSmootherSummary RunFirstOrderSmoother(const Model& model,
                                                const problems::WeightedResidualData& data,
                                                const problems::WeightedResidualWeights& weights,
                                                const FirstOrderSmootherOptions& options,
                                                problems::WeightedResidualVariables* variables) {
  constexpr int n = Model::kNumPositions, p = Model::kNumParameters;
  FirstOrderSmootherSummary summary;
  std::string why;
  if (!options.IsValid(&why)) {
    summary.message = "invalid options: " + why;
    return summary;
  }
  if (!ValidateShootingInputs<Model>(data, weights, *variables, &why)) {
    summary.message = why;
    return summary;
  }
  if (variables->mode == problems::ParameterMode::kFixed) {
    return RunFirstOrderSmootherFixed<Model, 2 * n>(model, data, weights, options, variables);
  }
  return RunFirstOrderSmootherFixed<Model, 2 * n + p>(model, data, weights, options, variables);
}

template <class Model, int NX>
bool RunLinearOptimalFilterFixed(const Model& model, const problems::WeightedResidualData& data,
                                 const problems::WeightedResidualWeights& weights,
                                 problems::ParameterMode mode, const Eigen::VectorXd& fixed_theta,
                                 const LinearOptimalFilterOptions& options,
                                 LinearOptimalFilterResult* result, std::string* error) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, l = Model::kNumMeasurements;
  using Sweep = RiccatiSweep<n, NX, n + m, n + l>;
  Sweep sweep(mode, weights);
  if (!sweep.Initialize(error)) return false;
  const int num_nodes = static_cast<int>(data.time.size());
  result->states.resize(NX, num_nodes);
  result->inputs.resize(n + m, num_nodes);
  result->standard_deviation.resize(NX, num_nodes);
  typename Sweep::VecX m_prior = sweep.initial_mean(), m_post;
  typename Sweep::MatXX P_prior = sweep.initial_covariance(), P_post, transition;
  const Eigen::VectorXd node_weights = problems::TrapezoidalNodeWeights(data.time);
  typename Sweep::VecP input = Sweep::VecP::Zero();
  Eigen::VectorXd theta = fixed_theta;
  NodeLinearization<NX, n + m, n + l> node;
  typename Sweep::Elimination elimination;
  for (int k = 0; k < num_nodes; ++k) {
    typename Sweep::VecX point = m_prior;
    for (int it = 0; it < options.relinearizations; ++it) {
      if constexpr (NX > 2 * n) theta = point.template tail<NX - 2 * n>();
      node = LinearizeNode<Model, NX>(model, data, k, point.data(), input.data(), theta.data());
      if (!sweep.Eliminate(node, node_weights(k), &elimination, error)) {
        *error = "node " + std::to_string(k) + ": " + *error;
        return false;
      }
      sweep.Update(elimination, m_prior, P_prior, &m_post, &P_post);
      input = sweep.FilteredInput(elimination, m_post);
      point = m_post;
    }
    result->states.col(k) = m_post;
    result->inputs.col(k) = input;
    result->standard_deviation.col(k) = P_post.diagonal().cwiseMax(0.0).cwiseSqrt();
    if (k + 1 < num_nodes) {
      sweep.Predict(elimination, data.time(k + 1) - data.time(k), m_post, P_post, &m_prior,
                    &P_prior, &transition);
    }
  }
  return true;
}

// The on-line linear optimal filter (van de Molengraft (1990) eq. 3.16), started from q0 with Q(t0)
// = R0⁻¹ and the input estimate p̄ = 0 as first linearisation point. `mode` chooses how theta is
// treated; `fixed_theta` is used for kFixed.
template <class Model>
bool RunLinearOptimalFilter(const Model& model, const problems::WeightedResidualData& data,
                            const problems::WeightedResidualWeights& weights,
                            problems::ParameterMode mode, const Eigen::VectorXd& fixed_theta,
                            const LinearOptimalFilterOptions& options,
                            LinearOptimalFilterResult* result, std::string* error) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                l = Model::kNumMeasurements;
  if (!options.IsValid(error)) return false;
  if (fixed_theta.size() != p) {
    *error = "fixed_theta has " + std::to_string(fixed_theta.size()) + " entries, the model " +
             std::to_string(p) + " parameters";
    return false;
  }
  const int num_nodes = static_cast<int>(data.time.size());
  problems::WeightedResidualVariables scratch;  // only for validating the sizes
  problems::ResizeVariables(n, m, fixed_theta, std::max(num_nodes, 2), mode, &scratch);
  problems::WeightedResidualOptions problem_options;
  problem_options.parameter_mode = mode;
  if (!problems::ValidateWeightedResidualInputs(n, m, p, l, data, weights, problem_options, scratch,
                                                error)) {
    return false;
  }
  if (mode == problems::ParameterMode::kFixed) {
    return RunLinearOptimalFilterFixed<Model, 2 * n>(model, data, weights, mode, fixed_theta,
                                                     options, result, error);
  }
  return RunLinearOptimalFilterFixed<Model, 2 * n + p>(model, data, weights, mode, fixed_theta,
                                                       options, result, error);
}

}  // namespace internal
}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_INTERNAL_FIRST_ORDER_SMOOTHER_H_
