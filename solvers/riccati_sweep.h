// solvers::RiccatiSweep — the linear–quadratic core of the first-order approximation and of the
// linear optimal filter (seed 004 §3.3, eqs. 3.9–3.16; see first_order_smoother.h for the maths).
//
// Fixed-size: N positions, NX = 2N (+ p) augmented states, NP = n + m augmented inputs,
// NZ = n + l residuals zeta per node, so that the per-node algebra runs on stack matrices with no
// heap allocation per node. Throughput (bench_weighted_residual): the elimination of p̄ is one
// hand-rolled Householder QR of sqrt(w) S [D | C | y]; Φ, Γ and ΓB are applied through their
// sparsity (only the acceleration rows of K_p C enter the prediction); the backward sweep runs
// on the adjoint (no factorisation of P⁻, no gain); P⁺ and P⁻ are formed one triangle at a time;
// all small products are coefficient-based (lazyProduct), because Eigen sends fixed-size
// products with rows + cols + depth > 20 through its blocked GEMM/GEMV kernels.
#ifndef DYNID_SOLVERS_RICCATI_SWEEP_H_
#define DYNID_SOLVERS_RICCATI_SWEEP_H_

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/QR>
#include <glog/logging.h>

#include "problems/weighted_residual_problem.h"

namespace dynid::solvers {

namespace internal {

// Small fixed-size dense kernels (Eigen's LLT and triangular solves route fixed sizes through
// dynamic-block code paths, which dominated the profile of the sweep at these sizes). All are
// written in the right-looking (outer-product) order: each step updates many independent
// entries, where the dot-product order is one serial chain of dependent additions per entry
// (latency-bound; that order dominated a later profile).

// A = L Lᵀ in place (L in the lower triangle; the strict upper triangle is left untouched);
// false when A is not numerically positive definite.
template <int K>
bool CholeskyInPlace(Eigen::Matrix<double, K, K>* matrix) {
  Eigen::Matrix<double, K, K>& a = *matrix;
  for (int j = 0; j < K; ++j) {
    const double d = a(j, j);
    if (!(d > 0.0)) return false;
    const double root = std::sqrt(d);
    a(j, j) = root;
    const double inverse = 1.0 / root;
    for (int i = j + 1; i < K; ++i) a(i, j) *= inverse;
    for (int c = j + 1; c < K; ++c) {
      for (int i = c; i < K; ++i) a(i, c) -= a(i, j) * a(c, j);
    }
  }
  return true;
}

// B ← L⁻¹ B for L lower triangular (the lower triangle of `lower`).
// (The solves multiply by the reciprocals of the diagonal, computed once: divisions dominated.)
template <int K, int C>
void LowerSolveInPlace(const Eigen::Matrix<double, K, K>& lower, Eigen::Matrix<double, K, C>* b) {
  const Eigen::Matrix<double, K, 1> inverse = lower.diagonal().cwiseInverse();
  for (int i = 0; i < K; ++i) {
    b->row(i) *= inverse(i);
    for (int r = i + 1; r < K; ++r) b->row(r) -= lower(r, i) * b->row(i);
  }
}

// B ← L⁻ᵀ B for L lower triangular.
template <int K, int C>
void LowerTransposeSolveInPlace(const Eigen::Matrix<double, K, K>& lower,
                                Eigen::Matrix<double, K, C>* b) {
  const Eigen::Matrix<double, K, 1> inverse = lower.diagonal().cwiseInverse();
  for (int i = K - 1; i >= 0; --i) {
    b->row(i) *= inverse(i);
    for (int r = 0; r < i; ++r) b->row(r) -= lower(i, r) * b->row(i);
  }
}

// B ← R⁻¹ B for R upper triangular (the upper triangle of `upper`).
template <int K, int C>
void UpperSolveInPlace(const Eigen::Matrix<double, K, K>& upper, Eigen::Matrix<double, K, C>* b) {
  const Eigen::Matrix<double, K, 1> inverse = upper.diagonal().cwiseInverse();
  for (int i = K - 1; i >= 0; --i) {
    b->row(i) *= inverse(i);
    for (int r = 0; r < i; ++r) b->row(r) -= upper(r, i) * b->row(i);
  }
}

// P = P_prior − AᵀA (the covariance downdate of a measurement update), symmetric by
// construction: one triangle is computed and mirrored.
template <int R, int K>
void SymmetricDowndate(const Eigen::Matrix<double, K, K>& prior,
                       const Eigen::Matrix<double, R, K>& a, Eigen::Matrix<double, K, K>* out) {
  Eigen::Matrix<double, K, K>& p = *out;
  for (int j = 0; j < K; ++j) {
    p(j, j) = prior(j, j) - a.col(j).squaredNorm();
    for (int i = j + 1; i < K; ++i) {
      const double value = prior(i, j) - a.col(i).dot(a.col(j));
      p(i, j) = value;
      p(j, i) = value;
    }
  }
}

// P += ΓB G⁻¹_aa ΓBᵀ over the [s; v] rows (ΓB has h²/2 in the s-row and h in the v-row of each
// acceleration, N of them), then P ← (P + Pᵀ)/2.
template <int N, int K>
void AddInputNoiseAndSymmetrize(const Eigen::Matrix<double, N, N>& input_covariance, double h,
                                Eigen::Matrix<double, K, K>* covariance) {
  Eigen::Matrix<double, K, K>& p = *covariance;
  const double half_h2 = 0.5 * h * h;
  p.template block<N, N>(0, 0) += half_h2 * half_h2 * input_covariance;
  p.template block<N, N>(0, N) += half_h2 * h * input_covariance;
  p.template block<N, N>(N, 0) += half_h2 * h * input_covariance;
  p.template block<N, N>(N, N) += h * h * input_covariance;
  for (int j = 0; j < K; ++j) {
    for (int i = j + 1; i < K; ++i) {
      const double value = 0.5 * (p(i, j) + p(j, i));
      p(i, j) = value;
      p(j, i) = value;
    }
  }
}

}  // namespace internal

// zeta_k ≈ y − C x − D p̄ at one node; x = [s; v] (theta fixed) or [s; v; theta].
template <int NX, int NP, int NZ>
struct NodeLinearization {
  // User-provided (empty) constructor: std::vector<NodeLinearization>(n) then does not
  // zero-fill the storage before it is overwritten (value-initialisation of an aggregate does).
  NodeLinearization() {}
  Eigen::Matrix<double, NZ, NX> C;
  Eigen::Matrix<double, NZ, NP> D;
  Eigen::Matrix<double, NZ, 1> y;
};

template <int N, int NT, int NP, int NZ>
class ConstantParameterSweep;

template <int N, int NX, int NP, int NZ>
class RiccatiSweep {
 public:
  static constexpr int kNumParameters = NX - 2 * N;  // estimated theta entries
  static constexpr int NU = NZ - NP;                 // rows of the whitened measurement
  static_assert(NU >= 1, "needs more residuals than inputs (l > m)");
  static_assert(kNumParameters >= 0, "NX must be 2N or 2N + p");
  using VecX = Eigen::Matrix<double, NX, 1>;
  using MatXX = Eigen::Matrix<double, NX, NX>;
  using VecP = Eigen::Matrix<double, NP, 1>;
  using MatPP = Eigen::Matrix<double, NP, NP>;
  using MatPZ = Eigen::Matrix<double, NP, NZ>;
  using MatUX = Eigen::Matrix<double, NU, NX>;
  using VecU = Eigen::Matrix<double, NU, 1>;
  using MatZZ = Eigen::Matrix<double, NZ, NZ>;
  using MatXP = Eigen::Matrix<double, NX, NP>;
  using MatPX = Eigen::Matrix<double, NP, NX>;
  using Node = NodeLinearization<NX, NP, NZ>;

