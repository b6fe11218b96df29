// experiments/tx40_study/tx40_flags — the settings of tx40_study as its flags give them, and
// their checks (exit code 2 on any failure). The flags themselves are defined in tx40_flags.cc,
// which only the tx40_study program compiles (tx40_bias, linking the same study library, defines
// flags of the same names), in the program's folder so that --help lists them as its own.
#ifndef DYNID_EXPERIMENTS_TX40_STUDY_TX40_FLAGS_H_
#define DYNID_EXPERIMENTS_TX40_STUDY_TX40_FLAGS_H_

#include <string>
#include <vector>

#include "dynid/solvers/residual_analysis.h"
#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_experiment.h"
#include "experiments/tx40_study/tx40_runs.h"

namespace dynid::tx40_study {

// The guard band of the ideal simulation's sample selection (tuned on that simulation: the rows
// next to an excluded row carry the stiction the decimation filter smears into them). Real data
// and the realistic simulation default to no guard band, the procedure of Brunot et al. (2018)
// (low-velocity rows excluded).
inline constexpr int kSimulatedGuardRows = 5;
inline constexpr double kSimulatedGuardS = 0.04;

// The flags of tx40_study, checked, and what they select.
struct Settings {
  std::string out_dir;
  bool figures = true;
  std::string parameters;  // "base" or "essential"
  // --torque_offsets: the identified model carries a constant torque offset per joint
  // (off1..off6, listed after the other parameters).
  bool torque_offsets = false;
  // Simulation.
  double duration_s = 0.0;
  int seed = 0;
  double torque_noise_std = 0.0;  // ideal simulation: joint-side white torque noise
  // --simulation=realistic (default) or ideal: the imperfections of a real robot (friction
  // beyond Coulomb + viscous, motor-side torque noise and LSB, encoder resolution) or none.
  bool realistic = true;
  RealisticImperfections imperfections = DefaultRealisticImperfections();
  // --monte_carlo=N (> 0): N seeds from `seed` on monte_carlo_threads threads.
  int monte_carlo = 0;
  int monte_carlo_threads = 0;
  std::string coverage_csv;  // --coverage_csv: the measured coverage quoted by a single run
  bool write_measurements = false;
  // Real data.
  std::string positions_csv, torques_csv, reference_csv;
  double sample_rate_hz = 0.0;
  double pid_bandwidth_hz = 0.0;
  // Real data without --reference_csv: IDIM-IV follows the measured positions smoothed by a
  // zero-phase Butterworth (order 4) at substitute_cutoff_hz, a stated substitute reference.
  bool substitute_reference = false;
  double substitute_cutoff_hz = 0.0;
  // Estimation.
  double velocity_threshold = 0.0;
  int guard_rows = 0;
  double guard_s = 0.0;
  std::string guard_source;  // where the guard band comes from (flags or which default)
  // Real data: IDIM-LS conv. also run with comparison_guard_rows/_s (the other setting: the
  // simulated study's guard band when none is used, none otherwise), to show its effect.
  bool guard_comparison = false;
  int comparison_guard_rows = 0;
  double comparison_guard_s = 0.0;
  int max_iterations = 0;
  double iv_tolerance = 0.0;
  int iv_stall_iterations = 0;  // IvIterationOptions::stall_iterations (0 = off)
  // c of the HAC intervals θ̂ ± c σ (--hac_critical; solvers::HacCriticalValue95).
  solvers::HacCriticalValue hac_critical_value = solvers::HacCriticalValue::kFixedB;
  // Selected by the flags.
  bool real = false;           // real data (--positions_csv/--torques_csv), else simulated
  bool select_samples = true;  // --sample_selection=on
  std::vector<dynid::experiments::PriorKnowledge> levels;  // --knowledge
  std::vector<Method> methods;  // --methods, or the default set for the data
  bool methods_given = false;   // --methods given (else the default set)
  int threads = 1;              // --threads, 0 resolved to all cores
  bool quiet = false;           // no progress lines (the Monte Carlo's trials)
};

// Every flag checked, with a message naming the flag; fills settings. Defined in tx40_flags.cc.
bool ValidateFlags(Settings* settings, std::string* error);

}  // namespace dynid::tx40_study

#endif  // DYNID_EXPERIMENTS_TX40_STUDY_TX40_FLAGS_H_
