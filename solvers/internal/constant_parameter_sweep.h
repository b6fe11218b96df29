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
#ifndef DYNID_SOLVERS_INTERNAL_CONSTANT_PARAMETER_SWEEP_H_
#define DYNID_SOLVERS_INTERNAL_CONSTANT_PARAMETER_SWEEP_H_

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <glog/logging.h>

#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/internal/node_pipeline.h"
#include "dynid/solvers/internal/riccati_sweep.h"
#include "dynid/solvers/internal/simd_kernels.h"

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
    for (auto* block : {&process_unit_, &process_cross_, &process_outer_}) block->SetZero();
    for (int c = 0; c < ND; ++c) {
      for (int r = 0; r < ND; ++r) {
        process_unit_(r, c) = base_.Q_xi_unit_(r, c);
        process_cross_(r, c) = base_.Q_xi_cross_(r, c);
        process_outer_(r, c) = base_.Q_xi_outer_(r, c);
      }
    }
    return true;
  }

  // Forward sweep, theta-hat, backward sweep: states ((2N + p) × N, theta-hat in the last p
  // rows of every column) and inputs (NP × N), for the linearisation of node k given by
  // linearize(k, &node) into a Base::Rows (NodeRows, riccati_sweep.h), called once per node in
  // increasing k. With num_threads > 1 (and enough
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
  // (simd_kernels.h). The covariance and the transposed mean coefficients are stacked without
  // padding between them, [P; −Eᵀ] (rows 0..ND−1 and ND..ND+NE−1 of SR), so that one product
  // updates both on the fewest packets; a packet may hold the last rows of P and the first of
  // −Eᵀ (with 4-wide packets and ND = 6), and the operations on one of the two parts then also
  // compute, and ignore, some rows of the other.
  static constexpr int PD = simd::PaddedRows(ND);
  static constexpr int PU = simd::PaddedRows(NU);
  static constexpr int SR = simd::PaddedRows(ND + NE);

  // What the forward sweep needs of node k besides its own recursion, made from the node's
  // elimination (by either thread of the pipeline when there is one). Stacked blocks have SR
  // rows laid out like [P; −Eᵀ].
  struct NodeTerms {
    NodeTerms() {  // rows not written per node stay zero from here on
      H.SetZero();
      Y.SetZero();
      Abar.SetZero();
      QB.SetZero();
    }
    simd::Block<PU, ND> H;     // H_d (NU rows)
    simd::Block<SR, NU> Y;     // [0; [y_white | −H_θ]ᵀ]
    simd::Block<PD, ND> Abar;  // Ā_d = Φ − ΓB K_a C_d over h_k
    // [Γ W⁻¹ Γᵀ / h + ΓB G⁻¹_aa ΓBᵀ; −Bbarᵀ], Bbar = ΓB [K_a y | −K_a C_θ]
    simd::Block<SR, ND> QB;
  };

  struct ProducerScratch {
    typename Base::Rows node;  // (padding zero from its construction on)
    Elimination elimination;
  };

  // What the forward sweep leaves at a node for the backward sweep.
  struct Store {
    Store() {}  // no zero-fill in std::vector<Store>(n)
    MatDD J;    // smoother gain P⁺ Āᵀ (P⁻_{k+1})⁻¹ (zero at the last node)
    // E⁺_k − J E⁻_{k+1}, row-major (rows are copied from the sweep's columns of Dᵀ)
    Eigen::Matrix<double, ND, NE, NE == 1 ? Eigen::ColMajor : Eigen::RowMajor> D;
    typename Base::InputFactor input;  // p̄ | x (square-root form)
  };

  // Linearises node k, eliminates its inputs (the factor goes to the store) and forms its terms.
  template <class V, class Linearize>
  DYNID_ALWAYS_INLINE bool Produce(Linearize& linearize, const Eigen::VectorXd& time,
                                   const Eigen::VectorXd& node_weights, int k,
                                   ProducerScratch* scratch, NodeTerms* terms,
                                   std::string* why) const {
    linearize(k, &scratch->node);
    const bool last = k + 1 == static_cast<int>(time.size());  // no prediction from it
    const double h = last ? 0.0 : time(k + 1) - time(k), half_h2 = 0.5 * h * h;
    // The terms straight from the factored rows (Elimination's H, y_white and K_a [C | y] are
    // not written).
    auto write_terms = [&](const typename Base::FactoredRows& rows, const Elimination* e)
                           DYNID_LAMBDA_INLINE {
      for (int r = 0; r < NU; ++r) {
        const double* row = rows.RemainderRow(r);  // [H | y_white] row r
        for (int c = 0; c < ND; ++c) terms->H(r, c) = row[c];
        terms->Y(ND, r) = row[NX];
        for (int t = 0; t < NT; ++t) terms->Y(ND + 1 + t, r) = -row[ND + t];
      }
      if (last) return;
      // Γ W⁻¹ Γᵀ / h = h (Q + (h/2) Q1 + (h²/4) Q2) (RiccatiSweep::Initialize), on whole
      // packets of the covariance's rows (the process noise blocks' padding rows are zero; the
      // rows of −Bbarᵀ sharing the last packet are written after).
      constexpr int W = simd::kWidth<V>;
      const double h3_4 = 0.5 * h * half_h2;
      for (int c = 0; c < ND; ++c) {
        DYNID_UNROLL
        for (int p = 0; p < (ND + W - 1) / W; ++p) {
          terms->QB.template packet<V>(p, c) = h * process_unit_.template packet<V>(p, c) +
                                               half_h2 * process_cross_.template packet<V>(p, c) +
                                               h3_4 * process_outer_.template packet<V>(p, c);
        }
      }
      for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
          const double g = e->Gaa(i, j);
          terms->QB(i, j) += half_h2 * half_h2 * g;
          terms->QB(i, N + j) += half_h2 * h * g;
          terms->QB(N + i, j) += h * half_h2 * g;
          terms->QB(N + i, N + j) += h * h * g;
        }
      }
      // Ā_d = Φ − ΓB K_a C_d: Φ = I + h (v into s), ΓB = [h²/2; h] on the accelerations.
      for (int i = 0; i < N; ++i) {
        const double* kacy = rows.KaCyRow(i);  // row i of K_a [C | y]
        for (int c = 0; c < ND; ++c) {
          terms->Abar(i, c) = -half_h2 * kacy[c];
          terms->Abar(N + i, c) = -h * kacy[c];
        }
        terms->Abar(i, i) += 1.0;
        terms->Abar(i, N + i) += h;
        terms->Abar(N + i, N + i) += 1.0;
        // −Bbarᵀ = −[ΓB K_a y | −ΓB K_a C_θ]ᵀ.
        terms->QB(ND, i) = -half_h2 * kacy[NX];
        terms->QB(ND, N + i) = -h * kacy[NX];
        for (int t = 0; t < NT; ++t) {
          terms->QB(ND + 1 + t, i) = half_h2 * kacy[ND + t];
          terms->QB(ND + 1 + t, N + i) = h * kacy[ND + t];
        }
      }
    };
    if (!base_.template Eliminate<V>(scratch->node, node_weights(k), &scratch->elimination, why,
                                     &store_[k].input, write_terms)) {
      *why = "node " + std::to_string(k) + ": " + *why;
      return false;
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
  //   Update, with S = H_d P⁻ H_dᵀ + I = L Lᵀ and Yt = [y_white | −H_θ]ᵀ:
  //   Z = [P⁻ H_dᵀ; Yt − E⁻ᵀ H_dᵀ] L⁻ᵀ = [Aᵀ; Nuᵀ]
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
    constexpr int kS = SR / W;                // packets of a stacked column
    constexpr int kP = (ND + W - 1) / W;      // packets holding P's rows
    constexpr int kE0 = ND / W;               // first packet holding rows of −Eᵀ
    constexpr int kE = kS - kE0;              // packets holding them
    constexpr bool kShared = kP > kE0;        // packet kE0 holds rows of both
    constexpr int kU = PU / W;
    // 1 on the rows of −Eᵀ in the shared packet.
    V lower_of_e = V{};
    for (int lane = 0; lane < W; ++lane) lower_of_e[lane] = kE0 * W + lane >= ND ? 1.0 : 0.0;
    const int num_nodes = static_cast<int>(time.size());
    Block<SR, ND> prior, post;  // [P; −Eᵀ] before and after the update
    Block<SR, NU> Z;
    Block<PU, NU> S;
    Block<SR, ND> U;            // [P⁺; −E⁺ᵀ] Āᵀ, then J in its top rows
    Block<PD, ND> L_prior;      // Cholesky factor of P⁻
    Block<SR, ND> Dt;           // Dᵀ in the rows of −Eᵀ
    Block<SR, NE> gram;         // in the rows of −Eᵀ (lower triangle)
    for (auto* block : {&prior, &post, &U, &Dt}) block->SetZero();
    Z.SetZero();
    S.SetZero();
    L_prior.SetZero();
    gram.SetZero();
    for (int c = 0; c < ND; ++c) {
      for (int r = 0; r < ND; ++r) prior(r, c) = prior_covariance_(r, c);
      for (int r = 0; r < NE; ++r) prior(ND + r, c) = -prior_mean_(c, r);
    }
    for (int c = 0; c < NE; ++c) {
      for (int r = 0; r < NE; ++r) gram(ND + r, c) = prior_gram_(r, c);
    }
    for (int k = 0; k < num_nodes; ++k) {
      const NodeTerms* t = next(k, error);
      if (t == nullptr) return false;
      Store& s = store_[k];
      // Z = [0; Yt] + [P⁻; −E⁻ᵀ] H_dᵀ (terms Y), S = I + H_d (P⁻ H_dᵀ).
      MultiplyAccumulate<V, kS, ND, NU>(
          prior, [t](int c, int j) { return t->H(j, c); },
          [t](int j, V* acc) {
            DYNID_UNROLL
            for (int p = 0; p < kS; ++p) acc[p] = p < kE0 ? V{} : t->Y.template packet<V>(p, j);
          },
          &Z);
      // (S's lower triangle: all that its Cholesky factorisation reads.)
      simd::LowerMultiplyAccumulate<V, kU, ND, NU, 0, false>(
          t->H, [&Z](int c, int j) { return Z(c, j); }, &S);
      for (int j = 0; j < NU; ++j) S(j, j) += 1.0;
      simd::Cholesky<V, NU>(&S);  // S ≥ I
      simd::SolveTransposedFromRight<V, NU, kS>(S, &Z);
      // [P⁺; −E⁺ᵀ] = [P⁻; −E⁻ᵀ] − Z A, gram += Nuᵀ Nu.
      MultiplyAccumulate<V, kS, NU, ND>(Z, [&Z](int i, int j) { return -Z(j, i); },
                                        ColumnStart<V, kS, 0, SR, ND>{prior}, &post);
      simd::LowerMultiplyAccumulate<V, kS, NU, NE, ND, true>(
          Z, [&Z](int i, int j) { return Z(ND + j, i); }, &gram);  // (lower triangle)
      if (k + 1 == num_nodes) {
        s.J.setZero();
        for (int c = 0; c < NE; ++c) {
          for (int r = 0; r < ND; ++r) s.D(r, c) = -post(ND + c, r);
        }
        break;
      }
      // U = [P⁺; −E⁺ᵀ] Āᵀ; P⁻ = Q + Ā (P⁺ Āᵀ), −E⁻ᵀ = −E⁺ᵀ Āᵀ − Bbarᵀ.
      MultiplyAccumulate<V, kS, ND, ND>(post, [t](int c, int j) { return t->Abar(j, c); },
                                        ZeroStart<V, kS>(), &U);
      MultiplyAccumulate<V, kP, ND, ND>(t->Abar, [&U](int c, int j) { return U(c, j); },
                                        ColumnStart<V, kP, 0, SR, ND>{t->QB}, &prior);
      for (int j = 0; j < ND; ++j) {
        // (Ā's padding rows are zero: the shared packet holds −Bbarᵀ's rows so far.)
        if constexpr (kShared) {
          prior.template packet<V>(kE0, j) += lower_of_e * U.template packet<V>(kE0, j);
        }
        DYNID_UNROLL
        for (int p = kP; p < kS; ++p) {
          prior.template packet<V>(p, j) =
              U.template packet<V>(p, j) + t->QB.template packet<V>(p, j);
        }
      }
      release(k);
      DYNID_UNROLL
      for (int j = 0; j < ND; ++j) {
        DYNID_UNROLL
        for (int i = j + 1; i < ND; ++i) {
          const double value = 0.5 * (prior(i, j) + prior(j, i));
          prior(i, j) = value;
          prior(j, i) = value;
        }
        DYNID_UNROLL
        for (int p = 0; p < kP; ++p) {
          L_prior.template packet<V>(p, j) = prior.template packet<V>(p, j);
        }
      }
      if (!simd::Cholesky<V, ND>(&L_prior)) {
        *error = "node " + std::to_string(k + 1) + ": the predicted covariance is not positive "
                 "definite";
        return false;
      }
      // J = (P⁺ Āᵀ) L⁻ᵀ L⁻¹, in U's rows of P (the rows of −Eᵀ in a shared packet become
      // scratch).
      simd::SolveTransposedFromRight<V, ND, kP>(L_prior, &U);
      simd::SolveFromRight<V, ND, kP>(L_prior, &U);
      // Dᵀ = E⁺ᵀ − E⁻ᵀ Jᵀ.
      MultiplyAccumulate<V, kE, ND, ND, kE0, kE0>(
          prior, [&U](int c, int j) { return U(j, c); },
          ColumnStart<V, kE, kE0, SR, ND>{post, -1.0}, &Dt);
      for (int c = 0; c < ND; ++c) {
        std::copy_n(&U(0, c), ND, s.J.data() + ND * c);
        std::copy_n(&Dt(ND, c), NE, s.D.data() + NE * c);  // row c of D
      }
    }
    for (int c = 0; c < NE; ++c) {
      for (int r = c; r < NE; ++r) {
        (*gram_out)(r, c) = gram(ND + r, c);
        (*gram_out)(c, r) = gram(ND + r, c);
      }
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
  // The [s; v] blocks of Γ W⁻¹ Γᵀ / h's three terms (RiccatiSweep::Initialize), padding zero.
  simd::Block<PD, ND> process_unit_, process_cross_, process_outer_;
  MatDD prior_covariance_;
  MatDE prior_mean_;
  MatEE prior_gram_;
  mutable std::vector<Store> store_;  // per-node storage, reused between calls
};

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_INTERNAL_CONSTANT_PARAMETER_SWEEP_H_