  // p̄ eliminated at one node: p̄ | x ~ N(K_p (y − C x), G⁻¹), K_p = G⁻¹ DᵀV w, G = DᵀVD w,
  // kept as the affine map K_p C, K_p y (K_p itself is never formed), and the whitened remainder
  // of the measurement, H x ≈ y_white with unit noise (Hᵀ H = Cᵀ V⊥ C).
  struct Elimination {
    Elimination() {}  // no zero-fill in std::vector<Elimination>(n) (see NodeLinearization)
    MatPP input_information;  // G = DᵀVD w
    MatPP input_covariance;   // G⁻¹
    MatPX KC;                 // K_p C
    VecP Ky;                  // K_p y
    MatUX H;                  // whitened measurement matrix U C
    VecU y_white;             // U y
  };

  // What the measurement update at a node leaves for the backward sweep: with the whitened
  // innovation covariance S = H P⁻ Hᵀ + I = L Lᵀ, A = L⁻¹ H P⁻ and the whitened innovation
  // nu = L⁻¹ (y_white − H m⁻).
  struct UpdateFactors {
    UpdateFactors() {}  // no zero-fill in std::vector<UpdateFactors>(n)
    Eigen::Matrix<double, NU, NU> L;
    MatUX A;
    VecU nu;
  };

