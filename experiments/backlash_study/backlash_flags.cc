// experiments/backlash_study/backlash_flags — the flags of backlash_study and their checks (see
// backlash_flags.h).
#include "experiments/backlash_study/backlash_flags.h"

#include <gflags/gflags.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/problems/backlash_smoother_problem.h"

DEFINE_string(cases, "sim1,sim2,linear", "comma-separated cases: sim1, sim2, linear");
DEFINE_int32(samples, 0, "samples per case (0 = the case's default record length)");
DEFINE_uint64(seed, 2002,
              "measurement-noise seed of sim1 (sim2: +1, linear: +2; the PRBS uses a fixed LFSR "
              "start)");
DEFINE_string(out_dir, "out/backlash_study", "output folder");
DEFINE_string(qpp_factors, "0.1,1,10",
              "Q_pp scan: factors applied to each case's Q_pp (empty = no scan)");
DEFINE_string(sweep_cases, "sim1,sim2", "cases for the Q_pp scan");
DEFINE_int32(smoother_iterations, 50, "maximum Levenberg-Marquardt iterations of the smoother");
DEFINE_int32(bootstrap, 200, "bootstrap replicates of the dead-zone fit");
DEFINE_int32(fit_threads, 0,
             "threads for the dead-zone fits' bootstrap refits (0 = all cores, 1 per fit with "
             "--monte_carlo, whose runs share the cores; same result for any count)");
DEFINE_int32(max_fit_pairs, 5000, "the dead-zone fit uses every k-th pair, at most this many");
DEFINE_int32(max_plot_rows, 20000, "rows of the per-case CSV used by the figures");
DEFINE_int32(rk4_steps, 1, "RK4 steps per sample in the SAEKF and the smoother");
DEFINE_int32(simulation_substeps, 20, "RK4 substeps per sample of the true system");
DEFINE_double(prbs_amplitude, 3.0, "sim2/linear: PRBS torque amplitude [Nm]");
DEFINE_double(prbs_clock, 10e-3, "sim2/linear: PRBS clock period [s]");
DEFINE_double(sine_amplitude, 2.0, "sim1: swept-sine torque amplitude [Nm]");
DEFINE_bool(shape_refinement, true,
            "after the dead-zone fit, solve the smoother again with tau_K tied to the fitted "
            "dead-zone curve, estimating [c, b, K] with the states (estimator smoother_shape)");
DEFINE_string(shape_curve, "average",
              "smoother_shape: where tau_K,k (held over [t_k, t_{k+1}]) meets the dead-zone "
              "curve: average (mean over the interval), midpoint (at ½ (Δ_k + Δ_{k+1})), node "
              "(at Δ_k)");
DEFINE_string(shape_hold, "first",
              "smoother_shape: tau_K over [t_k, t_{k+1}] in the dynamics: first (linear from "
              "tau_K,k to tau_K,k+1, each node on the curve at its Δ_k) or zero (held at tau_K,k, "
              "tied to the curve as --shape_curve says)");
DEFINE_bool(shape_free_backlash, true,
            "smoother_shape: estimate b even when the free smoother's fit found no backlash "
            "(false: such transmissions are refined as a linear spring, b held at 0)");
DEFINE_double(shape_std, 1e-2,
              "smoother_shape: admitted deviation of tau_K from the dead-zone curve [Nm]");
DEFINE_bool(smoother_q0, true,
            "also run the smoother with Q_xx = 0 (the floor): the simulated truth has no process "
            "noise; the paper's Q_xx(3,3) = 1000 is a filter-robustness inflation (only for cases "
            "with a non-zero Q_xx)");
DEFINE_double(center_window_s, 0.1,
              "dead-zone fit: the centre is piecewise linear in time with knots this far apart, "
              "absorbing the drift of the estimated Δ (0 = one constant centre)");
DEFINE_bool(eigen_sparse, false, "smoother: Eigen's sparse Cholesky instead of SuiteSparse");
DEFINE_double(trust_region_radius, 1e12, "smoother: initial Levenberg-Marquardt trust region");
DEFINE_double(refine_radius, 1e3,
              "smoother: trust region the refinement phase restarts from (0: one phase; see "
              "solvers::BacklashSmootherOptions)");
DEFINE_double(shape_function_tolerance, 1e-4,
              "shape-constrained refinement: relative cost change that ends the solve");
