// models/inertia_parameterization — physical consistency of the 10 inertial parameters of a link
// and their log-Cholesky parametrisation.
//
// Pseudo-inertia. The inertial parameters of link j about the origin of its frame (SerialRobot
// layout v = [xx xy xz yy yz zz mx my mz m]: inertia tensor I [kg m²], first moment h = m c
// [kg m], mass m [kg]) are the second moments of its mass distribution ρ:
//     J = ∫ [p; 1][p; 1]ᵀ ρ(p) dV = [[Σ, h], [hᵀ, m]],   Σ = ∫ p pᵀ ρ dV = ½ tr(I) 1 − I,
// and conversely I = tr(Σ) 1 − Σ. J is linear in v (LinkInertia::PseudoInertia). Wensing, Kim &
// Slotine (2017) show that v is realised by a positive mass distribution (physically consistent,
// "density realisable") if and only if J is positive semidefinite, and by one that is not
// confined to a plane, line or point if and only if J is positive definite. J ≻ 0 holds exactly
// when m > 0 and the inertia about the centre of mass, I_c = I − m([c]×ᵀ[c]×), has principal
// moments λ1 ≤ λ2 ≤ λ3 with λ1 + λ2 > λ3 (the triangle inequalities, which imply λ1 > 0).
//
// Log-Cholesky parametrisation (Rucker & Wensing, 2022). Every J ≻ 0 has a unique factor
// J = U Uᵀ with U upper triangular and a positive diagonal; writing
//         [ e^{d1}  s12     s13     t1 ]
//  U = e^α[ 0       e^{d2}  s23     t2 ]
//         [ 0       0       e^{d3}  t3 ]
//         [ 0       0       0       1  ]
// gives a smooth bijection between η = [α, d1, d2, d3, s12, s23, s13, t1, t2, t3] ∈ R¹⁰ and the
// consistent inertias: m = e^{2α}, h = e^{2α} t, so every η is a positive mass with a
// positive-definite inertia obeying the triangle inequalities, and unconstrained optimisation over
// η never leaves the consistent set. (Order of η as in Rucker & Wensing (2022) and Pinocchio's
// LogCholeskyParameters.) Units: e^α carries kg^½ (α = ½ ln(m / 1 kg)) and e^{d_i}, s_ij, t_i
// carry metres (t = c, the centre of mass).
#ifndef DYNID_MODELS_INERTIA_PARAMETERIZATION_H_
#define DYNID_MODELS_INERTIA_PARAMETERIZATION_H_

#include <Eigen/Core>
#include <array>
#include <string>

#include "dynid/models/serial_robot.h"

namespace dynid::models {

using Vector10d = Eigen::Matrix<double, 10, 1>;
using Matrix10d = Eigen::Matrix<double, 10, 10>;

// The SerialRobot order xx xy xz yy yz zz mx my mz m, and back.
Vector10d LinkInertiaVector(const LinkInertia& link);
LinkInertia LinkInertiaFromVector(const Vector10d& values);

// The pseudo-inertia J of a 10-vector (linear), and the 10-vector of a symmetric 4 × 4 J.
Eigen::Matrix4d PseudoInertiaOfVector(const Vector10d& values);
Vector10d VectorOfPseudoInertia(const Eigen::Matrix4d& pseudo_inertia);

// Names of the log-Cholesky parameters, in order: alpha d1 d2 d3 s12 s23 s13 t1 t2 t3.
const std::array<const char*, 10>& LogCholeskyNames();

// U of the header comment (upper triangular, positive diagonal).
Eigen::Matrix4d LogCholeskyFactor(const Vector10d& eta);

// The 10 standard values of J = U Uᵀ (SerialRobot order). If `jacobian` is non-null it receives
// ∂values/∂η (10 × 10), computed column by column from ∂J/∂η_k = ∂U Uᵀ + U ∂Uᵀ (exact).
Vector10d LinkInertiaFromLogCholesky(const Vector10d& eta, Matrix10d* jacobian = nullptr);

// η of a consistent link (J ≻ 0, Cholesky factor of the reversed J). False with a message naming
// the smallest eigenvalue of J when J is not positive definite.
bool LogCholeskyFromLinkInertia(const Vector10d& values, Vector10d* eta, std::string* error);

// Cholesky coordinates (no logarithms): the 10 entries of an upper-triangular U with J = U Uᵀ,
// u = [u44, u11, u22, u33, u12, u23, u13, u14, u24, u34] (1-based (row, column) of U; the same
// slots as η: u44 = √m in the place of α, the diagonal in the place of d1..d3). Every u gives a
// J ⪰ 0, and unlike η the boundary of the consistent set (a singular J: a flat link, a massless
// one) lies at finite u (a zero diagonal entry), where a least-squares solver converges to it
// instead of running off toward −∞. The map is not one-to-one (the signs of U's rows), which
// does not matter to a solver. These coordinates finish a fit whose optimum lies on the boundary
// (solvers/physically_consistent_fit.h).
const std::array<const char*, 10>& CholeskyNames();  // "u44" "u11" … "u34"
// The 10 standard values of J = U Uᵀ and, if `jacobian` is non-null, ∂values/∂u (exact).
Vector10d LinkInertiaFromCholesky(const Vector10d& u, Matrix10d* jacobian = nullptr);
// u of a consistent link (J ≻ 0; the factor with a positive diagonal). False as
// LogCholeskyFromLinkInertia.
bool CholeskyFromLinkInertia(const Vector10d& values, Vector10d* u, std::string* error);

// How far a link's 10 values are from physical consistency ("by how much").
struct LinkConsistency {
  double mass_kg = 0.0;
  // Eigenvalues of J [kg m²]: the smallest < 0 means no mass distribution realises the values;
  // its magnitude is the Frobenius distance of J to the positive semidefinite cone along that
  // direction.
  double pseudo_inertia_min_eigenvalue = 0.0;
  double pseudo_inertia_max_eigenvalue = 0.0;
  // Centre of mass [m] and principal moments of the inertia about it [kg m²], ascending; NaN
  // when the mass is not positive.
  Eigen::Vector3d center_of_mass_m = Eigen::Vector3d::Constant(0.0);
  Eigen::Vector3d principal_moments = Eigen::Vector3d::Constant(0.0);
  // λ1 + λ2 − λ3 [kg m²] (< 0: the triangle inequality is violated); NaN without positive mass.
  double triangle_margin = 0.0;
  // J positive definite: smallest eigenvalue > relative_tolerance · largest |eigenvalue|.
  bool consistent = false;

  // One line: "consistent" or what is violated and by how much.
  std::string Describe() const;
};

// relative_tolerance >= 0 (0: strictly positive definite).
LinkConsistency CheckLinkConsistency(const Vector10d& values, double relative_tolerance = 0.0);
inline LinkConsistency CheckLinkConsistency(const LinkInertia& link,
                                            double relative_tolerance = 0.0) {
  return CheckLinkConsistency(LinkInertiaVector(link), relative_tolerance);
}

// The consistent link nearest to `values` in the Frobenius norm of J, with the eigenvalues of J
// raised to at least relative_floor · max(largest eigenvalue, 0) (and to an absolute 1e-12 when
// no eigenvalue is positive): a starting point for the log-Cholesky fit from an inconsistent
// estimate. relative_floor in (0, 1).
Vector10d ProjectToConsistent(const Vector10d& values, double relative_floor);

}  // namespace dynid::models

#endif  // DYNID_MODELS_INERTIA_PARAMETERIZATION_H_