  RiccatiSweep(problems::ParameterMode mode, const problems::WeightedResidualWeights& weights)
      : mode_(mode), weights_(weights) {
    CHECK_EQ(kNumParameters == 0, mode == problems::ParameterMode::kFixed)
        << "expected NX = 2n exactly for kFixed";
  }

  // False with a message when R0, W (W_theta) are not positive definite or V is not PSD.
  bool Initialize(std::string* error) {
    if (weights_.initial.rows() != NX || weights_.initial.cols() != NX ||
        weights_.initial_guess.size() != NX) {
      *error = "the first-order approximation needs R0 (" + std::to_string(NX) + " × " +
               std::to_string(NX) + ") and q0; Q(t0) = R0⁻¹ (seed 004 eq. 3.9c)";
      return false;
    }
    const MatXX R0 = weights_.initial;
    Eigen::LLT<MatXX> r0(R0);
    if (r0.info() != Eigen::Success) {
      *error = "R0 must be positive definite for the first-order approximation (Q(t0) = R0⁻¹)";
      return false;
    }
    P0_ = r0.solve(MatXX::Identity());
    q0_ = weights_.initial_guess;
    const Eigen::Matrix<double, 2 * N, 2 * N> W = weights_.kinematic;
    Eigen::LLT<Eigen::Matrix<double, 2 * N, 2 * N>> w(W);
    if (w.info() != Eigen::Success) {
      *error = "W must be positive definite";
      return false;
    }
    W_kinematic_ = W;
    Q_xi_unit_.setZero();
    Q_xi_unit_.template topLeftCorner<2 * N, 2 * N>() =
        w.solve(Eigen::Matrix<double, 2 * N, 2 * N>::Identity());
    if (mode_ == problems::ParameterMode::kTimeVarying) {
      Eigen::LLT<Eigen::MatrixXd> wp(weights_.parameter);
      if (wp.info() != Eigen::Success) {
        *error = "W_theta must be positive definite";
        return false;
      }
      Q_xi_unit_.template bottomRightCorner<kNumParameters, kNumParameters>() =
          wp.solve(Eigen::MatrixXd::Identity(kNumParameters, kNumParameters));
    }
    // Γ Q Γᵀ = (I + (h/2) E) Q (I + (h/2) E)ᵀ with E moving the v-rows into the s-rows:
    // Q + (h/2)(E Q + Q Eᵀ) + (h²/4) E Q Eᵀ.
    MatXX EQ = MatXX::Zero();
    EQ.template topRows<N>() = Q_xi_unit_.template middleRows<N>(N);
    Q_xi_cross_ = EQ + EQ.transpose();
    Q_xi_outer_.setZero();
    Q_xi_outer_.template leftCols<N>() = EQ.template middleCols<N>(N);
    Eigen::MatrixXd S;
    std::string why;
    if (!problems::SquareRootFactor(weights_.residual, false, &S, &why)) {
      *error = "residual weight V: " + why;
      return false;
    }
    sqrt_residual_weight_ = S;
    sqrt_residual_weight_is_diagonal_ = sqrt_residual_weight_.isDiagonal(0.0);
    return true;
  }

