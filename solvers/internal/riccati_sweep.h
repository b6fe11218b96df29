// solvers::RiccatiSweep — the linear–quadratic core of the first-order approximation and of the
// linear optimal filter (van de Molengraft (1990) §3.3, eqs. 3.9–3.16; see first_order_smoother.h
// for the maths).
//
// Fixed-size: N positions, NX = 2N (+ p) augmented states, NP = n + m augmented inputs,
// NZ = n + l residuals zeta per node, so that the per-node algebra runs on stack matrices with no
// heap allocation per node. Throughput (bench_weighted_residual): the elimination of p̄ is one
// hand-rolled Householder QR of sqrt(w) S [D | C | y]; Φ, Γ and ΓB are applied through their
// sparsity (only the acceleration rows of K_p C enter the prediction); the backward sweep runs
// on the adjoint (no factorisation of P⁻, no gain); P⁺ and P⁻ are formed one triangle at a time;
// all small products are coefficient-based (lazyProduct), because Eigen sends fixed-size
// products with rows + cols + depth > 20 through its blocked GEMM/GEMV kernels.
#ifndef DYNID_SOLVERS_INTERNAL_RICCATI_SWEEP_H_
#define DYNID_SOLVERS_INTERNAL_RICCATI_SWEEP_H_

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/QR>
#include <glog/logging.h>

#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/internal/simd_kernels.h"

