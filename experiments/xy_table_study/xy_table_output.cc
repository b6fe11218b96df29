// experiments/xy_table_study/xy_table_output — the tables, CSV files, figures and summary.json of
// xy_table_study (see xy_table_output.h).
#include "experiments/xy_table_study/xy_table_output.h"

#include <Eigen/Core>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "experiments/xy_table_study/xy_table_case.h"
#include "experiments/xy_table_study/xy_table_flags.h"
#include "experiments/xy_table_study/xy_table_measures.h"

namespace dynid::xy_table_study {

namespace data = dynid::data;
namespace models = dynid::models;
namespace problems = dynid::problems;

void ReportStages(const Record& rec, const std::vector<StageResult>& stages,
                  const MeasuredCoverage& coverage, std::ostringstream* md_out,
                  nlohmann::json* summary_out) {
  std::ostringstream& md = *md_out;
  nlohmann::json& summary = *summary_out;
  const problems::WeightedResidualData& d = rec.d;
  const XyTableRecord& record = rec.simulation;
  const bool simulated = rec.simulated;
  const int first = rec.first;
  const int N = rec.count;
  md << "# xy-table identification (" << (simulated ? "simulated true system" : "measured data")
     << "), interval [" << FLAGS_interval_start_s << ", " << FLAGS_interval_end_s << "] s, " << N
     << " nodes\n\n";
  if (simulated) {
    const XyTableTrueSystem& sys = rec.case_options.system;
    md << "True system: " << (FLAGS_truth == "drawn" ? "drawn" : "thesis-centred");
    if (FLAGS_truth == "drawn") {
      md << " (seed " << TruthSeedOfRun(FLAGS_seed) << " = --truth_seed + --seed − "
         << kDefaultNoiseSeed << ", factors uniform within ±" << Fmt(FLAGS_truth_spread)
         << " of the thesis-centred values)";
    }
    const Eigen::VectorXd modes =
        XyTableClampedFrequencies(sys, record.positions.row(first).transpose());
    md << "; clamped modes at the interval start";
    for (int i = 0; i < modes.size(); ++i) md << (i ? ", " : " ") << Fmt(modes(i), "%.3g");
    md << " Hz";
    const std::string mismatch = ModelMismatchDescription();
    if (!mismatch.empty()) md << "; " << mismatch;
    md << ".\n\n";
  }
  md << CovarianceDescription(SolveSettingsFromFlags().covariance)
     << "; the last column is its measured 95 % interval coverage (Monte Carlo"
     << (coverage.source.empty() ? "" : ", " + coverage.source) << ").\n\n";
  md << "| stage | J1 [kg m²] | J2 [kg m²] | w1 [N m] | w2 [N m] | k [N m/rad] | iterations | "
        "converged | time [s] | interval coverage |\n|---|---|---|---|---|---|---|---|---|---|\n";
  const char* pnames[5] = {"J1", "J2", "w1", "w2", "k"};
  nlohmann::json jstages = nlohmann::json::array();
  for (const StageResult& r : stages) {
    const Eigen::VectorXd published = XyTablePublishedEstimate(r.stage);
    md << "| " << XyStageName(r.stage);
    for (int i = 0; i < 5; ++i) {
      if (i < r.theta.size()) {
        md << " | " << Fmt(r.theta(i));
        if (i < r.sd.size()) md << " ± " << Fmt(r.sd(i), "%.2g");
        md << " (thesis " << Fmt(published(i)) << ")";
      } else {
        md << " | –";
      }
    }
    // Iterations of the final solve (the models' eps), those of the continuation's solves before
    // it in brackets; the time is that of all of them.
    int continuation_iterations = 0;
    double time_s = r.summary.time_s;
    nlohmann::json jcontinuation = nlohmann::json::array();
    for (const ContinuationStep& step : r.continuation) {
      continuation_iterations += step.summary.iterations;
      time_s += step.summary.time_s;
      jcontinuation.push_back({{"friction_smoothing", step.friction_smoothing_rad_per_s},
                               {"converged", step.summary.converged},
                               {"iterations", step.summary.iterations},
                               {"final_cost", step.summary.final_cost},
                               {"time_s", step.summary.time_s}});
    }
    md << " | " << r.summary.iterations;
    if (!r.continuation.empty()) md << " (+" << continuation_iterations << " continuation)";
    md << " | " << (r.summary.converged ? "yes" : "no") << " | " << Fmt(time_s, "%.2f") << " | "
       << CoverageText(coverage, XyStageName(r.stage)) << " |\n";
    nlohmann::json j;
    j["stage"] = XyStageName(r.stage);
    for (int i = 0; i < r.theta.size(); ++i) {
      j["estimate"][pnames[i]] = r.theta(i);
      j["published"][pnames[i]] = published(i);
      if (i < r.sd.size()) j["standard_deviation"][pnames[i]] = r.sd(i);
    }
    j["coverage"] = CoverageEntry(coverage, XyStageName(r.stage));
    j["identifiability"] = r.identifiability;
    j["information_condition_number"] = r.condition;
    j["residual_variance_scale"] = r.residual_variance;
    j["covariance"] = solvers::CovarianceScalingName(r.covariance);
    j["interval_critical_value_95"] = r.critical_value_95;
    if (r.covariance == solvers::CovarianceScaling::kHac) {
      j["hac"] = {{"lags", r.sandwich.hac.lags},
                  {"bandwidth_fraction", r.sandwich.hac.bandwidth_fraction},
                  {"alpha", r.sandwich.hac.alpha},
                  {"score_lag1_autocorrelation", r.sandwich.hac.rho},
                  {"white_reference_draws", r.sandwich.white_reference_draws}};
      // The HAC σ of white errors through the same fit, and the ratio of the reported HAC σ to
      // it (about 1: the width is the fit's own; above 1: persistent error in the residuals).
      const Eigen::VectorXd& reference = r.sandwich.hac_white_reference_standard_deviation;
      for (int i = 0; i < reference.size() && i < r.theta.size(); ++i) {
        j["hac"]["white_reference_standard_deviation"][pnames[i]] = reference(i);
        j["hac"]["excess"][pnames[i]] = r.sandwich.hac_excess(i);
      }
    }
    if (r.covariance != solvers::CovarianceScaling::kVarianceFactor) {
      nlohmann::json& terms = j["sandwich_term_variance"];
      for (int g = 0; g < r.sandwich.group_variance.size(); ++g) {
        const double v = r.sandwich.group_variance(g);
        terms[r.sandwich.group_names[g]] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
      }
    }
    j["solver"] = {{"converged", r.summary.converged},
                   {"iterations", r.summary.iterations},
                   {"initial_cost", r.summary.initial_cost},
                   {"final_cost", r.summary.final_cost},
                   {"time_s", r.summary.time_s},
                   {"message", r.summary.message},
                   {"continuation", jcontinuation}};
    const int n = r.stage == XyStage::kRigid ? 2 : 3;
    for (int m = 0; m < 8; ++m) {
      const double range = Range(d.measurements.col(m));
      const Eigen::VectorXd res = r.zeta.col(n + m);
      j["residual_percent_of_range"][kMeasurementNames[m]] = {
          {"max", 100.0 * res.cwiseAbs().maxCoeff() / range}, {"rms", 100.0 * Rms(res) / range}};
    }
    if (r.stage != XyStage::kRigid) {
      j["residual_x_peak_frequency_hz"] = PeakFrequency(d.time, r.zeta.col(n + 0), 5.0, 40.0);
      j["residual_a_orth_peak_frequency_hz"] = PeakFrequency(d.time, r.zeta.col(n + 3), 5.0, 40.0);
      j["deformation_estimated_max_m"] = r.deformation.cwiseAbs().maxCoeff();
      if (simulated) {
        const Eigen::VectorXd truth = record.deformation_x_m.segment(first, N);
        j["deformation_true_max_m"] = truth.cwiseAbs().maxCoeff();
        j["deformation_error_rms_m"] = Rms(r.deformation - truth);
        j["deformation_error_rms_percent_of_true_range"] =
            100.0 * Rms(r.deformation - truth) / Range(truth);
      }
    }
    jstages.push_back(j);
  }
  if (simulated) {
    const XyTableTrueSystem& sys = rec.case_options.system;
    md << "| truth of the simulation | " << Fmt(sys.table.inertia1_kg_m2) << " | "
       << Fmt(sys.table.inertia2_kg_m2) << " | " << Fmt(sys.table.friction1_nm) << " | "
       << Fmt(sys.table.friction2_nm) << " | spindle " << Fmt(sys.spindle_stiffness_nm_per_rad)
       << " | | | | |\n";
  }
  summary["stages"] = jstages;
  // How much of each HAC σ the fit alone gives (SandwichCovariance::hac_excess).
  std::string excess_text;
  for (const StageResult& r : stages) {
    if (r.sandwich.hac_excess.size() == 0) continue;
    excess_text += std::string(excess_text.empty() ? "" : "; ") + XyStageName(r.stage);
    for (int i = 0; i < r.sandwich.hac_excess.size(); ++i) {
      excess_text += std::string(" ") + pnames[i] + " " + Fmt(r.sandwich.hac_excess(i), "%.2f");
    }
  }
  if (!excess_text.empty()) {
    md << "\nHAC σ / the HAC σ of white errors through the same fit (about 1: the width is the "
          "fit's own; well above 1: error in the residuals that persists beyond it): "
       << excess_text << ".\n";
  }
  md << "\nResiduals, max |z_m − z| as % of the measured range (RMS in brackets):\n\n| stage |";
  for (const char* name : kMeasurementNames) md << " " << name << " |";
  md << "\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& j : jstages) {
    md << "| " << j["stage"].get<std::string>() << " |";
    for (const char* name : kMeasurementNames) {
      md << " " << Fmt(j["residual_percent_of_range"][name]["max"].get<double>(), "%.2f") << " ("
         << Fmt(j["residual_percent_of_range"][name]["rms"].get<double>(), "%.2f") << ") |";
    }
    md << "\n";
  }
  for (int s = 1; s < 3; ++s) {
    const auto& j = jstages[s];
    md << "\n"
       << j["stage"].get<std::string>() << ": residual peak frequency (5–40 Hz) x_e "
       << Fmt(j["residual_x_peak_frequency_hz"].get<double>()) << " Hz, a_orth "
       << Fmt(j["residual_a_orth_peak_frequency_hz"].get<double>()) << " Hz; max estimated "
       << "deformation " << Fmt(1e3 * j["deformation_estimated_max_m"].get<double>()) << " mm";
    if (simulated) {
      md << " (true " << Fmt(1e3 * j["deformation_true_max_m"].get<double>()) << " mm, RMS error "
         << Fmt(1e3 * j["deformation_error_rms_m"].get<double>()) << " mm)";
    }
    md << "\n";
  }
}

