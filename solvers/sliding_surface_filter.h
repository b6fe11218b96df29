// solvers::RunSlidingSurfaceFilter — van de Molengraft's sliding-surface filter (van de
// Molengraft (1990) §4.3, eqs. 4.7–4.15), generic over the models of models/mechanical_model.h.
//
// Identification model (van de Molengraft (1990) eq. 2.11): augmented state
// x = [s; v; theta] (2n + p), augmented input p̄ = [a; u] (n + m),
//     x' = A x + B p̄ + xi,     E z = f(x, t) + F(x, t) p̄ + zeta,
// zeta = [−(M a + h + H u); z − (g + G a + R u)] (n + l), C = ∂(f + F p̄)/∂x. The filter treats
// theta as time-varying (theta' = xi_theta): whatever the model lacks is absorbed by theta, which
// is how the friction force is estimated in van de Molengraft (1990) §4.4.
//
// Instead of minimising a functional over the whole record, the filter forces the residual zeta
// to zero. With the sliding variable (eq. 4.7)
//     s_s = zeta + Lambda nu,   nu' = zeta      (nu = ∫ zeta dt, n + l),
// it imposes s_s' = −Omega sign(s_s − sigma) (eq. 4.9): each component reaches its surface
// s_s,i = sigma_i in finite time |s_s,i(t0) − sigma_i| / Omega_i, after which
// zeta' = −Lambda zeta, i.e. zeta decays as exp(−Lambda t) (eq. 4.8). With
// eta = E z' − C (A x + B p̄) + Lambda zeta + Omega sign(s_s − sigma) the condition reads
// F p̄' + C xi = eta (eq. 4.11). Splitting it with N ((n + l) × (l − m), full rank, Fᵀ N = 0):
//     Nᵀ C xi = Nᵀ eta,                 p̄' = (Fᵀ F)⁻¹ Fᵀ (eta − C xi)     (eq. 4.12)
// and choosing the xi of least ½ xiᵀ W xi (eq. 4.13) gives (eqs. 4.14–4.15)
//     xi = W⁻¹ Cᵀ N (Nᵀ C W⁻¹ Cᵀ N)⁻¹ Nᵀ eta,
//     p̄' = (Fᵀ F)⁻¹ Fᵀ [I − C W⁻¹ Cᵀ N (Nᵀ C W⁻¹ Cᵀ N)⁻¹ Nᵀ] eta,
//     x'  = A x + B p̄ + xi.
// Requirements (checked at every step, failure = a message naming the sample): F has full column
// rank n + m, l > m, and Nᵀ C W⁻¹ Cᵀ N is regular (the measurements other than the inputs must
// see the state). xi is minimised only locally (eq. 4.13 ignores the kinematic couplings), so
// velocities come from integrating accelerations, never from differentiating positions; a nonzero
// sigma therefore shifts the velocity estimate by the integral offset sigma / Lambda (the
// thesis's Fig. 4.3 shows it for sigma = 5).
//
// Time discretisation (the project's choice): explicit Euler on x, p̄ and nu over each sample
// interval h_k, with the measurement rate z' taken as the forward difference
// (z_{k+1} − z_k) / h_k unless the caller supplies rates (van de Molengraft (1990) asks for a
// differentiating filter; the forward difference is the derivative of the linear interpolant of the
// samples, so the filter integrates jumps of z, e.g. the acceleration jumps of stick–slip,
// exactly). For a model whose identification model is linear in (x, p̄) (C, F constant, e.g.
// models::UnknownForceMass) this makes the discrete sliding law exact:
//     s_s,k+1 = s_s,k − h_k Omega sign(s_s,k − sigma),
// so the reaching time is known in advance to within one sample and |s_s − sigma| stays below
// Omega h afterwards (chattering). A boundary layer (sign replaced by sat((s_s − sigma)/phi))
// removes the chattering at the price of an O(phi) residual.
#ifndef DYNID_SOLVERS_SLIDING_SURFACE_FILTER_H_
#define DYNID_SOLVERS_SLIDING_SURFACE_FILTER_H_

#include <Eigen/Core>
#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "dynid/models/model_linearization.h"

