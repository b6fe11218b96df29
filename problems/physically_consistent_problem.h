// problems::BuildPhysicallyConsistentProblem — inverse dynamic identification of a
// models::SerialRobot restricted to physically consistent parameters, posed as an UNCONSTRAINED
// Ceres least-squares problem by a smooth change of unknowns.
//
// Unknowns φ (p of them, one per standard parameter, in the standard layout;
// PhysicalParameterization):
//   link j       the 10 log-Cholesky values η_j of its pseudo-inertia (Rucker & Wensing (2022),
//                models/inertia_parameterization.h) in the place of xxj … mj: every φ is a
//                positive mass with a positive-definite inertia obeying the triangle inequalities;
//   iaj fvj fcj  ln of the physical rotor inertia, viscous and Coulomb friction of joint j (≥ 0);
//   ia/fv/fc<m>  ln of those of coupled motor m (≥ 0);
//   offj         the torque offset itself (free).
// θ_std(φ) is smooth and its Jacobian D = ∂θ_std/∂φ is block diagonal (10 × 10 per link, e^φ per
// drive term). In Gautier's coupling form (models/serial_robot.h) the standard ia_j and fv_j carry
// the coupled motors' terms as well, ia_j = ia_j,physical + Σ_m c_mj² Iam_m (and fv alike), so the
// non-negativity is imposed on the physical values and D has those extra entries.
//
// Residuals. The stacked IDIM system y ≈ X β with β = A θ_std (A: c × p column map; identity for
// the standard regressor, the grouping matrix K for the base regressor, models/base_parameters.h)
// and optional row weights w (e.g. 1/σ_j per joint as in Gautier's WLS):
//     r = diag(w) (X A θ_std(φ) − y).
// Because r is linear in θ_std, the rows can be compressed without changing the cost, its
// gradient or its Gauss–Newton matrix: with the Householder QR [diag(w)X, diag(w)y] = Q R
// (R: (c+1) × (c+1) upper triangular),
//     ||diag(w)(X β − y)||² = ||R[:, :c] β − R[:, c]||²   for every β,
// so the problem holds c + 1 residuals instead of the N_t rows (compress_rows, default; the
// uncompressed form keeps the rows in blocks, and the tests check both give the same fit).
// Optional prior toward a consistent description θ0 (weight w_p ≥ 0), per link j:
//     r_prior,j = √w_p · vech(J0^{-½} (J_j − J0) J0^{-½}),
// the whitened pseudo-inertia difference (vech of a symmetric 4 × 4 with off-diagonal entries × √2,
// so that ||r||² = ||·||_F²). It is unit-free and the same in every frame, and ½||r||² is the
// second-order approximation of the log-determinant divergence of J from J0 at J0. w_p is in the
// units of the squared data residuals (N² m², or dimensionless with weights 1/σ_j). Drive terms
// carry no prior.
//
// Regularisation. Directions of θ_std that the data do not determine (the structural
// combinations that the base parameters remove, an unexcited joint) leave the Gauss–Newton matrix
// singular; through the curvature of φ → θ_std a Levenberg–Marquardt step can then drift along
// them toward the boundary, where the exponentials make every further step tiny. The builder adds
//     r_reg = √ε Nᵀ S⁻¹ (θ_std(φ) − θ_start),
// with S = diag(1/sqrt(G_ii)) the Jacobi scaling of the data information G = Mᵀ M in θ_std
// (S_ii = 1 where G_ii = 0) and N the eigenvectors of S G S with eigenvalues below 1e-10 of the
// largest: a pull toward the start that acts ONLY along the undetermined directions. It leaves the
// determined combinations (the base parameters) free: when the unregularised optimum is interior
// it changes nothing they see, and at a boundary it only adds ε-weighted resistance to moving
// along the undetermined directions. ε = regularization (default 1e-6, relative to the unit
// diagonal of S G S).
//
// Jacobians are analytic: ∂r/∂φ = M D with M the (compressed) rows of diag(w) X A (checked against
// ceres::GradientChecker in the tests). One parameter block φ.
#ifndef DYNID_PROBLEMS_PHYSICALLY_CONSISTENT_PROBLEM_H_
#define DYNID_PROBLEMS_PHYSICALLY_CONSISTENT_PROBLEM_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/models/serial_robot.h"

namespace ceres {
class CostFunction;
class Problem;
}  // namespace ceres

namespace dynid::problems {

// Coordinates of the unknowns φ.
enum class PhysicalCoordinates {
  // The header comment's: log-Cholesky per link, ln of each non-negative drive term. A
  // diffeomorphism onto the interior of the consistent set (the delta method applies).
  kLogCholesky,
  // The Cholesky factor itself per link (models::LinkInertiaFromCholesky) and √ of each
  // non-negative drive term (θ = s²): every φ is consistent as well, and the boundary (a
  // singular pseudo-inertia, a zero friction) lies at finite φ, so a solver reaches an optimum
  // there instead of stalling; not one-to-one (signs).
  kCholesky,
};

// The map φ → θ_std of the header comment for one robot's parameter layout.
class PhysicalParameterization {
 public:
  explicit PhysicalParameterization(
      const models::SerialRobot& robot,
      PhysicalCoordinates coordinates = PhysicalCoordinates::kLogCholesky);
  PhysicalCoordinates coordinates() const { return coordinates_; }

  int size() const { return static_cast<int>(names_.size()); }  // p
  int num_links() const { return static_cast<int>(link_index_.size()); }
  // Standard index of link j's xx (its 10 values and its 10 η follow).
  int LinkIndex(int link) const { return link_index_[link]; }
  // Names of the unknowns: "alpha_1", "d1_1", …, "t3_6", "ln_ia1", "ln_fvm6", "off1" (Cholesky
  // coordinates: "u44_1", …, "sqrt_ia1", …).
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<std::string>& standard_names() const { return standard_names_; }
  // True for the standard parameters that must be non-negative (rotor inertias and friction).
  bool IsNonNegative(int index) const { return non_negative_[index]; }

