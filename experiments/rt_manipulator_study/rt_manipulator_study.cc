// rt_manipulator_study — the RT manipulator example of van de Molengraft (1990) §3.7.
//
// Question: can the weighted-residual estimator, built on the RIGID model of the rotation–
// translation manipulator, estimate the unknown payload mass from data of the FLEXIBLE "true
// system" — on-line with the linearised optimal filter and off-line with the smoother — and does
// de-weighting the second equation of motion and the phi measurement reveal the joint flexibility
// in the residuals (thesis Figs. 3.3–3.11)?
// Method (van de Molengraft (1990) §3.7): simulate the flexible manipulator (k = 2000 N m/rad, J on
// the joint only) along the straight line from (0.25, 0) to (0, 0.75) m with open-loop inputs from
// the rigid inverse dynamics (true payload 2 kg); measure r, phi, the radial and tangential payload
// accelerations, F and T (optionally with Gaussian noise). Estimate with the rigid model:
//  - filter: solvers::RunLinearOptimalFilter, payload as a time-varying parameter started at 0;
//  - smoother: problems::BuildWeightedResidualProblem (collocation, constant payload) solved by
//    Ceres, payload standard deviation from the banded Schur complement;
// for weighting 1 (all equations of motion trusted, measurements weighted by 1/order²) and
// weighting 2 (2nd equation of motion and phi measurement weighted 1e-2).
// Success: the final payload estimates are near 2 kg, closer with weighting 2; with weighting 2
// the residual of the phi measurement follows the elastic deformation phi − eta.
//
//   rt_manipulator_study [--out_dir=out/rt_manipulator_study] [--sample_period_s=1e-3]
//                        [--duration_s=1.0] [--stiffness=2000] [--noise_scale=0] [--seed=1]
//   rt_manipulator_study --measurements_csv=F [--link_mass=10] [--link_length=1]
//                        [--joint_inertia=5]
//
// Measured data (--measurements_csv): header exactly
//   t,r,phi,radial_acceleration,tangential_acceleration,F,T
// in s, m, rad, m/s², m/s², N, N m (the rigid model's measurement vector; time strictly
// increasing, at least 20 rows); link mass, link length and joint inertia of the rigid model
// from the flags (defaults: the thesis's manipulator). The estimators and weightings are the
// same; the outputs leave out what needs the true system (true positions, deformation, the
// residual-vs-deformation comparison, the 2 kg reference line).
//
// Writes rt_study.csv (time series), summary.json (flags, estimates, solver summaries) and
// figures rt_positions.png, rt_accelerations.png, rt_mass.png, rt_residuals.png.
#include <ceres/problem.h>
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/data/figure.h"
#include "dynid/data/output.h"
#include "dynid/models/mechanical_model.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/problems/weighted_residual_weights.h"
#include "dynid/solvers/internal/first_order_smoother.h"
#include "dynid/solvers/parameter_covariance.h"
#include "dynid/solvers/weighted_residual_smoother.h"
#include "experiments/common/cli.h"

DEFINE_string(out_dir, "out/rt_manipulator_study", "output folder");
DEFINE_double(sample_period_s, 1e-3, "sampling interval of the measurements (s)");
DEFINE_double(duration_s, 1.0, "length of the record (s); the motion itself lasts 1 s");
DEFINE_double(stiffness, 2000.0, "joint stiffness k of the true (flexible) system, N m/rad");
DEFINE_double(noise_scale, 0.0,
              "measurement noise, in units of (1e-5 m, 1e-5 rad, 1e-3 m/s², 1e-3 m/s², 1e-2 N, "
              "1e-2 N m); 0 = noise-free as in the thesis");
DEFINE_int32(seed, 1, "noise seed");
DEFINE_double(deweight, 1e-2, "weight of the 2nd equation of motion and of phi in weighting 2");
DEFINE_string(measurements_csv, "",
              "measured record t,r,phi,radial_acceleration,tangential_acceleration,F,T (see the "
              "header comment); empty = simulate the flexible manipulator");
