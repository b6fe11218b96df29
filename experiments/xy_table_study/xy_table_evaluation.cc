// experiments/xy_table_study/xy_table_evaluation — the open-loop evaluation of the identified
// model of xy_table_study (see xy_table_evaluation.h).
#include "experiments/xy_table_study/xy_table_evaluation.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/xy_table.h"
#include "experiments/xy_table_study/xy_table_case.h"
#include "experiments/xy_table_study/xy_table_flags.h"
#include "experiments/xy_table_study/xy_table_measures.h"
#include "experiments/xy_table_study/xy_table_simulator.h"

namespace dynid::xy_table_study {

namespace {

namespace models = dynid::models;
namespace problems = dynid::problems;

// Open-loop simulation of the flexible model with theta and measured currents (linear
// interpolation) from the state estimated from the measurements at the first sample.
models::Trajectory SimulateIdentified(const models::XyTableFlexible& model,
                                      const Eigen::VectorXd& theta, const Eigen::VectorXd& time,
                                      const Eigen::MatrixXd& z) {
  problems::WeightedResidualData d{time, z};
  problems::WeightedResidualVariables init;
  InitializeXyTableVariables(XyStage::kFlexible, d, model.parameters(), theta, &init);
  const Eigen::Vector3d s0 = init.states.col(0).head<3>(), v0 = init.states.col(0).tail<3>();
  auto input = [&](double t, double* u) {
    const int N = static_cast<int>(time.size());
    int k = static_cast<int>((t - time(0)) / (time(N - 1) - time(0)) * (N - 1));
    k = std::max(0, std::min(N - 2, k));
    while (k > 0 && time(k) > t) --k;
    while (k < N - 2 && time(k + 1) < t) ++k;
    const double w = std::max(0.0, std::min(1.0, (t - time(k)) / (time(k + 1) - time(k))));
    u[0] = (1 - w) * z(k, 6) + w * z(k + 1, 6);
    u[1] = (1 - w) * z(k, 7) + w * z(k + 1, 7);
  };
  const models::XyTableFlexible::ParameterVector th = theta;
  return models::Simulate(model, th, s0, v0, input, time, 4);
}

}  // namespace

bool EvaluateIdentifiedModel(const Record& rec, const Eigen::VectorXd& theta_final,
                             std::ostringstream* md_out, nlohmann::json* summary_out,
                             Evaluation* out, std::string* error_out) {
  std::ostringstream& md = *md_out;
  std::string& error = *error_out;
  const Eigen::VectorXd& record_time = rec.time;
  const Eigen::MatrixXd& record_z = rec.z;
  const XyTableRecord& record = rec.simulation;
  const bool simulated = rec.simulated;
  const models::XyTableParameters& parameters = rec.parameters;
  const XyTableCaseOptions& case_options = rec.case_options;
  const models::XyTableFlexible flexible(parameters);
  std::vector<std::pair<double, double>> intervals = {
      {FLAGS_interval_start_s - (FLAGS_interval_end_s - FLAGS_interval_start_s),
       FLAGS_interval_start_s},
      {FLAGS_interval_start_s, FLAGS_interval_end_s},
      {FLAGS_interval_end_s, 2 * FLAGS_interval_end_s - FLAGS_interval_start_s}};
  Eigen::MatrixXd& evaluation_rows = out->evaluation_rows;
  evaluation_rows.resize(0, 9);
  nlohmann::json jeval = nlohmann::json::array();
  XyTableRecord circle;
  Eigen::VectorXd circle_time;
  Eigen::MatrixXd circle_z;
  Eigen::MatrixXd& circle_rows = out->circle_rows;
  circle_rows.resize(0, 9);
  if (FLAGS_evaluation) {
    md << "\nOpen-loop simulation of the identified model (stage 3) with the measured currents:\n\n"
          "| interval [s] | x RMS error [mm] | y RMS error [mm] | y error % of y range | "
          "deformation RMS error [mm] |\n|---|---|---|---|---|\n";
    auto evaluate = [&](const Eigen::VectorXd& t, const Eigen::MatrixXd& z,
                        const Eigen::VectorXd* true_deformation, const std::string& label,
                        Eigen::MatrixXd* rows) {
      const models::Trajectory sim = SimulateIdentified(flexible, theta_final, t, z);
      const int M = static_cast<int>(t.size());
      Eigen::VectorXd model_def(M);
      for (int k = 0; k < M; ++k) {
        model_def(k) = sim.measurements(k, 0) - parameters.wheel_radius_m * sim.positions(k, 0);
      }
      const double ex = Rms(sim.measurements.col(0) - z.col(0));
      const double ey = Rms(sim.measurements.col(1) - z.col(1));
      const double ed = true_deformation ? Rms(model_def - *true_deformation) : NAN;
      md << "| " << label << " | " << Fmt(1e3 * ex) << " | " << Fmt(1e3 * ey) << " | "
         << Fmt(100.0 * ey / Range(z.col(1)), "%.1f") << " | "
         << (true_deformation ? Fmt(1e3 * ed) : std::string("–")) << " |\n";
      jeval.push_back({{"interval", label},
                       {"x_rms_error_m", ex},
                       {"y_rms_error_m", ey},
                       {"y_error_percent_of_range", 100.0 * ey / Range(z.col(1))},
                       {"deformation_rms_error_m", ed}});
      const int base = static_cast<int>(rows->rows());
      rows->conservativeResize(base + M, 9);
      for (int k = 0; k < M; ++k) {
        rows->row(base + k) << t(k), z(k, 0), z(k, 1), sim.measurements(k, 0),
            sim.measurements(k, 1), true_deformation ? (*true_deformation)(k) : NAN, model_def(k),
            z(k, 0) - parameters.wheel_radius_m * z(k, 4), static_cast<double>(jeval.size() - 1);
      }
    };
    for (const auto& [a, b] : intervals) {
      int f = 0, c = 0;
      SelectInterval(record_time, a, b, &f, &c);
      const std::string label = Fmt(a, "%.2f") + "–" + Fmt(b, "%.2f");
      if (a < record_time(0) - 1e-9 || b > record_time(record_time.size() - 1) + 1e-9 || c < 20) {
        md << "| " << label << " | outside the record | | | |\n";
        continue;
      }
      Eigen::VectorXd def_truth;
      if (simulated) def_truth = record.deformation_x_m.segment(f, c);
      evaluate(record_time.segment(f, c), record_z.middleRows(f, c),
               simulated ? &def_truth : nullptr, label, &evaluation_rows);
    }
    // The circular path (second experiment).
    if (simulated) {
      XyTableExperimentOptions circle_options = case_options.experiment;
      circle_options.path = XyTablePath::kCircle;
      circle_options.duration_s = 4.0;
      circle = SimulateXyTable(case_options.system, circle_options);
      circle_time = circle.time;
      circle_z = circle.measurements;
    } else if (!FLAGS_circle_csv.empty()) {
      if (!ReadRecord(FLAGS_circle_csv, &circle_time, &circle_z, &error)) return false;
    }
    if (circle_time.size() > 0) {
      evaluate(circle_time, circle_z, simulated ? &circle.deformation_x_m : nullptr, "circle",
               &circle_rows);
    }
  }
  (*summary_out)["evaluation"] = jeval;
  return true;
}

}  // namespace dynid::xy_table_study