DEFINE_int32(threads, 1, "smoother: threads for Jacobian evaluation");
DEFINE_string(measurements_csv, "",
              "measured record t,u,x3[,x4] (see the header comment); empty = the simulated cases");
DEFINE_double(motor_inertia, 0.0008, "measured record: motor inertia m1 [kg m^2]");
DEFINE_double(arm_inertia, 0.001765, "measured record: arm inertia m2 [kg m^2]");
DEFINE_double(damping, 0.01, "measured record: transmission damping D [N m s/rad]");
DEFINE_double(position_gain, 0.0, "measured record: position feedback gain Kr [N m/rad]");
DEFINE_double(viscous_friction, 0.01, "measured record: motor viscous friction Cv [N m s/rad]");
DEFINE_double(coulomb_friction, 0.27, "measured record: motor Coulomb friction Cc [N m]");
DEFINE_double(friction_sharpness, 100.0,
              "measured record: alpha of Cc (2/pi) atan(alpha x3) [s/rad]");
DEFINE_double(qpp, 100.0, "measured record: random-walk intensity Q_pp of tau_K [(N m)^2/s]");
DEFINE_double(measurement_variance, 1.0, "measured record: velocity noise variance R [(rad/s)^2]");
DEFINE_string(qxx, "0,0,1000,0", "measured record: diagonal of the state noise intensity Q_xx");
DEFINE_bool(figures, true, "render figures (python3 + matplotlib)");
DEFINE_bool(log_progress, false, "log smoother progress (every --progress_period seconds)");
DEFINE_double(progress_period, 1.0, "seconds between smoother progress lines");
DEFINE_string(coverage_csv, "",
              "the measured coverage quoted beside every interval: a coverage.csv written by "
              "--monte_carlo (empty = the study's shipped measurement at the default flags, "
              "share/dynid/backlash_study/coverage.csv)");
DEFINE_double(model_arm_inertia_scale, 1.0,
              "model mismatch (simulated cases): the estimators' arm inertia m2 is this factor "
              "times the true one, which the simulator keeps (1 = the exact model)");
DEFINE_double(model_motor_inertia_scale, 1.0,
              "model mismatch: the estimators' motor inertia m1, as a factor of the true one");
DEFINE_double(
    model_damping_scale, 1.0,
    "model mismatch: the estimators' transmission damping D, as a factor of the true one (0: "
    "none)");
DEFINE_double(model_friction_scale, 1.0,
              "model mismatch: the estimators' motor friction (Cv and Cc), as a factor of the true "
              "one (0: the model lacks it)");
DEFINE_int32(encoder_counts, 0,
             "unmodelled effect (simulated cases): the measured velocities are backward "
             "differences of the motor and arm positions read by encoders of this many counts "
             "per revolution, plus the noise R; the estimators still take them for the velocities "
             "at t_k (0 = the true velocities plus the noise R)");