  // Eliminates p̄ at a node with weight w (V w); false when DᵀVD is singular. With V = SᵀS and
  // sqrt(w) S D = [Q1 Q2] [R; 0]: DᵀVD w = RᵀR, K_p = R⁻¹Q1ᵀ sqrt(w) S, U = Q2ᵀ sqrt(w) S.
  // One Householder QR of the fixed-size array sqrt(w) S [D | C | y] yields R, Q1ᵀ sqrt(w) S [C y]
  // (→ K_p C, K_p y by back substitution) and [H | y_white] = Q2ᵀ sqrt(w) S [C y] at once, on
  // the stack, without forming Q.
  bool Eliminate(const Node& node, double node_weight, Elimination* out,
                 std::string* error) const {
    constexpr int NC = NP + NX + 1;
    // Rows padded with zeros to a multiple of 4 so that every column operation runs on whole
    // SIMD packets (a zero row stays zero under the reflections: its v entry is zero).
    constexpr int NZP = (NZ + 3) / 4 * 4;
    Eigen::Matrix<double, NZP, NC> M;
    if constexpr (NZP > NZ) M.template bottomRows<NZP - NZ>().setZero();
    const double root_weight = std::sqrt(node_weight);
    if (sqrt_residual_weight_is_diagonal_) {
      const Eigen::Matrix<double, NZ, 1> scale =
          root_weight * sqrt_residual_weight_.diagonal();
      M.template topLeftCorner<NZ, NP>() = scale.asDiagonal() * node.D;
      M.template block<NZ, NX>(0, NP) = scale.asDiagonal() * node.C;
      M.template block<NZ, 1>(0, NC - 1) = scale.cwiseProduct(node.y);
    } else {
      const MatZZ weighted_sqrt = root_weight * sqrt_residual_weight_;
      M.template topLeftCorner<NZ, NP>() = weighted_sqrt.lazyProduct(node.D);
      M.template block<NZ, NX>(0, NP) = weighted_sqrt.lazyProduct(node.C);
      M.template block<NZ, 1>(0, NC - 1) = weighted_sqrt.lazyProduct(node.y);
    }
    // Householder reflections I − tau v vᵀ (v_j = 1, zero above j) zeroing column j below the
    // diagonal; v is kept as a full fixed-size column so the updates vectorise.
    for (int j = 0; j < NP; ++j) {
      double tail = 0.0;
      for (int i = j + 1; i < NZ; ++i) tail += M(i, j) * M(i, j);
      const double alpha = M(j, j);
      if (tail == 0.0) continue;  // already triangular in this column (tau = 0)
      const double beta = alpha >= 0.0 ? -std::sqrt(alpha * alpha + tail)
                                       : std::sqrt(alpha * alpha + tail);
      const double tau = (beta - alpha) / beta;
      const double inv = 1.0 / (alpha - beta);
      Eigen::Matrix<double, NZP, 1> v = M.col(j) * inv;
      v.head(j).setZero();
      v(j) = 1.0;
      M(j, j) = beta;
      for (int i = j + 1; i < NZ; ++i) M(i, j) = 0.0;
      for (int c = j + 1; c < NC; ++c) M.col(c) -= (tau * v.dot(M.col(c))) * v;
    }
    const MatPP R = M.template topLeftCorner<NP, NP>().template triangularView<Eigen::Upper>();
    const double scale = R.diagonal().cwiseAbs().maxCoeff();
    if (!(R.diagonal().cwiseAbs().minCoeff() > 1e-10 * scale)) {
      *error = "FᵀVF is singular: the inputs p̄ = [a; u] are not determined by the weighted "
               "equations of motion and measurements (seed 004 §3.2)";
      return false;
    }
    Eigen::Matrix<double, NP, NX + 1> KCy = M.template topRightCorner<NP, NX + 1>();
    internal::UpperSolveInPlace(R, &KCy);
    out->KC = KCy.template leftCols<NX>();
    out->Ky = KCy.col(NX);
    out->input_information = R.transpose().lazyProduct(R);
    MatPP R_inverse = MatPP::Identity();
    internal::UpperSolveInPlace(R, &R_inverse);
    out->input_covariance = R_inverse.lazyProduct(R_inverse.transpose());
    out->H = M.template block<NU, NX>(NP, NP);
    out->y_white = M.template block<NU, 1>(NP, NC - 1);
    return true;
  }