namespace dynid::solvers {

namespace internal {

// (The kernels below unroll their fixed-trip-count loops with DYNID_UNROLL, simd_kernels.h: their
// triangular inner loops have constant trip counts only once the outer loop is unrolled.)

// Small fixed-size dense kernels (Eigen's LLT and triangular solves route fixed sizes through
// dynamic-block code paths, which dominated the profile of the sweep at these sizes). All are
// written in the right-looking (outer-product) order: each step updates many independent
// entries, where the dot-product order is one serial chain of dependent additions per entry
// (latency-bound; that order dominated a later profile).

// A = L Lᵀ in place (L in the lower triangle; the strict upper triangle is left untouched);
// false when A is not numerically positive definite.
template <int K>
DYNID_ALWAYS_INLINE bool CholeskyInPlace(Eigen::Matrix<double, K, K>* matrix) {
  Eigen::Matrix<double, K, K>& a = *matrix;
  DYNID_UNROLL
  for (int j = 0; j < K; ++j) {
    const double d = a(j, j);
    if (!(d > 0.0)) return false;
    // 1/sqrt(d) as sqrt(d) · (1/d): the square root and the division run side by side.
    const double root = std::sqrt(d);
    const double inverse = root * (1.0 / d);
    a(j, j) = root;
    DYNID_UNROLL
    for (int i = j + 1; i < K; ++i) a(i, j) *= inverse;
    DYNID_UNROLL
    for (int c = j + 1; c < K; ++c) {
      DYNID_UNROLL
      for (int i = c; i < K; ++i) a(i, c) -= a(i, j) * a(c, j);
    }
  }
  return true;
}

// B ← L⁻¹ B for L lower triangular (the lower triangle of `lower`).
// (The solves multiply by the reciprocals of the diagonal, computed once: divisions dominated.
// They work on a row-major copy of B, so that each row operation is a contiguous SIMD update
// across B's columns; on the column-major B those rows are strided.)
template <int K, int C>
DYNID_ALWAYS_INLINE void LowerSolveInPlace(const Eigen::Matrix<double, K, K>& lower,
                                           Eigen::Matrix<double, K, C>* b) {
  const Eigen::Matrix<double, K, 1> inverse = lower.diagonal().cwiseInverse();
  Eigen::Matrix<double, K, C, C == 1 ? Eigen::ColMajor : Eigen::RowMajor> rows = *b;
  DYNID_UNROLL
  for (int i = 0; i < K; ++i) {
    rows.row(i) *= inverse(i);
    DYNID_UNROLL
    for (int r = i + 1; r < K; ++r) rows.row(r) -= lower(r, i) * rows.row(i);
  }
  *b = rows;
}

// B ← L⁻ᵀ B for L lower triangular.
template <int K, int C>
DYNID_ALWAYS_INLINE void LowerTransposeSolveInPlace(const Eigen::Matrix<double, K, K>& lower,
                                Eigen::Matrix<double, K, C>* b) {
  const Eigen::Matrix<double, K, 1> inverse = lower.diagonal().cwiseInverse();
  Eigen::Matrix<double, K, C, C == 1 ? Eigen::ColMajor : Eigen::RowMajor> rows = *b;
  DYNID_UNROLL
  for (int i = K - 1; i >= 0; --i) {
    rows.row(i) *= inverse(i);
    DYNID_UNROLL
    for (int r = 0; r < i; ++r) rows.row(r) -= lower(i, r) * rows.row(i);
  }
  *b = rows;
}

// B ← R⁻¹ B for R upper triangular (the upper triangle of `upper`).
template <int K, int C>
DYNID_ALWAYS_INLINE void UpperSolveInPlace(const Eigen::Matrix<double, K, K>& upper,
                                           Eigen::Matrix<double, K, C>* b) {
  const Eigen::Matrix<double, K, 1> inverse = upper.diagonal().cwiseInverse();
  Eigen::Matrix<double, K, C, C == 1 ? Eigen::ColMajor : Eigen::RowMajor> rows = *b;
  DYNID_UNROLL
  for (int i = K - 1; i >= 0; --i) {
    rows.row(i) *= inverse(i);
    DYNID_UNROLL
    for (int r = 0; r < i; ++r) rows.row(r) -= upper(r, i) * rows.row(i);
  }
  *b = rows;
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
  // Row-major: the model's Jacobians come row by row (one residual at a time) and the
  // elimination of p̄ (RiccatiSweep::Eliminate) works on whole rows.
  Eigen::Matrix<double, NZ, NX, Eigen::RowMajor> C;
  Eigen::Matrix<double, NZ, NP, NP == 1 ? Eigen::ColMajor : Eigen::RowMajor> D;
  Eigen::Matrix<double, NZ, 1> y;
};

// The same linearisation laid out for the elimination of p̄ (RiccatiSweep::Eliminate): row i of
// [D_u | D_a | C | zeta] (p̄'s columns in the order [u; a]) is column i of `rows`, padded with
// zeros to whole packets, and `point` is the point of the linearisation [u; a; x; 1] (padding
// zero), so that y_i = zeta_i + C_i x + D_i p̄ is row i times the point. A model's Jacobians are
// written into the rows directly (models::LinearizationTarget with a stride), and y is formed on
// packets together with the weighting of the rows.
template <int NX, int NP, int NZ>
struct NodeRows {
  static constexpr int kColumns = NP + NX + 1;
  static constexpr int kPaddedColumns = simd::PaddedRows(kColumns);
  NodeRows() {
    rows.SetZero();
    point.SetZero();
    point(kColumns - 1, 0) = 1.0;
  }
  double& zeta(int i) { return rows(kColumns - 1, i); }
  simd::Block<kPaddedColumns, NZ> rows;
  simd::Block<kPaddedColumns, 1> point;
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
  using Rows = NodeRows<NX, NP, NZ>;

  static constexpr int NM = NP - N;  // inputs u among p̄ = [a; u]

  // p̄ | x at one node in square-root form: with p̄ reordered as q = [u; a] (accelerations last),
  // |sqrt(w) S (y − C x − D p̄)|² = |R q − (c − Rc_C x)|² + |y_white − H x|², R upper
  // triangular, [Rc_C | c] = Rc. So p̄ | x ~ N(K_p (y − C x), G⁻¹) with G = RᵀR and
  // K_p (y − C x) = R⁻¹ (c − Rc_C x) (reordered back); G and K_p are never formed.
  struct InputFactor {
    InputFactor() {}  // no zero-fill in std::vector<InputFactor>(n) (see NodeLinearization)
    MatPP R;                                // upper triangular, rows and columns in [u; a]
    Eigen::Matrix<double, NP, NX + 1> Rc;   // Q1ᵀ sqrt(w) S [C | y], rows in [u; a]
  };