namespace dynid::backlash_study {
namespace {

// Sets *error to `message` and returns false (for `return Reject(...)`).
bool Reject(std::string* error, const std::string& message) {
  *error = message;
  return false;
}

}  // namespace

bool ValidateFlags(std::vector<Case>* selected_cases, std::vector<Case>* selected_scan_cases,
                   std::vector<double>* selected_qpp_factors, std::string* error) {
  if (!cli::ValidateMonteCarloFlags(FLAGS_out_dir, error)) return false;
  // Flags of one source only: a flag that would be ignored is an error.
  const bool measured = !FLAGS_measurements_csv.empty();
  const std::vector<const char*> simulation_only = {"cases",
                                                    "sweep_cases",
                                                    "seed",
                                                    "simulation_substeps",
                                                    "prbs_amplitude",
                                                    "prbs_clock",
                                                    "sine_amplitude",
                                                    "monte_carlo",
                                                    "model_arm_inertia_scale",
                                                    "model_motor_inertia_scale",
                                                    "model_damping_scale",
                                                    "model_friction_scale",
                                                    "encoder_counts"};
  const std::vector<const char*> measured_only = {"motor_inertia",
                                                  "arm_inertia",
                                                  "damping",
                                                  "position_gain",
                                                  "viscous_friction",
                                                  "coulomb_friction",
                                                  "friction_sharpness",
                                                  "qpp",
                                                  "measurement_variance",
                                                  "qxx"};
  for (const char* flag : measured ? simulation_only : measured_only) {
    if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
      return Reject(error,
                    std::string("--") + flag +
                        (measured ? " is not used with --measurements_csv (the record is the "
                                    "only case)"
                                  : " is used only with --measurements_csv"));
    }
  }
  // The model mismatch and the unmodelled effect (simulated cases only, checked above).
  struct Factor {
    const char* flag;
    double value;
    bool positive;  // > 0 (inertias), else >= 0 (0: the estimators' model lacks the term)
  };
  const Factor factors[] = {{"model_arm_inertia_scale", FLAGS_model_arm_inertia_scale, true},
                            {"model_motor_inertia_scale", FLAGS_model_motor_inertia_scale, true},
                            {"model_damping_scale", FLAGS_model_damping_scale, false},
                            {"model_friction_scale", FLAGS_model_friction_scale, false}};
  for (const Factor& f : factors) {
    if (!std::isfinite(f.value) || !(f.positive ? f.value > 0.0 : f.value >= 0.0)) {
      return Reject(error, std::string("--") + f.flag + " must be a number " +
                               (f.positive ? "> 0" : ">= 0") +
                               " (a factor of the true value; 1 = the exact model), got " +
                               gflags::GetCommandLineFlagInfoOrDie(f.flag).current_value);
    }
  }
  if (FLAGS_encoder_counts < 0) {
    return Reject(error,
                  "--encoder_counts must be >= 0 (counts per revolution; 0 = no encoder), "
                  "got " +
                      std::to_string(FLAGS_encoder_counts));
  }
  std::vector<Case> cases;
  if (measured) {
    Case record;
    std::string why;
    if (!MakeMeasuredCase(FLAGS_measurements_csv, &record, &why)) return Reject(error, why);
    if (FLAGS_samples > record.default_samples) {
      return Reject(error, "--samples=" + std::to_string(FLAGS_samples) + " exceeds the " +
                               std::to_string(record.default_samples) + " rows of " +
                               FLAGS_measurements_csv);
    }
    cases.push_back(record);
  }
  for (const std::string& name :
       measured ? std::vector<std::string>() : data::SplitList(FLAGS_cases)) {
    if (name != "sim1" && name != "sim2" && name != "linear") {
      return Reject(error, "--cases: unknown case '" + name + "' (sim1, sim2, linear)");
    }
    cases.push_back(MakeCase(name));
  }
  if (cases.empty()) return Reject(error, "--cases: give at least one case");
  std::vector<double> qpp_factors;
  for (const std::string& text : data::SplitList(FLAGS_qpp_factors)) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(value > 0.0) || !std::isfinite(value)) {
      return Reject(error, "--qpp_factors: '" + text + "' is not a positive number");
    }
    qpp_factors.push_back(value);
  }
  // The Q_pp scan's cases (the measured record, if there is one).
  std::vector<Case> scan_cases;
  if (measured) scan_cases.push_back(cases.front());
  for (const std::string& name :
       measured ? std::vector<std::string>() : data::SplitList(FLAGS_sweep_cases)) {
    if (name != "sim1" && name != "sim2" && name != "linear") {
      return Reject(error, "--sweep_cases: unknown case '" + name + "'");
    }
    scan_cases.push_back(MakeCase(name));
  }
  if (FLAGS_samples != 0 && FLAGS_samples < 100) {
    return Reject(error, "--samples must be 0 (case default) or >= 100, got " +
                             std::to_string(FLAGS_samples));
  }
  if (FLAGS_smoother_iterations < 1) return Reject(error, "--smoother_iterations must be >= 1");
  if (FLAGS_bootstrap < 20) return Reject(error, "--bootstrap must be >= 20");
  if (FLAGS_fit_threads < 0) return Reject(error, "--fit_threads must be >= 0 (0: all cores)");
  if (FLAGS_max_fit_pairs < 20) return Reject(error, "--max_fit_pairs must be >= 20");
  if (FLAGS_max_plot_rows < 10) return Reject(error, "--max_plot_rows must be >= 10");
  if (!(FLAGS_trust_region_radius > 0.0)) return Reject(error, "--trust_region_radius must be > 0");
  if (!(FLAGS_refine_radius >= 0.0))
    return Reject(error, "--refine_radius must be >= 0 (0: one phase)");
  if (!(FLAGS_shape_function_tolerance > 0.0) || !(FLAGS_shape_function_tolerance < 1.0)) {
    return Reject(error, "--shape_function_tolerance must be in (0, 1)");
  }
  {
    std::string why;
    const Case prbs_case = MakeCase("sim2"), sine_case = MakeCase("sim1");
    if (!prbs_case.prbs_options.IsValid(prbs_case.sample_period_s, &why)) {
      return Reject(error, "--prbs_amplitude/--prbs_clock: " + why);
    }
    if (!sine_case.sine_options.IsValid(sine_case.sample_period_s, &why) ||
        !(FLAGS_sine_amplitude > 0.0)) {
      return Reject(error, "--sine_amplitude: must be a positive number" +
                               (why.empty() ? std::string() : " (" + why + ")"));
    }
  }
  if (!(FLAGS_center_window_s >= 0.0)) return Reject(error, "--center_window_s must be >= 0");
  {
    problems::ShapeCurvePoint point;
    std::string why;
    if (!problems::ParseShapeCurvePoint(FLAGS_shape_curve, &point, &why)) {
      return Reject(error, "--shape_curve: " + why);
    }
    problems::TauHold hold;
    if (!problems::ParseTauHold(FLAGS_shape_hold, &hold, &why)) {
      return Reject(error, "--shape_hold: " + why);
    }
    if (hold == problems::TauHold::kFirstOrder &&
        !gflags::GetCommandLineFlagInfoOrDie("shape_curve").is_default) {
      return Reject(error,
                    "--shape_curve applies to --shape_hold=zero only (a first-order hold ties "
                    "every node to the curve at its own Δ_k)");
    }
  }
  if (!(FLAGS_progress_period >= 0.0)) return Reject(error, "--progress_period must be >= 0");
  if (FLAGS_threads < 1) return Reject(error, "--threads must be >= 1");
  if (FLAGS_rk4_steps < 1) return Reject(error, "--rk4_steps must be >= 1");
  if (FLAGS_simulation_substeps < 1) return Reject(error, "--simulation_substeps must be >= 1");
  *selected_cases = std::move(cases);
  *selected_scan_cases = std::move(scan_cases);
  *selected_qpp_factors = std::move(qpp_factors);
  return true;
}

