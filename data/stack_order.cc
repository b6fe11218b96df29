#include "dynid/data/stack_order.h"

namespace dynid::data {

int StackedRow(StackOrder order, int num_joints, int num_samples, int joint, int sample) {
  return order == StackOrder::kJointMajor ? joint * num_samples + sample
                                          : sample * num_joints + joint;
}

}  // namespace dynid::data
