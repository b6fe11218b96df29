// solvers::RunForwardBackwardShooting — the forward–backward shooting solution of the
// weighted-residual optimal estimation problem (van de Molengraft (1990) §3.4), for small problems
// and as an independent cross-check of the Riccati sweep (solvers/internal/first_order_smoother.h).
//
// It works on the same multiple-shooting discretisation as RunFirstOrderSmoother and the Ceres
// transcription kShooting (zeta at the nodes with trapezoidal weights w_k V, xi piecewise
// constant with weight h_k W, x_{k+1} = Φ x_k + Γ (B p̄_k + xi_k), Φ = I + hA, Γ = h (I + hA/2)).
// With multipliers λ_{k+1} for the transitions, the stationarity conditions of the discretised
// functional about a linearisation zeta_k ≈ y_k − C_k x_k − D_k p̄_k are the discrete Hamiltonian
// (two-point boundary-value) system
//
//   xi_k  = W⁻¹ Γᵀ λ_{k+1} / h
//   p̄_k  = (w_k DᵀVD)⁻¹ (w_k DᵀV (y_k − C x_k) + BᵀΓᵀ λ_{k+1})                 (λ_N = 0)
//   x_{k+1} = Φ x_k + Γ B p̄_k + Γ W⁻¹ Γᵀ λ_{k+1} / h                      (forward)
//   λ_k  = Φᵀ λ_{k+1} + w_k Cᵀ V zeta_k,   zeta_k = y_k − C x_k − D p̄_k    (backward)
//   λ_0  = R0 (x_0 − q0)                                                     (boundary)
//
// the discrete counterpart of the continuous-time eqs. for x' and λ'. The Hamiltonian system is
// unstable when integrated in one direction, so, as in the thesis, the state equation is
// integrated forward with the costates of the previous iterate held fixed, the costate equation
// backward with the new states, and the unknown initial state μ = x_0 is found by root finding
// on s(μ) = λ_0(μ) − R0 (μ − q0). s is affine in μ for a fixed linearisation and fixed costates;
// its Jacobian is propagated exactly alongside (sensitivities ∂x_k/∂μ forward, ∂λ_k/∂μ backward),
// so Newton's method finds the root in one step (a second step confirms it). The outer loop is
// the thesis's successive substitution on the costates (with damping alpha, van de Molengraft
// (1990) eq. 3.23) and, for non-linear models, re-linearises about the new estimate each iteration.
//
// Whether the outer substitution converges depends on the coupling of states and costates
// (large W⁻¹ or input uncertainty make it slow or divergent; damping helps), and the forward
// sensitivities grow with the length of the record — hence "small problems". At a converged
// point the result is the stationary point of the same discrete functional the Riccati sweep and
// Ceres minimise, so they agree to round-off (tests/solvers/forward_backward_shooting_test.cc).
#ifndef DYNID_SOLVERS_INTERNAL_FORWARD_BACKWARD_SHOOTING_H_
#define DYNID_SOLVERS_INTERNAL_FORWARD_BACKWARD_SHOOTING_H_

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/internal/first_order_smoother.h"

namespace dynid::solvers {

struct ForwardBackwardShootingOptions {
  int max_iterations = 500;       // outer (costate substitution) iterations
  double damping = 1.0;           // alpha in (0, 1]: λ ← (1 − alpha) λ + alpha λ_new
  double tolerance = 1e-11;       // stop when the relative change of x, p̄ and λ is below this
  int max_newton_iterations = 4;  // root finding on the initial state per outer iteration
  int max_nodes = 5000;           // refuse longer records (forward sensitivities grow)
  bool IsValid(std::string* why) const;
};

struct ForwardBackwardShootingSummary {
  bool converged = false;
  int iterations = 0;          // outer iterations
  int newton_iterations = 0;   // total root-finding steps
  double last_change = 0.0;    // relative change in the last outer iteration
  double root_residual = 0.0;  // |s(μ)| / (1 + |R0 (μ − q0)|) at the last root
  double time_s = 0.0;
  std::string message;
};

namespace internal {

template <class Model, int NX>
ForwardBackwardShootingSummary RunForwardBackwardShootingFixed(
    const Model& model, const problems::WeightedResidualData& data,
    const problems::WeightedResidualWeights& weights, const ForwardBackwardShootingOptions& options,
    problems::WeightedResidualVariables* variables) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, l = Model::kNumMeasurements;
  constexpr int NP = n + m, NZ = n + l;
  using VecX = Eigen::Matrix<double, NX, 1>;
  using MatXX = Eigen::Matrix<double, NX, NX>;
  using VecP = Eigen::Matrix<double, NP, 1>;
  using MatPP = Eigen::Matrix<double, NP, NP>;
  using MatPX = Eigen::Matrix<double, NP, NX>;
  using MatXP = Eigen::Matrix<double, NX, NP>;
  using MatZZ = Eigen::Matrix<double, NZ, NZ>;
  using Node = NodeLinearization<NX, NP, NZ>;
  const auto start = std::chrono::steady_clock::now();
  ForwardBackwardShootingSummary summary;
  const problems::ParameterMode mode = variables->mode;
  const int num_nodes = variables->num_nodes();