nlohmann::json FlagsJson() {
  return {{"measurements_csv", FLAGS_measurements_csv},
          {"cases", FLAGS_cases},
          {"samples", FLAGS_samples},
          {"seed", FLAGS_seed},
          {"qpp_factors", FLAGS_qpp_factors},
          {"sweep_cases", FLAGS_sweep_cases},
          {"smoother_iterations", FLAGS_smoother_iterations},
          {"trust_region_radius", FLAGS_trust_region_radius},
          {"refine_radius", FLAGS_refine_radius},
          {"shape_function_tolerance", FLAGS_shape_function_tolerance},
          {"bootstrap", FLAGS_bootstrap},
          {"fit_threads", FLAGS_fit_threads},
          {"max_fit_pairs", FLAGS_max_fit_pairs},
          {"rk4_steps", FLAGS_rk4_steps},
          {"simulation_substeps", FLAGS_simulation_substeps},
          {"center_window_s", FLAGS_center_window_s},
          {"smoother_q0", FLAGS_smoother_q0},
          {"shape_refinement", FLAGS_shape_refinement},
          {"shape_std", FLAGS_shape_std},
          {"shape_curve", FLAGS_shape_curve},
          {"shape_hold", FLAGS_shape_hold},
          {"shape_free_backlash", FLAGS_shape_free_backlash},
          {"prbs_amplitude", FLAGS_prbs_amplitude},
          {"prbs_clock", FLAGS_prbs_clock},
          {"sine_amplitude", FLAGS_sine_amplitude},
          {"qpp", FLAGS_qpp},
          {"measurement_variance", FLAGS_measurement_variance},
          {"qxx", FLAGS_qxx},
          {"model_arm_inertia_scale", FLAGS_model_arm_inertia_scale},
          {"model_motor_inertia_scale", FLAGS_model_motor_inertia_scale},
          {"model_damping_scale", FLAGS_model_damping_scale},
          {"model_friction_scale", FLAGS_model_friction_scale},
          {"encoder_counts", FLAGS_encoder_counts}};
}

}  // namespace dynid::backlash_study