DEFINE_double(link_mass, 10.0, "measured record: link mass ml of the rigid model (kg)");
DEFINE_double(link_length, 1.0, "measured record: link length l of the rigid model (m)");
DEFINE_double(joint_inertia, 5.0, "measured record: joint inertia J of the rigid model (kg m²)");
DEFINE_bool(figures, true, "render PNG figures (needs python3 + matplotlib)");

namespace {

using dynid::cli::Fail;

using dynid::models::RtManipulatorFlexible;
using dynid::models::RtManipulatorParameters;
using dynid::models::RtManipulatorRigid;
namespace problems = dynid::problems;
namespace solvers = dynid::solvers;

// The record the estimators see: simulated from the flexible model (with its truth) or read
// from --measurements_csv.
struct Record {
  problems::WeightedResidualData data;
  bool simulated = false;
  dynid::models::Trajectory truth;  // (simulated only)
};

const std::vector<std::string> kMeasuredHeader = {
    "t", "r", "phi", "radial_acceleration", "tangential_acceleration", "F", "T"};

bool ReadMeasuredRecord(const std::string& path, Record* record, std::string* error) {
  dynid::data::CsvTable table;
  if (!dynid::data::ReadCsvWithHeader(path, kMeasuredHeader, &table, error)) return false;
  const int rows = static_cast<int>(table.values.rows());
  if (rows < 20) {
    *error = path + ": expected at least 20 data rows, got " + std::to_string(rows);
    return false;
  }
  if (!dynid::data::CheckTimeColumnIncreasing(table, path, error)) return false;
  record->data = problems::WeightedResidualData{table.values.col(0), table.values.rightCols(6)};
  record->simulated = false;
  return true;
}

// The flexible manipulator along the reference line with open-loop rigid inverse-dynamics
// inputs, and its measurements with Gaussian noise (--noise_scale).
Record SimulateRecord(const RtManipulatorParameters& parameters) {
  const RtManipulatorFlexible truth_model(parameters);
  const int num_nodes = static_cast<int>(std::round(FLAGS_duration_s / FLAGS_sample_period_s)) + 1;
  const Eigen::VectorXd times =
      Eigen::VectorXd::LinSpaced(num_nodes, 0.0, FLAGS_sample_period_s * (num_nodes - 1));
  auto input = [&](double t, double* u) {
    const Eigen::Vector2d f = dynid::models::RtManipulatorReferenceInputs(parameters, t);
    u[0] = f(0), u[1] = f(1);
  };
  Record record;
  record.simulated = true;
  record.truth = dynid::models::Simulate(truth_model, truth_model.NominalParameters(),
                                         Eigen::Vector3d(0.25, 0.0, 0.0), Eigen::Vector3d::Zero(),
                                         input, times, 10);
  record.data = problems::WeightedResidualData{times, record.truth.measurements};
  Eigen::Matrix<double, 6, 1> sigma;
  sigma << 1e-5, 1e-5, 1e-3, 1e-3, 1e-2, 1e-2;
  sigma *= FLAGS_noise_scale;
  std::mt19937 rng(FLAGS_seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int k = 0; k < num_nodes; ++k) {
    for (int j = 0; j < 6; ++j) record.data.measurements(k, j) += sigma(j) * normal(rng);
  }
  return record;
}

struct Estimate {
  std::string name;
  Eigen::VectorXd mass_filter;    // N, filtered payload
  Eigen::MatrixXd states_filter;  // 5 × N
  Eigen::MatrixXd inputs_filter;  // 4 × N
  Eigen::MatrixXd zeta_filter;    // N × 8 at the filtered estimate
  double mass_smoother = NAN, mass_smoother_sd = NAN;
  Eigen::MatrixXd zeta_smoother;  // N × 8
  solvers::SolverSummary smoother_summary;
  std::string identifiability;
};

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv,
                         "RT manipulator payload estimation (van de Molengraft (1990) §3.7)");
  FLAGS_logtostderr = true;
  // Flags of one source only: a flag that would be ignored is an error.
  const bool measured = !FLAGS_measurements_csv.empty();
  const std::vector<const char*> simulation_only = {"sample_period_s", "duration_s", "stiffness",
                                                    "noise_scale", "seed"};
  const std::vector<const char*> measured_only = {"link_mass", "link_length", "joint_inertia"};
  for (const char* flag : measured ? simulation_only : measured_only) {
    if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
      return Fail(2, std::string("--") + flag +
                         (measured ? " is not used with --measurements_csv"
                                   : " is used only with --measurements_csv"));
    }
  }
  if (!(FLAGS_sample_period_s > 0.0 && FLAGS_sample_period_s <= 0.01)) {
    return Fail(2, "--sample_period_s must be in (0, 0.01]");
  }
  if (!(FLAGS_duration_s >= 0.2 && FLAGS_duration_s <= 10.0)) {
    return Fail(2, "--duration_s must be in [0.2, 10]");
  }
  if (!(FLAGS_stiffness > 0.0)) return Fail(2, "--stiffness must be > 0");
  if (!(FLAGS_noise_scale >= 0.0)) return Fail(2, "--noise_scale must be >= 0");
  if (!(FLAGS_deweight > 0.0)) return Fail(2, "--deweight must be > 0");
  for (const auto& [flag, value] : {std::pair<const char*, double>{"link_mass", FLAGS_link_mass},
                                    {"link_length", FLAGS_link_length},
                                    {"joint_inertia", FLAGS_joint_inertia}}) {
    if (!(value > 0.0) || !std::isfinite(value)) {
      return Fail(2, std::string("--") + flag + " must be a number > 0");
    }
  }

  // The record: the flexible "true system" simulated, or measured.
  RtManipulatorParameters parameters;
  parameters.joint_stiffness_nm_per_rad = FLAGS_stiffness;
  parameters.link_mass_kg = FLAGS_link_mass;
  parameters.link_length_m = FLAGS_link_length;
  parameters.joint_inertia_kg_m2 = FLAGS_joint_inertia;
  Record record;
  if (measured) {
    std::string why;
    if (!ReadMeasuredRecord(FLAGS_measurements_csv, &record, &why)) return Fail(2, why);
  } else {
    record = SimulateRecord(parameters);
  }
  const RtManipulatorRigid model(parameters);
  const problems::WeightedResidualData& data = record.data;
  const Eigen::VectorXd& times = data.time;
  const int num_nodes = static_cast<int>(times.size());

  // Weights (§5.5 rule: 1 / (order of magnitude of the term)², the per-sample weights of
  // standard deviations equal to the orders, h = 1).
  const dynid::models::ModelInfo info = model.Info();
  problems::NoiseStandardDeviations orders;
  orders.kinematic = Eigen::Vector4d(1e-3, 1e-3, 1e-2, 1e-2);
  orders.equations = Eigen::Vector2d(1e-2, 1e-2);
  orders.measurements.resize(6);
  orders.measurements << 1e-4, 1e-4, 1e-2, 1e-2, 1e-2, 1e-2;
  problems::WeightedResidualWeights base =
      problems::WeightedResidualWeights::FromStandardDeviations(orders, 1.0);
  base.parameter = Eigen::MatrixXd::Constant(1, 1, 1.0);
  Eigen::VectorXd r0(5);
  r0 << 1e8, 1e8, 1e8, 1e8, 1e-2;  // initial pose known, payload 0 kg "just a number"
  base.initial = r0.asDiagonal();
  base.initial_guess = Eigen::VectorXd::Zero(5);
  base.initial_guess(0) = data.measurements(0, 0);
  base.initial_guess(1) = data.measurements(0, 1);
  // Weighting 2: the 2nd equation of motion and the phi measurement de-weighted.
  problems::WeightedResidualWeights deweighted = base;
  for (const char* name : {"V.eom.joint_torque_balance", "V.z.phi_measured"}) {
    std::string why;
    if (!deweighted.Set(info, name, FLAGS_deweight, &why)) return Fail(1, why);
  }
  const Eigen::VectorXd v1 = base.residual.diagonal();
  const Eigen::VectorXd v2 = deweighted.residual.diagonal();

  std::vector<Estimate> estimates(2);
  estimates[0].name = "weighting1";
  estimates[1].name = "weighting2";
  const auto start = std::chrono::steady_clock::now();
  for (int w = 0; w < 2; ++w) {
    Estimate& e = estimates[w];
    problems::WeightedResidualWeights weights = w == 0 ? base : deweighted;
    // On-line: the linearised optimal filter with a time-varying payload.
    solvers::LinearOptimalFilterResult filtered;
    std::string error;
    if (!solvers::RunLinearOptimalFilter(
            model, data, weights, problems::ParameterMode::kTimeVarying,
            Eigen::Matrix<double, 1, 1>(0.0), solvers::LinearOptimalFilterOptions(), &filtered,
            &error)) {
      return Fail(1, e.name + " filter: " + error);
    }
    e.mass_filter = filtered.states.row(4).transpose();
    e.states_filter = filtered.states;
    e.inputs_filter = filtered.inputs;
    {
      problems::WeightedResidualVariables at_filter;
      problems::ResizeVariables(2, 2, Eigen::VectorXd::Zero(1), num_nodes,
                                problems::ParameterMode::kTimeVarying, &at_filter);
      at_filter.states = filtered.states.topRows(4);
      at_filter.inputs = filtered.inputs;
      at_filter.parameters = filtered.states.bottomRows(1);
      Eigen::MatrixXd xi;
      problems::ComputeWeightedResiduals(model, data, at_filter, &e.zeta_filter, &xi);
    }
    // Off-line: the smoother with a constant payload, started from the filter's trajectory.
    problems::WeightedResidualVariables variables;
    problems::ResizeVariables(2, 2, Eigen::VectorXd::Zero(1), num_nodes,
                              problems::ParameterMode::kConstant, &variables);
    variables.states = filtered.states.topRows(4);
    variables.inputs = filtered.inputs;
    problems::WeightedResidualOptions options;
    options.transcription = problems::Transcription::kCollocation;
    options.parameter_mode = problems::ParameterMode::kConstant;
    // The smoother needs no prior on the payload.
    if (!weights.Set(info, "R0.theta.payload_mass", 1e-8, &error)) return Fail(1, error);
    ceres::Problem problem;
    if (!problems::BuildWeightedResidualProblem(model, data, weights, options, &variables, &problem,
                                                &error)) {
      return Fail(1, e.name + " smoother: " + error);
    }
    solvers::WeightedResidualSmootherOptions solver_options;
    solver_options.max_iterations = 200;
    e.smoother_summary = solvers::SolveWeightedResidual(&problem, &variables, solver_options);
    if (!e.smoother_summary.converged) {
      LOG(WARNING) << e.name << " smoother: " << e.smoother_summary.message;
    }
    e.mass_smoother = variables.parameters(0, 0);
    Eigen::MatrixXd information;
    if (solvers::ConstantParameterInformation(&problem, &variables, &information, &error)) {
      const solvers::IdentifiabilityReport report = solvers::AnalyzeIdentifiability(
          information, variables.parameters.col(0), {"payload_mass [kg]"});
      e.mass_smoother_sd = report.standard_deviation(0);
      e.identifiability = report.message;
    } else {
      e.identifiability = error;
    }
    Eigen::MatrixXd xi;
    problems::ComputeWeightedResiduals(model, data, variables, &e.zeta_smoother, &xi);
  }
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Table.
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
    std::printf("%-11s %14.4f %14.4f %12.4f (%.2g) %10d\n", e.name.c_str(),
                e.mass_filter(num_nodes - 1), e.mass_filter.tail(num_nodes - half).mean(),
                e.mass_smoother, e.mass_smoother_sd, e.smoother_summary.iterations);
  }
  std::printf("elapsed %.2f s\n", elapsed_s);

  // Time series, column by column (the true system's only for a simulated record).
  std::vector<std::string> header;
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
  Eigen::MatrixXd table(num_nodes, static_cast<Eigen::Index>(columns.size()));
  for (size_t c = 0; c < columns.size(); ++c) table.col(c) = columns[c];
  nlohmann::json summary;
  summary["flags"] = {{"measurements_csv", FLAGS_measurements_csv},
                      {"link_mass", FLAGS_link_mass},
                      {"link_length", FLAGS_link_length},
                      {"joint_inertia", FLAGS_joint_inertia},
                      {"sample_period_s", FLAGS_sample_period_s},
                      {"duration_s", FLAGS_duration_s},
                      {"stiffness", FLAGS_stiffness},
                      {"noise_scale", FLAGS_noise_scale},
                      {"seed", FLAGS_seed},
                      {"deweight", FLAGS_deweight}};
  summary["samples"] = num_nodes;
  if (record.simulated) summary["true_payload_kg"] = 2.0;
  summary["weights"] = {{"W_kinematic", {1e6, 1e6, 1e4, 1e4}},
                        {"W_payload", 1.0},
                        {"R0", {1e8, 1e8, 1e8, 1e8, 1e-2}},
                        {"V_weighting1", std::vector<double>(v1.data(), v1.data() + 8)},
                        {"V_weighting2", std::vector<double>(v2.data(), v2.data() + 8)}};
  for (const Estimate& e : estimates) {
    summary[e.name] = {{"filter_final_payload_kg", e.mass_filter(num_nodes - 1)},
                       {"filter_mean_second_half_payload_kg",
                        e.mass_filter.tail(num_nodes - num_nodes / 2).mean()},
                       {"smoother_payload_kg", e.mass_smoother},
                       {"smoother_payload_sd_kg", e.mass_smoother_sd},
                       {"smoother_converged", e.smoother_summary.converged},
                       {"smoother_iterations", e.smoother_summary.iterations},
                       {"smoother_time_s", e.smoother_summary.time_s},
                       {"smoother_message", e.smoother_summary.message},
                       {"identifiability", e.identifiability}};
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

  std::string error;
  dynid::data::OutputStage stage;
  if (!stage.Open(FLAGS_out_dir, &error) ||
      !stage.WriteText("rt_study.csv", dynid::data::FormatCsv(header, table), &error)) {
    return Fail(1, error);
  }
  if (FLAGS_figures) {
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
        panel("phi", "phi [rad]",
              {line("phi_measured", "measured"), line("phi_filter1", "filter")})};
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
                 (record.simulated ? " (true 2 kg)" : "");
    Panel mass_panel = panel(
        "", "m_p [kg]", {line("mass_filter1", "weighting 1"), line("mass_filter2", "weighting 2")});
    if (record.simulated) mass_panel.hlines = {2.0};
    mass.panels = {mass_panel};
    figures.emplace_back("rt_mass", mass);
    Figure residuals;
    residuals.title = "residuals revealing the joint flexibility";
    Panel phi_panel = panel(
        record.simulated ? "phi measurement vs elastic deformation" : "phi measurement residual",
        "[rad]",
        {line("phi_residual_filter2", "phi residual, filter w2"),
         line("phi_residual_smoother2", "phi residual, smoother w2")});
    if (record.simulated) phi_panel.series.push_back(line("deformation", "phi - eta (true)"));
    residuals.panels = {panel("2nd equation of motion", "[N m]",
                              {line("eom2_residual_filter1", "filter, weighting 1"),
                               line("eom2_residual_filter2", "filter, weighting 2"),
                               line("eom2_residual_smoother2", "smoother, weighting 2")}),
                        phi_panel};
    figures.emplace_back("rt_residuals", residuals);
    for (const auto& [stem, figure] : figures) {
      if (!dynid::data::RenderFigure(figure, stage.Path(""), stem, &error)) return Fail(1, error);
    }
  }
  if (!stage.WriteJson("summary.json", summary, &error) || !stage.Commit(&error)) {
    return Fail(1, error);
  }
  std::printf("wrote %s\n", FLAGS_out_dir.c_str());
  return 0;
}