  // Weights: R0 (any PSD matrix, also singular: the root is then found through dλ_0/dμ), W⁻¹.
  if (weights.initial.rows() != NX || weights.initial.cols() != NX ||
      weights.initial_guess.size() != NX) {
    summary.message = "forward-backward shooting needs R0 (" + std::to_string(NX) + " × " +
                      std::to_string(NX) +
                      ") and q0 (the boundary condition λ(t0) = R0 (x(t0) − q0))";
    return summary;
  }
  const MatXX R0 = weights.initial;
  const VecX q0 = weights.initial_guess;
  MatXX Q_xi = MatXX::Zero();  // W⁻¹ (and W_theta⁻¹ for kTimeVarying)
  {
    const Eigen::LLT<Eigen::MatrixXd> w(weights.kinematic);
    if (w.info() != Eigen::Success) {
      summary.message = "W must be positive definite";
      return summary;
    }
    Q_xi.template topLeftCorner<2 * n, 2 * n>() = w.solve(Eigen::MatrixXd::Identity(2 * n, 2 * n));
    if (mode == problems::ParameterMode::kTimeVarying) {
      const Eigen::LLT<Eigen::MatrixXd> wp(weights.parameter);
      if (wp.info() != Eigen::Success) {
        summary.message = "W_theta must be positive definite";
        return summary;
      }
      Q_xi.template bottomRightCorner<NX - 2 * n, NX - 2 * n>() =
          wp.solve(Eigen::MatrixXd::Identity(NX - 2 * n, NX - 2 * n));
    }
  }
  const MatZZ V = weights.residual;
  const Eigen::VectorXd node_weights = problems::TrapezoidalNodeWeights(data.time);

  std::vector<Node> nodes(num_nodes);
  std::vector<MatPP> input_information(num_nodes);  // w DᵀVD (factorised per use)
  std::vector<VecX> x(num_nodes), lambda(num_nodes + 1, VecX::Zero()), lambda_new(num_nodes + 1);
  std::vector<VecP> pbar(num_nodes);
  std::vector<MatXX> X(num_nodes);   // ∂x_k/∂μ
  std::vector<MatPX> dP(num_nodes);  // ∂p̄_k/∂μ
  std::vector<Eigen::LLT<MatPP>> input_factor(num_nodes);

  // Interval matrices Φ, Γ, ΓB for step h (A couples v into s only).
  auto interval = [&](double h, MatXX* Phi, MatXX* Gamma, MatXP* GammaB) {
    Phi->setIdentity();
    *Gamma = h * MatXX::Identity();
    GammaB->setZero();
    for (int i = 0; i < n; ++i) {
      (*Phi)(i, n + i) = h;
      (*Gamma)(i, n + i) = 0.5 * h * h;
      (*GammaB)(i, i) = 0.5 * h * h;
      (*GammaB)(n + i, i) = h;
    }
  };

