// Text forms of the weight_sweep program: the --grid value and the progress bar.
#ifndef DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_TEXT_H_
#define DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_TEXT_H_

#include <string>
#include <vector>

#include "dynid/models/mechanical_model.h"
#include "dynid/solvers/weight_grid.h"

namespace dynid::experiments {

// The axes of "NAME:LOW:HIGH:COUNT[,...]" (NAME as for solvers::ParseWeightEntry; LOW, HIGH > 0,
// 1 <= COUNT <= 10000, no entry twice, at most 1e6 points). `what` names the flag in messages.
bool ParseWeightGrid(const std::string& text, const models::ModelInfo& info,
                     const std::string& what, std::vector<solvers::WeightAxis>* axes,
                     std::string* error);

// Text progress bar "[#####.....] 45/100 points, 12 s, ETA 15 s" of width 30.
std::string ProgressBar(int done, int total, double elapsed_s);

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_WEIGHT_SWEEP_GRID_TEXT_H_
