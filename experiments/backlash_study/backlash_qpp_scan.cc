// experiments/backlash_study/backlash_qpp_scan — the Q_pp scan, its table and figures (see
// backlash_qpp_scan.h).
#include "experiments/backlash_study/backlash_qpp_scan.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "experiments/backlash_study/backlash_estimators.h"
#include "experiments/backlash_study/backlash_flags.h"
#include "experiments/backlash_study/backlash_output.h"

namespace dynid::backlash_study {
namespace {

// One case's Q_pp scan in wide form for the figure: per Q_pp value, per estimator the relative
// errors of b and K in % with the distances to their interval ends, and the tau_K RMS error.
struct ScanTable {
  std::vector<std::string> estimators;
  std::vector<std::vector<double>> rows;
};

void AddScanRow(const CaseRun& run, double qpp, ScanTable* table) {
  const auto outcomes = run.Outcomes();
  if (table->estimators.empty()) {
    for (const auto& entry : outcomes) table->estimators.push_back(entry.first);
  }
  const bool truth = !run.config.measured;
  const double b_true = TrueBacklash(run.config);
  const double k_true = run.config.parameters.stiffness_nm_per_rad;
  // Relative errors in % (b = 0: the estimate in mrad); for a measured record the estimates
  // themselves, b in mrad and K in N m/rad. A missing interval end draws no bar.
  auto b_value = [&](double b) {
    return truth && b_true != 0.0 ? 100.0 * (b - b_true) / b_true : 1000.0 * b;
  };
  auto k_value = [&](double k) { return truth ? 100.0 * (k - k_true) / k_true : k; };
  auto distance = [](double a, double b) { return std::isfinite(a - b) ? std::abs(a - b) : 0.0; };
  std::vector<double> row = {qpp};
  for (const auto& entry : outcomes) {
    const solvers::DeadZoneFit& fit = entry.second->fit;
    const double b = b_value(fit.backlash_rad), k = k_value(fit.stiffness_nm_per_rad);
    row.insert(
        row.end(),
        {b, distance(b, b_value(fit.backlash_lower)), distance(b_value(fit.backlash_upper), b), k,
         distance(k, k_value(fit.stiffness_lower)), distance(k_value(fit.stiffness_upper), k)});
    if (truth) row.push_back(entry.second->tau_rms_error);
  }
  table->rows.push_back(row);
}

// D/qpp_sweep_<case>.csv and D/qpp_sweep_<case>.png: b and K errors and the tau_K RMS error
// against Q_pp, one series per estimator, with the acceptance band (10 % sim2, 20 % sim1); for
// a measured record b [mrad] and K [N m/rad] themselves.
bool WriteScanFigure(const Case& config, const ScanTable& table, data::OutputStage* stage,
                     std::string* error) {
  const bool truth = !config.measured;
  const std::string b_column = truth ? "_b_pct" : "_b_mrad";
  const std::string k_column = truth ? "_K_pct" : "_K_nm_per_rad";
  std::vector<std::string> header = {"qpp"};
  for (const std::string& e : table.estimators) {
    header.insert(header.end(), {e + b_column, e + "_b_minus", e + "_b_plus", e + k_column,
                                 e + "_K_minus", e + "_K_plus"});
    if (truth) header.push_back(e + "_tau_rms");
  }
  Eigen::MatrixXd values(table.rows.size(), header.size());
  for (size_t r = 0; r < table.rows.size(); ++r) {
    for (size_t c = 0; c < header.size(); ++c) values(r, c) = table.rows[r][c];
  }
  const std::string csv = "qpp_sweep_" + config.name + ".csv";
  if (!stage->WriteText(csv, data::FormatCsv(header, values), error)) return false;
  if (!FLAGS_figures) return true;
  const bool b_as_value =
      !truth || config.parameters.shape == models::SpringShape::kLinear;  // mrad, no band
  const double band = config.name == "sim1" ? 20.0 : 10.0;
  data::Panel b_panel{b_as_value ? "b estimate (95 % interval)"
                                 : "b relative error (95 % interval); dashed: acceptance",
                      "Q_pp [(Nm)²/s]",
                      b_as_value ? "b [mrad]" : "b error [%]",
                      {},
                      {}};
  data::Panel k_panel{
      truth ? "K relative error (95 % interval); dashed: acceptance" : "K estimate (95 % interval)",
      "Q_pp [(Nm)²/s]",
      truth ? "K error [%]" : "K [Nm/rad]",
      {},
      {}};
  data::Panel tau_panel{"tau_K RMS error", "Q_pp [(Nm)²/s]", "Nm", {}, {}};
  b_panel.log_x = k_panel.log_x = tau_panel.log_x = true;
  tau_panel.log_y = true;
  if (!b_as_value) b_panel.hlines = {-band, band};
  if (truth) k_panel.hlines = {-band, band};
  for (const std::string& e : table.estimators) {
    data::Series b{csv, "qpp", e + b_column, e + "_b_minus", e + "_b_plus", e, "errorbar", "", 2.0};
    data::Series k{csv, "qpp", e + k_column, e + "_K_minus", e + "_K_plus", e, "errorbar", "", 2.0};
    b_panel.series.push_back(b);
    k_panel.series.push_back(k);
    if (truth) tau_panel.series.push_back(data::LineSeries(csv, "qpp", e + "_tau_rms", e));
  }
  char seed_qpp[32];
  std::snprintf(seed_qpp, sizeof(seed_qpp), "%g", config.tau_noise_intensity);
  data::Figure figure;
  figure.title = config.description + ": sensitivity to Q_pp (" +
                 (truth ? "seed value " : "--qpp = ") + seed_qpp + ")";
  figure.columns = truth ? 3 : 2;
  figure.width_in = truth ? 14.0 : 10.0;
  figure.panel_height_in = 4.0;
  figure.panels = {b_panel, k_panel};
  if (truth) figure.panels.push_back(tau_panel);
  if (!data::RenderFigure(figure, stage->Path(""), "qpp_sweep_" + config.name, error)) return false;
  return true;
}

}  // namespace

bool RunQppScan(const std::vector<double>& qpp_factors, const std::vector<Case>& scan_cases,
                data::OutputStage* stage, nlohmann::json* summary, std::string* error) {
  // Q_pp scan: the paper's main tuning knob.
  if (!qpp_factors.empty() && !scan_cases.empty()) {
    std::string scan_csv =
        "case,qpp,estimator,b_estimate,b_lower,b_upper,K_estimate,K_lower,K_upper,"
        "tau_rms_error,backlash_detected\n";
    std::printf("\nQ_pp scan\n%-7s %10s %-14s %9s %9s %10s %s\n", "case", "Q_pp", "estimator",
                "b_est", "K_est", "tauK_RMS", "verdict");
    for (const Case& config : scan_cases) {
      const std::string& name = config.name;
      const int samples = FLAGS_samples > 0 ? FLAGS_samples : config.default_samples;
      ScanTable table;
      for (double factor : qpp_factors) {
        const double qpp = factor * config.tau_noise_intensity;
        CaseRun run;
        if (!RunCase(config, samples, qpp, NoiseSeed(name), &run, error)) {
          *error = "Q_pp scan " + name + ": " + *error;
          return false;
        }
        AddScanRow(run, qpp, &table);
        for (const auto& [label, outcome] : run.Outcomes()) {
          const solvers::DeadZoneFit& fit = outcome->fit;
          char line[512];
          std::snprintf(line, sizeof(line),
                        "%s,%.17g,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d\n", name.c_str(),
                        qpp, label.c_str(), fit.backlash_rad, fit.backlash_lower,
                        fit.backlash_upper, fit.stiffness_nm_per_rad, fit.stiffness_lower,
                        fit.stiffness_upper, outcome->tau_rms_error, fit.backlash_detected ? 1 : 0);
          scan_csv += line;
          std::printf("%-7s %10.4g %-14s %9.4f %9.2f %10.4f %s\n", name.c_str(), qpp, label.c_str(),
                      fit.backlash_rad, fit.stiffness_nm_per_rad, outcome->tau_rms_error,
                      VerdictLabel(*outcome).c_str());
          (*summary)["qpp_sweep"].push_back({{"case", name},
                                             {"qpp", qpp},
                                             {"estimator", label},
                                             {"fit", FitJson(fit)},
                                             {"tau_rms_error_nm", outcome->tau_rms_error}});
        }
        std::fflush(stdout);
      }
      if (!WriteScanFigure(config, table, stage, error)) return false;
    }
    if (!stage->WriteText("qpp_sweep.csv", scan_csv, error)) return false;
  }
  return true;
}

}  // namespace dynid::backlash_study
