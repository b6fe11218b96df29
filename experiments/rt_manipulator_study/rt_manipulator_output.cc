// experiments/rt_manipulator_study/rt_manipulator_output — the console table, rt_study.csv,
// summary.json and the figures of rt_manipulator_study (see rt_manipulator_output.h).
#include "experiments/rt_manipulator_study/rt_manipulator_output.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/solvers/monte_carlo.h"
#include "experiments/rt_manipulator_study/rt_manipulator_flags.h"

namespace dynid::rt_manipulator_study {
namespace {

// For a simulated record, a note when the smoother's 95 % interval m ± c sd excludes the true
// payload: the estimate is biased by more than its reported uncertainty (with weighting 1, by
// the joint flexibility the rigid model cannot represent). Empty otherwise.
std::string BiasNote(const Record& record, const Estimate& e) {
  if (!record.simulated || !std::isfinite(e.mass_smoother_sd) || !(e.mass_smoother_sd > 0.0)) {
    return "";
  }
  const double error = e.mass_smoother - record.true_payload_kg;
  if (std::abs(error) <= e.interval_c * e.mass_smoother_sd) return "";
  char note[200];
  std::snprintf(note, sizeof(note),
                "biased: the 95 %% interval excludes the true %g kg (error %+.3f kg = %+.1f sd)",
                record.true_payload_kg, error, error / e.mass_smoother_sd);
  return note;
}

// Time series, column by column (the true system's only for a simulated record).
void TimeSeries(const models::RtManipulatorRigid& model, const Record& record,
                const std::vector<Estimate>& estimates, std::vector<std::string>* header_out,
                Eigen::MatrixXd* table_out) {
  const problems::WeightedResidualData& data = record.data;
  const Eigen::VectorXd& times = data.time;
  const int num_nodes = static_cast<int>(times.size());
  std::vector<std::string>& header = *header_out;
  std::vector<Eigen::VectorXd> columns;
  auto add = [&](const std::string& name, const Eigen::VectorXd& values) {
    header.push_back(name);
    columns.push_back(values);
  };
  const Estimate& e1 = estimates[0];
  const Estimate& e2 = estimates[1];
  add("t", times);
  if (record.simulated) {
    const Eigen::MatrixXd& positions = record.truth.positions;
    add("r_true", positions.col(0));
    add("phi_true", positions.col(1));
    add("eta_true", positions.col(2));
    add("deformation", positions.col(1) - positions.col(2));
    add("F", record.truth.inputs.col(0));
    add("T", record.truth.inputs.col(1));
  }
  const char* const measured_names[] = {"r_measured",          "phi_measured",
                                        "radial_acc_measured", "tangential_acc_measured",
                                        "F_measured",          "T_measured"};
  for (int j = 0; j < 6; ++j) add(measured_names[j], data.measurements.col(j));
  // Payload accelerations predicted by the filter's estimates: z = g + G a + R u.
  Eigen::MatrixXd predicted[2];
  for (int w = 0; w < 2; ++w) {
    const Estimate& e = estimates[w];
    predicted[w].resize(num_nodes, 6);
    for (int k = 0; k < num_nodes; ++k) {
      const Eigen::Vector4d x = e.states_filter.col(k).head(4);
      const Eigen::Vector4d pbar = e.inputs_filter.col(k);
      const double theta = e.mass_filter(k);
      Eigen::Matrix<double, 6, 1> z;
      model.Measurements(x.data(), x.data() + 2, pbar.data(), pbar.data() + 2, &theta, times(k),
                         z.data());
      predicted[w].row(k) = z.transpose();
    }
  }
  add("r_filter1", e1.states_filter.row(0).transpose());
  add("phi_filter1", e1.states_filter.row(1).transpose());
  add("r_filter2", e2.states_filter.row(0).transpose());
  add("phi_filter2", e2.states_filter.row(1).transpose());
  add("radial_acc_filter1", predicted[0].col(2));
  add("tangential_acc_filter1", predicted[0].col(3));
  add("radial_acc_filter2", predicted[1].col(2));
  add("tangential_acc_filter2", predicted[1].col(3));
  add("mass_filter1", e1.mass_filter);
  add("mass_filter2", e2.mass_filter);
  add("eom2_residual_filter1", e1.zeta_filter.col(1));
  add("eom2_residual_filter2", e2.zeta_filter.col(1));
  add("phi_residual_filter2", e2.zeta_filter.col(3));
  add("eom2_residual_smoother1", e1.zeta_smoother.col(1));
  add("eom2_residual_smoother2", e2.zeta_smoother.col(1));
  add("phi_residual_smoother2", e2.zeta_smoother.col(3));
  Eigen::MatrixXd& table = *table_out;
  table.resize(num_nodes, static_cast<Eigen::Index>(columns.size()));
  for (size_t c = 0; c < columns.size(); ++c) table.col(c) = columns[c];
}

// summary.json: flags, weights, the estimates with the smoother's summaries, the residual-vs-
// deformation comparison (simulated record only), the elapsed time.
nlohmann::json Summary(const Record& record, const Weightings& weightings,
                       const std::vector<Estimate>& estimates, double elapsed_s) {
  const int num_nodes = static_cast<int>(record.data.time.size());
  const Eigen::VectorXd v1 = weightings.base.residual.diagonal();
  const Eigen::VectorXd v2 = weightings.deweighted.residual.diagonal();
  const Estimate& e2 = estimates[1];
  nlohmann::json summary;
  summary["flags"] = FlagsJson();
  summary["samples"] = num_nodes;
  if (record.simulated) summary["true_payload_kg"] = 2.0;
  summary["weights"] = {{"W_kinematic", {1e6, 1e6, 1e4, 1e4}},
                        {"W_payload", 1.0},
                        {"R0", {1e8, 1e8, 1e8, 1e8, 1e-2}},
                        {"V_weighting1", std::vector<double>(v1.data(), v1.data() + 8)},
                        {"V_weighting2", std::vector<double>(v2.data(), v2.data() + 8)}};
  for (const Estimate& e : estimates) {
    summary[e.name] = {
        {"filter_final_payload_kg", e.mass_filter(num_nodes - 1)},
        {"filter_mean_second_half_payload_kg",
         e.mass_filter.tail(num_nodes - num_nodes / 2).mean()},
        {"smoother_payload_kg", e.mass_smoother},
        {"smoother_payload_sd_kg", e.mass_smoother_sd},
        {"smoother_payload_sd_weights_kg", e.mass_smoother_sd_weights},
        {"smoother_payload_sd_hac_kg", e.mass_smoother_sd_hac},
        {"smoother_payload_hac_critical_value_95", e.mass_smoother_hac_c},
        {"smoother_payload_hac_excess", e.mass_smoother_hac_excess},
        {"smoother_payload_interval_critical_value_95", e.interval_c},
        {"smoother_payload_sd_sandwich_kg", e.mass_smoother_sd_sandwich},
        {"smoother_payload_sd_variance_factor_kg", e.mass_smoother_sd_variance_factor},
        {"smoother_payload_sd_form", solvers::CovarianceScalingName(e.covariance)},
        {"smoother_variance_factor", e.variance_factor},
        {"smoother_converged", e.smoother_summary.converged},
        {"smoother_iterations", e.smoother_summary.iterations},
        {"smoother_time_s", e.smoother_summary.time_s},
        {"smoother_message", e.smoother_summary.message},
        {"identifiability", e.identifiability}};
    if (record.simulated) {
      const std::string note = BiasNote(record, e);
      summary[e.name]["smoother_interval_covers_truth"] = note.empty();
      summary[e.name]["smoother_note"] = note;
    }
  }
  // Agreement of the phi-measurement residual (weighting 2) with the elastic deformation.
  if (record.simulated) {
    const Eigen::VectorXd deformation =
        record.truth.positions.col(1) - record.truth.positions.col(2);
    const Eigen::VectorXd residual = e2.zeta_filter.col(3);
    const Eigen::VectorXd a = deformation.array() - deformation.mean();
    const Eigen::VectorXd b = residual.array() - residual.mean();
    summary["phi_residual_vs_deformation"] = {
        {"max_abs_deformation_rad", deformation.cwiseAbs().maxCoeff()},
        {"max_abs_difference_rad", (residual - deformation).cwiseAbs().maxCoeff()},
        {"correlation", a.dot(b) / std::sqrt(a.squaredNorm() * b.squaredNorm() + 1e-300)}};
  }
  summary["elapsed_s"] = elapsed_s;
  return summary;
}

// The figures of rt_study.csv: positions, accelerations, payload, residuals.
std::vector<std::pair<std::string, data::Figure>> Figures(bool simulated) {
  using dynid::data::Figure;
  using dynid::data::Panel;
  using dynid::data::Series;
  auto line = [](const std::string& y, const std::string& label) {
    Series s;
    s.csv = "rt_study.csv";
    s.x = "t";
    s.y = y;
    s.label = label;
    return s;
  };
  auto panel = [](const std::string& title, const std::string& ylabel,
                  const std::vector<Series>& series) {
    Panel result;
    result.title = title;
    result.xlabel = "t [s]";
    result.ylabel = ylabel;
    result.series = series;
    return result;
  };
  std::vector<std::pair<std::string, Figure>> figures;
  Figure positions;
  positions.title = "RT manipulator: measured and estimated positions (filter, weighting 1)";
  positions.panels = {
      panel("r", "r [m]", {line("r_measured", "measured"), line("r_filter1", "filter")}),
      panel("phi", "phi [rad]", {line("phi_measured", "measured"), line("phi_filter1", "filter")})};
  figures.emplace_back("rt_positions", positions);
  Figure accelerations;
  accelerations.title = "payload accelerations: measured and estimated by the filter";
  accelerations.panels = {
      panel("radial", "[m/s²]",
            {line("radial_acc_measured", "measured"), line("radial_acc_filter1", "weighting 1"),
             line("radial_acc_filter2", "weighting 2")}),
      panel("tangential", "[m/s²]",
            {line("tangential_acc_measured", "measured"),
             line("tangential_acc_filter1", "weighting 1"),
             line("tangential_acc_filter2", "weighting 2")})};
  figures.emplace_back("rt_accelerations", accelerations);
  Figure mass;
  mass.title = std::string("payload estimate of the linearised optimal filter") +
               (simulated ? " (true 2 kg)" : "");
  Panel mass_panel = panel(
      "", "m_p [kg]", {line("mass_filter1", "weighting 1"), line("mass_filter2", "weighting 2")});
  if (simulated) mass_panel.hlines = {2.0};
  mass.panels = {mass_panel};
  figures.emplace_back("rt_mass", mass);
  Figure residuals;
  residuals.title = "residuals revealing the joint flexibility";
  Panel phi_panel = panel(
      simulated ? "phi measurement vs elastic deformation" : "phi measurement residual", "[rad]",
      {line("phi_residual_filter2", "phi residual, filter w2"),
       line("phi_residual_smoother2", "phi residual, smoother w2")});
  if (simulated) phi_panel.series.push_back(line("deformation", "phi - eta (true)"));
  residuals.panels = {panel("2nd equation of motion", "[N m]",
                            {line("eom2_residual_filter1", "filter, weighting 1"),
                             line("eom2_residual_filter2", "filter, weighting 2"),
                             line("eom2_residual_smoother2", "smoother, weighting 2")}),
                      phi_panel};
  figures.emplace_back("rt_residuals", residuals);
  return figures;
}

}  // namespace

void PrintTable(const Record& record, const std::vector<Estimate>& estimates, double elapsed_s) {
  const int num_nodes = static_cast<int>(record.data.time.size());
  if (record.simulated) {
    std::printf("RT manipulator, true payload 2 kg, k = %g N m/rad, %d samples, noise scale %g\n",
                FLAGS_stiffness, num_nodes, FLAGS_noise_scale);
  } else {
    std::printf("RT manipulator, measured record %s, %d samples\n", FLAGS_measurements_csv.c_str(),
                num_nodes);
  }
  std::printf("%-11s %14s %14s %20s %10s\n", "weighting", "filter_final", "filter_mean_2nd_half",
              "smoother (sd)", "iters");
  for (const Estimate& e : estimates) {
    const int half = num_nodes / 2;
    const std::string note = BiasNote(record, e);
    std::printf("%-11s %14.4f %14.4f %12.4f (%.2g) %10d%s%s\n", e.name.c_str(),
                e.mass_filter(num_nodes - 1), e.mass_filter.tail(num_nodes - half).mean(),
                e.mass_smoother, e.mass_smoother_sd, e.smoother_summary.iterations,
                note.empty() ? "" : "  ", note.c_str());
  }
  // Whether the residuals hold persistent error beyond what the fit induces in white errors.
  std::printf(
      "smoother HAC sd / its white-noise reference (about 1: the fit's own; well above 1: "
      "persistent error in the residuals):");
  for (const Estimate& e : estimates) {
    std::printf(" %s %.2f", e.name.c_str(), e.mass_smoother_hac_excess);
  }
  std::printf("\nelapsed %.2f s\n", elapsed_s);
}

bool WriteOutputs(const models::RtManipulatorRigid& model, const Record& record,
                  const Weightings& weightings, const std::vector<Estimate>& estimates,
                  double elapsed_s, std::string* error_out) {
  std::vector<std::string> header;
  Eigen::MatrixXd table;
  TimeSeries(model, record, estimates, &header, &table);
  const nlohmann::json summary = Summary(record, weightings, estimates, elapsed_s);
  std::string& error = *error_out;
  dynid::data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error) ||
      !stage.WriteText("rt_study.csv", dynid::data::FormatCsv(header, table), &error)) {
    return false;
  }
  if (FLAGS_figures) {
    for (const auto& [stem, figure] : Figures(record.simulated)) {
      if (!dynid::data::RenderFigure(figure, stage.Path(""), stem, &error)) return false;
    }
  }
  return stage.WriteJson("summary.json", summary, &error) && stage.Commit(&error);
}

}  // namespace dynid::rt_manipulator_study
