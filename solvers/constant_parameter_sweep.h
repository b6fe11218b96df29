// solvers::ConstantParameterSweep — the linear–quadratic step of the first-order approximation
// (first_order_smoother.h) for a constant, estimated theta, solved without carrying theta in
// the Riccati state.
//
// RiccatiSweep<N, 2N + p, ...> solves the same problem with theta as p extra states of zero
// process noise: an (2N + p)-state covariance sweep. Here theta is conditioned on instead
// (Friedland's separate-bias estimation, in smoother form):
//   1. For a fixed theta the problem in the dynamic states d = [s; v] is an ordinary linear
//      Gaussian state-space problem whose filter covariances P⁻, P⁺ (2N × 2N) do not depend on
//      theta, and whose means are affine in theta: m(theta) = E [1; theta] (E is 2N × (1 + p)).
//      The forward sweep propagates P and E (the p theta columns of E are the sensitivity of the
//      filtered state to theta).
//   2. The whitened innovations are affine in theta too, nu_k(theta) = Nu_k [1; theta], and the
//      cost minimised over d for fixed theta is |theta − q0_theta|²_{P0_thetatheta⁻¹} +
//      Σ_k |nu_k(theta)|² (the profile cost), so theta-hat solves one p × p system built from
//      Σ_k Nu_kᵀ Nu_k.
//   3. The backward sweep runs on the 2N dynamic states at theta = theta-hat, in the
//      Rauch–Tung–Striebel form x_k = m⁺_k + J_k (x_{k+1} − m⁻_{k+1}), J_k = P⁺_k Āᵀ (P⁻_{k+1})⁻¹;
//      with m(theta) affine this is x_k = D_k [1; theta-hat] + J_k x_{k+1}, D_k = E⁺_k − J_k E⁻_{k+1},
//      so only J_k and D_k (2N × 2N and 2N × (1 + p)) and the input elimination (its square-root
//      factor R, Rc) are stored per node (~1.3 kB for the xy-table size, against ~3.4 kB for the
//      augmented sweep). P⁻ = Ā P⁺ Āᵀ + Γ W⁻¹ Γᵀ / h + ... is positive definite because W is.
// The minimiser of the joint problem over (d, theta) is (d-hat(theta-hat), theta-hat), so the
// result equals that of the augmented sweep up to round-off (tested to 1e-8 in
// constant_parameter_sweep_test.cc), with 2N instead of 2N + p states in every covariance
// product. The prior R0 may couple d_0 and theta: d_0 | theta is Gaussian with mean
// q0_d + P0_dθ P0_θθ⁻¹ (theta − q0_θ) and covariance P0_dd − P0_dθ P0_θθ⁻¹ P0_θd.
#ifndef DYNID_SOLVERS_CONSTANT_PARAMETER_SWEEP_H_
#define DYNID_SOLVERS_CONSTANT_PARAMETER_SWEEP_H_

#include <optional>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <glog/logging.h>

#include "problems/weighted_residual_problem.h"
#include "solvers/node_pipeline.h"
#include "solvers/riccati_sweep.h"

namespace dynid::solvers {

// N positions, NT estimated (constant) parameters, NP = n + m inputs, NZ = n + l residuals.
template <int N, int NT, int NP, int NZ>
class ConstantParameterSweep {
 public:
  static constexpr int ND = 2 * N;       // dynamic states [s; v]
  static constexpr int NX = ND + NT;     // the augmented state of the linearisation
  static constexpr int NE = NT + 1;      // columns of an affine function of theta
  using Base = RiccatiSweep<N, NX, NP, NZ>;
  static constexpr int NU = Base::NU;
  using Node = typename Base::Node;
  using Elimination = typename Base::Elimination;
  using MatDD = Eigen::Matrix<double, ND, ND>;
  using MatDE = Eigen::Matrix<double, ND, NE>;
  using MatUD = Eigen::Matrix<double, NU, ND>;
  using MatUE = Eigen::Matrix<double, NU, NE>;
  using MatEE = Eigen::Matrix<double, NE, NE>;
  using VecD = Eigen::Matrix<double, ND, 1>;
  using VecE = Eigen::Matrix<double, NE, 1>;
  using VecX = Eigen::Matrix<double, NX, 1>;

