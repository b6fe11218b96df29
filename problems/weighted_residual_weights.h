// problems::WeightedResidualWeights — the weighting matrices of van de Molengraft's weighted-
// residual functional (van de Molengraft (1990) eq. 3.1; problems/weighted_residual_problem.h)
//
//     J = ½ ∫ (xiᵀ W xi + zetaᵀ V zeta) dt + ½ (x(t0) − q0)ᵀ R0 (x(t0) − q0),
//
// with the names of their diagonal entries and their construction from noise standard
// deviations.
//
// Convention (intensity). The integrals are discretised with the node spacing h (trapezoidal node
// weights for zeta, interval lengths for xi), so a weight V acts on one sample as V·h. A term
// with noise standard deviation σ per sample, sampled every h seconds, therefore gets the
// intensity V = 1 / (σ² h): the per-sample weight is 1/σ² and, when every σ is right, the Schur
// information of theta is its inverse covariance. With h = 1 the same formula gives per-sample
// weights 1/σ², which is the thesis's rule "weight = 1 / (order of magnitude of the term)²" when
// σ is read as the order of magnitude (van de Molengraft (1990) §5.5).
//
// Names. Every diagonal entry of W, V and R0 has a name built from the model's ModelInfo:
//   W.s.<position>, W.v.<position>                      xi_s = s' − v, xi_v = v' − a   (W, 2n)
//   V.eom.<equation>, V.z.<measurement>                 zeta                           (V, n + l)
//   R0.s.<position>, R0.v.<position>, R0.theta.<parameter>                             (R0, 2n + p)
// e.g. "W.v.x", "V.eom.force_balance", "V.z.a_measured", "R0.theta.mass"; the index forms
// "W[i]", "V[i]", "R0[i]" (0-based) are accepted as well.
#ifndef DYNID_PROBLEMS_WEIGHTED_RESIDUAL_WEIGHTS_H_
#define DYNID_PROBLEMS_WEIGHTED_RESIDUAL_WEIGHTS_H_

#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/models/mechanical_model.h"

namespace dynid::problems {

enum class WeightMatrix { kKinematic, kResidual, kInitial };  // W, V, R0

// One diagonal entry of W (2n), V (n + l) or R0 (2n + p).
struct WeightEntry {
  WeightMatrix matrix = WeightMatrix::kResidual;
  int index = 0;     // row (= column) in its matrix, 0-based
  std::string name;  // canonical name, e.g. "V.z.a_measured"
};

// All diagonal entries for a model, in the order W, V, R0 (2n + (n + l) + (2n + p) entries):
//   W.s.<position>, W.v.<position>                    (xi_s, xi_v)
//   V.eom.<equation>, V.z.<measurement>               (zeta)
//   R0.s.<position>, R0.v.<position>, R0.theta.<parameter>
std::vector<WeightEntry> ListWeightEntries(const models::ModelInfo& info);

// The entry named `text`: a canonical name or an index form "W[i]", "V[i]", "R0[i]" (0-based).
// False with a message naming `text` and listing the valid names otherwise.
bool ParseWeightEntry(const std::string& text, const models::ModelInfo& info, WeightEntry* entry,
                      std::string* error);

// Noise levels of the terms of the functional, the input of
// WeightedResidualWeights::FromStandardDeviations. Each of the three groups is given either as
// standard deviations (converted by the intensity convention above) or as weights used as they
// are; exactly one vector of each pair is non-empty. Units are those of the term: equations of
// motion in their balance's unit (N, N m), measurements in the measurement's unit, xi_s in
// position/s and xi_v in position/s².
struct NoiseStandardDeviations {
  // Kinematic couplings [xi_s; xi_v] (2n): standard deviations, or the diagonal of W directly
  // (the couplings s' = v, v' = a are often set as weights such as 1e6, 1e2).
  Eigen::VectorXd kinematic;
  Eigen::VectorXd kinematic_weights;
  // Equations of motion (n): standard deviations, or the first n diagonal entries of V directly.
  Eigen::VectorXd equations;
  Eigen::VectorXd equation_weights;
  // Measurements (l): standard deviations, or the last l diagonal entries of V directly.
  Eigen::VectorXd measurements;
  Eigen::VectorXd measurement_weights;
};

// The weights of the functional. Matrices are symmetric; sizes in terms of the model's n, p, l.
struct WeightedResidualWeights {
  Eigen::MatrixXd kinematic;        // W for [xi_s; xi_v], 2n × 2n, positive definite
  Eigen::MatrixXd parameter;        // W_theta for xi_theta, p × p, positive definite
                                    // (kTimeVarying only; ignored otherwise)
  Eigen::MatrixXd residual;         // V for zeta = [equations of motion; measurements],
                                    // (n + l) × (n + l), positive semi-definite
  Eigen::MatrixXd initial;          // R0, (2n) × (2n) for kFixed, (2n + p) × (2n + p) otherwise,
                                    // positive semi-definite; empty or zero = no initial term
  Eigen::VectorXd initial_guess;    // q0, same size as R0 (ignored when R0 is empty)

  // Diagonal W and V from noise levels with node spacing h = `node_spacing_s` (s, > 0): every
  // standard deviation σ becomes 1 / (σ·σ) / h (the intensity whose per-sample weight is 1/σ²;
  // h = 1 gives per-sample weights), every weight is copied. n = size of the equations, l = size
  // of the measurements; the kinematic group must have 2n entries. W_theta, R0 and q0 are left
  // empty. Dies when a pair is not exactly one non-empty vector, a size is wrong, a standard
  // deviation is not positive and finite or h is not positive.
  static WeightedResidualWeights FromStandardDeviations(const NoiseStandardDeviations& sigma,
                                                        double node_spacing_s);

  // The diagonal entry `entry` of W, V or R0 (0 for an R0 entry while R0 is empty). Dies when the
  // index is outside a non-empty matrix.
  double Get(const WeightEntry& entry) const;
  // Sets the diagonal entry `entry` of W, V or R0 to `weight`. Dies when the index is outside the
  // matrix (an empty matrix included).
  void Set(const WeightEntry& entry, double weight);
  // Sets the entry named `name` (ParseWeightEntry) of a model described by `info` to `weight`.
  // An empty matrix is first created as zero of the model's size (W 2n, V n + l, R0 2n + p with
  // q0 = 0, to be set by the caller). False with a message (leaving the weights untouched) when
  // the name is unknown — the message names it and lists the valid names — or when the matrix's
  // size does not fit the model.
  bool Set(const models::ModelInfo& info, const std::string& name, double weight,
           std::string* error);
};

}  // namespace dynid::problems

#endif  // DYNID_PROBLEMS_WEIGHTED_RESIDUAL_WEIGHTS_H_
