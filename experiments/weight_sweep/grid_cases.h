// The registry of the weight_sweep program's cases (solvers::WeightGridCase,
// solvers/weight_grid.h): a model with simulated data, noise levels and base weights, selectable by
// name.
//
//   msd           models::MassSpringDamper, three-tone force, data from the same model.
//   friction_mass models::FrictionMass (smooth sign, eps = 0.01 m/s) estimating from data of the
//                 non-smooth stick–slip mass (van de Molengraft (1990) §4.4: m = 1 kg,
//                 w_s = w_d = 2 N, f = 4 sin(2 pi t) N) — a deliberate model error at the
//                 stick phases.
//   rt_rigid      models::RtManipulatorRigid (payload mass), data from the rigid model along the
//                 reference line of van de Molengraft (1990) App. D3.
//   rt_flexible   the same estimator on data of the flexible "true system" (k = 2000 N m/rad).
//   xy_flexible   models::XyTableFlexible (theta = [J1, J2, w1, w2, k]) with acceleration
//                 measurements on data of a simulated xy-table with the model's structure, on the
//                 identification interval [3.33, 4.99] s (van de Molengraft (1990) ch. 5).
// Each case's header comment in grid_cases.cc states its sampling, noise and weights.
// New cases: a Make*Case function there and one line in its table.
#ifndef DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_CASES_H_
#define DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_CASES_H_

#include <memory>
#include <string>
#include <vector>

#include "dynid/solvers/weight_grid.h"

namespace dynid::experiments {

struct GridCaseOptions {
  int num_nodes = 0;  // 0 = the case's default; otherwise >= 20 (same duration, finer/coarser h)
};

// The names of the cases, sorted.
std::vector<std::string> GridCaseNames();

// The case `name` with `options`; nullptr with a message listing the known cases for an unknown
// name or invalid options.
std::unique_ptr<solvers::WeightGridCase> MakeGridCase(const std::string& name,
                                                      const GridCaseOptions& options,
                                                      std::string* error);

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_CASES_H_