  // p̄ eliminated at one node: the factor above, the acceleration rows of the gain (with
  // accelerations last, K_a [C | y] = R_aa⁻¹ Rc_a and cov(a | x) = R_aa⁻¹ R_aa⁻ᵀ need only the
  // trailing N × N block R_aa of R), and the whitened remainder of the measurement, H x ≈ y_white
  // with unit noise (Hᵀ H = Cᵀ V⊥ C).
  struct Elimination {
    Elimination() {}  // no zero-fill in std::vector<Elimination>(n) (see NodeLinearization)
    InputFactor factor;
    Eigen::Matrix<double, N, NX + 1> KaCy;  // K_a [C | y]
    Eigen::Matrix<double, N, N> Gaa;        // (G⁻¹)_aa, the covariance of a | x
    MatUX H;                                // whitened measurement matrix U C
    VecU y_white;                           // U y
    auto KaC() const { return KaCy.template leftCols<NX>(); }
    auto Kay() const { return KaCy.col(NX); }
  };

  // The rows of the elimination's QR as it leaves them, for a caller that reads the gain and the
  // whitened remainder in place (Eliminate's `sink`) instead of from an Elimination.
  struct FactoredRows {
    const simd::Block<simd::PaddedRows(NP + NX + 1), NZ>& coupled;
    const simd::Block<simd::PaddedRows(NP + NX + 1), NZ>& free;
    int reduced;  // rows of the remainder among the coupled rows
    // Row i of K_a [C | y] (NX + 1 values).
    const double* KaCyRow(int i) const { return coupled.v[NM + i] + NP; }
    // Row r of [H | y_white] (NX + 1 values), r < NU.
    const double* RemainderRow(int r) const {
      return r < reduced ? coupled.v[NP + r] + NP : free.v[r - reduced] + NP;
    }
  };

  // Eliminate's default sink: K_a [C | y], H and y_white into the Elimination.
  struct WriteElimination {
    void operator()(const FactoredRows& rows, Elimination* out) const {
      for (int i = 0; i < N; ++i) {
        const double* row = rows.KaCyRow(i);
        for (int c = 0; c <= NX; ++c) out->KaCy(i, c) = row[c];
      }
      for (int r = 0; r < NU; ++r) {
        const double* row = rows.RemainderRow(r);
        for (int c = 0; c < NX; ++c) out->H(r, c) = row[c];
        out->y_white(r) = row[NX];
      }
    }
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
               std::to_string(NX) + ") and q0; Q(t0) = R0⁻¹ (van de Molengraft (1990) eq. 3.9c)";
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
  // sqrt(w) S [D | C | y] = Q [R Rc; 0 [H y_white]], one Householder QR on the stack, without
  // forming Q. Rows of sqrt(w) S D that are zero (measurements p̄ does not enter, e.g. of
  // positions; common with a diagonal V) are already whitened rows of [H | y_white] and skip the
  // QR (FactorCoupledRows).
  // V: the packet type of the QR (simd_kernels.h; Packet4 only inside DYNID_TARGET_WIDE code).
  // The input factor goes to *factor (out->factor when null); K_a [C | y], H and y_white go
  // through sink(rows, out) (FactoredRows; by default into *out), called once Gaa is in *out.
  template <class V = simd::Packet2, class Sink = WriteElimination>
  DYNID_ALWAYS_INLINE bool Eliminate(const Node& node, double node_weight, Elimination* out,
                                     std::string* error, InputFactor* factor = nullptr,
                                     const Sink& sink = Sink()) const {
    // The rows of sqrt(w) S [D_u | D_a | C | y | 0] (p̄'s columns reordered to [u; a]), one
    // simd::Block column per row: those p̄ enters (coupled) in order into `coupled`, the others
    // into `free`.
    simd::Block<NCP, NZ> coupled;
    simd::Block<NCP, NZ> free;
    int num_coupled = 0, num_free = 0;
    const double root_weight = std::sqrt(node_weight);
    if (sqrt_residual_weight_is_diagonal_) {
      for (int i = 0; i < NZ; ++i) {
        const double scale = root_weight * sqrt_residual_weight_(i, i);
        const double* d = node.D.data() + i * NP;    // row i of D (row-major, or a 1-column D)
        const double* c_row = node.C.data() + i * NX;
        bool enters = false;  // (exact zeros: p̄ does not enter the row)
        for (int c = 0; c < NP; ++c) enters |= d[c] != 0.0;
        enters = enters && scale != 0.0;
        double* row = enters ? coupled.v[num_coupled] : free.v[num_free];
        num_coupled += enters;
        num_free += !enters;
        for (int c = 0; c < NM; ++c) row[c] = scale * d[N + c];
        for (int c = 0; c < N; ++c) row[NM + c] = scale * d[c];
        for (int c = 0; c < NX; ++c) row[NP + c] = scale * c_row[c];
        row[NC - 1] = scale * node.y(i);
        for (int c = NC; c < NCP; ++c) row[c] = 0.0;
      }
    } else {
      Weighted weighted;
      const MatZZ weighted_sqrt = root_weight * sqrt_residual_weight_;
      weighted.template leftCols<NM>() =
          weighted_sqrt.lazyProduct(node.D.template rightCols<NM>());
      weighted.template middleCols<N>(NM) =
          weighted_sqrt.lazyProduct(node.D.template leftCols<N>());
      weighted.template middleCols<NX>(NP) = weighted_sqrt.lazyProduct(node.C);
      weighted.col(NC - 1) = weighted_sqrt.lazyProduct(node.y);
      if constexpr (NCP > NC) weighted.template rightCols<NCP - NC>().setZero();
      SplitRows(weighted, &coupled, &free, &num_coupled);
    }
    return FactorWeightedRows<V>(num_coupled, &coupled, free, out, factor, sink, error);
  }