  // Measurement update from the prior (m, P) at a node (whitened, unit noise).
  void Update(const Elimination& e, const VecX& m_prior, const MatXX& P_prior, VecX* m_post,
              MatXX* P_post) const {
    UpdateFactors factors;
    Update(e, m_prior, P_prior, m_post, P_post, &factors);
  }

  // As above, also returning L, A and nu (see UpdateFactors) for the backward sweep.
  void Update(const Elimination& e, const VecX& m_prior, const MatXX& P_prior, VecX* m_post,
              MatXX* P_post, UpdateFactors* factors) const {
    // lazyProduct: coefficient-based products; Eigen would send these small fixed-size
    // products through its blocked GEMM kernel, which dominated the profile.
    // H P (= (P Hᵀ)ᵀ, P symmetric) keeps both products in column-major order.
    MatUX& A = factors->A;
    A = e.H.lazyProduct(P_prior);
    Eigen::Matrix<double, NU, NU>& S = factors->L;
    S = A.lazyProduct(e.H.transpose());
    S.diagonal().array() += 1.0;
    // S ≥ I, so its Cholesky factor exists. With S = L Lᵀ and A = L⁻¹ (P Hᵀ)ᵀ: K = Aᵀ L⁻¹,
    // P⁺ = P − AᵀA (symmetric by construction: only one triangle is computed).
    internal::CholeskyInPlace(&S);
    internal::LowerSolveInPlace(S, &A);
    VecU& innovation = factors->nu;
    innovation = e.y_white - e.H.lazyProduct(m_prior);
    internal::LowerSolveInPlace(S, &innovation);
    *m_post = m_prior + A.transpose().lazyProduct(innovation);
    internal::SymmetricDowndate(P_prior, A, P_post);
  }

  // Prediction over an interval of length h: Φ = I + hA, Γ = h (I + hA/2) (exact, A² = 0),
  // p̄ = K_p (y − C x) + δ with cov(δ) = G⁻¹; also returns Ā = Φ − ΓB K_p C.
  void Predict(const Elimination& e, double h, const VecX& m_post, const MatXX& P_post,
               VecX* m_prior, MatXX* P_prior, MatXX* transition) const {
    MatXX unused;
    Predict(e, h, m_post, P_post, m_prior, P_prior, transition, &unused);
  }

  // As above, also returning Ā P⁺ (for the smoother gain). Φ, Γ and ΓB are applied through their
  // structure (ΓB has one entry h²/2 in the s-row and h in the v-row per acceleration, so only
  // the acceleration rows K_a C of K_p C enter), so the only dense products are (K_a C) P⁺ and
  // (Ā P⁺)(K_a C)ᵀ, of size N × NX × NX.
  void Predict(const Elimination& e, double h, const VecX& m_post, const MatXX& P_post,
               VecX* m_prior, MatXX* P_prior, MatXX* transition,
               MatXX* transition_times_covariance) const {
    const double half_h2 = 0.5 * h * h;
    const Eigen::Matrix<double, N, NX> KC = e.KC.template topRows<N>();
    // Ā = Φ − ΓB K_p C.
    transition->setIdentity();
    for (int i = 0; i < N; ++i) {
      (*transition)(i, N + i) = h;
      transition->row(i) -= half_h2 * KC.row(i);
      transition->row(N + i) -= h * KC.row(i);
    }
    PredictMeanAndCovariance(e, h, m_post, P_post, m_prior, P_prior,
                             transition_times_covariance);
  }

