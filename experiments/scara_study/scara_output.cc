// experiments/scara_study/scara_output — the tables, figures and digest of scara_study (see
// scara_output.h).
#include "experiments/scara_study/scara_output.h"

#include <Eigen/Core>
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
#include "experiments/scara_study/scara_coverage.h"
#include "experiments/scara_study/scara_published.h"

namespace dynid::scara_study {

namespace {

nlohmann::json EstimateJson(const Estimate& e, const Eigen::Vector4d& truth,
                            const MeasuredCoverage& coverage) {
  nlohmann::json j;
  j["method"] = e.method;
  j["description"] = e.description;
  for (int i = 0; i < 4; ++i) {
    j["estimate"][kParamNames[i]] = e.p(i);
    j["relative_error_percent"][kParamNames[i]] = 100.0 * (e.p(i) - truth(i)) / truth(i);
    if (e.has_cov) j["std"][kParamNames[i]] = std::sqrt(std::max(0.0, e.cov(i, i)));
  }
  if (e.has_cov) {
    j["std_calibration"] = CoverageEntry(coverage, e.method);
    std::vector<std::vector<double>> c(4, std::vector<double>(4));
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) c[a][b] = e.cov(a, b);
    j["covariance"] = c;
  }
  return j;
}

// ---- Tables.

std::string EstimatesCsv(const std::vector<Estimate>& estimates, const Eigen::Vector4d& truth,
                         const MeasuredCoverage& coverage) {
  std::string est_csv = "method";
  for (const char* n : kParamNames) est_csv += std::string(",") + n;
  for (const char* n : kParamNames) est_csv += std::string(",std_") + n;
  for (const char* n : kParamNames) est_csv += std::string(",err_percent_") + n;
  est_csv += ",description,std_calibration\n";
  for (const Estimate& e : estimates) {
    std::ostringstream os;
    os.precision(8);
    os << e.method;
    for (int i = 0; i < 4; ++i) os << "," << e.p(i);
    for (int i = 0; i < 4; ++i) {
      if (e.has_cov) {
        os << "," << std::sqrt(std::max(0.0, e.cov(i, i)));
      } else {
        os << ",nan";
      }
    }
    for (int i = 0; i < 4; ++i) os << "," << 100.0 * (e.p(i) - truth(i)) / truth(i);
    os << ",\"" << e.description << "\",\""
       << (e.has_cov ? EstimatorCoverageLabel(coverage, e.method) : "no std reported") << "\"\n";
    est_csv += os.str();
  }
  return est_csv;
}

// Table 7 side by side.
std::string Table7Csv(const std::vector<Estimate>& estimates, const Eigen::Vector4d& truth,
                      const MeasuredCoverage& coverage) {
  std::string t7_csv = "method";
  for (const char* n : kParamNames) t7_csv += std::string(",published_") + n;
  for (const char* n : kParamNames) t7_csv += std::string(",ours_") + n;
  for (const char* n : kParamNames) t7_csv += std::string(",ours_std_") + n;
  for (const char* n : kParamNames) t7_csv += std::string(",truth_") + n;
  t7_csv += ",ours_method,ours_std_calibration\n";
  const std::map<std::string, const Estimate*> by_name = EstimatesByName(estimates);
  std::vector<std::pair<std::string, std::string>> rows = {
      {"real", ""},         {"LS", "LS"},    {"HNN", "HNN"}, {"EKF", "EKF_paper_mean"},
      {"EKF", "EKF_paper"}, {"EKF", "EKF"},  {"UKF", "UKF"}, {"UKF", "UKF_paper"},
      {"", "CD_EKF"},       {"", "EKF_RTS"}, {"", "UKF_RTS"}};
  if (by_name.count("WR_smoother")) rows.push_back({"", "WR_smoother"});
  for (const auto& [pub, ours] : rows) {
    std::ostringstream os;
    os.precision(8);
    os << (pub.empty() ? "-" : pub);
    const Published* pp = nullptr;
    for (const Published& q : kPublishedTable7) {
      if (q.method == pub) pp = &q;
    }
    for (int i = 0; i < 4; ++i) {
      if (pp) {
        os << "," << pp->p[i];
      } else {
        os << ",nan";
      }
    }
    const Estimate* e = ours.empty() ? nullptr : by_name.at(ours);
    for (int i = 0; i < 4; ++i) os << "," << (e ? e->p(i) : truth(i));
    for (int i = 0; i < 4; ++i) {
      os << "," << (e && e->has_cov ? std::sqrt(std::max(0.0, e->cov(i, i))) : 0.0);
    }
    for (int i = 0; i < 4; ++i) os << "," << truth(i);
    os << "," << (ours.empty() ? "truth" : ours) << ",\""
       << (e && e->has_cov ? EstimatorCoverageLabel(coverage, ours) : "") << "\"\n";
    t7_csv += os.str();
  }
  return t7_csv;
}

void TabulateEstimates(const Eigen::Vector4d& truth, Results* results) {
  results->csv.estimates = EstimatesCsv(results->estimates, truth, results->coverage);
  for (const Estimate& e : results->estimates) {
    results->summary["estimates"].push_back(EstimateJson(e, truth, results->coverage));
  }
  results->csv.table7 = Table7Csv(results->estimates, truth, results->coverage);
  if (!results->coverage.other_settings.empty()) {
    results->summary["std_calibration_other_settings"] = results->coverage.other_settings;
  }
  results->summary["std_calibration_source"] = results->coverage.source.empty()
                                                   ? nlohmann::json()
                                                   : nlohmann::json(results->coverage.source);
}

// Decimated to at most --max_plot_rows rows, for the figures.
std::string EvolutionCsv(const Record& record, const solvers::HopfieldResult& hnn,
                         const FilterResults& filters) {
  const int num = record.num;
  const std::vector<FilterRun>& runs = filters.runs;
  const int stride = std::max(1, (num + FLAGS_max_plot_rows - 1) / FLAGS_max_plot_rows);
  std::vector<std::string> ev_header = {"t"};
  auto add_cols = [&](const std::string& prefix, bool with_std) {
    for (const char* n : kParamNames) ev_header.push_back(prefix + "_" + n);
    if (with_std) {
      for (const char* n : kParamNames) ev_header.push_back(prefix + "_std_" + n);
    }
  };
  add_cols("hnn", false);
  for (const FilterRun& run : runs) add_cols(run.name, true);
  add_cols("CD_EKF", true);
  add_cols("EKF_RTS", true);
  add_cols("UKF_RTS", true);
  if (!record.measured) {
    for (const char* n : kParamNames) ev_header.push_back(std::string("true_") + n);
  }
  std::vector<Eigen::MatrixXd> stds;
  for (const FilterRun& run : runs) stds.push_back(run.record.FilteredStd());
  const int rows = (num + stride - 1) / stride;
  Eigen::MatrixXd ev(rows, ev_header.size());
  for (int r = 0; r < rows; ++r) {
    const int k = r * stride;
    int c = 0;
    ev(r, c++) = record.sim.time(k);
    for (int i = 0; i < 4; ++i) ev(r, c++) = hnn.parameters(k, i);
    for (size_t f = 0; f < runs.size(); ++f) {
      for (int i = 0; i < 4; ++i) ev(r, c++) = runs[f].record.filtered_states(k, 6 + i);
      for (int i = 0; i < 4; ++i) ev(r, c++) = stds[f](k, 6 + i);
    }
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.cd.states(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.cd.state_std(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.ekf_rts.states(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.ekf_rts.state_std(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.ukf_rts.states(k, 6 + i);
    for (int i = 0; i < 4; ++i) ev(r, c++) = filters.ukf_rts.state_std(k, 6 + i);
    if (record.measured) continue;
    for (int i = 0; i < 4; ++i) ev(r, c++) = record.truth(i);
  }
  return data::FormatCsv(ev_header, ev);
}

std::string RecordCsv(const Record& record) {
  const data::RobotSimulation& sim = record.sim;
  std::vector<std::string> rec_header = {"t"};
  for (const char* q : {"q_ref", "q", "qd", "qdd", "tau", "tau_measured"}) {
    for (int j = 1; j <= 3; ++j) rec_header.push_back(std::string(q) + std::to_string(j));
  }
  for (const char* yname : {"y_q1", "y_qd1", "y_q2", "y_qd2", "y_d3", "y_dd3"}) {
    rec_header.push_back(yname);
  }
  Eigen::MatrixXd rec(record.num, rec_header.size());
  rec << sim.time, sim.q_reference, sim.q, sim.qd, sim.qdd, sim.tau, sim.tau_measured, record.y;
  return data::FormatCsv(rec_header, rec);
}

// A measured record: the CSV's time, positions and torques, the IRWSM2 kinematics of the
// regressors (q, qd, qdd) and what the filters see (y_*).
std::string MeasuredRecordCsv(const Record& record) {
  const data::RobotSimulation& sim = record.sim;
  std::vector<std::string> rec_header = {"t"};
  for (const char* q : {"q_measured", "q", "qd", "qdd", "tau_measured"}) {
    for (int j = 1; j <= 3; ++j) rec_header.push_back(std::string(q) + std::to_string(j));
  }
  for (const char* yname : {"y_q1", "y_qd1", "y_q2", "y_qd2", "y_d3", "y_dd3"}) {
    rec_header.push_back(yname);
  }
  Eigen::MatrixXd rec(record.num, rec_header.size());
  rec << sim.time, sim.q_measured, sim.q, sim.qd, sim.qdd, sim.tau_measured, record.y;
  return data::FormatCsv(rec_header, rec);
}

// Renders the figure unless an earlier one failed (*first_error not empty); a failure goes to
// *first_error.
void RenderOrRecord(const data::Figure& figure, const data::OutputStage& stage,
                    const std::string& stem, std::string* first_error) {
  if (!first_error->empty()) return;
  std::string why;
  if (!data::RenderFigure(figure, stage.Path(""), stem, &why)) *first_error = why;
}

// The four parameters of one estimator over time, against the truth when there is one.
void RenderParameterFigure(const data::OutputStage& stage, const std::string& prefix,
                           const std::string& title, const std::string& stem, bool with_std,
                           bool with_truth, std::string* first_error) {
  data::Figure f;
  f.title = title;
  f.columns = 2;
  for (const char* n : kParamNames) {
    data::Panel p{n, "t [s]", n, {}, {}};
    p.series.push_back(data::LineSeries("evolution.csv", "t", prefix + "_" + n, prefix,
                                        with_std ? prefix + "_std_" + n : ""));
    if (with_truth) {
      p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("true_") + n, "true"));
    }
    f.panels.push_back(p);
  }
  RenderOrRecord(f, stage, stem, first_error);
}

// A measured record: the measured torques of each joint against those the estimates predict
// (torque_prediction.csv).
void RenderTorquePrediction(const data::OutputStage& stage, const std::vector<std::string>& methods,
                            std::string* first_error) {
  data::Figure f;
  f.title = "Measured and predicted joint torques, tau_hat = Y(q, q', q'') p";
  f.columns = 1;
  const char* units[3] = {"tau1 [N m]", "tau2 [N m]", "f3 [N]"};
  for (int j = 1; j <= 3; ++j) {
    const std::string joint = std::to_string(j);
    data::Panel p{"joint " + joint, "t [s]", units[j - 1], {}, {}};
    p.series.push_back(
        data::LineSeries("torque_prediction.csv", "t", "tau_measured" + joint, "measured"));
    for (const std::string& method : methods) {
      p.series.push_back(
          data::LineSeries("torque_prediction.csv", "t", method + "_tau" + joint, method));
    }
    f.panels.push_back(p);
  }
  RenderOrRecord(f, stage, "torque_prediction", first_error);
}

// The runs of a sign-statistics row, and how many of them matched a fraction of the row.
int RunsWith(const nlohmann::json& row, const char* fraction) {
  const int finished = row["runs"].get<int>() - row["failed"].get<int>();
  return static_cast<int>(std::lround(row[fraction].get<double>() * finished));
}

// Every reported σ with the measured coverage of its 95 % interval (the Monte Carlo of
// --coverage_csv or the shipped file).
void PrintReportedStd(const Results& results) {
  const MeasuredCoverage& coverage = results.coverage;
  std::printf(
      "reported std, and the coverage of its 95 %% interval measured by the Monte Carlo "
      "(%s%s):\n",
      coverage.source.empty() ? "none found" : coverage.source.c_str(),
      coverage.scenario.empty() ? "" : (", scenario " + coverage.scenario).c_str());
  if (!coverage.other_settings.empty()) {
    std::printf("  not measured at this run's settings: %s\n", coverage.other_settings.c_str());
  }
  for (const Estimate& e : results.estimates) {
    if (!e.has_cov) continue;
    const Eigen::Vector4d sd = e.cov.diagonal().cwiseMax(0.0).cwiseSqrt();
    std::printf("  %-22s %10.3g %10.3g %10.3g %10.3g   %s\n", e.method.c_str(), sd(0), sd(1), sd(2),
                sd(3), EstimatorCoverageLabel(coverage, e.method).c_str());
  }
}

// A measured record: the estimates without errors (there is no truth) and the torque-prediction
// error of each.
void PrintMeasuredDigest(const Record& record, const Results& results) {
  const nlohmann::json& summary = results.summary;
  const nlohmann::json& ekf_why = summary["ekf_explanation"];
  std::printf("scara_study: measured record %s, %d samples every %.6g s, filter velocities %s\n",
              FLAGS_measurements_csv.c_str(), record.num, record.dt,
              record.source["filter_velocities"].get<std::string>().c_str());
  std::printf("%-22s %10s %10s %10s %10s   (torque RMS error, %% of RMS torque: joint 1 2 3)\n",
              "method", "IZZ1", "IZZ2", "mr", "m3");
  for (size_t i = 0; i < results.estimates.size(); ++i) {
    const Estimate& e = results.estimates[i];
    const nlohmann::json& joints = summary["validation"][i]["joints"];
    std::printf("%-22s %10.5f %10.5f %10.5f %10.5f   %.3g %.3g %.3g\n", e.method.c_str(), e.p(0),
                e.p(1), e.p(2), e.p(3), joints[0]["rms_error_percent"].get<double>(),
                joints[1]["rms_error_percent"].get<double>(),
                joints[2]["rms_error_percent"].get<double>());
  }
  PrintReportedStd(results);
  std::printf("UKF positive definite on every run: %s\n",
              summary["acceptance"]["ukf_positive_definite_throughout"].get<bool>() ? "yes" : "NO");
  std::printf(
      "EKF, published P0 = Q = 10 I: IZZ2 = %.4g, filter std %.4g [%s]; tuned: IZZ2 = %.6g, "
      "std %.3g [%s]\n",
      ekf_why["published_settings_final_IZZ2"].get<double>(),
      ekf_why["published_settings_final_std_IZZ2"].get<double>(),
      ParameterCoverageLabel(results.coverage, "EKF_paper", 1).c_str(),
      ekf_why["tuned_final_IZZ2"].get<double>(), ekf_why["tuned_final_std_IZZ2"].get<double>(),
      ParameterCoverageLabel(results.coverage, "EKF", 1).c_str());
  std::printf("scara_study: wrote %s\n", FLAGS_out_dir.c_str());
}

}  // namespace

void TabulateResults(const Record& record, const EstimatorRuns& runs, Results* results) {
  TabulateEstimates(record.truth, results);
  results->csv.evolution = EvolutionCsv(record, runs.hnn, runs.filters);
  results->csv.record = record.measured ? MeasuredRecordCsv(record) : RecordCsv(record);
}

bool WriteCsvFiles(const CsvFiles& csv, data::OutputStage* stage, std::string* error) {
  return stage->WriteText("record.csv", csv.record, error) &&
         stage->WriteText("evolution.csv", csv.evolution, error) &&
         stage->WriteText("estimates.csv", csv.estimates, error) &&
         stage->WriteText("table7.csv", csv.table7, error) &&
         stage->WriteText("validation.csv", csv.validation, error) &&
         stage->WriteText("ekf_diagnosis.csv", csv.ekf_diagnosis, error) &&
         stage->WriteText("ekf_seed_statistics.csv", csv.ekf_seed_statistics, error) &&
         (csv.torque_prediction.empty() ||
          stage->WriteText("torque_prediction.csv", csv.torque_prediction, error));
}

// Like the published Figs. 7–12.
bool RenderFigures(const data::OutputStage& stage, bool with_truth,
                   const std::vector<std::string>& torque_methods, const MeasuredCoverage& coverage,
                   std::string* error) {
  error->clear();
  // The ±2σ band's title names the final σ's measured coverage.
  const auto band = [&coverage](const std::string& title, const std::string& method) {
    std::string label = EstimatorCoverageLabel(coverage, method);
    for (size_t at = label.find("; "); at != std::string::npos; at = label.find("; ", at)) {
      label.replace(at, 2, "\n");  // one parameter per line: the figure is narrow
    }
    return title + "\nfinal σ: " + label;
  };
  RenderParameterFigure(stage, "hnn",
                        "Hopfield network: parameter evolution (cf. published Fig. 7)",
                        "params_hnn", false, with_truth, error);
  RenderParameterFigure(stage, "EKF_paper",
                        band("EKF, published settings (±2σ) (cf. Fig. 8)", "EKF_paper"),
                        "params_ekf_paper", true, with_truth, error);
  RenderParameterFigure(stage, "EKF", band("EKF, tuned settings (±2σ)", "EKF"), "params_ekf", true,
                        with_truth, error);
  RenderParameterFigure(stage, "UKF",
                        band("square-root UKF, tuned settings (±2σ) (cf. Fig. 9)", "UKF"),
                        "params_ukf", true, with_truth, error);
  RenderParameterFigure(stage, "UKF_paper",
                        band("square-root UKF, published P0, Q (±2σ)", "UKF_paper"),
                        "params_ukf_paper", true, with_truth, error);
  data::Figure cmp;
  cmp.title = "Parameter estimates over time: EKF, HNN, UKF (cf. Figs. 10–12)";
  cmp.columns = 2;
  for (const char* n : kParamNames) {
    data::Panel p{n, "t [s]", n, {}, {}};
    p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("hnn_") + n, "HNN"));
    p.series.push_back(
        data::LineSeries("evolution.csv", "t", std::string("EKF_paper_") + n, "EKF (published)"));
    p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("EKF_") + n, "EKF"));
    p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("UKF_") + n, "UKF"));
    p.series.push_back(
        data::LineSeries("evolution.csv", "t", std::string("UKF_RTS_") + n, "UKF + RTS"));
    if (with_truth) {
      p.series.push_back(data::LineSeries("evolution.csv", "t", std::string("true_") + n, "true"));
    }
    cmp.panels.push_back(p);
  }
  RenderOrRecord(cmp, stage, "params_comparison", error);
  if (!with_truth) RenderTorquePrediction(stage, torque_methods, error);
  return error->empty();
}

