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

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <glog/logging.h>

#include "problems/weighted_residual_problem.h"
#include "solvers/node_pipeline.h"
#include "solvers/riccati_sweep.h"
#include "solvers/simd_kernels.h"

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
  // nodes), linearize and the elimination of p̄ run ahead of the sweep on a worker thread and,
  // when the sweep would wait for them, on the sweep's own thread (node_pipeline.h), so
  // linearize must then be safe to call concurrently, and the smoothed inputs are computed on a
  // second thread behind the backward sweep; the result does not depend on num_threads.
  template <class Linearize>
  bool SmoothLinearized(const Eigen::VectorXd& time, Linearize&& linearize,
                        Eigen::MatrixXd* states, Eigen::MatrixXd* inputs, std::string* error,
                        int num_threads = 1) const {
    const int num_nodes = static_cast<int>(time.size());
    CHECK_GE(num_nodes, 1) << "expected at least one node";
    const Eigen::VectorXd node_weights = problems::TrapezoidalNodeWeights(time);
    store_.resize(num_nodes);
    const bool wide = simd::UseWideKernels();
    ProducerScratch scratch[2];  // one per producing thread (node_pipeline.h)
    auto produce = [&](int k, NodeTerms* terms, std::string* why, int producer) {
      ProducerScratch* own = &scratch[producer];
      return wide ? ProduceWide(linearize, time, node_weights, k, own, terms, why)
                  : ProducePortable(linearize, time, node_weights, k, own, terms, why);
    };
    MatEE gram;
    bool ok;
    if (num_threads > 1 && num_nodes >= 2 * kMinNodesPerThread) {
      NodePipeline<NodeTerms> pipeline(num_nodes, kPipelineCapacity);
      pipeline.Start(produce);
      auto next = [&](int k, std::string* why) -> const NodeTerms* {
        const NodeTerms* terms = pipeline.Wait(k);
        if (terms == nullptr) *why = pipeline.error();
        return terms;
      };
      auto release = [&](int k) {
        pipeline.Release(k);
        if (k + 2 < num_nodes) pipeline.Prefetch(k + 2);
      };
      ok = wide ? ForwardWide(time, next, release, &gram, error)
                : ForwardPortable(time, next, release, &gram, error);
    } else {
      NodeTerms terms;
      auto next = [&](int k, std::string* why) -> const NodeTerms* {
        return produce(k, &terms, why, 0) ? &terms : nullptr;
      };
      auto release = [](int) {};
      ok = wide ? ForwardWide(time, next, release, &gram, error)
                : ForwardPortable(time, next, release, &gram, error);
    }
    if (!ok) return false;
    const std::vector<Store>& store = store_;
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
    // Backward sweep at theta-hat (sequential), then the smoothed inputs (independent per node
    // once x_k and x_{k+1} are known), in chunks of kInputChunk nodes. With more than one thread
    // a second thread computes the inputs right behind the backward sweep, from the last chunk
    // down, while this thread runs the sweep and then takes chunks from the first one up; each
    // chunk is claimed once through its flag.
    states->resize(NX, num_nodes);
    inputs->resize(NP, num_nodes);
    auto smoothed_input = [&](int k) DYNID_LAMBDA_INLINE {
      const VecX x = states->template block<NX, 1>(0, k);
      if (k + 1 < num_nodes) {
        const VecX x_next = states->template block<NX, 1>(0, k + 1);
        inputs->template block<NP, 1>(0, k) =
            base_.SmoothedInput(store[k].input, time(k + 1) - time(k), x, x_next);
      } else {
        inputs->template block<NP, 1>(0, k) = base_.FilteredInput(store[k].input, x);
      }
    };
    const int num_chunks = (num_nodes + kInputChunk - 1) / kInputChunk;
    std::unique_ptr<std::atomic<bool>[]> claimed(new std::atomic<bool>[num_chunks]);
    for (int c = 0; c < num_chunks; ++c) claimed[c].store(false, std::memory_order_relaxed);
    // Claims chunk c; computes its inputs if that succeeded.
    auto inputs_of_chunk = [&](int c) {
      if (claimed[c].exchange(true)) return false;
      auto chunk = [&]() DYNID_LAMBDA_INLINE {
        const int end = std::min(num_nodes, (c + 1) * kInputChunk);
        for (int k = c * kInputChunk; k < end; ++k) smoothed_input(k);
      };
      if (wide) {
        simd::CallWide(chunk);
      } else {
        simd::CallPortable(chunk);
      }
      return true;
    };
    std::atomic<int> solved_from{num_nodes};  // states of nodes >= solved_from are final
    std::thread follower;
    if (num_threads > 1 && num_nodes >= 2 * kMinNodesPerThread) {
      follower = std::thread([&]() {
        for (int c = num_chunks - 1; c >= 0; --c) {
          while (solved_from.load(std::memory_order_acquire) > c * kInputChunk) {
            std::this_thread::yield();
          }
          if (!inputs_of_chunk(c)) return;  // the sweep's thread got here first
        }
      });
    }
    VecD x_next = VecD::Zero();  // (not read at the last node)
    for (int k = num_nodes - 1; k >= 0; --k) {
      const Store& s = store[k];
      VecD x = s.D.lazyProduct(one_theta);
      if (k + 1 < num_nodes) x += s.J.lazyProduct(x_next);
      // Fixed-size destination blocks (a dynamic column trips GCC 12's -Wstringop-overread).
      states->template block<ND, 1>(0, k) = x;
      states->template block<NT, 1>(ND, k) = one_theta.template tail<NT>();
      x_next = x;
      if (k % kInputChunk == 0) solved_from.store(k, std::memory_order_release);
    }
    for (int c = 0; c < num_chunks; ++c) {
      if (!inputs_of_chunk(c)) break;  // the follower computed the rest
    }
    if (follower.joinable()) follower.join();
    return true;
  }

 private:
  static constexpr int kPipelineCapacity = 64;   // nodes in flight (~2 kB each)
  static constexpr int kInputChunk = 64;         // nodes per claim of the smoothed inputs
  // The per-node blocks are column-major with columns padded to whole packets
  // (simd_kernels.h); the covariance and the transposed mean coefficients are stacked,
  // [P; −Eᵀ] (PD + PE rows), so that one product updates both.
  static constexpr int PD = simd::PaddedRows(ND);
  static constexpr int PE = simd::PaddedRows(NE);
  static constexpr int PU = simd::PaddedRows(NU);
  static constexpr int SR = PD + PE;

  // What the forward sweep needs of node k besides its own recursion, made from the node's
  // elimination (by either thread of the pipeline when there is one).
  struct NodeTerms {
    NodeTerms() {  // padding rows stay zero from here on
      H.SetZero();
      Yt.SetZero();
      Abar.SetZero();
      Bt.SetZero();
      Q.SetZero();
    }
    simd::Block<PU, ND> H;     // H_d (NU rows)
    simd::Block<PE, NU> Yt;    // [y_white | −H_θ]ᵀ
    simd::Block<PD, ND> Abar;  // Ā_d = Φ − ΓB K_a C_d over h_k
    simd::Block<PE, ND> Bt;    // [ΓB K_a y | −ΓB K_a C_θ]ᵀ
    simd::Block<PD, ND> Q;     // Γ W⁻¹ Γᵀ / h + ΓB G⁻¹_aa ΓBᵀ
  };

  struct ProducerScratch {
    Node node;
    Elimination elimination;
    double process_h = -1.0;                 // the step of process_noise
    simd::Block<PD, ND> process_noise;       // Γ W⁻¹ Γᵀ / h at that step
  };

  // What the forward sweep leaves at a node for the backward sweep.
  struct Store {
    Store() {}  // no zero-fill in std::vector<Store>(n)
    MatDD J;   // smoother gain P⁺ Āᵀ (P⁻_{k+1})⁻¹ (zero at the last node)
    MatDE D;   // E⁺_k − J E⁻_{k+1}
    typename Base::InputFactor input;  // p̄ | x (square-root form)
  };

  // Linearises node k, eliminates its inputs (the factor goes to the store) and forms its terms.
  template <class V, class Linearize>
  DYNID_ALWAYS_INLINE bool Produce(Linearize& linearize, const Eigen::VectorXd& time,
                                   const Eigen::VectorXd& node_weights, int k,
                                   ProducerScratch* scratch, NodeTerms* terms,
                                   std::string* why) const {
    linearize(k, &scratch->node);
    Elimination& e = scratch->elimination;
    if (!base_.template Eliminate<V>(scratch->node, node_weights(k), &e, why)) {
      *why = "node " + std::to_string(k) + ": " + *why;
      return false;
    }
    store_[k].input = e.factor;
    for (int c = 0; c < ND; ++c) {
      for (int r = 0; r < NU; ++r) terms->H(r, c) = e.H(r, c);
    }
    for (int j = 0; j < NU; ++j) {
      terms->Yt(0, j) = e.y_white(j);
      for (int t = 0; t < NT; ++t) terms->Yt(1 + t, j) = -e.H(j, ND + t);
    }
    if (k + 1 == static_cast<int>(time.size())) return true;  // no prediction from the last node
    const double h = time(k + 1) - time(k), half_h2 = 0.5 * h * h;
    // Ā_d = Φ − ΓB K_a C_d: Φ = I + h (v into s), ΓB = [h²/2; h] on the accelerations.
    for (int c = 0; c < ND; ++c) {
      for (int i = 0; i < N; ++i) {
        const double kc = e.KaCy(i, c);
        terms->Abar(i, c) = (c == i ? 1.0 : 0.0) + (c == N + i ? h : 0.0) - half_h2 * kc;
        terms->Abar(N + i, c) = (c == N + i ? 1.0 : 0.0) - h * kc;
      }
    }
    // Bbar = ΓB [K_a y | −K_a C_θ], stored transposed.
    for (int i = 0; i < N; ++i) {
      terms->Bt(0, i) = half_h2 * e.KaCy(i, NX);
      terms->Bt(0, N + i) = h * e.KaCy(i, NX);
      for (int t = 0; t < NT; ++t) {
        terms->Bt(1 + t, i) = -half_h2 * e.KaCy(i, ND + t);
        terms->Bt(1 + t, N + i) = -h * e.KaCy(i, ND + t);
      }
    }
    // Γ W⁻¹ Γᵀ / h = h (Q + (h/2) Q1 + (h²/4) Q2) (RiccatiSweep::Initialize), kept for equal steps.
    if (h != scratch->process_h) {
      scratch->process_h = h;
      for (int c = 0; c < ND; ++c) {
        for (int r = 0; r < ND; ++r) {
          scratch->process_noise(r, c) = h * base_.Q_xi_unit_(r, c) +
                                         half_h2 * base_.Q_xi_cross_(r, c) +
                                         (0.5 * h * half_h2) * base_.Q_xi_outer_(r, c);
        }
      }
    }
    terms->Q = scratch->process_noise;
    for (int j = 0; j < N; ++j) {
      for (int i = 0; i < N; ++i) {
        const double g = e.Gaa(i, j);
        terms->Q(i, j) += half_h2 * half_h2 * g;
        terms->Q(i, N + j) += half_h2 * h * g;
        terms->Q(N + i, j) += h * half_h2 * g;
        terms->Q(N + i, N + j) += h * h * g;
      }
    }
    return true;
  }

  template <class Linearize>
  DYNID_TARGET_WIDE bool ProduceWide(Linearize& linearize, const Eigen::VectorXd& time,
                                     const Eigen::VectorXd& node_weights, int k,
                                     ProducerScratch* scratch, NodeTerms* terms,
                                     std::string* why) const {
    return Produce<simd::Packet4>(linearize, time, node_weights, k, scratch, terms, why);
  }

  template <class Linearize>
  bool ProducePortable(Linearize& linearize, const Eigen::VectorXd& time,
                       const Eigen::VectorXd& node_weights, int k, ProducerScratch* scratch,
                       NodeTerms* terms, std::string* why) const {
    return Produce<simd::Packet2>(linearize, time, node_weights, k, scratch, terms, why);
  }

  // The forward sweep over the nodes' terms (next(k, &why), then release(k) once node k's
  // terms are no longer read): measurement update (whitened, unit noise) and prediction of
  // P and E, the smoother gain J and offset D into the store, and theta's Gram matrix.
  //   Update, with S = H_d P⁻ H_dᵀ + I = L Lᵀ: Z = [P⁻ H_dᵀ; Yt − E⁻ᵀ H_dᵀ] L⁻ᵀ = [Aᵀ; Nuᵀ]
  //   (A = L⁻¹ H_d P⁻, Nu [1; theta] the whitened innovation), P⁺ = P⁻ − AᵀA,
  //   E⁺ = E⁻ + Aᵀ Nu, gram += Nuᵀ Nu.
  //   Prediction: P⁻ = Ā P⁺ Āᵀ + Q, E⁻ = Ā E⁺ + Bbar; J = P⁺ Āᵀ (P⁻)⁻¹, D = E⁺ − J E⁻.
  template <class V, class Next, class Release>
  DYNID_ALWAYS_INLINE bool Forward(const Eigen::VectorXd& time, Next& next, Release& release,
                                   MatEE* gram_out, std::string* error) const {
    using simd::Block;
    using simd::ColumnStart;
    using simd::MultiplyAccumulate;
    using simd::ZeroStart;
    constexpr int W = simd::kWidth<V>;
    constexpr int kD = PD / W, kE = PE / W, kU = PU / W, kS = SR / W;
    const int num_nodes = static_cast<int>(time.size());
    Block<SR, ND> prior, post;  // [P; −Eᵀ] before and after the update
    Block<SR, NU> Z;
    Block<PU, NU> S;
    Block<SR, ND> U;            // [P⁺; −E⁺ᵀ] Āᵀ, then J in its top rows
    Block<PD, ND> L_prior;      // Cholesky factor of P⁻
    Block<PE, ND> Dt;           // Dᵀ
    Block<PE, NE> gram;
    for (auto* block : {&prior, &post, &U}) block->SetZero();
    Z.SetZero();
    S.SetZero();
    L_prior.SetZero();
    Dt.SetZero();
    gram.SetZero();
    for (int c = 0; c < ND; ++c) {
      for (int r = 0; r < ND; ++r) prior(r, c) = prior_covariance_(r, c);
      for (int r = 0; r < NE; ++r) prior(PD + r, c) = -prior_mean_(c, r);
    }
    for (int c = 0; c < NE; ++c) {
      for (int r = 0; r < NE; ++r) gram(r, c) = prior_gram_(r, c);
    }
    for (int k = 0; k < num_nodes; ++k) {
      const NodeTerms* t = next(k, error);
      if (t == nullptr) return false;
      Store& s = store_[k];
      // Z = [0; Yt] + [P⁻; −E⁻ᵀ] H_dᵀ, S = I + H_d (P⁻ H_dᵀ).
      MultiplyAccumulate<V, kS, ND, NU>(
          prior, [t](int c, int j) { return t->H(j, c); },
          [t](int j, V* acc) {
            ZeroStart<V, kD>()(j, acc);
            ColumnStart<V, kE, 0, PE, NU>{t->Yt}(j, acc + kD);
          },
          &Z);
      MultiplyAccumulate<V, kU, ND, NU>(t->H, [&Z](int c, int j) { return Z(c, j); },
                                        ZeroStart<V, kU>(), &S);
      for (int j = 0; j < NU; ++j) S(j, j) += 1.0;
      simd::Cholesky<V, NU>(&S);  // S ≥ I
      simd::SolveTransposedFromRight<V, NU, kS>(S, &Z);
      // [P⁺; −E⁺ᵀ] = [P⁻; −E⁻ᵀ] − Z A, gram += Nuᵀ Nu.
      MultiplyAccumulate<V, kS, NU, ND>(Z, [&Z](int i, int j) { return -Z(j, i); },
                                        ColumnStart<V, kS, 0, SR, ND>{prior}, &post);
      MultiplyAccumulate<V, kE, NU, NE, kD>(Z, [&Z](int i, int j) { return Z(PD + j, i); },
                                            ColumnStart<V, kE, 0, PE, NE>{gram}, &gram);
      if (k + 1 == num_nodes) {
        s.J.setZero();
        for (int c = 0; c < NE; ++c) {
          for (int r = 0; r < ND; ++r) s.D(r, c) = -post(PD + c, r);
        }
        break;
      }
      // U = [P⁺; −E⁺ᵀ] Āᵀ; P⁻ = Q + Ā (P⁺ Āᵀ), −E⁻ᵀ = −E⁺ᵀ Āᵀ − Bbarᵀ.
      MultiplyAccumulate<V, kS, ND, ND>(post, [t](int c, int j) { return t->Abar(j, c); },
                                        ZeroStart<V, kS>(), &U);
      MultiplyAccumulate<V, kD, ND, ND>(t->Abar, [&U](int c, int j) { return U(c, j); },
                                        ColumnStart<V, kD, 0, PD, ND>{t->Q}, &prior);
      for (int j = 0; j < ND; ++j) {
        for (int p = 0; p < kE; ++p) {
          prior.template packet<V>(kD + p, j) =
              U.template packet<V>(kD + p, j) - t->Bt.template packet<V>(p, j);
        }
      }
      release(k);
      for (int j = 0; j < ND; ++j) {
        for (int i = j + 1; i < ND; ++i) {
          const double value = 0.5 * (prior(i, j) + prior(j, i));
          prior(i, j) = value;
          prior(j, i) = value;
        }
        for (int p = 0; p < kD; ++p) {
          L_prior.template packet<V>(p, j) = prior.template packet<V>(p, j);
        }
      }
      if (!simd::Cholesky<V, ND>(&L_prior)) {
        *error = "node " + std::to_string(k + 1) + ": the predicted covariance is not positive "
                 "definite";
        return false;
      }
      // J = (P⁺ Āᵀ) L⁻ᵀ L⁻¹, in U's top rows.
      simd::SolveTransposedFromRight<V, ND, kD>(L_prior, &U);
      simd::SolveFromRight<V, ND, kD>(L_prior, &U);
      // Dᵀ = E⁺ᵀ − E⁻ᵀ Jᵀ.
      MultiplyAccumulate<V, kE, ND, ND, kD>(prior, [&U](int c, int j) { return U(j, c); },
                                            ColumnStart<V, kE, kD, SR, ND>{post, -1.0}, &Dt);
      for (int c = 0; c < ND; ++c) {
        for (int r = 0; r < ND; ++r) s.J(r, c) = U(r, c);
        for (int r = 0; r < NE; ++r) s.D(c, r) = Dt(r, c);
      }
    }
    for (int c = 0; c < NE; ++c) {
      for (int r = 0; r < NE; ++r) (*gram_out)(r, c) = gram(r, c);
    }
    return true;
  }

  template <class Next, class Release>
  DYNID_TARGET_WIDE bool ForwardWide(const Eigen::VectorXd& time, Next& next, Release& release,
                                     MatEE* gram, std::string* error) const {
    return Forward<simd::Packet4>(time, next, release, gram, error);
  }

  template <class Next, class Release>
  bool ForwardPortable(const Eigen::VectorXd& time, Next& next, Release& release, MatEE* gram,
                       std::string* error) const {
    return Forward<simd::Packet2>(time, next, release, gram, error);
  }

  Base base_;
  MatDD prior_covariance_;
  MatDE prior_mean_;
  MatEE prior_gram_;
  mutable std::vector<Store> store_;  // per-node storage, reused between calls
};

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_CONSTANT_PARAMETER_SWEEP_H_