  // As above from the rows of a NodeRows: each row's y is formed here, as the row times the
  // point, on packets (V) while the row is weighted.
  template <class V = simd::Packet2, class Sink = WriteElimination>
  DYNID_ALWAYS_INLINE bool Eliminate(const Rows& node, double node_weight, Elimination* out,
                                     std::string* error, InputFactor* factor = nullptr,
                                     const Sink& sink = Sink()) const {
    static_assert(Rows::kPaddedColumns == NCP, "the QR's row layout");
    constexpr int W = simd::kWidth<V>;
    constexpr int kPackets = NCP / W;
    simd::Block<NCP, NZ> coupled;
    simd::Block<NCP, NZ> free;
    int num_coupled = 0;
    const double root_weight = std::sqrt(node_weight);
    auto y_of_row = [&node](int i) DYNID_LAMBDA_INLINE {
      V sum = node.rows.template packet<V>(0, i) * node.point.template packet<V>(0, 0);
      DYNID_UNROLL
      for (int p = 1; p < kPackets; ++p) {
        sum += node.rows.template packet<V>(p, i) * node.point.template packet<V>(p, 0);
      }
      double y = sum[0];
      DYNID_UNROLL
      for (int lane = 1; lane < W; ++lane) y += sum[lane];
      return y;
    };
    if (sqrt_residual_weight_is_diagonal_) {
      int num_free = 0;
      DYNID_UNROLL
      for (int i = 0; i < NZ; ++i) {
        const double scale = root_weight * sqrt_residual_weight_(i, i);
        // (exact zeros: p̄ does not enter the row)
        const bool enters = simd::AnyNonzero<V, NP>(node.rows, i) && scale != 0.0;
        const double y = y_of_row(i);
        double* row = enters ? coupled.v[num_coupled] : free.v[num_free];
        num_coupled += enters;
        num_free += !enters;
        DYNID_UNROLL
        for (int p = 0; p < kPackets; ++p) {
          *reinterpret_cast<V*>(row + W * p) = scale * node.rows.template packet<V>(p, i);
        }
        row[NC - 1] = scale * y;
      }
    } else {
      Weighted stacked = Eigen::Map<const Weighted>(node.rows.v[0]);
      for (int i = 0; i < NZ; ++i) stacked(i, NC - 1) = y_of_row(i);
      const Weighted weighted = (root_weight * sqrt_residual_weight_).lazyProduct(stacked);
      SplitRows(weighted, &coupled, &free, &num_coupled);
    }
    return FactorWeightedRows<V>(num_coupled, &coupled, free, out, factor, sink, error);
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
    const Eigen::Matrix<double, N, NX> KC = e.KaC();
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
    const Eigen::Matrix<double, N, NX> KC = e.KaC();
    // m⁻ = Ā m⁺ + ΓB K_p y.
    const Eigen::Matrix<double, N, 1> input_mean = e.Kay() - KC.lazyProduct(m_post);
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
    internal::AddInputNoiseAndSymmetrize(e.Gaa, h, &P);
  }