void ReportScan(const std::vector<double>& scan, const ScanResult& result,
                std::ostringstream* md_out, nlohmann::json* summary_out) {
  std::ostringstream& md = *md_out;
  nlohmann::json& summary = *summary_out;
  const Eigen::MatrixXd& scan_table = result.scan_table;
  const std::vector<std::string>& first_order_messages = result.first_order_messages;
  const std::vector<std::string> scan_header = ScanHeader();
  if (!scan.empty()) {
    md << "\nAcceleration-weight sweep (stage 3 from the stage-2 estimate):\n\n"
          "| weight | converged | iterations | cost | k | J1 | cond(D S D) | acc. cost share | "
          "a_orth residual RMS [m/s²] | Hamiltonian max \\|Re μ\\| [1/s] | "
          "first-order: converged, iterations, last change, k |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (int i = 0; i < scan_table.rows(); ++i) {
      md << "| " << Fmt(scan_table(i, 0)) << " | " << (scan_table(i, 1) > 0 ? "yes" : "no") << " | "
         << scan_table(i, 2) << " | " << Fmt(scan_table(i, 3)) << " | " << Fmt(scan_table(i, 7))
         << " | " << Fmt(scan_table(i, 5)) << " | " << Fmt(scan_table(i, 8), "%.3g") << " | "
         << Fmt(scan_table(i, 9), "%.3f") << " | " << Fmt(scan_table(i, 10), "%.3g") << " | "
         << Fmt(scan_table(i, 16), "%.3g") << " | " << (scan_table(i, 11) > 0 ? "yes" : "no")
         << ", " << scan_table(i, 12) << ", " << Fmt(scan_table(i, 13), "%.2g") << ", "
         << Fmt(scan_table(i, 14)) << " (" << first_order_messages[i] << ") |\n";
      nlohmann::json row;
      for (size_t c = 0; c < scan_header.size(); ++c) row[scan_header[c]] = scan_table(i, c);
      row["first_order_message"] = first_order_messages[i];
      summary["acceleration_weight_sweep"].push_back(row);
    }
  }
}

