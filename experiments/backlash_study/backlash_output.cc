// experiments/backlash_study/backlash_output — the console table, results.csv rows, summary.json
// entries, series CSV and figures of one case (see backlash_output.h).
#include "experiments/backlash_study/backlash_output.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "experiments/backlash_study/backlash_flags.h"

namespace dynid::backlash_study {
namespace {

double RelativeError(double estimate, double truth) {
  return truth != 0.0 ? (estimate - truth) / truth : estimate;
}

}  // namespace

nlohmann::json FitJson(const solvers::DeadZoneFit& fit) {
  return {{"backlash_rad", fit.backlash_rad},
          {"backlash_ci", {fit.backlash_lower, fit.backlash_upper}},
          {"backlash_std", fit.backlash_std},
          {"stiffness_nm_per_rad", fit.stiffness_nm_per_rad},
          {"stiffness_ci", {fit.stiffness_lower, fit.stiffness_upper}},
          {"stiffness_std", fit.stiffness_std},
          {"center_rad", fit.center_rad},
          {"center_segments", fit.centers_rad.size()},
          {"center_ci", {fit.center_lower, fit.center_upper}},
          {"linear_stiffness_nm_per_rad", fit.linear_stiffness_nm_per_rad},
          {"residual_scale_nm", fit.residual_scale_nm},
          {"backlash_detected", fit.backlash_detected},
          {"verdict", fit.verdict},
          {"num_points", fit.num_points}};
}

std::string ResultsCsvHeader() {
  std::vector<std::string> result_header = {
      "case",          "estimator",     "b_true",
      "b_estimate",    "b_lower",       "b_upper",
      "K_true",        "K_estimate",    "K_lower",
      "K_upper",       "tau_rms_error", "backlash_detected",
      "time_s",        "cpu_s",         "tau_rms_error_interval",
      "b_coverage_95", "K_coverage_95", "b_calibrated",
      "K_calibrated",  "model_mismatch"};
  std::string results_csv;
  for (size_t i = 0; i < result_header.size(); ++i) {
    results_csv += (i ? "," : "") + result_header[i];
  }
  results_csv += "\n";
  return results_csv;
}

void PrintTableHeader(size_t num_cases) {
  std::printf("backlash_study: %zu case(s)\n", num_cases);
  const std::string mismatch = ModelMismatchDescription();
  if (!mismatch.empty()) {
    std::printf("MODEL MISMATCH (the simulator keeps the truth): %s\n", mismatch.c_str());
  }
  std::printf("%-7s %-14s %7s %7s %17s %6s %7s %17s %8s %8s %7s %7s %s | %s\n", "case", "estimator",
              "b_true", "b_est", "b 95% CI", "K_true", "K_est", "K 95% CI", "tauK_RMS", "RMS_int",
              "time_s", "cpu_s", "verdict",
              "measured coverage of the 95 % intervals (Monte Carlo; README)");
}

void ReportCase(const Case& config, int samples, const CaseRun& run,
                const MeasuredCoverage& coverage, nlohmann::json* summary,
                std::string* results_csv) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double b_true = config.measured ? nan : TrueBacklash(config);
  const double k_true = config.measured ? nan : config.parameters.stiffness_nm_per_rad;
  const auto known = [](const models::TwoMassTransmissionParameters& p) {
    return nlohmann::json{{"motor_inertia_kgm2", p.motor_inertia_kgm2},
                          {"arm_inertia_kgm2", p.arm_inertia_kgm2},
                          {"damping_nms_per_rad", p.damping_nms_per_rad},
                          {"position_gain_nm_per_rad", p.position_gain_nm_per_rad},
                          {"viscous_friction_nms_per_rad", p.viscous_friction_nms_per_rad},
                          {"coulomb_friction_nm", p.coulomb_friction_nm},
                          {"friction_sharpness_s_per_rad", p.friction_sharpness_s_per_rad}};
  };
  nlohmann::json case_json;
  case_json["description"] = config.description;
  case_json["samples"] = samples;
  case_json["sample_period_s"] = config.sample_period_s;
  // The parameters the estimators are given (with any --model_*_scale mismatch), and for a
  // simulated case those the simulator used.
  case_json["known_parameters"] = known(config.estimator_parameters);
  if (!config.measured) {
    case_json["simulated_parameters"] = known(config.parameters);
    case_json["model_mismatch"] = ModelMismatchJson();
  }
  case_json["arm_velocity_measured"] = config.measure_arm_velocity;
  if (config.measured) {
    case_json["measurements_csv"] = config.source;
    case_json["true"] = nullptr;  // no true system for a measured record
  } else {
    case_json["noise_seed"] = NoiseSeed(config.name);
    case_json["true"] = {{"backlash_rad", b_true},
                         {"stiffness_nm_per_rad", k_true},
                         {"shape", models::SpringShapeName(config.parameters.shape)}};
  }
  case_json["covariances"] = {{"Q_xx_diag",
                               {config.state_noise_intensity(0), config.state_noise_intensity(1),
                                config.state_noise_intensity(2), config.state_noise_intensity(3)}},
                              {"Q_pp", config.tau_noise_intensity},
                              {"R", config.measurement_variance}};
  case_json["input"] = config.measured ? nlohmann::json{{"type", "measured"}}
                       : config.prbs
                           ? nlohmann::json{{"type", "prbs"},
                                            {"amplitude_nm", config.prbs_options.amplitude},
                                            {"clock_period_s", config.prbs_options.clock_period_s},
                                            {"register_bits", config.prbs_options.register_bits},
                                            {"lfsr_seed", config.prbs_options.seed}}
                           : nlohmann::json{{"type", "swept_sine"},
                                            {"amplitude_nm", config.sine_options.amplitude},
                                            {"start_hz", config.sine_options.start_frequency_hz},
                                            {"end_hz", config.sine_options.end_frequency_hz}};
  case_json["smoother_summary"] = {
      {"converged", run.smoother.summary.converged},
      {"iterations", run.smoother.summary.iterations},
      {"initial_cost", run.smoother.summary.initial_cost},
      {"final_cost", run.smoother.summary.final_cost},
      {"time_s", run.smoother.summary.time_s},
      {"linear_solver_time_s", run.smoother.summary.linear_solver_time_s},
      {"jacobian_time_s", run.smoother.summary.jacobian_time_s},
      {"message", run.smoother.summary.message}};
  if (run.has_q0) {
    case_json["smoother_q0_summary"] = {{"converged", run.smoother_q0.summary.converged},
                                        {"iterations", run.smoother_q0.summary.iterations},
                                        {"final_cost", run.smoother_q0.summary.final_cost},
                                        {"time_s", run.smoother_q0.summary.time_s},
                                        {"message", run.smoother_q0.summary.message}};
  }
  if (run.has_shape) {
    case_json["smoother_shape_summary"] = {
        {"converged", run.shape.smoother.summary.converged},
        {"iterations", run.shape.smoother.summary.iterations},
        {"final_cost", run.shape.smoother.summary.final_cost},
        {"time_s", run.shape.smoother.summary.time_s},
        {"linear_solver_time_s", run.shape.smoother.summary.linear_solver_time_s},
        {"jacobian_time_s", run.shape.smoother.summary.jacobian_time_s},
        {"message", run.shape.smoother.summary.message},
        {"shape_std_nm", FLAGS_shape_std},
        {"spring_center_b_K", {run.shape.spring(0), run.shape.spring(1), run.shape.spring(2)}},
        {"spring_std", {run.shape.spring_std(0), run.shape.spring_std(1), run.shape.spring_std(2)}},
        {"covariance_valid", run.shape.covariance_valid},
        {"covariance_note", run.shape.covariance_note},
        {"posterior_variance_factor", run.shape.posterior_variance_factor},
        {"covariance_time_s", run.shape.covariance_time_s}};
  }
  case_json["saekf_summary"] = {{"converged", run.saekf.filter.converged},
                                {"time_s", run.saekf.filter.time_s},
                                {"log_likelihood", run.saekf.filter.log_likelihood}};
  // results.csv's last cell: the model mismatch and unmodelled effect (no commas in it).
  const std::string mismatch = ModelMismatchDescription();
  const std::string mismatch_cell = config.measured    ? "measured record"
                                    : mismatch.empty() ? "none"
                                                       : mismatch;
  for (const auto& [label, outcome] : run.Outcomes()) {
    const solvers::DeadZoneFit& fit = outcome->fit;
    nlohmann::json estimator = FitJson(fit);
    estimator["tau_rms_error_nm"] = outcome->tau_rms_error;
    estimator["tau_rms_error_interval_nm"] = outcome->tau_rms_error_interval;
    estimator["time_s"] = outcome->time_s;
    estimator["cpu_s"] = outcome->cpu_s;
    estimator["fit_cpu_s"] = outcome->fit_cpu_s;
    estimator["converged"] = outcome->converged;
    estimator["measured_coverage"] = CoverageEntry(coverage, config.name, label);
    if (!config.measured) {
      estimator["backlash_relative_error"] = RelativeError(fit.backlash_rad, b_true);
      estimator["stiffness_relative_error"] = RelativeError(fit.stiffness_nm_per_rad, k_true);
    }
    case_json[label] = estimator;
    char ci_b[64], ci_k[64];
    std::snprintf(ci_b, sizeof(ci_b), "[%.4f, %.4f]", fit.backlash_lower, fit.backlash_upper);
    std::snprintf(ci_k, sizeof(ci_k), "[%.2f, %.2f]", fit.stiffness_lower, fit.stiffness_upper);
    std::printf("%-7s %-14s %7.4f %7.4f %17s %6.2f %7.2f %17s %8.4f %8.4f %7.2f %7.2f %s | %s\n",
                config.name.c_str(), label.c_str(), b_true, fit.backlash_rad, ci_b, k_true,
                fit.stiffness_nm_per_rad, ci_k, outcome->tau_rms_error,
                outcome->tau_rms_error_interval, outcome->time_s, outcome->cpu_s,
                VerdictLabel(*outcome).c_str(), CoverageText(coverage, config.name, label).c_str());
    char line[1024];
    std::snprintf(line, sizeof(line),
                  "%s,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,"
                  "%.17g,%d,%.6g,%.6g,%.17g%s,%s\n",
                  config.name.c_str(), label.c_str(), b_true, fit.backlash_rad, fit.backlash_lower,
                  fit.backlash_upper, k_true, fit.stiffness_nm_per_rad, fit.stiffness_lower,
                  fit.stiffness_upper, outcome->tau_rms_error, fit.backlash_detected ? 1 : 0,
                  outcome->time_s, outcome->cpu_s, outcome->tau_rms_error_interval,
                  CoverageCsvCells(coverage, config.name, label).c_str(), mismatch_cell.c_str());
    *results_csv += line;
  }
  std::fflush(stdout);
  (*summary)["cases"][config.name] = case_json;
}

