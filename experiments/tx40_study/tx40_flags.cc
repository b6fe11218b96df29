// experiments/tx40_study/tx40_flags — the flags of tx40_study and their checks (see
// tx40_flags.h). Compiled into the tx40_study program only, not into the study library.
#include "experiments/tx40_study/tx40_flags.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/solvers/idim.h"
#include "experiments/common/cli.h"
#include "experiments/common/monte_carlo_cli.h"
#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_runs.h"

DEFINE_string(out_dir, "out/tx40_study", "output folder");
DEFINE_bool(figures, true, "render PNG figures (needs python3 + matplotlib)");
DEFINE_int32(threads, 0, "worker threads for the method × scenario runs (0 = all cores)");
DEFINE_string(knowledge, "good,poor,none", "prior-knowledge levels to run (good, poor, none)");
DEFINE_string(methods, "",
              "comma-separated methods (default: the four of Brunot et al. (2018) for simulated "
              "data; for real data IDIM-LS/WLS and the three IDIM-IV, these with "
              "--reference_csv or the substitute reference). Known: "
              "idim_ls_conventional, idim_wls_conventional, idim_iv_conventional, "
              "idim_{ls,wls,iv}_irwsm{1,2}");
DEFINE_string(parameters, "base",
              "identified set: 'base' (all 55 base parameters, the 28 essential ones of Brunot "
              "et al. (2018) Table 2 listed first) or 'essential' (only those 28; on the "
              "simulated CAD robot the other base parameters are not zero, so leaving them out "
              "biases the estimates)");
DEFINE_bool(torque_offsets, false,
            "identify a constant torque offset per joint (off1..off6) beside the friction "
            "fv q' + fc sign(q'): 61 base parameters instead of 55; absorbs the realistic "
            "simulation's direction asymmetry of the Coulomb friction (see the README)");
// Simulation.
DEFINE_double(duration_s, 7.0, "simulated experiment length (s)");
DEFINE_int32(seed, 2018, "simulation seed (via points and torque noise)");
DEFINE_double(torque_noise_std, 0.3,
              "--simulation=ideal: simulated joint-side white torque noise std (N m)");
DEFINE_string(simulation, "realistic",
              "simulated experiment: 'realistic' (the imperfections of a real robot that the "
              "identified Coulomb + viscous model does not carry: Stribeck friction, direction "
              "asymmetry, motor-side torque noise and LSB, encoder resolution; the flags below) "
              "or 'ideal' (the identified model's friction, joint-side white noise "
              "--torque_noise_std, Table 1 encoders)");
DEFINE_double(stribeck_ratio, dynid::tx40_study::DefaultRealisticImperfections().stribeck_ratio,
              "realistic simulation: Stribeck excess of every drive as a fraction of its "
              "Coulomb level (static friction fc (1 + ratio)); 0 = none");
DEFINE_double(stribeck_velocity,
              dynid::tx40_study::DefaultRealisticImperfections().stribeck_velocity_rad_s,
              "realistic simulation: Stribeck velocity v_s (rad/s), the excess decays as "
              "exp(-(q'/v_s)^2); > 0");
DEFINE_double(friction_asymmetry,
              dynid::tx40_study::DefaultRealisticImperfections().friction_asymmetry,
              "realistic simulation: Coulomb level fc (1 + a) forwards, fc (1 - a) backwards; in "
              "[0, 1)");
DEFINE_double(load_friction, dynid::tx40_study::DefaultRealisticImperfections().load_friction,
              "realistic simulation: load-dependent (gear) friction, + this × |applied torque| "
              "against the motion of every joint; in [0, 1)");
DEFINE_double(motor_torque_noise_std,
              dynid::tx40_study::DefaultRealisticImperfections().motor_torque_noise_std_nm,
              "realistic simulation: white noise std (N m, motor side) of the measured motor "
              "torques (current sensor); >= 0");
DEFINE_double(motor_torque_lsb,
              dynid::tx40_study::DefaultRealisticImperfections().motor_torque_lsb_nm,
              "realistic simulation: quantisation step (N m, motor side) of the measured motor "
              "torques (current sensor LSB); 0 = none");
DEFINE_double(encoder_resolution_scale,
              dynid::tx40_study::DefaultRealisticImperfections().encoder_resolution_scale,
              "realistic simulation: encoder resolution as a multiple of Brunot et al. (2018) "
              "Table 1 (1 = the TX40's); 0 = no quantisation");
