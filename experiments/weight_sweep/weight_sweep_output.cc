// experiments/weight_sweep/weight_sweep_output — see weight_sweep_output.h.
#include "experiments/weight_sweep/weight_sweep_output.h"

#include <glog/logging.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/data/runtime_files.h"
#include "dynid/solvers/coverage.h"
#include "dynid/solvers/observability.h"

namespace dynid::experiments {
namespace {

std::vector<double> ToVector(const Eigen::VectorXd& x) {
  return std::vector<double>(x.data(), x.data() + x.size());
}

nlohmann::json ObservabilityJson(const solvers::ObservabilityReport& r) {
  nlohmann::json j;
  j["eq_2_26"] = {{"required_rank", r.required_rank_226},
                  {"fraction_of_nodes_full_rank", r.fraction_full_226},
                  {"lowest_rank", r.rank_226(r.worst_node_226)},
                  {"lowest_rank_node", r.worst_node_226},
                  {"highest_rank", r.rank_226(r.best_node_226)},
                  {"highest_rank_node", r.best_node_226},
                  {"columns", r.columns_226},
                  {"null_directions_at_highest", r.null_directions_226}};
  j["eq_2_28"] = {{"required_rank", r.required_rank_228},
                  {"fraction_of_nodes_full_rank", r.fraction_full_228},
                  {"lowest_rank", r.rank_228(r.worst_node_228)},
                  {"lowest_rank_node", r.worst_node_228},
                  {"highest_rank", r.rank_228(r.best_node_228)},
                  {"highest_rank_node", r.best_node_228},
                  {"columns", r.columns_228},
                  {"null_directions_at_highest", r.null_directions_228}};
  j["message"] = r.message;
  if (r.has_parameters) {
    j["parameters"] = {
        {"identifiable", r.parameters.identifiable},
        {"condition_number", r.parameters.condition_number},
        {"relative_information_eigenvalues", ToVector(r.parameters.eigenvalues)},
        {"relative_standard_deviation", ToVector(r.parameters.relative_standard_deviation)},
        {"undetermined", r.parameters.undetermined},
        {"message", r.parameters.message}};
  }
  return j;
}

}  // namespace

void PrintWeightEntries(const solvers::WeightGridCase& grid_case) {
  std::printf("case %s: %s\n%-32s %s\n", grid_case.name().c_str(), grid_case.description().c_str(),
              "weight", "base value");
  for (const solvers::WeightEntry& e : solvers::ListWeightEntries(grid_case.info())) {
    std::printf("%-32s %.6g\n", e.name.c_str(), grid_case.base_weights().Get(e));
  }
}

bool WriteSweepOutputs(const SweepSetup& setup, const Ranks& ranks, const SweepRun& run,
                       const QuotedCoverage& coverage, std::string* error) {
  const models::ModelInfo& info = setup.grid_case->info();
  const std::vector<solvers::WeightAxis>& axes = setup.axes;
  const std::vector<std::string>& axis_names = setup.axis_names;
  const std::vector<solvers::GridPointResult>& merged = run.results;
  const int p = static_cast<int>(info.parameters.size());
  const int num_points = setup.num_points;
  const int num_seeds = setup.num_seeds;
  const long long total_tasks = setup.num_tasks;
  // Tables.
  const Eigen::VectorXd& truth = setup.grid_case->true_parameters();
  const Eigen::VectorXd scale =
      truth.cwiseAbs().unaryExpr([](double x) { return x > 0 ? x : 1.0; });
  std::vector<std::string> header = {"point", "seed_index", "seed"};
  header.insert(header.end(), axis_names.begin(), axis_names.end());
  for (const char* c : {"converged", "iterations", "initial_cost", "final_cost", "time_s",
                        "identifiable", "condition_number"}) {
    header.push_back(c);
  }
  for (const char* prefix :
       {"theta_", "rel_error_", "sd_", "scaled_sd_", "sandwich_sd_", "hac_sd_"}) {
    for (const auto& q : info.parameters) header.push_back(prefix + q.name);
  }
  for (const auto& q : info.equations) header.push_back("zeta_rms_eom_" + q.name);
  for (const auto& q : info.measurements) header.push_back("zeta_rms_" + q.name);
  for (const auto& q : info.positions) header.push_back("xi_rms_s_" + q.name);
  for (const auto& q : info.positions) header.push_back("xi_rms_v_" + q.name);
  Eigen::MatrixXd table(merged.size(), header.size());
  for (size_t i = 0; i < merged.size(); ++i) {
    const solvers::GridPointResult& r = merged[i];
    std::vector<double> row = {static_cast<double>(r.point), static_cast<double>(r.seed_index),
                               static_cast<double>(r.seed)};
    for (double v : solvers::GridPointValues(axes, r.point)) row.push_back(v);
    for (double v : {r.converged ? 1.0 : 0.0, static_cast<double>(r.iterations), r.initial_cost,
                     r.final_cost, r.time_s, r.identifiable ? 1.0 : 0.0, r.condition_number}) {
      row.push_back(v);
    }
    const Eigen::VectorXd rel_error = (r.theta - truth).cwiseQuotient(scale);
    for (const Eigen::VectorXd* x :
         {&r.theta, &rel_error, &r.standard_deviation, &r.scaled_standard_deviation,
          &r.sandwich_standard_deviation, &r.hac_standard_deviation, &r.zeta_rms, &r.xi_rms}) {
      row.insert(row.end(), x->data(), x->data() + x->size());
    }
    CHECK_EQ(row.size(), header.size());
    table.row(i) = Eigen::Map<const Eigen::VectorXd>(row.data(), row.size()).transpose();
  }
  const std::vector<solvers::GridPointSummary> summaries =
      solvers::SummarizeWeightGrid(merged, num_points, truth);
  std::vector<std::string> summary_header = {"point"};
  summary_header.insert(summary_header.end(), axis_names.begin(), axis_names.end());
  for (const char* c : {"num_seeds", "num_converged", "mean_final_cost", "mean_time_s"}) {
    summary_header.push_back(c);
  }
  for (const char* prefix : {"bias_", "spread_", "rms_error_", "predicted_rsd_", "sandwich_rsd_",
                             "hac_rsd_", "coverage_95_"}) {
    for (const auto& q : info.parameters) summary_header.push_back(prefix + q.name);
  }
  // The measured coverage of the predicted sd's 95 % intervals at the points `coverage` measured
  // (--monte_carlo at the same settings; NaN elsewhere in summary.csv), its labels for the JSON.
  nlohmann::json quoted = nlohmann::json::array();
  int quoted_rows = 0, calibrated_rows = 0;
  const auto quote = [&](int point, int j) {
    const solvers::CoverageRow* row = solvers::FindCoverageRow(
        coverage.rows, GridPointName(axes, point), kScaledEstimator, info.parameters[j].name);
    if (row == nullptr) return std::nan("");
    ++quoted_rows;
    calibrated_rows += row->calibrated ? 1 : 0;
    quoted.push_back({{"point", point},
                      {"weights", GridPointName(axes, point)},
                      {"parameter", info.parameters[j].name},
                      {"coverage_95", row->coverage_95},
                      {"runs", row->runs},
                      {"calibrated", row->calibrated},
                      {"label", solvers::CoverageLabel(*row)}});
    return row->coverage_95;
  };
  Eigen::MatrixXd summary_table(num_points, summary_header.size());
  int converged_total = 0;
  for (const solvers::GridPointSummary& s : summaries) {
    std::vector<double> row = {static_cast<double>(s.point)};
    for (double v : solvers::GridPointValues(axes, s.point)) row.push_back(v);
    for (double v : {static_cast<double>(s.num_seeds), static_cast<double>(s.num_converged),
                     s.mean_final_cost, s.mean_time_s}) {
      row.push_back(v);
    }
    for (const Eigen::VectorXd* x :
         {&s.bias, &s.spread, &s.rms_error, &s.predicted_rsd, &s.sandwich_rsd, &s.hac_rsd}) {
      row.insert(row.end(), x->data(), x->data() + x->size());
    }
    for (int j = 0; j < p; ++j) row.push_back(quote(s.point, j));
    summary_table.row(s.point) =
        Eigen::Map<const Eigen::VectorXd>(row.data(), row.size()).transpose();
    converged_total += s.num_converged;
  }

  // Console: the best grid point per parameter (smallest RMS relative error).
  std::printf(
      "weight_sweep: case %s (%s), %d nodes, %d grid points × %d seeds = %lld estimates, "
      "%d converged; computed %zu here in %.1f s on %d thread(s) × %d rank(s)\n",
      setup.grid_case->name().c_str(), setup.grid_case->description().c_str(),
      setup.grid_case->num_nodes(), num_points, num_seeds, total_tasks, converged_total,
      run.computed, run.compute_s, setup.threads, ranks.size);
  nlohmann::json best = nlohmann::json::object();
  for (int j = 0; j < p; ++j) {
    int arg = 0;
    for (int i = 1; i < num_points; ++i) {
      if (summaries[i].rms_error(j) < summaries[arg].rms_error(j)) arg = i;
    }
    std::printf("  %-12s best RMS rel. error %.3g at point %d (", info.parameters[j].name.c_str(),
                summaries[arg].rms_error(j), arg);
    const std::vector<double> values = solvers::GridPointValues(axes, arg);
    for (size_t d = 0; d < axes.size(); ++d) {
      std::printf("%s%s = %.4g", d ? ", " : "", axis_names[d].c_str(), values[d]);
    }
    std::printf("): bias %.3g, spread %.3g\n", summaries[arg].bias(j), summaries[arg].spread(j));
    best[info.parameters[j].name] = {{"point", arg},
                                     {"weights", values},
                                     {"rms_error", summaries[arg].rms_error(j)},
                                     {"bias", summaries[arg].bias(j)},
                                     {"spread", summaries[arg].spread(j)}};
  }

  // JSON.
  nlohmann::json summary;
  summary["flags"] = FlagsJson(setup.threads, ranks.size);
  summary["case"] = {
      {"name", setup.grid_case->name()},
      {"description", setup.grid_case->description()},
      {"model", info.name},
      {"num_nodes", setup.grid_case->num_nodes()},
      {"true_parameters", ToVector(truth)},
      {"noise_standard_deviation", ToVector(setup.grid_case->noise_standard_deviation())}};
  std::vector<std::string> parameter_names;
  for (const auto& q : info.parameters) parameter_names.push_back(q.name + " [" + q.unit + "]");
  summary["case"]["parameters"] = parameter_names;
  nlohmann::json base = nlohmann::json::object();
  for (const solvers::WeightEntry& e : solvers::ListWeightEntries(info)) {
    base[e.name] = setup.grid_case->base_weights().Get(e);
  }
  summary["base_weights"] = base;
  nlohmann::json axes_json = nlohmann::json::array();
  for (const solvers::WeightAxis& a : axes) {
    axes_json.push_back({{"weight", a.entry.name},
                         {"low", a.low},
                         {"high", a.high},
                         {"count", a.count},
                         {"values", a.Values()}});
  }
  summary["axes"] = axes_json;
  summary["journal"] = {{"folder", run.journal_dir},
                        {"signature", run.signature},
                        {"resumed_points", run.resumed},
                        {"skipped_lines", run.skipped_lines}};
  summary["totals"] = {{"grid_points", num_points},
                       {"estimates", total_tasks},
                       {"converged", converged_total},
                       {"computed_this_run", run.computed},
                       {"compute_s", run.compute_s}};
  summary["best_per_parameter"] = best;
  // The predicted sd's measured coverage: where it was measured, or why it is not quoted.
  std::string coverage_line;
  if (!coverage.withheld.empty()) {
    coverage_line = coverage.withheld;
  } else if (coverage.source.empty()) {
    coverage_line =
        "coverage not measured: the predicted sd's 95 % intervals are not known to be calibrated "
        "(give "
        "--coverage_csv of a --monte_carlo at these settings)";
  } else {
    coverage_line = std::to_string(quoted_rows) + " of " + std::to_string(num_points * p) +
                    " point × parameter pairs measured in " + coverage.source + ", " +
                    std::to_string(calibrated_rows) +
                    " calibrated (coverage in [0.85, 1] over >= 20 runs); the others NOT "
                    "calibrated";
  }
  std::printf("  predicted sd (smoother_scaled): %s\n", coverage_line.c_str());
  summary["predicted_sd_coverage"] = {
      {"source", coverage.source}, {"note", coverage_line}, {"rows", quoted}};
  // The same file's coverage of the two sandwich forms, which points.csv and summary.csv give
  // beside the predicted sd (sandwich_*, hac_*): how many of the measured pairs are calibrated.
  if (coverage.withheld.empty() && !coverage.source.empty()) {
    for (const auto& [estimator, key] :
         {std::pair<const char*, const char*>{kSandwichEstimator, "sandwich_sd_coverage"},
          std::pair<const char*, const char*>{kHacEstimator, "hac_sd_coverage"}}) {
      int measured = 0, calibrated = 0;
      for (int point = 0; point < num_points; ++point) {
        for (int j = 0; j < p; ++j) {
          const solvers::CoverageRow* row = solvers::FindCoverageRow(
              coverage.rows, GridPointName(axes, point), estimator, info.parameters[j].name);
          if (row == nullptr) continue;
          ++measured;
          calibrated += row->calibrated ? 1 : 0;
        }
      }
      std::printf("  %s sd (%s): %d of %d pairs measured, %d calibrated\n",
                  estimator == kHacEstimator ? "HAC" : "sandwich", estimator, measured,
                  num_points * p, calibrated);
      summary[key] = {{"source", coverage.source},
                      {"measured", measured},
                      {"calibrated", calibrated},
                      {"pairs", num_points * p}};
    }
  }
  if (FLAGS_observability) {
    solvers::ObservabilityReport report;
    std::string why;
    if (setup.grid_case->Observability(setup.grid_case->base_weights(), &report, &why)) {
      summary["observability"] = ObservabilityJson(report);
      std::printf("  observability: %s\n  identifiability (base weights): %s\n",
                  report.message.c_str(), report.parameters.message.c_str());
    } else {
      summary["observability"] = {{"error", why}};
    }
  }

  // Outputs.
  data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, error) ||
      !stage.WriteText("points.csv", data::FormatCsv(header, table), error) ||
      !stage.WriteText("summary.csv", data::FormatCsv(summary_header, summary_table), error)) {
    return false;
  }
  std::vector<std::string> figures;
  if (FLAGS_figures && axes.size() == 1) {
    data::Figure figure;
    figure.title = setup.grid_case->name() + ": relative error vs " + axis_names[0];
    for (const auto& q : info.parameters) {
      data::Panel panel;
      panel.title = q.name;
      panel.xlabel = axis_names[0];
      panel.ylabel = "relative error";
      panel.log_x = true;
      panel.series.push_back(data::LineSeries("summary.csv", axis_names[0], "bias_" + q.name,
                                              "bias (band: ±2 spread)"));
      panel.series.back().error = "spread_" + q.name;
      panel.series.push_back(data::LineSeries("summary.csv", axis_names[0],
                                              "predicted_rsd_" + q.name, "predicted rsd"));
      panel.hlines = {0.0};
      figure.panels.push_back(panel);
    }
    if (!data::RenderFigure(figure, stage.Path(""), "error_spread", error)) {
      return false;
    }
    figures.push_back("error_spread.png");
  } else if (FLAGS_figures && axes.size() == 2) {
    for (const auto& q : info.parameters) {
      nlohmann::json spec = {
          {"title", setup.grid_case->name() + ": " + q.name + " (relative to truth)"},
          {"csv", "summary.csv"},
          {"x", axis_names[0]},
          {"y", axis_names[1]},
          {"columns", 2},
          {"panels",
           {{{"z", "bias_" + q.name}, {"title", "|bias| " + q.name}, {"absolute", true}},
            {{"z", "spread_" + q.name}, {"title", "spread " + q.name}, {"absolute", true}},
            {{"z", "rms_error_" + q.name}, {"title", "RMS error " + q.name}, {"absolute", true}},
            {{"z", "predicted_rsd_" + q.name},
             {"title", "predicted rel. sd " + q.name},
             {"absolute", true}}}}};
      const std::string stem = "heatmap_" + q.name;
      if (!stage.WriteJson(stem + ".heatmap.json", spec, error)) return false;
      if (!data::RunPythonScript("plot_heatmap.py",
                                 {stage.Path(stem + ".heatmap.json"), stage.Path(stem + ".png")},
                                 error)) {
        *error = "heat map '" + stem + "' not rendered: " + *error;
        return false;
      }
      figures.push_back(stem + ".png");
    }
  }
  summary["figures"] = figures;
  if (!stage.WriteJson("summary.json", summary, error) || !stage.Commit(error)) {
    return false;
  }
  std::printf("  wrote %s/{points.csv, summary.csv, summary.json}%s\n", FLAGS_out_dir.c_str(),
              figures.empty() ? "" : " and figures");
  return true;
}

}  // namespace dynid::experiments