bool WriteCaseOutputs(const CaseRun& run, data::OutputStage* stage, std::string* error) {
  const std::string& name = run.config.name;
  const int n = run.samples;
  const int stride = std::max(1, (n + FLAGS_max_plot_rows - 1) / FLAGS_max_plot_rows);
  const int rows = (n + stride - 1) / stride;
  const int l = run.config.measure_arm_velocity ? 2 : 1;
  const bool truth = !run.config.measured;  // the true system's columns and series
  std::vector<std::string> header = {"t", "u"};
  if (truth) header.insert(header.end(), {"x1", "x2", "x3", "x4", "delta", "tau_true"});
  header.insert(header.end(), {"y_x3", "saekf_delta", "saekf_tau", "saekf_tau_std",
                               "smoother_delta", "smoother_tau"});
  if (truth) {
    header.insert(header.end(),
                  {"saekf_error_x3", "saekf_error_x4", "smoother_error_x3", "smoother_error_x4"});
  }
  header.insert(header.end(), {"saekf_innovation_x3", "smoother_residual_x3"});
  if (l == 2) {
    header.insert(header.end(), {"y_x4", "saekf_innovation_x4", "smoother_residual_x4"});
  }
  header.insert(header.end(), {"saekf_fit_tau", "smoother_fit_tau", "saekf_delta_centered",
                               "smoother_delta_centered"});
  if (run.has_q0) {
    header.insert(header.end(), {"smoother_q0_delta", "smoother_q0_tau", "smoother_q0_fit_tau",
                                 "smoother_q0_delta_centered"});
  }
  if (run.has_shape) {
    header.insert(header.end(), {"smoother_shape_delta", "smoother_shape_tau",
                                 "smoother_shape_fit_tau", "smoother_shape_delta_centered"});
  }
  Eigen::MatrixXd table(rows, header.size());
  const auto& rec = run.record;
  const auto& f = run.saekf;
  const auto& s = run.smoother;
  const auto& ff = run.filter_outcome.fit;
  const auto& sf = run.smoother_outcome.fit;
  for (int r = 0; r < rows; ++r) {
    const int k = r * stride;
    int c = 0;
    table(r, c++) = rec.time(k);
    table(r, c++) = rec.input(k);
    if (truth) {
      for (int j = 0; j < 4; ++j) table(r, c++) = rec.states(k, j);
      table(r, c++) = rec.delta(k);
      table(r, c++) = rec.spring_torque(k);
    }
    table(r, c++) = run.measurements(k, 0);
    table(r, c++) = f.delta(k);
    table(r, c++) = f.tau(k);
    table(r, c++) = f.tau_std(k);
    table(r, c++) = s.delta(k);
    table(r, c++) = s.tau(k);
    if (truth) {
      table(r, c++) = rec.states(k, 2) - f.states(k, 2);
      table(r, c++) = rec.states(k, 3) - f.states(k, 3);
      table(r, c++) = rec.states(k, 2) - s.states(k, 2);
      table(r, c++) = rec.states(k, 3) - s.states(k, 3);
    }
    table(r, c++) = f.filter.prediction_errors(k, 0);
    table(r, c++) = s.measurement_residuals(k, 0);
    if (l == 2) {
      table(r, c++) = run.measurements(k, 1);
      table(r, c++) = f.filter.prediction_errors(k, 1);
      table(r, c++) = s.measurement_residuals(k, 1);
    }
    const double fc = FittedCenter(ff, k, n), sc = FittedCenter(sf, k, n);
    table(r, c++) =
        solvers::DeadZoneTorque(f.delta(k), fc, ff.backlash_rad, ff.stiffness_nm_per_rad);
    table(r, c++) =
        solvers::DeadZoneTorque(s.delta(k), sc, sf.backlash_rad, sf.stiffness_nm_per_rad);
    table(r, c++) = f.delta(k) - fc;
    table(r, c++) = s.delta(k) - sc;
    if (run.has_q0) {
      const auto& q = run.smoother_q0;
      const auto& qf = run.q0_outcome.fit;
      const double qc = FittedCenter(qf, k, n);
      table(r, c++) = q.delta(k);
      table(r, c++) = q.tau(k);
      table(r, c++) =
          solvers::DeadZoneTorque(q.delta(k), qc, qf.backlash_rad, qf.stiffness_nm_per_rad);
      table(r, c++) = q.delta(k) - qc;
    }
    if (run.has_shape) {
      const auto& g = run.shape.smoother;
      const Eigen::Vector3d& spring = run.shape.spring;
      table(r, c++) = g.delta(k);
      table(r, c++) = g.tau(k);
      table(r, c++) = solvers::DeadZoneTorque(g.delta(k), spring(0), spring(1), spring(2));
      table(r, c++) = g.delta(k) - spring(0);
    }
  }
  const std::string csv = name + "_series.csv";
  if (!stage->WriteText(csv, data::FormatCsv(header, table), error)) return false;
  if (!FLAGS_figures) return true;

  const std::string title = run.config.description;
  {
    data::Figure figure;
    figure.title = title + ": tau_K against Δ = x1 − x2 (Hovland et al. (2002) Figs. 7, 12)";
    figure.columns = 2;
    figure.width_in = 13.0;
    figure.panel_height_in = 4.5;
    auto panel = [&](const std::string& label, const std::string& prefix, bool centered) {
      data::Panel p{label + (centered ? ": against Δ̂ − ĉ(t) (fitted drift removed)"
                                      : ": against the estimated Δ̂"),
                    centered ? "Δ̂ − ĉ(t) [rad]" : "Δ̂ = x̂1 − x̂2 [rad]",
                    "tau_K [Nm]",
                    {},
                    {}};
      const std::string x = prefix + (centered ? "_delta_centered" : "_delta");
      p.series.push_back(data::PointSeries(csv, x, prefix + "_tau", label + " estimate"));
      if (truth) {
        p.series.push_back(data::PointSeries(csv, "delta", "tau_true", "true tau_K(Δ)"));
      }
      p.series.push_back(data::PointSeries(csv, x, prefix + "_fit_tau", "dead-zone fit"));
      return p;
    };
    const data::Panel saekf = panel("SAEKF", "saekf", false);
    const data::Panel smoother = panel("smoother", "smoother", false);
    const data::Panel saekf_centered = panel("SAEKF", "saekf", true);
    const data::Panel smoother_centered = panel("smoother", "smoother", true);
    figure.panels = {saekf, smoother, saekf_centered, smoother_centered};
    if (run.has_q0) {
      figure.panels.push_back(panel("smoother, Q_xx = 0", "smoother_q0", false));
      figure.panels.push_back(panel("smoother, Q_xx = 0", "smoother_q0", true));
    }
    if (run.has_shape) {
      figure.panels.push_back(panel("shape-constrained smoother", "smoother_shape", false));
      figure.panels.push_back(panel("shape-constrained smoother", "smoother_shape", true));
    }
    if (!data::RenderFigure(figure, stage->Path(""), name + "_tau_vs_delta", error)) return false;
  }
  {
    data::Figure figure;
    figure.title = title + ": tau_K against time (Hovland et al. (2002) Fig. 8)";
    data::Panel tau{"transmission torque", "t [s]", "tau_K [Nm]", {}, {}};
    if (truth) tau.series.push_back(data::LineSeries(csv, "t", "tau_true", "true"));
    tau.series.push_back(data::LineSeries(csv, "t", "saekf_tau", "SAEKF (±2σ)", "saekf_tau_std"));
    tau.series.push_back(data::LineSeries(csv, "t", "smoother_tau", "smoother"));
    if (run.has_q0) {
      tau.series.push_back(data::LineSeries(csv, "t", "smoother_q0_tau", "smoother, Q_xx = 0"));
    }
    if (run.has_shape) {
      tau.series.push_back(
          data::LineSeries(csv, "t", "smoother_shape_tau", "shape-constrained smoother"));
    }
    data::Panel delta{"position difference", "t [s]", "Δ [rad]", {}, {}};
    if (truth) delta.series.push_back(data::LineSeries(csv, "t", "delta", "true"));
    delta.series.push_back(data::LineSeries(csv, "t", "saekf_delta", "SAEKF"));
    delta.series.push_back(data::LineSeries(csv, "t", "smoother_delta", "smoother"));
    if (run.has_q0) {
      delta.series.push_back(data::LineSeries(csv, "t", "smoother_q0_delta", "smoother, Q_xx = 0"));
    }
    data::Panel input{"motor torque input", "t [s]", "u [Nm]", {}, {}};
    input.series.push_back(data::LineSeries(csv, "t", "u", "u"));
    figure.panels = {tau, delta, input};
    figure.width_in = 12.0;
    figure.panel_height_in = 3.0;
    if (!data::RenderFigure(figure, stage->Path(""), name + "_tau_vs_time", error)) return false;
  }
  {
    data::Figure figure;
    figure.title =
        title + (truth ? ": prediction errors and state errors (Hovland et al. (2002) Fig. 11)"
                       : ": prediction errors and residuals (Hovland et al. (2002) Fig. 11)");
    figure.columns = 2;
    figure.width_in = 13.0;
    data::Panel innovation{
        "SAEKF measurement prediction errors y − ŷ(t⁻)", "t [s]", "rad/s", {}, {}};
    innovation.series.push_back(data::LineSeries(csv, "t", "saekf_innovation_x3", "x3"));
    data::Panel residual{"smoother measurement residuals y − x̂", "t [s]", "rad/s", {}, {}};
    residual.series.push_back(data::LineSeries(csv, "t", "smoother_residual_x3", "x3"));
    if (l == 2) {
      innovation.series.push_back(data::LineSeries(csv, "t", "saekf_innovation_x4", "x4"));
      residual.series.push_back(data::LineSeries(csv, "t", "smoother_residual_x4", "x4"));
    }
    data::Panel filter_state{"SAEKF state errors x − x̂", "t [s]", "rad/s", {}, {}};
    filter_state.series.push_back(data::LineSeries(csv, "t", "saekf_error_x3", "x3"));
    filter_state.series.push_back(data::LineSeries(csv, "t", "saekf_error_x4", "x4"));
    data::Panel smoother_state{"smoother state errors x − x̂", "t [s]", "rad/s", {}, {}};
    smoother_state.series.push_back(data::LineSeries(csv, "t", "smoother_error_x3", "x3"));
    smoother_state.series.push_back(data::LineSeries(csv, "t", "smoother_error_x4", "x4"));
    figure.panels = {innovation, residual};
    if (truth) figure.panels.insert(figure.panels.end(), {filter_state, smoother_state});
    if (!data::RenderFigure(figure, stage->Path(""), name + "_errors", error)) return false;
  }
  return true;
}

}  // namespace dynid::backlash_study