  // θ_std (p) of φ (p); if `jacobian` is non-null, D = ∂θ_std/∂φ (p × p).
  void ToStandard(const Eigen::VectorXd& phi, Eigen::VectorXd* theta,
                  Eigen::MatrixXd* jacobian = nullptr) const;
  // φ of a strictly consistent θ_std (every link's pseudo-inertia positive definite, every
  // physical drive term > 0). False with a message naming the link or the parameter otherwise.
  bool FromStandard(const Eigen::VectorXd& theta, Eigen::VectorXd* phi, std::string* error) const;
  // The physical (non-negative when consistent) drive values implied by θ_std, one per standard
  // parameter: θ_std itself except, in Gautier's form, ia_j and fv_j minus the coupled terms;
  // entries that are not non-negative drive terms are copied unchanged.
  Eigen::VectorXd PhysicalValues(const Eigen::VectorXd& theta) const;
  // A strictly consistent θ_std near θ: each link by models::ProjectToConsistent(relative_floor),
  // each physical drive term raised to relative_floor × the largest of its kind (ia, fv or fc;
  // 1e-9 when none is positive). θ unchanged where it is already consistent with that margin.
  Eigen::VectorXd ProjectToConsistent(const Eigen::VectorXd& theta, double relative_floor) const;

 private:
  // θ_std index of the joint-side term that coupled motor m's term adds to in Gautier's form.
  struct CouplingTerm {
    int motor_index;  // standard index of iam / fvm
    int joint_index;  // standard index of ia_j / fv_j
    double c2;        // c_mj²
  };
  // A non-negative term of its unknown (e^φ or φ²) and the derivative.
  double Positive(double phi) const;
  double PositiveDerivative(double phi) const;

  PhysicalCoordinates coordinates_;
  std::vector<int> link_index_;
  std::vector<std::string> names_, standard_names_;
  std::vector<char> non_negative_;
  std::vector<int> kind_;  // 0 ia, 1 fv, 2 fc or fs for non-negative terms, −1 otherwise
  std::vector<CouplingTerm> coupling_;
};

// The stacked system to fit (see the header comment).
struct PhysicallyConsistentData {
  Eigen::MatrixXd x;            // N_t × c observation matrix
  Eigen::VectorXd y;            // N_t stacked torques
  Eigen::MatrixXd column_map;   // A, c × p; empty = identity (x is the standard regressor)
  Eigen::VectorXd row_weights;  // N_t non-negative weights, empty = all 1
};

// Sizes (N_t > c, A c × p), finiteness, non-negative weights. Rows of zero weight are allowed.
bool ValidatePhysicallyConsistentData(const PhysicalParameterization& parameterization,
                                      const PhysicallyConsistentData& data, std::string* error);

// Number of rows with non-zero weight (the observations of the degrees-of-freedom rule).
int CountWeightedRows(const PhysicallyConsistentData& data);

struct PhysicallyConsistentProblemOptions {
  bool compress_rows = true;         // c + 1 residuals instead of N_t (exact, header comment)
  int rows_per_residual_block = 64;  // without compression
  // Prior toward prior_theta (p standard values whose links are strictly consistent); off when
  // prior_weight = 0.
  double prior_weight = 0.0;
  Eigen::VectorXd prior_theta;
  // ε of the pull toward the start along the undetermined directions (header comment), >= 0;
  // 0 = none.
  double regularization = 1e-6;
  bool IsValid(std::string* why) const;
};

struct PhysicallyConsistentRows;

// Adds the parameter block `phi` (size p, holding the starting point; must outlive the problem)
// and the residual blocks to `problem` (empty, or holding other blocks the caller manages).
// `parameterization` must outlive the problem. If `rows` is non-null it receives the residual
// rows used (below). Returns false with a message for invalid options or data.
bool BuildPhysicallyConsistentProblem(const PhysicalParameterization* parameterization,
                                      const PhysicallyConsistentData& data,
                                      const PhysicallyConsistentProblemOptions& options,
                                      Eigen::VectorXd* phi, ceres::Problem* problem,
                                      std::string* error, PhysicallyConsistentRows* rows = nullptr);

// Residual rows that the builder uses, as a matrix pair: the data rows (compressed or not) M, b
// with r = M θ_std(φ) − b (M: rows × p), and the prior rows (empty without prior).
struct PhysicallyConsistentRows {
  Eigen::MatrixXd data_matrix;
  Eigen::VectorXd data_target;
  Eigen::MatrixXd column_information;  // Xᵀ diag(w)² X (c × c), the information of β = A θ_std
  Eigen::MatrixXd prior_matrix;
  Eigen::VectorXd prior_target;
};
bool PhysicallyConsistentResidualRows(const PhysicalParameterization& parameterization,
                                      const PhysicallyConsistentData& data,
                                      const PhysicallyConsistentProblemOptions& options,
                                      PhysicallyConsistentRows* rows, std::string* error);

// The residual block r = matrix θ_std(φ) − target (matrix: m × p), one parameter block φ (p),
// Jacobian matrix · D. `parameterization` must outlive the cost. The caller owns the result.
ceres::CostFunction* NewPhysicalLinearCost(const PhysicalParameterization* parameterization,
                                           Eigen::MatrixXd matrix, Eigen::VectorXd target);

}  // namespace dynid::problems

#endif  // DYNID_PROBLEMS_PHYSICALLY_CONSISTENT_PROBLEM_H_