  // m⁻ = Ā m⁺ + ΓB K_p y, T = Ā P⁺, P⁻ = T Āᵀ + ΓB G⁻¹ ΓBᵀ + Γ W⁻¹ Γᵀ / h (Ā not formed). Ā
  // differs from the identity only in its [s; v] rows, so T and P⁻ are formed by contiguous
  // column-block (row-block of T, column-block of P⁻) operations.
  void PredictMeanAndCovariance(const Elimination& e, double h, const VecX& m_post,
                                const MatXX& P_post, VecX* m_prior, MatXX* P_prior,
                                MatXX* transition_times_covariance) const {
    const double half_h2 = 0.5 * h * h;
    const Eigen::Matrix<double, N, NX> KC = e.KC.template topRows<N>();
    // m⁻ = Ā m⁺ + ΓB K_p y.
    const Eigen::Matrix<double, N, 1> input_mean =
        e.Ky.template head<N>() - KC.lazyProduct(m_post);
    *m_prior = m_post;
    m_prior->template head<N>() +=
        h * m_post.template segment<N>(N) + half_h2 * input_mean;
    m_prior->template segment<N>(N) += h * input_mean;
    // T = Ā P⁺ = Φ P⁺ − ΓB (K_a C P⁺).
    MatXX& TP = *transition_times_covariance;
    const Eigen::Matrix<double, N, NX> KCP = KC.lazyProduct(P_post);
    TP.template topRows<N>() = P_post.template topRows<N>() +
                               h * P_post.template middleRows<N>(N) - half_h2 * KCP;
    TP.template middleRows<N>(N) = P_post.template middleRows<N>(N) - h * KCP;
    if constexpr (kNumParameters > 0) {
      TP.template bottomRows<kNumParameters>() = P_post.template bottomRows<kNumParameters>();
    }
    // P⁻ = T Āᵀ + ..., with T Āᵀ = T Φᵀ − (T (K_a C)ᵀ) ΓBᵀ.
    const Eigen::Matrix<double, NX, N> TKCt = TP.lazyProduct(KC.transpose());
    MatXX& P = *P_prior;
    P.template leftCols<N>() =
        TP.template leftCols<N>() + h * TP.template middleCols<N>(N) - half_h2 * TKCt;
    P.template middleCols<N>(N) = TP.template middleCols<N>(N) - h * TKCt;
    if constexpr (kNumParameters > 0) {
      P.template rightCols<kNumParameters>() = TP.template rightCols<kNumParameters>();
    }
    // Γ W⁻¹ Γᵀ / h = h (Q + (h/2) Q1 + (h²/4) Q2) with Γ = h (I + hA/2) (see Initialize); Q1 and
    // Q2 live in the [s; v] block, W_theta⁻¹ (kTimeVarying) in the theta block.
    P.template topLeftCorner<2 * N, 2 * N>() +=
        h * Q_xi_unit_.template topLeftCorner<2 * N, 2 * N>() +
        half_h2 * Q_xi_cross_.template topLeftCorner<2 * N, 2 * N>() +
        (0.5 * h * half_h2) * Q_xi_outer_.template topLeftCorner<2 * N, 2 * N>();
    if constexpr (kNumParameters > 0) {
      if (mode_ == problems::ParameterMode::kTimeVarying) {
        P.template bottomRightCorner<kNumParameters, kNumParameters>() +=
            h * Q_xi_unit_.template bottomRightCorner<kNumParameters, kNumParameters>();
      }
    }
    // ΓB G⁻¹ ΓBᵀ: only the accelerations' block G⁻¹_aa enters the [s; v] rows.
    const Eigen::Matrix<double, N, N> Gaa = e.input_covariance.template topLeftCorner<N, N>();
    internal::AddInputNoiseAndSymmetrize(Gaa, h, &P);
  }

