// data:: the row order of a stacked linear system of n joints × N_s samples (observation matrix
// X, torque vector). A header of its own so that solvers which only lay out rows
// (solvers/linear_least_squares.h) need not include the signal processing of data/signal.h.
#ifndef DYNID_DATA_STACK_ORDER_H_
#define DYNID_DATA_STACK_ORDER_H_

namespace dynid::data {

// How the rows of a stacked observation matrix / torque vector are ordered, for n joints and
// N_s samples (row index of joint j at sample k):
//   kJointMajor:  j · N_s + k   (all samples of joint 0, then of joint 1, ...; Gautier's usual)
//   kSampleMajor: k · n + j     (tau(t_1), tau(t_2), ... stacked as in Brunot et al. (2017) eq. 4)
enum class StackOrder { kJointMajor, kSampleMajor };

// Row index of (joint, sample) in a stack of num_joints × num_samples rows.
int StackedRow(StackOrder order, int num_joints, int num_samples, int joint, int sample);

}  // namespace dynid::data

#endif  // DYNID_DATA_STACK_ORDER_H_
