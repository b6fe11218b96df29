// solvers::RunFirstOrderSmoother and solvers::RunLinearOptimalFilter — van de Molengraft's
// first-order approximation of the weighted-residual optimal estimator (van de Molengraft (1990)
// §3.3–3.5) and the on-line linear optimal filter (van de Molengraft (1990) eq. 3.16).
//
// Both solve the multiple-shooting discretisation of problems/weighted_residual_problem.h
// (Transcription::kShooting): for the same data and weights the smoother reaches the stationary
// point of exactly the functional that solvers::SolveWeightedResidual minimises with Ceres.
//
// The smoother linearises the residuals about the current estimate, solves the linear–quadratic
// problem by a forward Riccati sweep (the input p̄ eliminated node by node) and a backward
// Rauch–Tung–Striebel sweep, and iterates the linearisation with numerical damping alpha
// (van de Molengraft (1990) eq. 3.23) until the estimate stops changing: a Gauss–Newton fixed
// point. The filter runs only the forward sweep and returns x̂(t_k | t_0..t_k).
//
// The sweeps are compiled for fixed state sizes with vectorised kernels, so the library provides
// them for the thesis's example models it ships: models::MassSpringDamper, RtManipulatorRigid,
// UnknownForceMass and XyTableFlexible (kHasFirstOrderSweeps; another model fails to compile
// with a message saying so). A model of your own is estimated from the same
// functional with problems::BuildWeightedResidualProblem and solvers::SolveWeightedResidual,
// which need only the public headers; the filters for your own model are the sliding-surface
// filter (solvers/sliding_surface_filter.h) and the extended/unscented Kalman filters on
// solvers::AugmentedMechanicalSystem (solvers/mechanical_state_space.h).
#ifndef DYNID_SOLVERS_FIRST_ORDER_SMOOTHER_H_
#define DYNID_SOLVERS_FIRST_ORDER_SMOOTHER_H_

#include <Eigen/Core>
#include <string>
#include <type_traits>
#include <variant>

#include "dynid/models/mass_spring_damper.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/models/unknown_force_mass.h"
#include "dynid/models/xy_table.h"
#include "dynid/problems/weighted_residual_problem.h"

namespace dynid::solvers {

struct FirstOrderSmootherOptions {
  int max_iterations = 50;
  double damping = 1.0;      // alpha_i of van de Molengraft (1990) eq. 3.23, in (0, 1]
  double tolerance = 1e-10;  // stop when max |change| <= tolerance (1 + max |value|)
  // Constant theta only: kConditionedOnTheta (default) runs the Riccati sweep on the 2n dynamic
  // states with theta's sensitivity carried alongside and theta solved from a p × p system;
  // kAugmented carries theta as p states of zero process noise. Both solve the same
  // linear–quadratic problem at every iteration.
  enum class Sweep { kConditionedOnTheta, kAugmented };
  Sweep sweep = Sweep::kConditionedOnTheta;
  // Threads of each iteration: with more than one (constant theta, the conditioned sweep), the
  // linearisation of the nodes and the elimination of their inputs run ahead of the sequential
  // Riccati sweep, the smoothed inputs are recovered behind the backward sweep, and the damped
  // update runs on all threads. Two threads use what there is; more only speed up the damped
  // update. Results do not depend on the thread count.
  int num_threads = 1;
  bool IsValid(std::string* why) const;
};

struct FirstOrderSmootherSummary {
  bool converged = false;
  int iterations = 0;
  double last_change = 0.0;  // max |x_{i+1} − x_i| over states, inputs and theta
  double time_s = 0.0;
  std::string message;
};

struct LinearOptimalFilterOptions {
  int relinearizations = 2;  // linearisations per node (1 = plain extended filter)
  bool IsValid(std::string* why) const;
};

struct LinearOptimalFilterResult {
  Eigen::MatrixXd states;              // (2n [+ p]) × N, x̂(t_k | data up to t_k)
  Eigen::MatrixXd inputs;              // (n + m) × N, p̂(t_k)
  Eigen::MatrixXd standard_deviation;  // (2n [+ p]) × N, sqrt(diag Q(t_k)) after the update
};

namespace internal {

// The library's models the sweeps are compiled for, by reference (first_order_smoother.cc).
using FirstOrderModel =
    std::variant<const models::MassSpringDamper*, const models::RtManipulatorRigid*,
                 const models::UnknownForceMass*, const models::XyTableFlexible*>;

template <class Model, class Variant>
struct IsAlternative;
template <class Model, class... Alternatives>
struct IsAlternative<Model, std::variant<Alternatives...>>
    : std::bool_constant<(std::is_same_v<const Model*, Alternatives> || ...)> {};

FirstOrderSmootherSummary RunFirstOrderSmootherOn(FirstOrderModel model,
                                                  const problems::WeightedResidualData& data,
                                                  const problems::WeightedResidualWeights& weights,
                                                  const FirstOrderSmootherOptions& options,
                                                  problems::WeightedResidualVariables* variables);
bool RunLinearOptimalFilterOn(FirstOrderModel model, const problems::WeightedResidualData& data,
                              const problems::WeightedResidualWeights& weights,
                              problems::ParameterMode mode, const Eigen::VectorXd& fixed_theta,
                              const LinearOptimalFilterOptions& options,
                              LinearOptimalFilterResult* result, std::string* error);

}  // namespace internal

// True for the models the first-order sweeps are compiled for.
template <class Model>
inline constexpr bool kHasFirstOrderSweeps =
    internal::IsAlternative<Model, internal::FirstOrderModel>::value;

// Runs the iterated first-order approximation from the estimate in `variables` (its first
// linearisation point, sized by problems::ResizeVariables); the weights' R0 must be positive
// definite. Invalid options or inputs come back in summary.message with converged = false.
template <class Model>
FirstOrderSmootherSummary RunFirstOrderSmoother(const Model& model,
                                                const problems::WeightedResidualData& data,
                                                const problems::WeightedResidualWeights& weights,
                                                const FirstOrderSmootherOptions& options,
                                                problems::WeightedResidualVariables* variables) {
  static_assert(kHasFirstOrderSweeps<Model>,
                "the first-order sweeps are compiled for the library's models only; estimate "
                "a model of your own with solvers::SolveWeightedResidual");
  return internal::RunFirstOrderSmootherOn(&model, data, weights, options, variables);
}

// The on-line linear optimal filter (van de Molengraft (1990) eq. 3.16), started from q0 with
// Q(t0) = R0⁻¹ and the input estimate p̄ = 0 as first linearisation point. `mode` chooses how
// theta is treated; `fixed_theta` (the model's p parameters) is used for kFixed. False with the
// reason in *error on invalid options or inputs, or when a node cannot be eliminated.
template <class Model>
bool RunLinearOptimalFilter(const Model& model, const problems::WeightedResidualData& data,
                            const problems::WeightedResidualWeights& weights,
                            problems::ParameterMode mode, const Eigen::VectorXd& fixed_theta,
                            const LinearOptimalFilterOptions& options,
                            LinearOptimalFilterResult* result, std::string* error) {
  static_assert(kHasFirstOrderSweeps<Model>,
                "the linear optimal filter is compiled for the library's models only; filter a "
                "model of your own with solvers::RunSlidingSurfaceFilter or an extended Kalman "
                "filter on solvers::AugmentedMechanicalSystem");
  return internal::RunLinearOptimalFilterOn(&model, data, weights, mode, fixed_theta, options,
                                            result, error);
}

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_FIRST_ORDER_SMOOTHER_H_
