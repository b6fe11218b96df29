// solvers::RiccatiSweep — the linear–quadratic core of the first-order approximation and of the
// linear optimal filter (seed 004 §3.3, eqs. 3.9–3.16; see first_order_smoother.h for the maths).
//
// Fixed-size: N positions, NX = 2N (+ p) augmented states, NP = n + m augmented inputs,
// NZ = n + l residuals zeta per node, so that the per-node algebra runs on stack matrices.
#ifndef DYNID_SOLVERS_RICCATI_SWEEP_H_
#define DYNID_SOLVERS_RICCATI_SWEEP_H_

#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/QR>
#include <glog/logging.h>

#include "problems/weighted_residual_problem.h"

namespace dynid::solvers {

// zeta_k ≈ y − C x − D p̄ at one node; x = [s; v] (theta fixed) or [s; v; theta].
template <int NX, int NP, int NZ>
struct NodeLinearization {
  Eigen::Matrix<double, NZ, NX> C;
  Eigen::Matrix<double, NZ, NP> D;
  Eigen::Matrix<double, NZ, 1> y;
};

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
  using Node = NodeLinearization<NX, NP, NZ>;

  struct Elimination {
    MatPZ input_gain;         // K_p = (DᵀVD)⁻¹DᵀV
    MatPP input_information;  // G = DᵀVD
    MatPP input_covariance;   // G⁻¹
    MatUX H;                  // whitened measurement matrix U C
    VecU y_white;             // U y
    const Node* node = nullptr;
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
    Eigen::MatrixXd S;
    std::string why;
    if (!problems::SquareRootFactor(weights_.residual, false, &S, &why)) {
      *error = "residual weight V: " + why;
      return false;
    }
    sqrt_residual_weight_ = S;
    return true;
  }

  // Eliminates p̄ at a node with weight w (V w); false when DᵀVD is singular. With V = SᵀS and
  // sqrt(w) S D = [Q1 Q2] [R; 0]: DᵀVD = RᵀR, K_p = R⁻¹Q1ᵀ sqrt(w) S, U = Q2ᵀ sqrt(w) S.
  bool Eliminate(const Node& node, double node_weight, Elimination* out,
                 std::string* error) const {
    const MatZZ weighted_sqrt = std::sqrt(node_weight) * sqrt_residual_weight_;
    const Eigen::HouseholderQR<Eigen::Matrix<double, NZ, NP>> qr(weighted_sqrt * node.D);
    const MatPP R = qr.matrixQR().template topRows<NP>().template triangularView<Eigen::Upper>();
    const double scale = R.diagonal().cwiseAbs().maxCoeff();
    if (!(R.diagonal().cwiseAbs().minCoeff() > 1e-10 * scale)) {
      *error = "FᵀVF is singular: the inputs p̄ = [a; u] are not determined by the weighted "
               "equations of motion and measurements (seed 004 §3.2)";
      return false;
    }
    const MatZZ QtS = qr.householderQ().transpose() * weighted_sqrt;
    out->input_information = R.transpose() * R;
    const MatPP R_inverse = R.template triangularView<Eigen::Upper>().solve(MatPP::Identity());
    out->input_covariance = R_inverse * R_inverse.transpose();
    out->input_gain = R_inverse * QtS.template topRows<NP>();
    out->H = QtS.template bottomRows<NU>().lazyProduct(node.C);
    out->y_white = QtS.template bottomRows<NU>() * node.y;
    out->node = &node;
    return true;
  }

  // Measurement update from the prior (m, P) at a node (whitened, unit noise).
  void Update(const Elimination& e, const VecX& m_prior, const MatXX& P_prior, VecX* m_post,
              MatXX* P_post) const {
    // lazyProduct: coefficient-based products; Eigen would send these small fixed-size
    // products through its blocked GEMM kernel, which dominated the profile.
    const Eigen::Matrix<double, NX, NU> PHt = P_prior.lazyProduct(e.H.transpose());
    Eigen::Matrix<double, NU, NU> S = e.H.lazyProduct(PHt);
    S.diagonal().array() += 1.0;
    const Eigen::LLT<Eigen::Matrix<double, NU, NU>> s(S);
    const Eigen::Matrix<double, NX, NU> K = s.solve(PHt.transpose()).transpose();
    *m_post = m_prior + K * (e.y_white - e.H * m_prior);
    *P_post = P_prior - K.lazyProduct(PHt.transpose());
    *P_post = (0.5 * (*P_post + P_post->transpose())).eval();
  }