  for (int iteration = 1; iteration <= options.max_iterations; ++iteration) {
    // Linearise about the current estimate.
    for (int k = 0; k < num_nodes; ++k) {
      nodes[k] = LinearizeNode<Model, NX>(model, data, k, variables->state(k), variables->input(k),
                                          variables->parameter(k));
      input_information[k] = node_weights(k) * nodes[k].D.transpose() * V * nodes[k].D;
      input_factor[k].compute(input_information[k]);
      if (input_factor[k].info() != Eigen::Success) {
        summary.message = "node " + std::to_string(k) +
                          ": FᵀVF is singular: the inputs p̄ = [a; u] are not determined by the "
                          "weighted equations of motion and measurements";
        summary.iterations = iteration;
        return summary;
      }
    }
    // The initial state of the current estimate is the first guess of the root.
    VecX mu;
    mu.template head<2 * n>() = variables->states.col(0);
    if constexpr (NX > 2 * n) {
      mu.template tail<NX - 2 * n>() =
          Eigen::Map<const Eigen::Matrix<double, NX - 2 * n, 1>>(variables->parameter(0));
    }
    double root_residual = 0.0, previous_residual = 0.0;
    for (int newton = 0; newton < options.max_newton_iterations; ++newton) {
      // Forward: states with the costates of the previous iterate; sensitivities to μ.
      x[0] = mu;
      X[0].setIdentity();
      MatXX Phi, Gamma;
      MatXP GammaB;
      for (int k = 0; k < num_nodes; ++k) {
        const Node& node = nodes[k];
        const double w = node_weights(k);
        const bool last = k + 1 == num_nodes;
        const double h = last ? 0.0 : data.time(k + 1) - data.time(k);
        if (!last) interval(h, &Phi, &Gamma, &GammaB);
        VecP rhs = w * node.D.transpose() * (V * (node.y - node.C * x[k]));
        if (!last) rhs += GammaB.transpose() * lambda[k + 1];
        pbar[k] = input_factor[k].solve(rhs);
        dP[k] = input_factor[k].solve(-w * node.D.transpose() * (V * node.C) * X[k]);
        if (!last) {
          x[k + 1] = Phi * x[k] + GammaB * pbar[k] +
                     Gamma * (Q_xi * (Gamma.transpose() * lambda[k + 1])) / h;
          X[k + 1] = Phi * X[k] + GammaB * dP[k];
        }
      }
      // Backward: costates with the new states; their sensitivities.
      lambda_new[num_nodes].setZero();
      MatXX Lambda = MatXX::Zero();
      for (int k = num_nodes - 1; k >= 0; --k) {
        const Node& node = nodes[k];
        const double w = node_weights(k);
        const Eigen::Matrix<double, NZ, 1> zeta = node.y - node.C * x[k] - node.D * pbar[k];
        const Eigen::Matrix<double, NZ, NX> dzeta = -node.C * X[k] - node.D * dP[k];
        if (k + 1 < num_nodes) {
          interval(data.time(k + 1) - data.time(k), &Phi, &Gamma, &GammaB);
          lambda_new[k] = Phi.transpose() * lambda_new[k + 1];
          Lambda = (Phi.transpose() * Lambda).eval();
        } else {
          lambda_new[k].setZero();
          Lambda.setZero();
        }
        lambda_new[k] += w * node.C.transpose() * (V * zeta);
        Lambda += w * node.C.transpose() * (V * dzeta);
      }
      // s(μ) = λ_0 − R0 (μ − q0); ∂s/∂μ = ∂λ_0/∂μ − R0.
      const VecX boundary = R0 * (mu - q0);
      const VecX s = lambda_new[0] - boundary;
      root_residual =
          s.cwiseAbs().maxCoeff() /
          (1.0 + std::max(boundary.cwiseAbs().maxCoeff(), lambda_new[0].cwiseAbs().maxCoeff()));
      ++summary.newton_iterations;
      // s is affine in μ: one step lands on the root up to round-off; stop at the round-off
      // floor (no tenfold decrease any more).
      if (root_residual <= 1e-13 || (newton > 0 && root_residual > 0.1 * previous_residual)) break;
      previous_residual = root_residual;
      const Eigen::FullPivLU<MatXX> jacobian(Lambda - R0);
      if (!jacobian.isInvertible()) {
        summary.message =
            "the shooting function s(μ) has a singular Jacobian: the initial state "
            "is not determined (R0 and the data leave a direction free)";
        summary.iterations = iteration;
        return summary;
      }
      mu -= jacobian.solve(s);
    }
    summary.root_residual = root_residual;

    // Successive substitution on the costates, with damping; new states and inputs.
    const double alpha = options.damping;
    double change = 0.0, state_scale = 0.0, lambda_change = 0.0, lambda_scale = 0.0;
    for (int k = 0; k <= num_nodes; ++k) {
      const VecX step = alpha * (lambda_new[k] - lambda[k]);
      lambda[k] += step;
      lambda_change = std::max(lambda_change, step.cwiseAbs().maxCoeff());
      lambda_scale = std::max(lambda_scale, lambda[k].cwiseAbs().maxCoeff());
    }
    for (int k = 0; k < num_nodes; ++k) {
      const Eigen::Matrix<double, 2 * n, 1> dx =
          x[k].template head<2 * n>() - variables->states.col(k);
      const VecP dp = pbar[k] - variables->inputs.col(k);
      variables->states.col(k) = x[k].template head<2 * n>();
      variables->inputs.col(k) = pbar[k];
      change = std::max({change, dx.cwiseAbs().maxCoeff(), dp.cwiseAbs().maxCoeff()});
      state_scale = std::max({state_scale, variables->states.col(k).cwiseAbs().maxCoeff(),
                              variables->inputs.col(k).cwiseAbs().maxCoeff()});
      if constexpr (NX > 2 * n) {
        if (mode == problems::ParameterMode::kTimeVarying || k == 0) {
          Eigen::Map<Eigen::Matrix<double, NX - 2 * n, 1>> theta(variables->parameter(k));
          change =
              std::max(change, (x[k].template tail<NX - 2 * n>() - theta).cwiseAbs().maxCoeff());
          theta = x[k].template tail<NX - 2 * n>();
        }
      }
    }
    summary.iterations = iteration;
    summary.last_change =
        std::max(change / (1.0 + state_scale), lambda_change / (1.0 + lambda_scale));
    bool finite = std::isfinite(summary.last_change) && std::isfinite(root_residual);
    for (int k = 0; k < num_nodes && finite; ++k) {
      finite = x[k].allFinite() && pbar[k].allFinite() && lambda[k].allFinite();
    }
    if (!finite) {
      summary.message = "diverged (non-finite states or costates); try damping < 1";
      return summary;
    }
    if (summary.last_change <= options.tolerance) {
      summary.converged = true;
      break;
    }
  }
  summary.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.message = summary.converged ? "converged" : "reached max_iterations";
  return summary;
}

// Runs forward–backward shooting from the estimate in `variables` (its first linearisation point,
// sized by problems::ResizeVariables). Needs R0 and q0 in `weights` (any PSD R0).
template <class Model>
ForwardBackwardShootingSummary RunForwardBackwardShooting(
    const Model& model, const problems::WeightedResidualData& data,
    const problems::WeightedResidualWeights& weights, const ForwardBackwardShootingOptions& options,
    problems::WeightedResidualVariables* variables) {
  constexpr int n = Model::kNumPositions, p = Model::kNumParameters;
  ForwardBackwardShootingSummary summary;
  std::string why;
  if (!options.IsValid(&why)) {
    summary.message = "invalid options: " + why;
    return summary;
  }
  if (!ValidateShootingInputs<Model>(data, weights, *variables, &why)) {
    summary.message = why;
    return summary;
  }
  if (variables->num_nodes() > options.max_nodes) {
    summary.message = "forward-backward shooting is for small problems: " +
                      std::to_string(variables->num_nodes()) +
                      " nodes > max_nodes = " + std::to_string(options.max_nodes);
    return summary;
  }
  if (variables->mode == problems::ParameterMode::kFixed) {
    return RunForwardBackwardShootingFixed<Model, 2 * n>(model, data, weights, options, variables);
  }
  return RunForwardBackwardShootingFixed<Model, 2 * n + p>(model, data, weights, options,
                                                           variables);
}

}  // namespace internal
}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_INTERNAL_FORWARD_BACKWARD_SHOOTING_H_
