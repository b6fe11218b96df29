// solvers/essential_parameters — the subset of base parameters the data actually determine
// (Brunot et al. (2018) §4.1: 28 essential of 60 base for the TX40).
//
// Iterative elimination (Pham & Gautier's procedure): fit all columns by LS; repeatedly remove
// the column whose estimate has the largest relative standard deviation and refit, as long as
// the relative error ||y − Xθ|| / ||y|| stays within `max_relative_error_increase` of the full
// model's; stop before the first removal that would exceed it (or when every %σ is below an
// optional target, or at min_parameters). Generic over X with column names; the path of
// removals with their relative errors and an F statistic is returned so a study can print it.
#ifndef DYNID_SOLVERS_ESSENTIAL_PARAMETERS_H_
#define DYNID_SOLVERS_ESSENTIAL_PARAMETERS_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/solvers/linear_least_squares.h"

namespace dynid::solvers {

struct EssentialParametersOptions {
  // Largest accepted growth of the relative error over the full model's, as an absolute
  // difference of fractions (0.005 = half a percentage point).
  double max_relative_error_increase = 0.005;
  // Stop as soon as every %σ of the current set is at most this (percent); 0 disables.
  double target_max_relative_std_percent = 0.0;
  int min_parameters = 1;
  // Fit by Gautier's weighted LS instead of ordinary LS (uses least_squares.row_blocks).
  bool weighted = false;
  // Row blocks, rank tolerance, ... of every fit (column_names is ignored: see the argument).
  LinearLeastSquaresOptions least_squares;

  bool IsValid(std::string* why) const;
};

struct EliminationStep {
  int column = -1;  // index into the original X
  std::string name;
  double relative_std_percent = 0.0;  // its %σ in the fit it was removed from
  int num_parameters_after = 0;
  double relative_error_after = 0.0;  // of the refit without it
  // F = ((RSS_after − RSS_full) / (b_full − b_after)) / (RSS_full / (N_t − b_full)): the
  // classical test that the removed parameters are jointly zero (F(b_full − b_after, N_t −
  // b_full)).
  double f_statistic = 0.0;
  double f_p_value = 1.0;  // P(F > f_statistic): small = the removed parameters matter
};

struct EssentialParametersSummary {
  bool success = false;
  std::string message;  // why it failed, or why the elimination stopped
  double full_relative_error = 0.0;
  std::vector<EliminationStep> path;   // accepted removals, in order
  EliminationStep rejected;            // the removal that was tried and refused (column -1: none)
  std::vector<int> essential_columns;  // ascending indices into the original X
  std::vector<std::string> essential_names;
  LinearLeastSquaresSummary final_fit;  // fit of X restricted to essential_columns

  std::string Report() const;
};

// X: N_t × b (full column rank: the base parameters), y: N_t, column_names: b names or empty.
// Fails (success = false) for invalid options or a rank-deficient X (reduce to base parameters
// first; the message names the dependent columns).
EssentialParametersSummary SelectEssentialParameters(const Eigen::MatrixXd& X,
                                                     const Eigen::VectorXd& y,
                                                     const std::vector<std::string>& column_names,
                                                     const EssentialParametersOptions& options);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_ESSENTIAL_PARAMETERS_H_