void PrintDigest(const Record& record, const Results& results) {
  if (record.measured) {
    PrintMeasuredDigest(record, results);
    return;
  }
  const nlohmann::json& summary = results.summary;
  const nlohmann::json& ekf_why = summary["ekf_explanation"];
  std::printf("scara_study: %d samples, PID bandwidth %.3g Hz\n", record.num,
              FLAGS_pid_bandwidth_hz);
  std::printf("%-22s %10s %10s %10s %10s   (max |rel err|)\n", "method", "IZZ1", "IZZ2", "mr",
              "m3");
  for (const Estimate& e : results.estimates) {
    std::printf("%-22s %10.5f %10.5f %10.5f %10.5f   %.3g %%\n", e.method.c_str(), e.p(0), e.p(1),
                e.p(2), e.p(3),
                100.0 * (e.p - record.truth).cwiseQuotient(record.truth).cwiseAbs().maxCoeff());
  }
  PrintReportedStd(results);
  std::printf("UKF positive definite on every run: %s\n",
              summary["acceptance"]["ukf_positive_definite_throughout"].get<bool>() ? "yes" : "NO");
  std::printf(
      "EKF, published P0 = Q = 10 I: IZZ2 = %.4g, filter std %.4g [%s] (published %.4g is "
      "%.2f std from the truth); tuned: IZZ2 = %.6g, std %.3g [%s]\n",
      ekf_why["published_settings_final_IZZ2"].get<double>(),
      ekf_why["published_settings_final_std_IZZ2"].get<double>(),
      ParameterCoverageLabel(results.coverage, "EKF_paper", 1).c_str(), kPublishedTable7[3].p[1],
      ekf_why["published_IZZ2_deviation_in_filter_std"].get<double>(),
      ekf_why["tuned_final_IZZ2"].get<double>(), ekf_why["tuned_final_std_IZZ2"].get<double>(),
      ParameterCoverageLabel(results.coverage, "EKF", 1).c_str());
  if (summary.contains("ekf_seed_statistics")) {
    for (const auto& st : summary["ekf_seed_statistics"]) {
      std::printf(
          "  %s %-11s start, Q_theta = %-6g Q_state = %-6g %-5s: IZZ2 < 0 at the end in "
          "%d of %d noise realisations (published signature: %d)\n",
          st["filter"].get<std::string>().c_str(), st["start"].get<std::string>().c_str(),
          st["q_param"].get<double>(), st["q_state"].get<double>(),
          st["discretization"].get<std::string>().c_str(),
          RunsWith(st, "fraction_final_IZZ2_negative"),
          st["runs"].get<int>() - st["failed"].get<int>(),
          RunsWith(st, "fraction_published_signature"));
    }
  }
  std::printf("scara_study: wrote %s\n", FLAGS_out_dir.c_str());
}

}  // namespace dynid::scara_study