bool WriteOutputs(const Record& rec, const std::vector<StageResult>& stages,
                  const ScanResult& scan_result, const Evaluation& evaluation,
                  const Reconstruction& path, const std::ostringstream& md,
                  const nlohmann::json& summary, std::string* error_out) {
  std::string& error = *error_out;
  const problems::WeightedResidualData& d = rec.d;
  const XyTableRecord& record = rec.simulation;
  const bool simulated = rec.simulated;
  const int first = rec.first;
  const int N = rec.count;
  const models::XyTableParameters& parameters = rec.parameters;
  const Eigen::MatrixXd& scan_table = scan_result.scan_table;
  const std::vector<std::string> scan_header = ScanHeader();
  const Eigen::MatrixXd& evaluation_rows = evaluation.evaluation_rows;
  const Eigen::MatrixXd& circle_rows = evaluation.circle_rows;
  const StageResult& reconstruction = path.reconstruction;
  const Eigen::MatrixXd& online_xy = path.online_xy;
  data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error)) return false;
  // interval.csv: measured channels and per-stage estimates.
  std::vector<std::string> header = {"t"};
  for (const char* name : kMeasurementNames) header.push_back(std::string(name) + "_measured");
  Eigen::MatrixXd table(N, 1 + 8);
  table << d.time, d.measurements;
  for (const StageResult& r : stages) {
    const std::string p = XyStageName(r.stage);
    const int n = r.stage == XyStage::kRigid ? 2 : 3;
    const int base = static_cast<int>(table.cols());
    table.conservativeResize(N, base + 3 * n + 8 + n + 1 + 2);
    int c = base;
    for (int i = 0; i < n; ++i) {
      header.push_back(p + "_phi" + std::to_string(i + 1));
      table.col(c++) = r.variables.states.row(i).transpose();
    }
    for (int i = 0; i < n; ++i) {
      header.push_back(p + "_w" + std::to_string(i + 1));
      table.col(c++) = r.variables.states.row(n + i).transpose();
    }
    for (int i = 0; i < n; ++i) {
      header.push_back(p + "_a" + std::to_string(i + 1));
      table.col(c++) = r.variables.inputs.row(i).transpose();
    }
    for (int m = 0; m < 8; ++m) {
      header.push_back(p + "_res_" + kMeasurementNames[m]);
      table.col(c++) = r.zeta.col(n + m);
    }
    for (int i = 0; i < n; ++i) {
      header.push_back(p + "_eom_res" + std::to_string(i + 1));
      table.col(c++) = r.zeta.col(i);
    }
    header.push_back(p + "_deformation");
    table.col(c++) = r.deformation;
    for (int m = 2; m < 4; ++m) {  // the model's a_along, a_orth (Figs. 5.20–5.21)
      header.push_back(p + "_model_" + kMeasurementNames[m]);
      table.col(c++) = r.model_z.col(m);
    }
  }
  header.push_back("true_deformation");
  table.conservativeResize(N, table.cols() + 1);
  table.col(table.cols() - 1) = simulated
                                    ? Eigen::VectorXd(record.deformation_x_m.segment(first, N))
                                    : Eigen::VectorXd::Constant(N, NAN);
  header.push_back("measured_deformation");
  table.conservativeResize(N, table.cols() + 1);
  table.col(table.cols() - 1) =
      d.measurements.col(0) - parameters.wheel_radius_m * d.measurements.col(4);
  for (const char* c : {"reconstructed_x", "reconstructed_y", "filtered_x", "filtered_y"}) {
    header.push_back(c);
  }
  table.conservativeResize(N, table.cols() + 4);
  table.rightCols(4).leftCols(2) = reconstruction.model_z.leftCols(2);
  table.rightCols(2) = online_xy.rows() == N ? online_xy : Eigen::MatrixXd::Constant(N, 2, NAN);
  for (const char* c : {"reconstruction_error_x", "filter_error_x"}) header.push_back(c);
  table.conservativeResize(N, table.cols() + 2);
  table.col(table.cols() - 2) = reconstruction.model_z.col(0) - d.measurements.col(0);
  table.col(table.cols() - 1) = table.col(table.cols() - 4) - d.measurements.col(0);
  const std::vector<std::string> eval_header = {"t",
                                                "x_measured",
                                                "y_measured",
                                                "x_model",
                                                "y_model",
                                                "deformation_true",
                                                "deformation_model",
                                                "deformation_measured",
                                                "interval_index"};
  if (!stage.WriteText("interval.csv", data::FormatCsv(header, table), &error) ||
      !stage.WriteText("sweep.csv", data::FormatCsv(scan_header, scan_table), &error) ||
      !stage.WriteText("evaluation.csv", data::FormatCsv(eval_header, evaluation_rows), &error) ||
      (circle_rows.rows() > 0 &&
       !stage.WriteText("circle.csv", data::FormatCsv(eval_header, circle_rows), &error))) {
    return false;
  }
  if (FLAGS_figures) {
    using data::LineSeries;
    auto panel = [](const std::string& title, const std::string& ylabel,
                    std::vector<data::Series> series) {
      data::Panel p;
      p.title = title;
      p.xlabel = "time [s]";
      p.ylabel = ylabel;
      p.series = std::move(series);
      return p;
    };
    std::vector<std::pair<std::string, data::Figure>> figures;
    const std::string I = "interval.csv";
    for (const std::string s : {"rigid", "flexible", "flexible_with_accelerations"}) {
      const bool flex = s != "rigid";
      data::Figure f;
      f.title = s + " model: estimates and residuals (cf. thesis Figs. 5.10–5.13 / 5.15–5.19)";
      std::vector<data::Series> pos = {LineSeries(I, "t", s + "_phi1", "phi1"),
                                       LineSeries(I, "t", s + "_phi2", "phi2")};
      std::vector<data::Series> vel = {LineSeries(I, "t", s + "_w1", "w1"),
                                       LineSeries(I, "t", s + "_w2", "w2")};
      std::vector<data::Series> acc = {LineSeries(I, "t", s + "_a1", "a1"),
                                       LineSeries(I, "t", s + "_a2", "a2")};
      if (flex) {
        pos.push_back(LineSeries(I, "t", s + "_phi3", "phi3"));
        vel.push_back(LineSeries(I, "t", s + "_w3", "w3"));
        acc.push_back(LineSeries(I, "t", s + "_a3", "a3"));
      }
      f.panels.push_back(panel("position estimates", "rad", pos));
      f.panels.push_back(panel("velocity estimates", "rad/s", vel));
      f.panels.push_back(panel("acceleration estimates", "rad/s²", acc));
      f.panels.push_back(panel("motor position residuals", "rad",
                               {LineSeries(I, "t", s + "_res_phi1", "phi1"),
                                LineSeries(I, "t", s + "_res_phi2", "phi2")}));
      f.panels.push_back(panel(
          "end-effector position residuals", "m",
          {LineSeries(I, "t", s + "_res_x_e", "x_e"), LineSeries(I, "t", s + "_res_y_e", "y_e")}));
      f.panels.push_back(panel(
          "current residuals", "A",
          {LineSeries(I, "t", s + "_res_i1", "i1"), LineSeries(I, "t", s + "_res_i2", "i2")}));
      figures.push_back({"xy_" + s, f});
    }
    {
      data::Figure f;
      f.title = "elastic deformation x_e − r phi1 (cf. thesis Fig. 5.17)";
      std::vector<data::Series> series = {
          LineSeries(I, "t", "measured_deformation", "measured"),
          LineSeries(I, "t", "flexible_deformation", "flexible model"),
          LineSeries(I, "t", "flexible_with_accelerations_deformation", "flexible + acc.")};
      if (simulated) series.push_back(LineSeries(I, "t", "true_deformation", "true"));
      f.panels.push_back(panel("deformation in x", "m", series));
      figures.push_back({"xy_deformation", f});
    }
    {
      data::Figure f;
      f.title = "accelerations measured vs estimated (cf. thesis Figs. 5.20–5.21)";
      for (const std::string& a : {std::string("a_along"), std::string("a_orth")}) {
        data::Series est = LineSeries(I, "t", "flexible_with_accelerations_res_" + a,
                                      "residual (measured − model)");
        f.panels.push_back(
            panel(a, "m/s²",
                  {LineSeries(I, "t", a + "_measured", "measured"),
                   LineSeries(I, "t", "flexible_with_accelerations_model_" + a, "model"), est}));
      }
      figures.push_back({"xy_accelerations", f});
    }
    if (evaluation_rows.rows() > 0) {
      data::Figure f;
      f.title = "identified model simulated with the measured currents (cf. Figs. 5.22–5.24)";
      const std::string E = "evaluation.csv";
      f.panels.push_back(panel(
          "x", "m",
          {LineSeries(E, "t", "x_measured", "measured"), LineSeries(E, "t", "x_model", "model")}));
      f.panels.push_back(panel(
          "y", "m",
          {LineSeries(E, "t", "y_measured", "measured"), LineSeries(E, "t", "y_model", "model")}));
      f.panels.push_back(
          panel("deformation", "m",
                {LineSeries("evaluation.csv", "t", "deformation_measured", "measured"),
                 LineSeries("evaluation.csv", "t", "deformation_model", "model")}));
      figures.push_back({"xy_evaluation", f});
    }
    if (circle_rows.rows() > 0) {
      data::Figure f;
      f.title = "circular path: measured vs identified model (cf. Figs. 5.25–5.26)";
      data::Panel p;
      p.title = "end-effector path";
      p.xlabel = "x [m]";
      p.ylabel = "y [m]";
      p.series = {LineSeries("circle.csv", "x_measured", "y_measured", "measured"),
                  LineSeries("circle.csv", "x_model", "y_model", "model")};
      f.panels.push_back(p);
      f.panels.push_back(panel("deformation", "m",
                               {LineSeries("circle.csv", "t", "deformation_measured", "measured"),
                                LineSeries("circle.csv", "t", "deformation_model", "model")}));
      figures.push_back({"xy_circle", f});
    }
    {
      data::Figure f;
      f.title = "end-effector path reconstructed from accelerations and the model (cf. Fig. 5.27)";
      data::Panel p;
      p.title = "path";
      p.xlabel = "x [m]";
      p.ylabel = "y [m]";
      p.series = {LineSeries(I, "x_e_measured", "y_e_measured", "measured"),
                  LineSeries(I, "reconstructed_x", "reconstructed_y", "reconstructed (smoother)")};
      if (online_xy.rows() == N) {
        p.series.push_back(LineSeries(I, "filtered_x", "filtered_y", "reconstructed (filter)"));
      }
      f.panels.push_back(p);
      f.panels.push_back(panel("x error of the reconstruction (measured x has 0.1 mm noise)", "m",
                               {LineSeries(I, "t", "reconstruction_error_x", "smoother"),
                                LineSeries(I, "t", "filter_error_x", "filter")}));
      figures.push_back({"xy_reconstruction", f});
    }
    for (const auto& [name, figure] : figures) {
      if (!data::RenderFigure(figure, stage.Path(""), name, &error)) return false;
    }
  }
  if (!stage.WriteText("tables.md", md.str(), &error) ||
      !stage.WriteJson("summary.json", summary, &error) || !stage.Commit(&error)) {
    return false;
  }
  return true;
}

}  // namespace dynid::xy_table_study
