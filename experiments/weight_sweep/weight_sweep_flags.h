// experiments/weight_sweep/weight_sweep_flags — the flags of weight_sweep (defined in
// weight_sweep_flags.cc, in the program's folder, so that --help lists them as the program's own)
// and what they set up: the case, the grid axes and the solver settings, every flag checked with
// a message naming it.
#ifndef DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_FLAGS_H_
#define DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_FLAGS_H_

#include <gflags/gflags.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/solvers/weight_grid.h"

DECLARE_string(case_name);
DECLARE_string(grid);
DECLARE_bool(relative);
DECLARE_int32(seeds);
DECLARE_int32(first_seed);
DECLARE_int32(threads);
DECLARE_int32(nodes);
DECLARE_double(noise_scale);
DECLARE_double(theta_start_factor);
DECLARE_int32(max_iterations);
DECLARE_string(transcription);
DECLARE_string(out_dir);
DECLARE_bool(figures);
DECLARE_bool(list_weights);
DECLARE_bool(observability);
DECLARE_string(coverage_csv);

namespace dynid::experiments {

// What the flags describe: the case, its grid and the settings of every estimate.
struct SweepSetup {
  std::unique_ptr<solvers::WeightGridCase> grid_case;
  std::vector<solvers::WeightAxis> axes;
  solvers::WeightGridSettings settings;
  int num_points = 0;
  int num_seeds = 0;
  long long num_tasks = 0;  // grid points × seeds
  int threads = 1;          // worker threads of this process
  std::vector<std::string> axis_names;
};

// The case from --case_name and --nodes; nullptr with the reason naming the flag.
std::unique_ptr<solvers::WeightGridCase> MakeCaseFromFlags(std::string* error);

// Checks every flag and every grid point's weights; false with a message naming the flag.
bool SetupFromFlags(SweepSetup* setup, std::string* error);

// The flags as summary.json records them (threads and ranks as used).
nlohmann::json FlagsJson(int threads, int ranks);

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_FLAGS_H_
