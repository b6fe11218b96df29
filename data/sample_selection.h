// data/sample_selection — which rows of a stacked IDIM system to use.
//
// At standstill the measured torque holds stiction that the Coulomb model fc·sign(q') cannot
// represent, and a resting encoder jitters by one count, so its differentiated velocity
// flips sign at random. The usual remedy (Gautier's practice) is to exclude, per joint, the
// samples where that joint's velocity is below a small threshold, and to drop the rest at the
// start and end of a record. This module decides which (joint, sample) rows are kept and says
// so in words, so that every study can print which rows it used.
#ifndef DYNID_DATA_SAMPLE_SELECTION_H_
#define DYNID_DATA_SAMPLE_SELECTION_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/data/signal.h"

namespace dynid::data {

struct SampleSelectionOptions {
  // Velocity threshold per joint (rad/s or m/s), size = number of joints, or size 1 for all
  // joints. A row of joint j at sample k counts as "at rest" when |q'_j(k)| < threshold_j.
  Eigen::VectorXd velocity_threshold = Eigen::VectorXd::Constant(1, 0.01);
  // Exclude every row of joint j at samples where joint j is at rest.
  bool exclude_slow_rows = true;
  // Drop the leading and trailing samples where every joint is at rest (whole samples).
  bool trim_rest = true;
  // How many excluded runs the report lists per joint before it abbreviates.
  int max_runs_in_report = 8;

  bool IsValid(std::string* why) const;
};

struct SampleSelection {
  int num_samples = 0;
  int num_joints = 0;
  // Samples kept after trimming the rest: [first_sample, last_sample] (inclusive).
  int first_sample = 0;
  int last_sample = -1;
  // kept[j] = ascending sample indices whose row for joint j is used.
  std::vector<std::vector<int>> kept_samples;
  // Ascending row indices into the stacked system (StackedRow(order, n, N_s, j, k)).
  std::vector<int> kept_rows;
  // Row → joint of every kept row (same order as kept_rows): the block map of the reduced
  // system, to pass to the estimators' per-joint diagnostics.
  std::vector<int> kept_row_joint;
  // Human-readable: per joint, kept count and the excluded sample ranges and why.
  std::string report;
};

// Decides the rows to keep from `velocities` (N_s × n: sample k, joint j), for a stacked system
// in `order`. Returns false with a message for bad options (thresholds of the wrong size,
// negative or not finite), non-finite velocities, or when no row would remain.
bool SelectSamples(const Eigen::MatrixXd& velocities, StackOrder order,
                   const SampleSelectionOptions& options, SampleSelection* selection,
                   std::string* error);

// The rows `rows` of `stacked` (in the given order), e.g. X or the torque vector reduced to
// SampleSelection::kept_rows. CHECKs that every index is in range.
Eigen::MatrixXd KeepRows(const Eigen::MatrixXd& stacked, const std::vector<int>& rows);
Eigen::VectorXd KeepRows(const Eigen::VectorXd& stacked, const std::vector<int>& rows);

// "3–7, 12, 20–25" for ascending indices (runs of consecutive values), at most `max_runs`
// runs followed by "… (N more runs)".
std::string FormatRanges(const std::vector<int>& ascending, int max_runs);

}  // namespace dynid::data

#endif  // DYNID_DATA_SAMPLE_SELECTION_H_