  // Prediction over an interval of length h: Φ = I + hA, Γ = h (I + hA/2) (exact, A² = 0),
  // p̄ = K_p (y − C x) + δ with cov(δ) = G⁻¹; also returns Ā = Φ − ΓB K_p C.
  void Predict(const Elimination& e, double h, const VecX& m_post, const MatXX& P_post,
               VecX* m_prior, MatXX* P_prior, MatXX* transition) const {
    MatXX Phi = MatXX::Identity();
    MatXX Gamma = h * MatXX::Identity();
    MatXP GammaB = MatXP::Zero();
    for (int i = 0; i < N; ++i) {
      Phi(i, N + i) = h;
      Gamma(i, N + i) = 0.5 * h * h;
      GammaB(i, i) = 0.5 * h * h;
      GammaB(N + i, i) = h;
    }
    const Node& node = *e.node;
    const Eigen::Matrix<double, NP, NX> KC = e.input_gain.lazyProduct(node.C);
    *transition = Phi - GammaB.lazyProduct(KC);
    *m_prior = *transition * m_post + GammaB * (e.input_gain * node.y);
    const MatXX TP = transition->lazyProduct(P_post);
    const MatXP GammaBG = GammaB.lazyProduct(e.input_covariance);
    const MatXX GammaQ = Gamma.lazyProduct(Q_xi_unit_);
    *P_prior = TP.lazyProduct(transition->transpose()) +
               GammaBG.lazyProduct(GammaB.transpose()) +
               GammaQ.lazyProduct(Gamma.transpose()) / h;
    *P_prior = (0.5 * (*P_prior + P_prior->transpose())).eval();
  }

  VecP FilteredInput(const Elimination& e, const VecX& x) const {
    return e.input_gain * (e.node->y - e.node->C * x);
  }

  // argmin |p̄ − K_p(y − Cx)|²_G + h |xi_kin(p̄)|²_W, xi_kin = Γ_kin⁻¹(x' − Φx) − B p̄.
  VecP SmoothedInput(const Elimination& e, double h, const VecX& x, const VecX& x_next) const {
    Eigen::Matrix<double, 2 * N, 1> d;
    for (int i = 0; i < N; ++i) {
      const double delta_s = x_next(i) - x(i) - h * x(N + i);
      const double delta_v = x_next(N + i) - x(N + i);
      d(i) = (delta_s - 0.5 * h * delta_v) / h;
      d(N + i) = delta_v / h;
    }
    // Bᵀ W B picks the a-rows (first N entries of p̄) of the v-block of W.
    MatPP lhs = e.input_information;
    lhs.template topLeftCorner<N, N>() += h * W_kinematic_.template bottomRightCorner<N, N>();
    VecP rhs = e.input_information * FilteredInput(e, x);
    rhs.template head<N>() += h * (W_kinematic_.template bottomRows<N>() * d);
    return lhs.ldlt().solve(rhs);
  }

  // Forward sweep + Rauch–Tung–Striebel backward sweep: states (NX × N), inputs (NP × N).
  bool Smooth(const Eigen::VectorXd& time, const std::vector<Node>& nodes,
              Eigen::MatrixXd* states, Eigen::MatrixXd* inputs, std::string* error) const {
    const int num_nodes = static_cast<int>(nodes.size());
    CHECK_EQ(time.size(), num_nodes) << "expected one linearisation per node";
    const Eigen::VectorXd node_weights = problems::TrapezoidalNodeWeights(time);
    std::vector<Elimination> eliminations(num_nodes);
    // Only the means and the RTS gains J_k = P⁺_k Āᵀ (P⁻_{k+1})⁻¹ are kept per node; the
    // covariances live one step at a time.
    std::vector<VecX> m_prior(num_nodes), m_post(num_nodes);
    std::vector<MatXX> gain(num_nodes);
    MatXX P_prior = P0_, P_post, P_next, transition;
    m_prior[0] = q0_;
    for (int k = 0; k < num_nodes; ++k) {
      if (!Eliminate(nodes[k], node_weights(k), &eliminations[k], error)) {
        *error = "node " + std::to_string(k) + ": " + *error;
        return false;
      }
      Update(eliminations[k], m_prior[k], P_prior, &m_post[k], &P_post);
      if (k + 1 < num_nodes) {
        Predict(eliminations[k], time(k + 1) - time(k), m_post[k], P_post, &m_prior[k + 1],
                &P_next, &transition);
        const Eigen::LDLT<MatXX> prior(P_next);
        gain[k] = prior.solve(transition.lazyProduct(P_post)).transpose();
        P_prior = P_next;
      }
    }
    states->resize(NX, num_nodes);
    inputs->resize(NP, num_nodes);
    VecX next = m_post[num_nodes - 1];
    states->col(num_nodes - 1) = next;
    for (int k = num_nodes - 2; k >= 0; --k) {
      next = m_post[k] + gain[k] * (next - m_prior[k + 1]);
      states->col(k) = next;
    }
    for (int k = 0; k < num_nodes; ++k) {
      const VecX x = states->col(k);
      if (k + 1 < num_nodes) {
        const VecX x_next = states->col(k + 1);
        inputs->col(k) = SmoothedInput(eliminations[k], time(k + 1) - time(k), x, x_next);
      } else {
        inputs->col(k) = FilteredInput(eliminations[k], x);
      }
    }
    return true;
  }

  const VecX& initial_mean() const { return q0_; }
  const MatXX& initial_covariance() const { return P0_; }

 private:
  problems::ParameterMode mode_;
  const problems::WeightedResidualWeights& weights_;
  VecX q0_;
  MatXX P0_;
  MatXX Q_xi_unit_;  // W⁻¹ (and W_theta⁻¹) blocks; the process covariance of xi is Q_xi_unit / h
  Eigen::Matrix<double, 2 * N, 2 * N> W_kinematic_;
  MatZZ sqrt_residual_weight_;  // S with Sᵀ S = V
};

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_RICCATI_SWEEP_H_