  // w = Āᵀ λ with Ā = Φ − ΓB K_p C applied through its structure.
  VecX TransitionTransposeTimes(const Elimination& e, double h, const VecX& lambda) const {
    const double half_h2 = 0.5 * h * h;
    Eigen::Matrix<double, N, 1> g;
    for (int i = 0; i < N; ++i) g(i) = half_h2 * lambda(i) + h * lambda(N + i);
    VecX w = lambda - e.KaC().transpose().lazyProduct(g);
    for (int i = 0; i < N; ++i) w(N + i) += h * lambda(i);
    return w;
  }

  // p̄ | x's mean K_p (y − C x).
  VecP FilteredInput(const Elimination& e, const VecX& x) const {
    return FilteredInput(e.factor, x);
  }

  DYNID_ALWAYS_INLINE VecP FilteredInput(const InputFactor& f, const VecX& x) const {
    Eigen::Matrix<double, NP, 1> q =
        f.Rc.col(NX) - f.Rc.template leftCols<NX>().lazyProduct(x);
    internal::UpperSolveInPlace(f.R, &q);
    return FromReordered(q);
  }

  // argmin |p̄ − K_p(y − Cx)|²_G + h |xi_kin(p̄)|²_W, xi_kin = Γ_kin⁻¹(x' − Φx) − B p̄.
  VecP SmoothedInput(const Elimination& e, double h, const VecX& x, const VecX& x_next) const {
    return SmoothedInput(e.factor, h, x, x_next);
  }

  // As above from the input factor. In the order q = [u; a], with r = c − Rc_C x, the cost is
  // |R q − r|² + h |q_a − t|²_{W_vv} (t = d_v + W_vv⁻¹ W_vs d_s, B q = [0; q_a]): R is upper
  // triangular with the accelerations last, so for given q_a the u-rows are solved exactly,
  // q_u = R_uu⁻¹ (r_u − R_ua q_a), and q_a solves the N × N system
  // (R_aaᵀ R_aa + h W_vv) q_a = R_aaᵀ r_a + h W_v: d (the normal equations of the whole cost
  // reduced to the accelerations).
  DYNID_ALWAYS_INLINE VecP SmoothedInput(const InputFactor& f, double h, const VecX& x,
                                         const VecX& x_next) const {
    Eigen::Matrix<double, 2 * N, 1> d;
    for (int i = 0; i < N; ++i) {
      const double delta_s = x_next(i) - x(i) - h * x(N + i);
      const double delta_v = x_next(N + i) - x(N + i);
      d(i) = (delta_s - 0.5 * h * delta_v) / h;
      d(N + i) = delta_v / h;
    }
    const VecP r = f.Rc.col(NX) - f.Rc.template leftCols<NX>().lazyProduct(x);
    using MatNN = Eigen::Matrix<double, N, N>;
    using VecN = Eigen::Matrix<double, N, 1>;
    const MatNN R_aa = f.R.template bottomRightCorner<N, N>();
    MatNN lhs = R_aa.transpose().lazyProduct(R_aa) +
                h * W_kinematic_.template bottomRightCorner<N, N>();
    VecN q_a = R_aa.transpose().lazyProduct(r.template tail<N>()) +
               h * W_kinematic_.template bottomRows<N>().lazyProduct(d);
    // Positive definite (W is): Cholesky fails only on non-finite input.
    const MatNN lhs_copy = lhs;
    if (internal::CholeskyInPlace(&lhs)) {
      internal::LowerSolveInPlace(lhs, &q_a);
      internal::LowerTransposeSolveInPlace(lhs, &q_a);
    } else if constexpr (N == 1) {
      q_a(0) /= lhs_copy(0, 0);
    } else {
      q_a = lhs_copy.ldlt().solve(q_a).eval();
    }
    VecP pbar;
    pbar.template head<N>() = q_a;
    if constexpr (NM > 0) {
      Eigen::Matrix<double, NM, 1> q_u =
          r.template head<NM>() - f.R.template topRightCorner<NM, N>().lazyProduct(q_a);
      const Eigen::Matrix<double, NM, NM> R_uu = f.R.template topLeftCorner<NM, NM>();
      internal::UpperSolveInPlace(R_uu, &q_u);
      pbar.template tail<NM>() = q_u;
    }
    return pbar;
  }