  // w = Āᵀ λ with Ā = Φ − ΓB K_p C applied through its structure.
  VecX TransitionTransposeTimes(const Elimination& e, double h, const VecX& lambda) const {
    const double half_h2 = 0.5 * h * h;
    Eigen::Matrix<double, N, 1> g;
    for (int i = 0; i < N; ++i) g(i) = half_h2 * lambda(i) + h * lambda(N + i);
    VecX w = lambda - e.KC.template topRows<N>().transpose().lazyProduct(g);
    for (int i = 0; i < N; ++i) w(N + i) += h * lambda(i);
    return w;
  }

  VecP FilteredInput(const Elimination& e, const VecX& x) const {
    return e.Ky - e.KC.lazyProduct(x);
  }

  // argmin |p̄ − K_p(y − Cx)|²_G + h |xi_kin(p̄)|²_W, xi_kin = Γ_kin⁻¹(x' − Φx) − B p̄.
  VecP SmoothedInput(const Elimination& e, double h, const VecX& x, const VecX& x_next) const {
    return SmoothedInput(e.input_information, e.KC, e.Ky, h, x, x_next);
  }

  // As above from G, K_p C and K_p y.
  VecP SmoothedInput(const MatPP& G, const MatPX& KC, const VecP& Ky, double h, const VecX& x,
                     const VecX& x_next) const {
    Eigen::Matrix<double, 2 * N, 1> d;
    for (int i = 0; i < N; ++i) {
      const double delta_s = x_next(i) - x(i) - h * x(N + i);
      const double delta_v = x_next(N + i) - x(N + i);
      d(i) = (delta_s - 0.5 * h * delta_v) / h;
      d(N + i) = delta_v / h;
    }
    // Bᵀ W B picks the a-rows (first N entries of p̄) of the v-block of W.
    MatPP lhs = G;
    lhs.template topLeftCorner<N, N>() += h * W_kinematic_.template bottomRightCorner<N, N>();
    const VecP filtered = Ky - KC.lazyProduct(x);
    VecP rhs = G.lazyProduct(filtered);
    rhs.template head<N>() += h * W_kinematic_.template bottomRows<N>().lazyProduct(d);
    // G + h W_vv is positive definite.
    const MatPP lhs_copy = lhs;
    if (!internal::CholeskyInPlace(&lhs)) return lhs_copy.ldlt().solve(rhs);
    internal::LowerSolveInPlace(lhs, &rhs);
    internal::LowerTransposeSolveInPlace(lhs, &rhs);
    return rhs;
  }

  // Forward sweep + backward sweep: states (NX × N), inputs (NP × N), for linearisations given
  // in `nodes` (one per node time).
  bool Smooth(const Eigen::VectorXd& time, const std::vector<Node>& nodes,
              Eigen::MatrixXd* states, Eigen::MatrixXd* inputs, std::string* error) const {
    CHECK_EQ(time.size(), static_cast<Eigen::Index>(nodes.size()))
        << "expected one linearisation per node";
    return SmoothLinearized(
        time, [&nodes](int k, Node* node) { *node = nodes[k]; }, states, inputs, error);
  }

