// Base and essential parameters of a SerialRobot (Brunot et al. (2018) §2 and §4.1).
//
// The standard parameters theta_std (p of them, SerialRobot header) are not all identifiable:
// some have no effect on the dynamics and others act only in fixed linear combinations. The base
// parameters theta_b (b of them) are a minimal set of such combinations,
//     theta_b = K theta_std          (K: b × p "grouping matrix"),
// and the base regressor phi_b = phi(:, kept) (the columns of the standard parameters that
// survive) satisfies phi_b theta_b = phi theta_std for every theta_std.
//
// Two independent ways to get them, which must agree (tests):
// - ComputeKhalilBaseParameters: Khalil's closed-form regrouping rules (Khalil & Dombre ch. 14;
//   Gautier & Khalil 1990): for every revolute joint j the parameters YYj, MZj, Mj are grouped
//   into link j−1 (XXjr = XXj − YYj, XX(j−1)r = XX(j−1) + YYj + 2 rj MZj + rj² Mj, …), for every
//   prismatic joint the inertia tensor of link j is grouped into link j−1, and the rules near the
//   base remove what has no effect (only ZZ of the first revolute joint, MX/MY of it when its axis
//   is vertical, the rotor inertia of r1 — and of r2 when its axis is perpendicular to r1 — joins
//   ZZ). Names carry the suffix "r" when other parameters were grouped into them (zz1r, xx2r,
//   xz2r, mx2r, …).
// - ComputeNumericalBaseParameters: QR on the regressor stacked at random states (Gautier 1990):
//   rank = b; the independent columns either from QR with column pivoting or, by default, the
//   first independent columns in the standard order (which reproduces Khalil's choice of kept
//   parameters); K from least squares on the stacked regressor.
//
// ComputeBaseParameters serves any chain: the closed form where it applies (every joint turns
// about or slides along the z axis of its link frame — any modified-DH chain, and URDF chains
// whose link frames are DH-like — and the first joint is revolute) and agrees with the numerical
// grouping, else the numerical method. Either way every base parameter also has a description of
// what it groups, e.g. "xx2 − yy2 + 0.0012·yy3 + …" (BaseParameterSet::descriptions).
//
// Essential parameters (the subset of base parameters the data determine) are selected by
// solvers::SelectEssentialParameters (solvers/essential_parameters.h), given data.
#ifndef DYNID_MODELS_BASE_PARAMETERS_H_
#define DYNID_MODELS_BASE_PARAMETERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/models/serial_robot.h"

namespace dynid::models {

struct BaseParameterSet {
  std::vector<int> kept;           // standard-parameter indices of the base columns, ascending
  std::vector<std::string> names;  // one per base parameter (standard name + "r" if regrouped)
  Eigen::MatrixXd grouping;        // K, b × p: theta_b = K theta_std
  std::vector<int> no_effect;      // standard parameters with an identically zero column (Khalil)
  // Per base parameter, its grouping written out: "name_kept + c·name + …" (coefficients of K,
  // 6 significant digits; "·" before each standard name, "−" for negative coefficients).
  std::vector<std::string> descriptions;
  bool closed_form = false;  // from Khalil's rules (true) or numerical QR (false)

  int size() const { return static_cast<int>(kept.size()); }
  int Index(const std::string& name) const;  // −1 if absent
  Eigen::VectorXd Reduce(const Eigen::VectorXd& theta_std) const { return grouping * theta_std; }
  // phi_b = phi(:, kept): (rows × p) → (rows × b); works on single-sample and stacked regressors.
  void SelectColumns(const Eigen::MatrixXd& phi, Eigen::MatrixXd* phi_base) const;
};

// False (with a message) when a joint axis is not ±z of its link frame or joint 1 is prismatic.
bool ComputeKhalilBaseParameters(const SerialRobot& robot, BaseParameterSet* base,
                                 std::string* error);

struct NumericalBaseOptions {
  enum class ColumnChoice {
    kFirstIndependent,  // greedy in the standard order (Khalil-compatible choice)
    kPivoted,           // the pivot columns of QR with column pivoting (Gautier 1990)
  };
  int num_states = 30;               // random (q, q', q'') stacked: n·num_states rows
  std::uint32_t seed = 7;
  double rank_tolerance = 1e-8;      // on column-normalised data, relative to the largest |R_ii|
  double velocity_scale = 2.0;       // q' ~ U(−s, s) rad/s (m/s)
  double acceleration_scale = 5.0;   // q'' ~ U(−s, s)
  double prismatic_range_m = 0.5;    // prismatic q ~ U(−s, s); revolute q ~ U(−pi, pi)
  ColumnChoice choice = ColumnChoice::kFirstIndependent;
  // Joints whose equations are measured (n flags; empty = all). A real record often lacks some
  // joints' torques: the parameters that act only in the missing equations (say a wrist's
  // friction when only the shoulder torques are measured) then have no effect on the data, and
  // others group differently. With some flags false only those joints' rows are stacked, so
  // the base parameters are those of the measured equations (always the numerical method:
  // Khalil's rules assume every joint's equation).
  std::vector<bool> measured_joints;
  bool IsValid(std::string* why) const;
};

bool ComputeNumericalBaseParameters(const SerialRobot& robot, const NumericalBaseOptions& options,
                                    BaseParameterSet* base, std::string* error);

// Base parameters of any chain (header comment): the closed form when it applies (every joint
// measured) and its kept columns and grouping agree with the numerical method (to 1e-6
// relative), else the numerical set.
bool ComputeBaseParameters(const SerialRobot& robot, const NumericalBaseOptions& options,
                           BaseParameterSet* base, std::string* error);

// Numerical rank of W (columns normalised to unit norm first; columns with a norm below 1e-12 of
// the largest are rounding residues of analytically zero columns and count as zero),
// by QR with column pivoting.
int NumericalRank(const Eigen::MatrixXd& w, double relative_tolerance = 1e-8);

// Random states (each Ns × n) used by the numerical method; exposed for tests and experiments.
void RandomRobotStates(const SerialRobot& robot, int num_states, std::uint32_t seed,
                       double velocity_scale, double acceleration_scale, double prismatic_range_m,
                       Eigen::MatrixXd* q, Eigen::MatrixXd* qd, Eigen::MatrixXd* qdd);

}  // namespace dynid::models

#endif  // DYNID_MODELS_BASE_PARAMETERS_H_