  // p̄ = [a; u] from q = [u; a].
  static VecP FromReordered(const VecP& q) {
    VecP pbar;
    pbar.template head<N>() = q.template tail<N>();
    pbar.template tail<NM>() = q.template head<NM>();
    return pbar;
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
  static constexpr int NC = NP + NX + 1;  // columns of [D | C | y]
  // Columns of [D | C | y] padded with zeros to whole packets: each row of the QR is one
  // simd::Block column, updated packet by packet.
  static constexpr int NCP = simd::PaddedRows(NC);
  using Weighted = Eigen::Matrix<double, NZ, NCP, Eigen::RowMajor>;
  static constexpr const char* kSingularInputMessage =
      "FᵀVF is singular: the inputs p̄ = [a; u] are not determined by the weighted equations of "
      "motion and measurements (van de Molengraft (1990) §3.2)";

  // The rows of `weighted` into *coupled (those p̄ enters: nonzero in the first NP columns, in
  // order; their count in *num_coupled) and *free (the others, in order).
  static void SplitRows(const Weighted& weighted, simd::Block<NCP, NZ>* coupled,
                        simd::Block<NCP, NZ>* free, int* num_coupled) {
    int num_free = 0;
    for (int i = 0; i < NZ; ++i) {
      const bool enters = !weighted.row(i).template head<NP>().isZero(0.0);
      double* row = enters ? coupled->v[(*num_coupled)++] : free->v[num_free++];
      for (int c = 0; c < NCP; ++c) row[c] = weighted(i, c);
    }
  }

  // The QR of the weighted rows (Eliminate), once at least NP rows are coupled.
  template <class V, class Sink>
  DYNID_ALWAYS_INLINE bool FactorWeightedRows(int num_coupled, simd::Block<NCP, NZ>* coupled,
                                              const simd::Block<NCP, NZ>& free, Elimination* out,
                                              InputFactor* factor, const Sink& sink,
                                              std::string* error) const {
    if (num_coupled < NP) {
      *error = kSingularInputMessage;
      return false;
    }
    return FactorCoupledRows<V, NP>(num_coupled, coupled, free, out,
                                    factor != nullptr ? factor : &out->factor, sink, error);
  }

  // FactorRows for num_coupled (in [kRows, NZ]) coupled rows. With the wide kernels the count
  // becomes a compile-time constant, so that the QR's row loops unroll completely: every count
  // has its own code, but a sweep runs one of them (the rows p̄ enters are the same at every
  // node of a model). The portable kernels keep one copy with run-time row loops.
  template <class V, int kRows, class Sink>
  DYNID_ALWAYS_INLINE bool FactorCoupledRows(int num_coupled, simd::Block<NCP, NZ>* rows,
                                             const simd::Block<NCP, NZ>& free, Elimination* out,
                                             InputFactor* factor, const Sink& sink,
                                             std::string* error) const {
    if constexpr (simd::kWidth<V> < 4) {
      return FactorRows<V, 0>(num_coupled, rows, free, out, factor, sink, error);
    } else {
      if constexpr (kRows < NZ) {
        if (num_coupled != kRows) {
          return FactorCoupledRows<V, kRows + 1>(num_coupled, rows, free, out, factor, sink,
                                                 error);
        }
      }
      return FactorRows<V, kRows>(num_coupled, rows, free, out, factor, sink, error);
    }
  }

  // The QR of the RP = num_coupled >= NP coupled rows (the first RP rows of *rows; kRows = RP,
  // or 0 for a run-time count), and the elimination's blocks from it and from the free rows
  // (the NU − (RP − NP) first of `free`).
  template <class V, int kRows, class Sink>
  DYNID_ALWAYS_INLINE bool FactorRows(int num_coupled, simd::Block<NCP, NZ>* rows,
                                      const simd::Block<NCP, NZ>& free, Elimination* out,
                                      InputFactor* factor, const Sink& sink,
                                      std::string* error) const {
    const int RP = kRows > 0 ? kRows : num_coupled;
    // M(c, r) is row r, column c of the matrix being factored; a reflection is applied as
    // whole-row packet updates.
    simd::Block<NCP, NZ>& M = *rows;
    // Householder reflections I − tau v vᵀ (v_j = 1, zero above j) zeroing column j below the
    // diagonal: w = tau vᵀ M, then M ← M − v w, over rows j.. (columns left of j are zero
    // from row j on and stay zero). A row with a zero in column j (v_i = 0) is left as it is:
    // mechanical models' Jacobians are sparse (a measured input or acceleration enters its own
    // row and one equation of motion), so that most reflections change only two or three rows;
    // the result equals the dense reflection's.
    constexpr int W = simd::kWidth<V>;
    constexpr int kRowPackets = NCP / W;
    constexpr bool kUnroll = kRows > 0;
    simd::ForEach<kUnroll>(0, NP, [&](int j) DYNID_LAMBDA_INLINE {
      double tail = 0.0;
      simd::ForEach<kUnroll>(j + 1, RP, [&](int i) DYNID_LAMBDA_INLINE {
        tail += M(j, i) * M(j, i);
      });
      if (tail == 0.0) return;  // already triangular in this column (tau = 0)
      const double alpha = M(j, j);
      const double beta =
          alpha >= 0.0 ? -std::sqrt(alpha * alpha + tail) : std::sqrt(alpha * alpha + tail);
      const double tau = (beta - alpha) / beta;
      const double scale = 1.0 / (alpha - beta);
      // w = tau (row j + Σ v_i row i) with v_i = M(j, i) scale, then row i −= v_i w, on whole
      // packets; column j below the diagonal becomes zero.
      V w[kRowPackets];
      DYNID_UNROLL
      for (int p = 0; p < kRowPackets; ++p) w[p] = M.template packet<V>(p, j);
      simd::ForEach<kUnroll>(j + 1, RP, [&](int i) DYNID_LAMBDA_INLINE {
        if (M(j, i) == 0.0) return;
        const double v = M(j, i) * scale;
        DYNID_UNROLL
        for (int p = 0; p < kRowPackets; ++p) w[p] += v * M.template packet<V>(p, i);
      });
      DYNID_UNROLL
      for (int p = 0; p < kRowPackets; ++p) {
        w[p] *= tau;
        M.template packet<V>(p, j) -= w[p];
      }
      simd::ForEach<kUnroll>(j + 1, RP, [&](int i) DYNID_LAMBDA_INLINE {
        if (M(j, i) == 0.0) return;
        const double v = M(j, i) * scale;
        DYNID_UNROLL
        for (int p = 0; p < kRowPackets; ++p) M.template packet<V>(p, i) -= v * w[p];
        M(j, i) = 0.0;
      });
      M(j, j) = beta;
    });
    MatPP& R = factor->R;
    for (int c = 0; c < NP; ++c) {
      for (int r = 0; r < NP; ++r) R(r, c) = r <= c ? M(c, r) : 0.0;
    }
    const double scale = R.diagonal().cwiseAbs().maxCoeff();
    if (!(R.diagonal().cwiseAbs().minCoeff() > 1e-10 * scale)) {
      *error = kSingularInputMessage;
      return false;
    }
    for (int c = 0; c <= NX; ++c) {
      for (int r = 0; r < NP; ++r) factor->Rc(r, c) = M(NP + c, r);
    }
    // K_a [C | y] = R_aa⁻¹ Rc_a by back substitution on the whole acceleration rows (their
    // columns left of NP become scratch).
    for (int i = NP - 1; i >= NM; --i) {
      double coefficient[NP];
      for (int j = i + 1; j < NP; ++j) coefficient[j] = M(j, i);
      const double inverse = 1.0 / M(i, i);
      DYNID_UNROLL
      for (int p = 0; p < kRowPackets; ++p) {
        V row = M.template packet<V>(p, i);
        for (int j = i + 1; j < NP; ++j) row -= coefficient[j] * M.template packet<V>(p, j);
        M.template packet<V>(p, i) = row * inverse;
      }
    }
    const Eigen::Matrix<double, N, N> R_aa = R.template bottomRightCorner<N, N>();
    Eigen::Matrix<double, N, N> R_aa_inverse = Eigen::Matrix<double, N, N>::Identity();
    internal::UpperSolveInPlace(R_aa, &R_aa_inverse);
    out->Gaa = R_aa_inverse.lazyProduct(R_aa_inverse.transpose());
    sink(FactoredRows{M, free, RP - NP}, out);
    return true;
  }

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

#endif  // DYNID_SOLVERS_INTERNAL_RICCATI_SWEEP_H_
