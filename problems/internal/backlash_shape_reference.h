// Not part of the installed API: the first-order-hold interval cost of the backlash shape
// problem with automatic derivatives through the whole RK4 map, the reference against which the
// hand-written Jacobian of CreateBacklashShapeIntervalCost (backlash_smoother_problem.h) is tested.
#ifndef DYNID_PROBLEMS_INTERNAL_BACKLASH_SHAPE_REFERENCE_H_
#define DYNID_PROBLEMS_INTERNAL_BACKLASH_SHAPE_REFERENCE_H_

#include <ceres/ceres.h>

#include <Eigen/Core>

#include "dynid/models/two_mass_transmission.h"
#include "dynid/problems/backlash_smoother_problem.h"

namespace dynid::problems::internal {

// Same residuals, parameter blocks and options as CreateBacklashShapeIntervalCost.
ceres::CostFunction* CreateBacklashShapeIntervalCostWithAutomaticDerivatives(
    const models::TwoMassTransmission& model, const BacklashSmootherProblemOptions& options,
    double sample_period_s, double input, const Eigen::VectorXd& next_measurement);

}  // namespace dynid::problems::internal

#endif  // DYNID_PROBLEMS_INTERNAL_BACKLASH_SHAPE_REFERENCE_H_
