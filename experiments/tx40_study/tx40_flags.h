// experiments/tx40_study/tx40_flags — the settings of tx40_study as its flags give them, and
// their checks (exit code 2 on any failure). The flags themselves are defined in tx40_flags.cc,
// which only the tx40_study program compiles (tx40_bias, linking the same study library, defines
// flags of the same names), in the program's folder so that --help lists them as its own.
#ifndef DYNID_EXPERIMENTS_TX40_STUDY_TX40_FLAGS_H_
#define DYNID_EXPERIMENTS_TX40_STUDY_TX40_FLAGS_H_

#include <string>
#include <vector>

#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_runs.h"

namespace dynid::tx40_study {

// The flags of tx40_study, checked, and what they select.
struct Settings {
  std::string out_dir;
  bool figures = true;
  std::string parameters;  // "base" or "essential"
  // Simulation.
  double duration_s = 0.0;
  int seed = 0;
  double torque_noise_std = 0.0;
  bool write_measurements = false;
  // Real data.
  std::string positions_csv, torques_csv, reference_csv;
  double sample_rate_hz = 0.0;
  double pid_bandwidth_hz = 0.0;
  // Estimation.
  double velocity_threshold = 0.0;
  int guard_rows = 0;
  double guard_s = 0.0;
  int max_iterations = 0;
  double iv_tolerance = 0.0;
  // Selected by the flags.
  bool real = false;           // real data (--positions_csv/--torques_csv), else simulated
  bool select_samples = true;  // --sample_selection=on
  std::vector<dynid::experiments::PriorKnowledge> levels;  // --knowledge
  std::vector<Method> methods;  // --methods, or the default set for the data
  int threads = 1;              // --threads, 0 resolved to all cores
};

// Every flag checked, with a message naming the flag; fills settings. Defined in tx40_flags.cc.
bool ValidateFlags(Settings* settings, std::string* error);

}  // namespace dynid::tx40_study

#endif  // DYNID_EXPERIMENTS_TX40_STUDY_TX40_FLAGS_H_