namespace dynid::solvers {

// Options. Vectors have one entry per component of zeta, i.e. n + l (equations of motion first,
// then measurements); RunSlidingSurfaceFilter checks the sizes against the model.
struct SlidingSurfaceFilterOptions {
  Eigen::VectorXd lambda;       // diagonal of Lambda (1/s), > 0: decay rate of zeta on the surface
  Eigen::VectorXd omega;        // diagonal of Omega (units of zeta per s), > 0: reaching speed
  Eigen::VectorXd sigma;        // target value of s_s (units of zeta); empty = 0
  Eigen::MatrixXd xi_weight;    // W, (2n + p) × (2n + p), symmetric positive definite
  double boundary_layer = 0.0;  // phi >= 0; 0 = pure sign (thesis), > 0 = sat((s − sigma)/phi)
  double rank_tolerance = 1e-10;  // relative singular-value threshold for rank(F) and N
  bool IsValid(std::string* why) const;
};

// Measurements at the sample times and, optionally, their time derivatives.
struct SlidingSurfaceFilterData {
  Eigen::VectorXd time;               // N >= 2 sample times (s), strictly increasing
  Eigen::MatrixXd measurements;       // N × l
  Eigen::MatrixXd measurement_rates;  // N × l z'(t_k), or empty = forward differences
};

struct SlidingSurfaceFilterSummary {
  bool converged = false;  // every component of s_s reached its surface within the record
  int iterations = 0;      // integration steps taken
  double cost = 0.0;       // ½ Σ_k h_k xi_kᵀ W xi_k, the locally minimised quantity (eq. 4.13)
  double time_s = 0.0;
  Eigen::VectorXd reaching_time_s;  // n + l: first t at which s_s,i − sigma_i changed sign or
                                    // hit zero (NaN when never)
  std::string message;
};

// Estimates at the sample times; column k belongs to time(k).
struct SlidingSurfaceFilterResult {
  Eigen::MatrixXd states;     // (2n + p) × N: x̂ = [ŝ; v̂; θ̂]
  Eigen::MatrixXd inputs;     // (n + m) × N: p̄ = [â; û]
  Eigen::MatrixXd residuals;  // (n + l) × N: zeta at the estimate
  Eigen::MatrixXd sliding;    // (n + l) × N: s_s
  Eigen::MatrixXd xi;         // (2n + p) × N: xi applied on [t_k, t_{k+1}] (last column 0)
};

namespace internal {

// Checks the option sizes against a model with these dimensions.
bool ValidateSlidingSurfaceInputs(int n, int m, int p, int l,
                                  const SlidingSurfaceFilterOptions& options,
                                  const SlidingSurfaceFilterData& data, const Eigen::VectorXd& x0,
                                  const Eigen::VectorXd& pbar0, std::string* error);

// The gains of eq. 4.15 for one linearisation: K_x = W⁻¹ Cᵀ N (Nᵀ C W⁻¹ Cᵀ N)⁻¹ Nᵀ
// ((2n + p) × (n + l)) and K_p = (Fᵀ F)⁻¹ Fᵀ (I − C K_x) ((n + m) × (n + l)), with N an
// orthonormal basis of null(Fᵀ) from the SVD of F. False with a message when F lacks full
// column rank or Nᵀ C W⁻¹ Cᵀ N is singular. They satisfy C K_x + F K_p = I.
bool SlidingSurfaceGains(const Eigen::MatrixXd& C, const Eigen::MatrixXd& F,
                         const Eigen::MatrixXd& W_inverse, double rank_tolerance,
                         Eigen::MatrixXd* K_x, Eigen::MatrixXd* K_p, std::string* error);

}  // namespace internal

// Runs the filter over the record from x̂(t0) = x0 (2n + p) and p̄(t0) = pbar0 (n + m).
// Returns false (result untouched, summary.message set) on invalid options, data or initial
// values, or when the gains do not exist at some sample; true otherwise (see summary.converged).
template <class Model>
bool RunSlidingSurfaceFilter(const Model& model, const SlidingSurfaceFilterData& data,
                             const SlidingSurfaceFilterOptions& options, const Eigen::VectorXd& x0,
                             const Eigen::VectorXd& pbar0, SlidingSurfaceFilterResult* result,
                             SlidingSurfaceFilterSummary* summary) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                l = Model::kNumMeasurements;
  constexpr int nx = 2 * n + p, np = n + m, nz = n + l;
  const auto start = std::chrono::steady_clock::now();
  *summary = SlidingSurfaceFilterSummary();
  std::string error;
  if (!internal::ValidateSlidingSurfaceInputs(n, m, p, l, options, data, x0, pbar0, &error)) {
    summary->message = error;
    return false;
  }
  const int num_samples = static_cast<int>(data.time.size());
  const Eigen::VectorXd sigma =
      options.sigma.size() == 0 ? Eigen::VectorXd::Zero(nz) : options.sigma;
  const Eigen::MatrixXd W_inverse = options.xi_weight.inverse();
  SlidingSurfaceFilterResult out;
  out.states.resize(nx, num_samples);
  out.inputs.resize(np, num_samples);
  out.residuals.resize(nz, num_samples);
  out.sliding.resize(nz, num_samples);
  out.xi.setZero(nx, num_samples);
  Eigen::VectorXd x = x0, pbar = pbar0, nu = Eigen::VectorXd::Zero(nz);
  Eigen::VectorXd reaching(nz);
  reaching.setConstant(std::numeric_limits<double>::quiet_NaN());
  Eigen::VectorXd initial_side(nz);
  models::ModelLinearization<Model> lin;
  Eigen::MatrixXd C(nz, nx), F(nz, np), K_x, K_p;
  Eigen::VectorXd zeta(nz), Ez_rate = Eigen::VectorXd::Zero(nz);
  for (int k = 0; k < num_samples; ++k) {
    const double t = data.time(k);
    models::LinearizeModel(model, x.data(), x.data() + n, pbar.data(), pbar.data() + n,
                           x.data() + 2 * n, t, &lin);
    C << lin.J_r_x, lin.J_z_x;
    F << lin.J_r_pbar, lin.J_z_pbar;
    zeta << -lin.equations, data.measurements.row(k).transpose() - lin.measurements;
    const Eigen::VectorXd s_s = zeta + options.lambda.cwiseProduct(nu);
    out.states.col(k) = x;
    out.inputs.col(k) = pbar;
    out.residuals.col(k) = zeta;
    out.sliding.col(k) = s_s;
    for (int i = 0; i < nz; ++i) {
      const double side = s_s(i) - sigma(i);
      if (k == 0) initial_side(i) = side;
      if (std::isnan(reaching(i)) && (side == 0.0 || (side > 0.0) != (initial_side(i) > 0.0))) {
        reaching(i) = t;
      }
    }
    if (k + 1 == num_samples) break;
    const double h = data.time(k + 1) - t;
    if (!internal::SlidingSurfaceGains(C, F, W_inverse, options.rank_tolerance, &K_x, &K_p,
                                       &error)) {
      summary->message =
          "sample " + std::to_string(k) + " (t = " + std::to_string(t) + " s): " + error;
      return false;
    }
    if (data.measurement_rates.size() == 0) {
      Ez_rate.tail(l) = (data.measurements.row(k + 1) - data.measurements.row(k)).transpose() / h;
    } else {
      Ez_rate.tail(l) = data.measurement_rates.row(k).transpose();
    }
    // A x + B p̄: s' = v, v' = a, theta' = 0.
    Eigen::VectorXd drift = Eigen::VectorXd::Zero(nx);
    drift.head(n) = x.segment(n, n);
    drift.segment(n, n) = pbar.head(n);
    Eigen::VectorXd switching(nz);
    for (int i = 0; i < nz; ++i) {
      const double side = s_s(i) - sigma(i);
      switching(i) = options.boundary_layer > 0.0
                         ? std::clamp(side / options.boundary_layer, -1.0, 1.0)
                         : static_cast<double>((side > 0.0) - (side < 0.0));
    }
    const Eigen::VectorXd eta = Ez_rate - C * drift + options.lambda.cwiseProduct(zeta) +
                                options.omega.cwiseProduct(switching);
    const Eigen::VectorXd xi = K_x * eta;
    out.xi.col(k) = xi;
    summary->cost += 0.5 * h * xi.dot(options.xi_weight * xi);
    x += h * (drift + xi);
    pbar += h * (K_p * eta);
    nu += h * zeta;
    summary->iterations = k + 1;
  }
  summary->reaching_time_s = reaching;
  summary->converged = !reaching.array().isNaN().any();
  summary->message = summary->converged
                         ? "every sliding variable reached its surface by t = " +
                               std::to_string(reaching.maxCoeff()) + " s"
                         : "some sliding variables did not reach their surface in the record";
  summary->time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  *result = std::move(out);
  return true;
}

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_SLIDING_SURFACE_FILTER_H_