DEFINE_string(coverage_csv, "",
              "single simulated run: the measured coverage quoted beside the intervals (a "
              "coverage.csv of --monte_carlo; empty = the study's shipped file, measured at the "
              "default flags)");
DEFINE_bool(write_measurements, false,
            "also write the simulated motor-side positions/torques/reference as real-data CSVs");
// Real data.
DEFINE_string(positions_csv, "", "real data: motor positions (rad), columns m1..m6 in any order");
DEFINE_string(torques_csv, "", "real data: motor torques (N m), columns m1..m6 in any order");
DEFINE_string(reference_csv, "",
              "real data: motor-side reference positions (rad), columns m1..m6; enables "
              "IDIM-IV (velocities and accelerations by central differences)");
DEFINE_double(sample_rate_hz, 5000.0, "real data: sampling rate (Hz)");
DEFINE_double(pid_bandwidth_hz, 10.0,
              "real data, IDIM-IV: bandwidth of the triple-pole PID assumed for the auxiliary "
              "closed-loop model (the real controller gains are not in the data)");
DEFINE_bool(substitute_reference, true,
            "real data without --reference_csv: run IDIM-IV with a substitute reference, the "
            "measured positions smoothed by a zero-phase Butterworth (order 4) at "
            "--substitute_cutoff_hz (false: IDIM-IV needs --reference_csv, the preferred path)");
DEFINE_double(substitute_cutoff_hz, 50.0,
              "real data, substitute reference: cut-off (Hz) of the zero-phase Butterworth that "
              "smooths the measured positions (default: omega_q of good knowledge); < fs/2");
// Estimation.
DEFINE_string(sample_selection, "on",
              "exclude low-velocity rows and the leading/trailing rest: on or off (on by default "
              "for real and simulated data: the simulated Coulomb friction chatters at rest just "
              "as real stiction does)");
DEFINE_double(velocity_threshold, 0.05, "sample selection: joint velocity threshold (rad/s)");
DEFINE_int32(guard_rows, dynid::tx40_study::kSimulatedGuardRows,
             "sample selection: also exclude the rows within this many decimated rows of an "
             "excluded row of the same joint (the decimation filter smears the stiction held at "
             "rest into them); 0 = off. Default 5 for --simulation=ideal; 0 for the realistic "
             "simulation and real data (--positions_csv), the procedure of Brunot et al. (2018)");
DEFINE_double(guard_s, dynid::tx40_study::kSimulatedGuardS,
              "sample selection: the guard band is at least this long (s) as well: "
              "max(guard_rows, ceil(guard_s · decimated rate)) rows. Default 0.04 for "
              "--simulation=ideal; 0 for the realistic simulation and real data");
DEFINE_bool(guard_comparison, true,
            "real data: also run IDIM-LS conv. with the other guard band (the simulated study's "
            "max(5 rows, 0.04 s) when none is used, none otherwise) and report the relative "
            "change of every essential parameter it causes");
DEFINE_int32(max_iterations, 20, "IDIM-IV iteration cap (Brunot et al. (2018): 20)");
DEFINE_string(hac_critical, "fixed_b",
              "critical value c of the HAC intervals estimate +- c sigma (the Monte Carlo's "
              "coverage): fixed_b (Kiefer & Vogelsang (2005): c grows with the bandwidth "
              "fraction b = (L + 1) / N, 2.12 at b = 0.05) or normal (1.96); the eq. 8 intervals "
              "are always +- 1.96 sigma");
DEFINE_double(iv_tolerance, 1e-3,
              "IDIM-IV: tolerance of both relative changes (simulated torques and parameters)");
DEFINE_int32(iv_stall_iterations, 5,
             "IDIM-IV: stop a run as not converging when for this many consecutive iterations "
             "neither relative change (simulated torques, parameters) fell below its smallest "
             "earlier value; 0 = off (run to --max_iterations)");