  explicit ConstantParameterSweep(const problems::WeightedResidualWeights& weights)
      : base_(problems::ParameterMode::kConstant, weights) {}

  // False with a message for invalid weights (see RiccatiSweep::Initialize).
  bool Initialize(std::string* error) {
    if (!base_.Initialize(error)) return false;
    const auto& P0 = base_.initial_covariance();
    const VecX& q0 = base_.initial_mean();
    const Eigen::Matrix<double, NT, NT> P_tt = P0.template bottomRightCorner<NT, NT>();
    Eigen::LLT<Eigen::Matrix<double, NT, NT>> llt(P_tt);
    if (llt.info() != Eigen::Success) {
      *error = "the theta block of R0⁻¹ is not positive definite";
      return false;
    }
    // K = P0_dθ P0_θθ⁻¹; d_0 | theta ~ N(q0_d + K (theta − q0_θ), P0_dd − K P0_θd).
    const Eigen::Matrix<double, ND, NT> K =
        llt.solve(P0.template topRightCorner<ND, NT>().transpose()).transpose();
    prior_covariance_ = P0.template topLeftCorner<ND, ND>() -
                        K * P0.template topRightCorner<ND, NT>().transpose();
    prior_covariance_ = 0.5 * (prior_covariance_ + prior_covariance_.transpose()).eval();
    prior_mean_.col(0) = q0.template head<ND>() - K * q0.template tail<NT>();
    prior_mean_.template rightCols<NT>() = K;
    // |theta − q0_θ|²_Λ with Λ = P0_θθ⁻¹, written as [1; theta]ᵀ G0 [1; theta].
    const Eigen::Matrix<double, NT, NT> Lambda =
        llt.solve(Eigen::Matrix<double, NT, NT>::Identity());
    const Eigen::Matrix<double, NT, 1> q0_theta = q0.template tail<NT>();
    prior_gram_(0, 0) = q0_theta.dot(Lambda * q0_theta);
    prior_gram_.template bottomLeftCorner<NT, 1>() = -Lambda * q0_theta;
    prior_gram_.template topRightCorner<1, NT>() = (-Lambda * q0_theta).transpose();
    prior_gram_.template bottomRightCorner<NT, NT>() = Lambda;
    return true;
  }