  // As above, with the linearisation of node k produced on demand by linearize(k, &node), in
  // increasing k, once per node (no per-node linearisations are stored).
  //
  // The backward sweep is the Rauch–Tung–Striebel smoother written with the adjoint
  // lambda_k = (P⁻_k)⁻¹ (x_k|N − m⁻_k) (the thesis's lambda, §3.3; the "modified
  // Bryson–Frazier" form): with w = Ā_kᵀ lambda_{k+1} (w = 0 at the last node),
  //     x_k|N = m⁺_k + P⁺_k w,   lambda_k = w + Hᵀ L⁻ᵀ (nu − A w),
  // which equals x_k|N = m⁺_k + P⁺_k Ā_kᵀ (P⁻_{k+1})⁻¹ (x_{k+1}|N − m⁻_{k+1}) but needs neither a
  // factorisation nor the regularity of P⁻.
  template <class Linearize>
  bool SmoothLinearized(const Eigen::VectorXd& time, Linearize&& linearize,
                        Eigen::MatrixXd* states, Eigen::MatrixXd* inputs,
                        std::string* error) const {
    const int num_nodes = static_cast<int>(time.size());
    CHECK_GE(num_nodes, 1) << "expected at least one node";
    const Eigen::VectorXd node_weights = problems::TrapezoidalNodeWeights(time);
    // Per-node storage is kept between calls (the iterations of the first-order approximation
    // reuse it instead of allocating and faulting in fresh pages each time).
    std::vector<Elimination>& eliminations = workspace_.eliminations;
    std::vector<UpdateFactors>& factors = workspace_.factors;
    std::vector<VecX>& m_post = workspace_.m_post;
    std::vector<MatXX>& P_post = workspace_.P_post;
    eliminations.resize(num_nodes);
    factors.resize(num_nodes);
    m_post.resize(num_nodes);
    P_post.resize(num_nodes);
    MatXX P_prior = P0_, transition_covariance;
    VecX m_prior = q0_;
    Node node;
    for (int k = 0; k < num_nodes; ++k) {
      linearize(k, &node);
      if (!Eliminate(node, node_weights(k), &eliminations[k], error)) {
        *error = "node " + std::to_string(k) + ": " + *error;
        return false;
      }
      Update(eliminations[k], m_prior, P_prior, &m_post[k], &P_post[k], &factors[k]);
      if (k + 1 < num_nodes) {
        PredictMeanAndCovariance(eliminations[k], time(k + 1) - time(k), m_post[k], P_post[k],
                                 &m_prior, &P_prior, &transition_covariance);
      }
    }
    states->resize(NX, num_nodes);
    inputs->resize(NP, num_nodes);
    VecX lambda = VecX::Zero(), w = VecX::Zero();
    for (int k = num_nodes - 1; k >= 0; --k) {
      if (k + 1 < num_nodes) {
        w = TransitionTransposeTimes(eliminations[k], time(k + 1) - time(k), lambda);
      }
      states->template block<NX, 1>(0, k) = m_post[k] + P_post[k].lazyProduct(w);
      if (k > 0) {
        const UpdateFactors& f = factors[k];
        VecU r = f.nu - f.A.lazyProduct(w);
        internal::LowerTransposeSolveInPlace(f.L, &r);
        lambda = w + eliminations[k].H.transpose().lazyProduct(r);
      }
    }
    for (int k = 0; k < num_nodes; ++k) {
      const VecX x = states->template block<NX, 1>(0, k);
      // Fixed-size destination blocks (a dynamic column trips GCC 12's -Wstringop-overread).
      if (k + 1 < num_nodes) {
        const VecX x_next = states->template block<NX, 1>(0, k + 1);
        inputs->template block<NP, 1>(0, k) =
            SmoothedInput(eliminations[k], time(k + 1) - time(k), x, x_next);
      } else {
        inputs->template block<NP, 1>(0, k) = FilteredInput(eliminations[k], x);
      }
    }
    return true;
  }

  const VecX& initial_mean() const { return q0_; }
  const MatXX& initial_covariance() const { return P0_; }

 private:
  template <int, int, int, int>
  friend class ConstantParameterSweep;  // shares the weights and the process noise blocks
  problems::ParameterMode mode_;
  const problems::WeightedResidualWeights& weights_;
  VecX q0_;
  MatXX P0_;
  MatXX Q_xi_unit_;  // W⁻¹ (and W_theta⁻¹) blocks; the process covariance of xi is Q_xi_unit / h
  MatXX Q_xi_cross_;  // E Q + Q Eᵀ (see Initialize)
  MatXX Q_xi_outer_;  // E Q Eᵀ
  Eigen::Matrix<double, 2 * N, 2 * N> W_kinematic_;
  struct Workspace {
    std::vector<Elimination> eliminations;
    std::vector<UpdateFactors> factors;
    std::vector<VecX> m_post;
    std::vector<MatXX> P_post;
  };
  mutable Workspace workspace_;  // Smooth's per-node storage (not thread-safe across calls)
  MatZZ sqrt_residual_weight_;  // S with Sᵀ S = V
  bool sqrt_residual_weight_is_diagonal_ = false;
};

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_RICCATI_SWEEP_H_
