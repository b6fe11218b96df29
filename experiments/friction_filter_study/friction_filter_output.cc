// experiments/friction_filter_study/friction_filter_output — the table, the output files and the
// figures of friction_filter_study (see friction_filter_output.h).
#include "experiments/friction_filter_study/friction_filter_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "experiments/common/progress.h"
#include "experiments/friction_filter_study/friction_filter_flags.h"
#include "experiments/friction_filter_study/friction_filter_measures.h"

namespace dynid::friction_filter_study {

namespace data = dynid::data;

namespace {

nlohmann::json NullIfNan(double value) {
  return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

}  // namespace

void TabulateResults(const Record& record, const std::vector<CaseResult>& cases,
                     std::ostringstream* csv_out, std::ostringstream* markdown_out,
                     nlohmann::json* json_rows_out) {
  const bool measured = record.measured;
  const int num = record.num;
  std::ostringstream& csv = *csv_out;
  std::ostringstream& markdown = *markdown_out;
  nlohmann::json& json_rows = *json_rows_out;
  // Table: errors against the true friction, or (measured record) the estimated levels.
  char buffer[512];
  if (measured) {
    csv << "filter,friction_at_end_n,mean_friction_after_transient_n,"
           "mean_abs_friction_after_transient_n\n";
    markdown << "| filter | friction at the end [N] | mean, t >= " << FLAGS_transient_s
             << " s [N] | mean abs, t >= " << FLAGS_transient_s << " s [N] |\n"
             << "|---|---|---|---|\n";
    std::printf("friction estimates on %s (filter mass %g kg, %d samples)\n",
                FLAGS_measurements_csv.c_str(), FLAGS_filter_mass, num);
    std::printf("%-16s %12s %14s %14s\n", "filter", "at_end", "mean_after", "mean_abs_after");
    for (const LevelRow& row : cases.front().levels) {
      std::printf("%-16s %12.4g %14.4g %14.4g\n", row.filter.c_str(), row.final_n, row.mean_after_n,
                  row.mean_abs_after_n);
      std::snprintf(buffer, sizeof(buffer), "%s,%.17g,%.17g,%.17g\n", row.filter.c_str(),
                    row.final_n, row.mean_after_n, row.mean_abs_after_n);
      csv << buffer;
      std::snprintf(buffer, sizeof(buffer), "| %s | %.4g | %.4g | %.4g |\n", row.filter.c_str(),
                    row.final_n, row.mean_after_n, row.mean_abs_after_n);
      markdown << buffer;
      json_rows.push_back({{"filter", row.filter},
                           {"friction_at_end_n", row.final_n},
                           {"mean_friction_after_transient_n", row.mean_after_n},
                           {"mean_abs_friction_after_transient_n", row.mean_abs_after_n}});
    }
  } else {
    csv << "true_mass_kg,filter,rms_error_n,rms_error_after_transient_n,"
           "max_abs_error_after_transient_n,rms_error_vs_w_plus_inertia_error_after_transient_n,"
           "rms_error_between_jumps_n,jumps,median_lag50_s,median_lag90_s,lag90_not_reached,median_"
           "overshoot_n,"
           "max_overshoot_n,rms_error_in_jump_windows_n\n";
    markdown << "| true mass [kg] | filter | RMS error [N] | RMS error, t >= " << FLAGS_transient_s
             << " s [N] | max abs error, t >= " << FLAGS_transient_s
             << " s [N] | RMS error vs w + (m - m_f) a, t >= " << FLAGS_transient_s
             << " s [N] | RMS error between jumps [N] | jumps | median lag 50 % [ms] | median lag "
                "90 % [ms] (not reached) | "
                "median overshoot [N] | RMS error in the "
             << FLAGS_jump_window_s * 1e3 << " ms after jumps [N] |\n"
             << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    const std::string prefilter =
        FLAGS_prefilter_hz > 0.0 ? ", pre-filter " + Format(FLAGS_prefilter_hz) + " Hz" : "";
    std::printf(
        "friction-estimate errors (filter mass %g kg, w_s = %g N, w_d = %g N, %d samples, "
        "%s sensors%s)\n",
        FLAGS_filter_mass, FLAGS_static_friction, FLAGS_dynamic_friction, num,
        FLAGS_sensors.c_str(), prefilter.c_str());
    std::printf("%-6s %-16s %10s %10s %10s %10s %10s %6s %9s %9s %10s %10s\n", "mass", "filter",
                "rms_all", "rms_after", "max_after", "rms_vs_abs", "rms_betw", "jumps", "lag50_ms",
                "lag90_ms", "overshoot", "rms_jumps");
    for (const CaseResult& r : cases) {
      for (const ErrorRow& row : r.rows) {
        const JumpSummary& j = row.jump_summary;
        std::printf("%-6g %-16s %10.4g %10.4g %10.4g %10.4g %10.4g %6d %9.4g %9.4g %10.4g %10.4g\n",
                    row.true_mass, row.filter.c_str(), row.rms_all, row.rms_after, row.max_after,
                    row.rms_absorbed_after, row.rms_between_jumps, j.jumps, j.median_lag50_s * 1e3,
                    j.median_lag90_s * 1e3, j.median_overshoot_n, j.rms_error_n);
        std::snprintf(buffer, sizeof(buffer),
                      "%.17g,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%.17g,%.17g,%d,%.17g,%.17g,"
                      "%.17g\n",
                      row.true_mass, row.filter.c_str(), row.rms_all, row.rms_after, row.max_after,
                      row.rms_absorbed_after, row.rms_between_jumps, j.jumps, j.median_lag50_s,
                      j.median_lag90_s, j.lag90_not_reached, j.median_overshoot_n,
                      j.max_overshoot_n, j.rms_error_n);
        csv << buffer;
        std::snprintf(buffer, sizeof(buffer),
                      "| %g | %s | %.4g | %.4g | %.4g | %.4g | %.4g | %d | %.3g | %.3g (%d) | "
                      "%.3g | %.3g |\n",
                      row.true_mass, row.filter.c_str(), row.rms_all, row.rms_after, row.max_after,
                      row.rms_absorbed_after, row.rms_between_jumps, j.jumps,
                      j.median_lag50_s * 1e3, j.median_lag90_s * 1e3, j.lag90_not_reached,
                      j.median_overshoot_n, j.rms_error_n);
        markdown << buffer;
        json_rows.push_back(
            {{"true_mass_kg", row.true_mass},
             {"filter", row.filter},
             {"rms_error_n", row.rms_all},
             {"rms_error_after_transient_n", row.rms_after},
             {"max_abs_error_after_transient_n", row.max_after},
             {"rms_error_vs_w_plus_inertia_error_after_transient_n", row.rms_absorbed_after},
             {"rms_error_between_jumps_n", NullIfNan(row.rms_between_jumps)},
             {"rms_velocity_error_after_transient_m_per_s", row.rms_velocity_after},
             {"jumps", j.jumps},
             {"median_lag50_s", NullIfNan(j.median_lag50_s)},
             {"median_lag90_s", NullIfNan(j.median_lag90_s)},
             {"lag50_not_reached", j.lag50_not_reached},
             {"lag90_not_reached", j.lag90_not_reached},
             {"median_overshoot_n", NullIfNan(j.median_overshoot_n)},
             {"max_overshoot_n", NullIfNan(j.max_overshoot_n)},
             {"rms_error_in_jump_windows_n", NullIfNan(j.rms_error_n)}});
      }
    }
  }
}

std::string JumpsCsv(const std::vector<CaseResult>& cases) {
  std::ostringstream csv;
  csv << "true_mass_kg,filter,time_s,kind,size_n,lag50_s,lag90_s,overshoot_n,rms_error_n\n";
  char buffer[512];
  for (const CaseResult& r : cases) {
    for (const ErrorRow& row : r.rows) {
      for (const JumpMeasure& m : row.jumps) {
        std::snprintf(buffer, sizeof(buffer), "%.17g,%s,%.17g,%s,%.17g,%.17g,%.17g,%.17g,%.17g\n",
                      row.true_mass, row.filter.c_str(), m.time_s, m.kind.c_str(), m.size_n,
                      m.lag50_s, m.lag90_s, m.overshoot_n, m.rms_error_n);
        csv << buffer;
      }
    }
  }
  return csv.str();
}

bool WriteOutputs(const Record& record, const std::vector<CaseResult>& cases,
                  const std::string& csv, const std::string& markdown,
                  const nlohmann::json& summary, std::string* error) {
  const bool measured = record.measured;
  data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, error) || !stage.WriteText("results.csv", csv, error) ||
      !stage.WriteText("results.md", markdown, error) ||
      (!measured && !stage.WriteText("jumps.csv", JumpsCsv(cases), error))) {
    return false;
  }
  std::vector<std::string> case_files;
  data::FigureTables tables;  // the figures' numbers, from memory
  for (const CaseResult& r : cases) {
    case_files.push_back(r.file);
    if (!data::WriteCsv(stage.Path(r.file), r.header, r.table, error, /*num_threads=*/0)) {
      return false;
    }
    data::FigureTable& table = tables[r.file];
    table.rows = r.table.rows();
    for (size_t c = 0; c < r.header.size(); ++c) {
      table.columns.push_back({r.header[c], r.table.col(static_cast<Eigen::Index>(c)).data()});
    }
  }
  // jump_zoom.csv: the first case around its first friction jump after the transient (20 ms
  // before to --jump_window_s after): the true friction and both estimates.
  const std::vector<std::string> zoom_header = {"t", "w", "sl_e", "of_e"};
  Eigen::MatrixXd zoom;
  const bool has_jump =
      !measured && !cases.front().rows.empty() && !cases.front().rows.front().jumps.empty();
  if (has_jump) {
    const CaseResult& r = cases.front();
    const JumpMeasure& jump = r.rows.front().jumps.front();
    std::vector<Eigen::Index> columns;
    for (const std::string& name : zoom_header) {
      columns.push_back(static_cast<Eigen::Index>(
          std::find(r.header.begin(), r.header.end(), name) - r.header.begin()));
    }
    std::vector<Eigen::Index> rows;
    for (Eigen::Index k = 0; k < r.table.rows(); ++k) {
      const double t = r.table(k, 0);
      if (t >= jump.time_s - 0.02 && t < jump.time_s + FLAGS_jump_window_s) rows.push_back(k);
    }
    zoom.resize(static_cast<Eigen::Index>(rows.size()), 4);
    for (size_t i = 0; i < rows.size(); ++i) {
      for (int j = 0; j < 4; ++j)
        zoom(static_cast<Eigen::Index>(i), j) = r.table(rows[i], columns[j]);
    }
    if (!data::WriteCsv(stage.Path("jump_zoom.csv"), zoom_header, zoom, error,
                        /*num_threads=*/0)) {
      return false;
    }
    data::FigureTable& table = tables["jump_zoom.csv"];
    table.rows = zoom.rows();
    for (int j = 0; j < 4; ++j) table.columns.push_back({zoom_header[j], zoom.col(j).data()});
  }
  if (FLAGS_figures) {
    using data::Figure;
    using data::Panel;
    auto panel = [](const std::string& csv_name, const std::string& title,
                    const std::string& ylabel,
                    const std::vector<std::pair<std::string, std::string>>& columns) {
      Panel p;
      p.title = title;
      p.xlabel = "t [s]";
      p.ylabel = ylabel;
      for (const auto& [column, label] : columns) {
        p.series.push_back(data::LineSeries(csv_name, "t", column, label));
      }
      return p;
    };
    auto figure = [](const std::string& title, const std::vector<Panel>& panels) {
      Figure f;
      f.title = title;
      f.panels = panels;
      return f;
    };
    // The first case plays the thesis's m = 1 runs, the second (if any) the m = 2 runs. A
    // measured record has no truth: its measurements are the reference where there are any.
    const std::string first = case_files[0];
    auto reference = [&](const std::string& column) {
      static const std::map<std::string, std::string> kMeasured = {
          {"s", "z_s"}, {"a", "z_a"}, {"f", "z_f"}};
      std::vector<std::pair<std::string, std::string>> series;
      if (!measured) {
        series.push_back({column, column == "w" ? "friction w" : "true"});
      } else if (kMeasured.count(column)) {
        series.push_back({kMeasured.at(column), "measured"});
      }
      return series;
    };
    // The reference of `column` followed by the estimates.
    auto with_reference = [&](const std::string& column,
                              const std::vector<std::pair<std::string, std::string>>& estimates) {
      std::vector<std::pair<std::string, std::string>> series = reference(column);
      series.insert(series.end(), estimates.begin(), estimates.end());
      return series;
    };
    std::vector<std::pair<std::string, Figure>> figures;
    const std::string sigma_label = "estimate, sigma = " + Format(FLAGS_sigma_demo);
    figures.emplace_back("fig4_03_sliding_velocity_sigma",
                         figure("sliding-surface filter: velocity for sigma = 0 and sigma = " +
                                    Format(FLAGS_sigma_demo),
                                {panel(first, "", "v [m/s]",
                                       with_reference("v", {{"sl_v", "estimate, sigma = 0"},
                                                            {"sl_sigma_v", sigma_label}}))}));
    figures.emplace_back(
        "fig4_04_sliding_position_velocity",
        figure("sliding-surface filter: position and velocity",
               {panel(first, "position", "s [m]", with_reference("s", {{"sl_s", "estimate"}})),
                panel(first, "velocity", "v [m/s]", with_reference("v", {{"sl_v", "estimate"}}))}));
    figures.emplace_back(
        "fig4_05_sliding_friction",
        figure("sliding-surface filter: friction force",
               {panel(first, "", "[N]", with_reference("w", {{"sl_e", "estimate e"}}))}));
    figures.emplace_back(
        "fig4_06_sliding_force_acceleration",
        figure("sliding-surface filter: force and acceleration",
               {panel(first, "force", "f [N]", with_reference("f", {{"sl_f", "estimate"}})),
                panel(first, "acceleration", "a [m/s²]",
                      with_reference("a", {{"sl_a", "estimate"}}))}));
    figures.emplace_back(
        "fig4_07_sliding_residuals",
        figure("sliding-surface filter: residuals and sliding variables",
               {panel(first, "acceleration measurement", "[m/s²]",
                      {{"sl_zeta_a", "residual zeta"}, {"sl_ss_a", "sliding variable s_s"}}),
                panel(first, "force measurement", "[N]",
                      {{"sl_zeta_f", "residual zeta"}, {"sl_ss_f", "sliding variable s_s"}})}));
    figures.emplace_back(
        "fig4_09_optimal_position_velocity",
        figure("linear optimal filter: position and velocity",
               {panel(first, "position", "s [m]", with_reference("s", {{"of_s", "estimate"}})),
                panel(first, "velocity", "v [m/s]", with_reference("v", {{"of_v", "estimate"}}))}));
    figures.emplace_back(
        "fig4_10_optimal_friction",
        figure("linear optimal filter: friction force",
               {panel(first, "", "[N]", with_reference("w", {{"of_e", "estimate e"}}))}));
    figures.emplace_back(
        "fig4_11_optimal_force_acceleration",
        figure("linear optimal filter: force and acceleration",
               {panel(first, "force", "f [N]", with_reference("f", {{"of_f", "estimate"}})),
                panel(first, "acceleration", "a [m/s²]",
                      with_reference("a", {{"of_a", "estimate"}}))}));
    if (case_files.size() > 1) {
      const std::string second = case_files[1];
      const std::string title_mass = "true mass " + data::SplitList(FLAGS_true_masses)[1] +
                                     " kg, filter mass " + Format(FLAGS_filter_mass) + " kg";
      figures.emplace_back("fig4_08_sliding_mass_error",
                           figure("sliding-surface filter, " + title_mass,
                                  {panel(second, "", "[N], [m/s²]",
                                         {{"w", "friction w"},
                                          {"sl_e", "estimate e"},
                                          {"w_plus_inertia_error", "w + (m - m_f) a"},
                                          {"a", "acceleration"}})}));
      figures.emplace_back("fig4_12_optimal_mass_error",
                           figure("linear optimal filter, " + title_mass,
                                  {panel(second, "", "[N], [m/s²]",
                                         {{"w", "friction w"},
                                          {"of_e", "estimate e"},
                                          {"w_plus_inertia_error", "w + (m - m_f) a"},
                                          {"a", "acceleration"}})}));
    }
    if (has_jump) {
      figures.emplace_back(
          "fig_jump_zoom",
          figure("friction estimates at the first jump after the transient (true mass " +
                     Format(cases.front().true_mass) + " kg)",
                 {panel("jump_zoom.csv", "", "[N]",
                        {{"w", "friction w"},
                         {"sl_e", "sliding surface"},
                         {"of_e", "linear optimal"}})}));
    }
    cli::Stage drawing("figures", static_cast<int64_t>(figures.size()));
    for (const auto& [stem, fig] : figures) {
      if (!data::RenderFigure(fig, stage.Path(""), stem, error, &tables)) return false;
      drawing.Add();
    }
    drawing.End();
  }
  if (!stage.WriteJson("summary.json", summary, error) || !stage.Commit(error)) {
    return false;
  }
  return true;
}

}  // namespace dynid::friction_filter_study