  // Forward sweep, theta-hat, backward sweep: states ((2N + p) × N, theta-hat in the last p
  // rows of every column) and inputs (NP × N), for the linearisation of node k given by
  // linearize(k, &node), called once per node in increasing k. With num_threads > 1 (and enough
  // nodes), linearize and the elimination of p̄ run on a worker thread ahead of the sweep
  // (node_pipeline.h), so linearize must then be safe to call from another thread, and the
  // smoothed inputs are computed on num_threads threads; the result does not depend on it.
  template <class Linearize>
  bool SmoothLinearized(const Eigen::VectorXd& time, Linearize&& linearize,
                        Eigen::MatrixXd* states, Eigen::MatrixXd* inputs, std::string* error,
                        int num_threads = 1) const {
    const int num_nodes = static_cast<int>(time.size());
    CHECK_GE(num_nodes, 1) << "expected at least one node";
    const Eigen::VectorXd node_weights = problems::TrapezoidalNodeWeights(time);
    std::vector<Store>& store = store_;
    store.resize(num_nodes);
    Node node;  // used by one thread at a time: the pipeline's worker, or this one
    auto produce = [&](int k, Elimination* e, std::string* why) {
      linearize(k, &node);
      if (!base_.Eliminate(node, node_weights(k), e, why)) {
        *why = "node " + std::to_string(k) + ": " + *why;
        return false;
      }
      store[k].input = e->factor;
      return true;
    };
    std::optional<NodePipeline<Elimination>> pipeline;
    if (num_threads > 1 && num_nodes >= 2 * kMinNodesPerThread) {
      pipeline.emplace(num_nodes, kPipelineCapacity);
      pipeline->Start(produce);
    }
    MatDD P_prior = prior_covariance_, P_post, T;
    MatDE E_prior = prior_mean_, E_post;
    MatEE gram = prior_gram_;
    MatUE Nu;
    Elimination inline_elimination;
    for (int k = 0; k < num_nodes; ++k) {
      const Elimination* node_elimination = &inline_elimination;
      if (pipeline) {
        node_elimination = pipeline->Wait(k);
        if (node_elimination == nullptr) {
          *error = pipeline->error();
          return false;
        }
      } else if (!produce(k, &inline_elimination, error)) {
        return false;
      }
      const Elimination& e = *node_elimination;
      Store& s = store[k];
      Update(e, P_prior, E_prior, &P_post, &E_post, &Nu);
      gram.template triangularView<Eigen::Lower>() += Nu.transpose().lazyProduct(Nu);
      if (k + 1 == num_nodes) {
        s.J.setZero();
        s.D = E_post;
        break;
      }
      Predict(e, time(k + 1) - time(k), P_post, E_post, &T, &P_prior, &E_prior);
      if (pipeline) pipeline->Release(k);
      // Jᵀ = (P⁻)⁻¹ Ā P⁺.
      MatDD factor = P_prior;
      if (!internal::CholeskyInPlace(&factor)) {
        *error = "node " + std::to_string(k + 1) + ": the predicted covariance is not positive "
                 "definite";
        return false;
      }
      internal::LowerSolveInPlace(factor, &T);
      internal::LowerTransposeSolveInPlace(factor, &T);
      s.J = T.transpose();
      s.D = E_post - s.J.lazyProduct(E_prior);
    }
    pipeline.reset();
    // theta-hat minimises [1; theta]ᵀ gram [1; theta].
    const Eigen::Matrix<double, NT, NT> gram_tt =
        gram.template bottomRightCorner<NT, NT>().template selfadjointView<Eigen::Lower>();
    Eigen::LLT<Eigen::Matrix<double, NT, NT>> llt(gram_tt);
    if (llt.info() != Eigen::Success) {
      *error = "the information matrix of theta is not positive definite";
      return false;
    }
    VecE one_theta;
    one_theta(0) = 1.0;
    one_theta.template tail<NT>() = -llt.solve(gram.template bottomLeftCorner<NT, 1>());
    // Backward sweep at theta-hat: the states in order, then the inputs (independent per node).
    states->resize(NX, num_nodes);
    inputs->resize(NP, num_nodes);
    VecD x_next = VecD::Zero();  // (not read at the last node)
    for (int k = num_nodes - 1; k >= 0; --k) {
      const Store& s = store[k];
      VecD x = s.D.lazyProduct(one_theta);
      if (k + 1 < num_nodes) x += s.J.lazyProduct(x_next);
      // Fixed-size destination blocks (a dynamic column trips GCC 12's -Wstringop-overread).
      states->template block<ND, 1>(0, k) = x;
      states->template block<NT, 1>(ND, k) = one_theta.template tail<NT>();
      x_next = x;
    }
    auto smoothed_input = [&](int k) {
      const VecX x = states->template block<NX, 1>(0, k);
      if (k + 1 < num_nodes) {
        const VecX x_next = states->template block<NX, 1>(0, k + 1);
        inputs->template block<NP, 1>(0, k) =
            base_.SmoothedInput(store[k].input, time(k + 1) - time(k), x, x_next);
      } else {
        inputs->template block<NP, 1>(0, k) = base_.FilteredInput(store[k].input, x);
      }
    };
    ParallelFor(num_nodes, num_nodes >= 2 * kMinNodesPerThread ? num_threads : 1,
                smoothed_input);
    return true;
  }

 private:
  static constexpr int kPipelineCapacity = 256;   // eliminated nodes in flight

  // What the forward sweep leaves at a node for the backward sweep.
  struct Store {
    Store() {}  // no zero-fill in std::vector<Store>(n)
    MatDD J;   // smoother gain P⁺ Āᵀ (P⁻_{k+1})⁻¹ (zero at the last node)
    MatDE D;   // E⁺_k − J E⁻_{k+1}
    typename Base::InputFactor input;  // p̄ | x (square-root form)
  };