namespace dynid::tx40_study {
namespace {

bool Invalid(std::string* error, const std::string& message) {
  *error = message;
  return false;
}

// True when the flag was given (on the command line), even at its default value.
bool Given(const char* name) { return !gflags::GetCommandLineFlagInfoOrDie(name).is_default; }

}  // namespace

bool ValidateFlags(Settings* settings, std::string* error) {
  const bool real = !FLAGS_positions_csv.empty() || !FLAGS_torques_csv.empty();
  if (real && (FLAGS_positions_csv.empty() || FLAGS_torques_csv.empty())) {
    return Invalid(error, "real data needs both --positions_csv and --torques_csv");
  }
  if (!real && !FLAGS_reference_csv.empty()) {
    return Invalid(error, "--reference_csv is only used with --positions_csv/--torques_csv");
  }
  for (const char* name : {"substitute_reference", "substitute_cutoff_hz", "guard_comparison"}) {
    if (!real && Given(name)) {
      return Invalid(error, std::string("--") + name +
                                " is only used with real data (--positions_csv/--torques_csv)");
    }
  }
  if (!FLAGS_reference_csv.empty() && FLAGS_substitute_reference && Given("substitute_reference")) {
    return Invalid(error,
                   "--substitute_reference: not used with --reference_csv (the given reference "
                   "is the preferred path)");
  }
  if (!FLAGS_reference_csv.empty() && Given("substitute_cutoff_hz")) {
    return Invalid(error, "--substitute_cutoff_hz: not used with --reference_csv");
  }
  if (!(FLAGS_sample_rate_hz > 0.0) || !std::isfinite(FLAGS_sample_rate_hz)) {
    return Invalid(error, "--sample_rate_hz must be > 0");
  }
  if (real && (!(FLAGS_substitute_cutoff_hz > 0.0) ||
               !(FLAGS_substitute_cutoff_hz < 0.5 * FLAGS_sample_rate_hz))) {
    return Invalid(error, "--substitute_cutoff_hz must be in (0, --sample_rate_hz/2)");
  }
  if (!(FLAGS_duration_s > 0.0) || FLAGS_duration_s > 600.0) {
    return Invalid(error, "--duration_s must be in (0, 600]");
  }
  if (!(FLAGS_torque_noise_std >= 0.0)) return Invalid(error, "--torque_noise_std must be >= 0");
  // The simulation and its imperfections.
  static const char* const kImperfectionFlags[] = {
      "stribeck_ratio",         "stribeck_velocity", "friction_asymmetry",      "load_friction",
      "motor_torque_noise_std", "motor_torque_lsb",  "encoder_resolution_scale"};
  if (FLAGS_simulation != "realistic" && FLAGS_simulation != "ideal") {
    return Invalid(error,
                   "--simulation must be 'realistic' or 'ideal', got '" + FLAGS_simulation + "'");
  }
  const bool realistic = FLAGS_simulation == "realistic";
  if (real) {
    for (const char* name : {"simulation", "torque_noise_std", "monte_carlo", "coverage_csv"}) {
      if (Given(name)) {
        return Invalid(error, std::string("--") + name +
                                  " is only used with the simulated experiment (not with "
                                  "--positions_csv/--torques_csv)");
      }
    }
  }
  for (const char* name : kImperfectionFlags) {
    if ((real || !realistic) && Given(name)) {
      return Invalid(error, std::string("--") + name +
                                " is only used with the realistic simulation "
                                "(--simulation=realistic, not with real data)");
    }
  }
  if (!real && realistic && Given("torque_noise_std")) {
    return Invalid(error,
                   "--torque_noise_std is the ideal simulation's joint-side noise; the realistic "
                   "one measures motor torques (--motor_torque_noise_std), or give "
                   "--simulation=ideal");
  }
  auto finite_at_least = [](double value, double low) {
    return std::isfinite(value) && value >= low;
  };
  if (!finite_at_least(FLAGS_stribeck_ratio, 0.0)) {
    return Invalid(error, "--stribeck_ratio must be finite and >= 0");
  }
  if (!(FLAGS_stribeck_velocity > 0.0) || !std::isfinite(FLAGS_stribeck_velocity)) {
    return Invalid(error, "--stribeck_velocity must be finite and > 0 (rad/s)");
  }
  if (!(FLAGS_friction_asymmetry >= 0.0 && FLAGS_friction_asymmetry < 1.0)) {
    return Invalid(error, "--friction_asymmetry must be in [0, 1)");
  }
  if (!(FLAGS_load_friction >= 0.0 && FLAGS_load_friction < 1.0)) {
    return Invalid(error, "--load_friction must be in [0, 1)");
  }
  if (!finite_at_least(FLAGS_motor_torque_noise_std, 0.0)) {
    return Invalid(error, "--motor_torque_noise_std must be finite and >= 0 (N m)");
  }
  if (!finite_at_least(FLAGS_motor_torque_lsb, 0.0)) {
    return Invalid(error, "--motor_torque_lsb must be finite and >= 0 (N m, 0 = none)");
  }
  if (!finite_at_least(FLAGS_encoder_resolution_scale, 0.0) ||
      FLAGS_encoder_resolution_scale > 1000.0) {
    return Invalid(error, "--encoder_resolution_scale must be in [0, 1000] (0 = none)");
  }
  if (!cli::ValidateMonteCarloFlags(FLAGS_out_dir, error)) return false;
  if (FLAGS_monte_carlo > 10000) {
    return Invalid(error, "--monte_carlo must be in [0, 10000] (0 = the single run), got " +
                              std::to_string(FLAGS_monte_carlo));
  }
  if (FLAGS_monte_carlo == 0 && Given("monte_carlo_threads")) {
    return Invalid(error, "--monte_carlo_threads is only used with --monte_carlo");
  }
  if (FLAGS_monte_carlo > 0) {
    for (const char* name : {"write_measurements", "coverage_csv", "threads"}) {
      if (Given(name)) {
        return Invalid(error, std::string("--") + name +
                                  " is not used with --monte_carlo (seeds run on "
                                  "--monte_carlo_threads; it writes the coverage itself)");
      }
    }
  }
  if (FLAGS_threads < 0) return Invalid(error, "--threads must be >= 0");
  if (FLAGS_max_iterations < 1) return Invalid(error, "--max_iterations must be >= 1");
  solvers::HacCriticalValue hac_critical_value;
  if (!cli::ParseNamed(FLAGS_hac_critical,
                       {solvers::HacCriticalValue::kFixedB, solvers::HacCriticalValue::kNormal},
                       solvers::HacCriticalValueName, &hac_critical_value)) {
    return Invalid(error,
                   "--hac_critical: expected fixed_b or normal, got '" + FLAGS_hac_critical + "'");
  }
  if (!(FLAGS_iv_tolerance > 0.0)) return Invalid(error, "--iv_tolerance must be > 0");
  if (FLAGS_iv_stall_iterations < 0)
    return Invalid(error, "--iv_stall_iterations must be >= 0 (0 = off)");
  if (!(FLAGS_velocity_threshold >= 0.0))
    return Invalid(error, "--velocity_threshold must be >= 0");
  if (FLAGS_guard_rows < 0) return Invalid(error, "--guard_rows must be >= 0");
  if (!(FLAGS_guard_s >= 0.0)) return Invalid(error, "--guard_s must be >= 0");
  if (!(FLAGS_pid_bandwidth_hz > 0.0)) return Invalid(error, "--pid_bandwidth_hz must be > 0");
  if (FLAGS_parameters != "essential" && FLAGS_parameters != "base") {
    return Invalid(error,
                   "--parameters must be 'essential' or 'base', got '" + FLAGS_parameters + "'");
  }
  bool select_samples = true;
  if (FLAGS_sample_selection == "off") {
    select_samples = false;
  } else if (FLAGS_sample_selection != "on") {
    return Invalid(error,
                   "--sample_selection must be on or off, got '" + FLAGS_sample_selection + "'");
  }
  std::vector<dynid::experiments::PriorKnowledge> levels;
  for (const std::string& text : data::SplitList(FLAGS_knowledge)) {
    dynid::experiments::PriorKnowledge level;
    if (!dynid::experiments::ParsePriorKnowledge(text, &level, error)) {
      return Invalid(error, "--knowledge: " + *error);
    }
    levels.push_back(level);
  }
  if (levels.empty()) return Invalid(error, "--knowledge is empty");
  const bool substitute = real && FLAGS_reference_csv.empty() && FLAGS_substitute_reference;
  const bool have_reference = !real || !FLAGS_reference_csv.empty() || substitute;
  std::vector<std::string> method_keys = data::SplitList(FLAGS_methods);
  if (method_keys.empty()) {
    if (!real) {
      method_keys = {"idim_ls_conventional", "idim_iv_conventional", "idim_iv_irwsm1",
                     "idim_iv_irwsm2"};
    } else {
      method_keys = {"idim_ls_conventional", "idim_ls_irwsm1", "idim_wls_irwsm1", "idim_ls_irwsm2",
                     "idim_wls_irwsm2"};
      if (have_reference) {
        method_keys.insert(method_keys.end(),
                           {"idim_iv_conventional", "idim_iv_irwsm1", "idim_iv_irwsm2"});
      }
    }
  }
  std::vector<Method> methods;
  for (const std::string& key : method_keys) {
    Method method;
    if (!ParseMethod(key, &method, error)) return Invalid(error, "--methods: " + *error);
    if (method.estimator == solvers::IdimEstimator::kInstrumentalVariables && !have_reference) {
      return Invalid(error,
                     "--methods: " + key +
                         " needs a reference trajectory (give --reference_csv with real data, "
                         "or drop --substitute_reference=false)");
    }
    if (substitute && method.estimator == solvers::IdimEstimator::kInstrumentalVariables) {
      method.label += " (subst. ref.)";
    }
    methods.push_back(method);
  }
  // The guard band: explicit flags win; otherwise the ideal simulation's, or none for real data
  // and the realistic simulation (the procedure of Brunot et al. (2018)).
  const bool guard_given = Given("guard_rows") || Given("guard_s");
  const bool no_default_guard = real || FLAGS_simulation == "realistic";
  const int guard_rows = no_default_guard && !Given("guard_rows") ? 0 : FLAGS_guard_rows;
  const double guard_s = no_default_guard && !Given("guard_s") ? 0.0 : FLAGS_guard_s;
  const std::string guard_source =
      guard_given ? "given by --guard_rows/--guard_s"
      : real      ? "the real-data default: no guard band, the procedure of Brunot et al. (2018)"
      : no_default_guard
          ? "the realistic simulation's default: no guard band, the procedure of Brunot et al. "
            "(2018)"
          : "the ideal simulation's default";
  const bool has_ls_conventional = std::any_of(methods.begin(), methods.end(), [](const Method& m) {
    return m.key == "idim_ls_conventional";
  });
  if (real && Given("guard_comparison") && FLAGS_guard_comparison) {
    if (!select_samples) {
      return Invalid(error, "--guard_comparison needs --sample_selection=on");
    }
    if (!has_ls_conventional) {
      return Invalid(error, "--guard_comparison needs idim_ls_conventional in --methods");
    }
  }
  const bool guard_comparison =
      real && FLAGS_guard_comparison && select_samples && has_ls_conventional;
  const bool no_guard = guard_rows == 0 && guard_s == 0.0;
  const int threads = FLAGS_threads > 0
                          ? FLAGS_threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));

  settings->out_dir = FLAGS_out_dir;
  settings->figures = FLAGS_figures;
  settings->parameters = FLAGS_parameters;
  settings->torque_offsets = FLAGS_torque_offsets;
  settings->duration_s = FLAGS_duration_s;
  settings->seed = FLAGS_seed;
  settings->torque_noise_std = FLAGS_torque_noise_std;
  settings->write_measurements = FLAGS_write_measurements;
  settings->positions_csv = FLAGS_positions_csv;
  settings->torques_csv = FLAGS_torques_csv;
  settings->reference_csv = FLAGS_reference_csv;
  settings->sample_rate_hz = FLAGS_sample_rate_hz;
  settings->pid_bandwidth_hz = FLAGS_pid_bandwidth_hz;
  settings->substitute_reference = substitute;
  settings->substitute_cutoff_hz = FLAGS_substitute_cutoff_hz;
  settings->velocity_threshold = FLAGS_velocity_threshold;
  settings->guard_rows = guard_rows;
  settings->guard_s = guard_s;
  settings->guard_source = guard_source;
  settings->guard_comparison = guard_comparison;
  settings->comparison_guard_rows = no_guard ? kSimulatedGuardRows : 0;
  settings->comparison_guard_s = no_guard ? kSimulatedGuardS : 0.0;
  settings->max_iterations = FLAGS_max_iterations;
  settings->iv_tolerance = FLAGS_iv_tolerance;
  settings->iv_stall_iterations = FLAGS_iv_stall_iterations;
  settings->hac_critical_value = hac_critical_value;
  settings->real = real;
  settings->select_samples = select_samples;
  settings->levels = levels;
  settings->methods = methods;
  settings->methods_given = Given("methods");
  settings->threads = threads;
  settings->realistic = realistic;
  settings->imperfections.stribeck_ratio = FLAGS_stribeck_ratio;
  settings->imperfections.stribeck_velocity_rad_s = FLAGS_stribeck_velocity;
  settings->imperfections.friction_asymmetry = FLAGS_friction_asymmetry;
  settings->imperfections.load_friction = FLAGS_load_friction;
  settings->imperfections.motor_torque_noise_std_nm = FLAGS_motor_torque_noise_std;
  settings->imperfections.motor_torque_lsb_nm = FLAGS_motor_torque_lsb;
  settings->imperfections.encoder_resolution_scale = FLAGS_encoder_resolution_scale;
  settings->monte_carlo = FLAGS_monte_carlo;
  settings->monte_carlo_threads = FLAGS_monte_carlo_threads;
  settings->coverage_csv = FLAGS_coverage_csv;
  return true;
}

}  // namespace dynid::tx40_study