  // Measurement update (whitened, unit noise) of P and E, with H = [H_d | H_θ]; Nu gives the
  // whitened innovation nu(theta) = Nu [1; theta] = L⁻¹ (y_white − H_θ theta − H_d m⁻(theta)),
  // S = H_d P⁻ H_dᵀ + I = L Lᵀ.
  void Update(const Elimination& e, const MatDD& P_prior, const MatDE& E_prior, MatDD* P_post,
              MatDE* E_post, MatUE* Nu) const {
    const auto H_d = e.H.template leftCols<ND>();
    // [A | Nu] = L⁻¹ [H_d P⁻ | y_white − H_d E⁻_1 | −H_θ − H_d E⁻_θ], solved together.
    Eigen::Matrix<double, NU, ND + NE> A_Nu;
    A_Nu.template leftCols<ND>() = H_d.lazyProduct(P_prior);
    Eigen::Matrix<double, NU, NU> S = A_Nu.template leftCols<ND>().lazyProduct(H_d.transpose());
    S.diagonal().array() += 1.0;
    internal::CholeskyInPlace(&S);  // S ≥ I
    A_Nu.col(ND) = e.y_white;
    A_Nu.template rightCols<NT>() = -e.H.template rightCols<NT>();
    A_Nu.template rightCols<NE>() -= H_d.lazyProduct(E_prior);
    internal::LowerSolveInPlace(S, &A_Nu);
    const MatUD A = A_Nu.template leftCols<ND>();
    *Nu = A_Nu.template rightCols<NE>();
    *E_post = E_prior + A.transpose().lazyProduct(*Nu);
    internal::SymmetricDowndate(P_prior, A, P_post);
  }

  // Prediction over h: d' = Ā_d d + Ā_θ theta + ΓB K_p y with Ā_d = Φ − ΓB K_p C_d,
  // Ā_θ = −ΓB K_p C_θ (only the acceleration rows K_a of K_p enter, see RiccatiSweep::Predict).
  // Also returns T = Ā_d P⁺.
  void Predict(const Elimination& e, double h, const MatDD& P_post, const MatDE& E_post,
               MatDD* transition_times_covariance, MatDD* P_prior, MatDE* E_prior) const {
    const double half_h2 = 0.5 * h * h;
    const Eigen::Matrix<double, N, ND> KC_d = e.KaCy.template leftCols<ND>();
    // Input mean as an affine function of theta: K_a (y − C_d m⁺(theta) − C_θ theta).
    Eigen::Matrix<double, N, NE> input;
    input.col(0) = e.Kay();
    input.template rightCols<NT>() = -e.KaCy.template middleCols<NT>(ND);
    input -= KC_d.lazyProduct(E_post);
    MatDE& E = *E_prior;
    E.template topRows<N>() =
        E_post.template topRows<N>() + h * E_post.template bottomRows<N>() + half_h2 * input;
    E.template bottomRows<N>() = E_post.template bottomRows<N>() + h * input;
    // P⁻ = Ā_d P⁺ Ā_dᵀ + ΓB G⁻¹ ΓBᵀ + Γ W⁻¹ Γᵀ / h.
    const Eigen::Matrix<double, N, ND> KCP = KC_d.lazyProduct(P_post);
    MatDD& T = *transition_times_covariance;
    T.template topRows<N>() = P_post.template topRows<N>() +
                              h * P_post.template bottomRows<N>() - half_h2 * KCP;
    T.template bottomRows<N>() = P_post.template bottomRows<N>() - h * KCP;
    const Eigen::Matrix<double, ND, N> TKCt = T.lazyProduct(KC_d.transpose());
    MatDD& P = *P_prior;
    P.template leftCols<N>() =
        T.template leftCols<N>() + h * T.template rightCols<N>() - half_h2 * TKCt;
    P.template rightCols<N>() = T.template rightCols<N>() - h * TKCt;
    P += h * base_.Q_xi_unit_.template topLeftCorner<ND, ND>() +
         half_h2 * base_.Q_xi_cross_.template topLeftCorner<ND, ND>() +
         (0.5 * h * half_h2) * base_.Q_xi_outer_.template topLeftCorner<ND, ND>();
    internal::AddInputNoiseAndSymmetrize(e.Gaa, h, &P);
  }

  Base base_;
  MatDD prior_covariance_;
  MatDE prior_mean_;
  MatEE prior_gram_;
  mutable std::vector<Store> store_;  // per-node storage, reused between calls
};

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_CONSTANT_PARAMETER_SWEEP_H_
