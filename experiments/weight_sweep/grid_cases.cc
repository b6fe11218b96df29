#include "experiments/weight_sweep/grid_cases.h"

#include <cmath>
#include <functional>
#include <map>

#include "dynid/models/friction_mass.h"
#include "dynid/models/mass_spring_damper.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/models/xy_table.h"
#include "experiments/weight_sweep/model_grid_case.h"
#include "experiments/xy_table_study/xy_table_case.h"

namespace dynid::experiments {

namespace {

// Base weights of every case, in the intensity convention of problems/weighted_residual_problem.h:
// a measurement with noise standard deviation sigma sampled every h seconds gets
// V = 1 / (sigma² h), so that the per-sample weight is 1/sigma² and the Schur information is the
// inverse covariance of theta. The equations of motion get V = 1 / (sigma_eom² h) with
// sigma_eom = 1e-2 (in each equation's unit); the kinematic couplings W = diag(1e6 I, 1e2 I).
problems::WeightedResidualWeights BaseWeights(int n, const Eigen::VectorXd& sigma, double h) {
  problems::NoiseStandardDeviations noise;
  noise.kinematic_weights.resize(2 * n);
  noise.kinematic_weights << Eigen::VectorXd::Constant(n, 1e6), Eigen::VectorXd::Constant(n, 1e2);
  // 1 / (sigma_eom² h) as the weight itself: 1 / (1e-4 h) rounds differently from 1e4 / h.
  noise.equation_weights = Eigen::VectorXd::Constant(n, 1.0 / (1e-4 * h));
  noise.measurements = sigma;
  return problems::WeightedResidualWeights::FromStandardDeviations(noise, h);
}

Eigen::VectorXd Times(double duration_s, int num_nodes) {
  return Eigen::VectorXd::LinSpaced(num_nodes, 0.0, duration_s);
}

// GCC 12 reports a false -Warray-bounds inside models::Simulate for 1 × 1 Eigen vectors
// (vectorised copy of a one-element state half); the code is correct.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"

// Mass–spring–damper (theta = [1 kg, 0.4 N s/m, 40 N/m]), 5 s, default 501 nodes (h = 10 ms),
// force 2 sin(2 pi 0.7 t) + sin(2 pi 2.3 t + 1) + 0.5 sin(2 pi 5.1 t + 2) N from rest;
// noise sigma = [1e-4 m, 0.05 m/s², 0.01 N].
std::unique_ptr<solvers::WeightGridCase> MakeMassSpringDamperCase(int num_nodes) {
  GridCaseSetup<models::MassSpringDamper> setup;
  setup.name = "msd";
  setup.description =
      "mass-spring-damper (1 kg, 0.4 N s/m, 40 N/m), three-tone force, 5 s, data from the same "
      "model";
  setup.theta_true = setup.model.NominalParameters();
  const int nodes = num_nodes > 0 ? num_nodes : 501;
  const Eigen::VectorXd times = Times(5.0, nodes);
  auto force = [](double t, double* u) {
    u[0] = 2.0 * std::sin(2.0 * M_PI * 0.7 * t) + std::sin(2.0 * M_PI * 2.3 * t + 1.0) +
           0.5 * std::sin(2.0 * M_PI * 5.1 * t + 2.0);
  };
  const models::MassSpringDamper::PositionVector rest(0.0);
  setup.truth =
      models::Simulate(setup.model, setup.model.NominalParameters(), rest, rest, force, times, 10);
  setup.noise_standard_deviation = Eigen::Vector3d(1e-4, 0.05, 0.01);
  setup.weights = BaseWeights(1, setup.noise_standard_deviation, times(1) - times(0));
  setup.position_columns = {0};
  setup.acceleration_columns = {1};
  setup.input_columns = {2};
  return std::make_unique<ModelGridCase<models::MassSpringDamper>>(std::move(setup));
}

// Smooth dry-friction mass (theta = [1 kg, 2 N], eps = 0.01 m/s) on data of the stick–slip mass
// (m = 1 kg, w_s = w_d = 2 N) under f = 4 sin(2 pi t) N from rest, 3 s, default 751 nodes
// (h = 4 ms); noise sigma = [1e-5 m, 0.02 m/s², 0.01 N].
std::unique_ptr<solvers::WeightGridCase> MakeFrictionMassCase(int num_nodes) {
  GridCaseSetup<models::FrictionMass> setup;
  setup.name = "friction_mass";
  setup.description =
      "smooth dry-friction mass (1 kg, 2 N) on data of the stick-slip mass, f = 4 sin(2 pi t), "
      "3 s";
  setup.theta_true = setup.model.NominalParameters();
  const int nodes = num_nodes > 0 ? num_nodes : 751;
  const Eigen::VectorXd times = Times(3.0, nodes);
  auto force = [](double t, double* u) { u[0] = 4.0 * std::sin(2.0 * M_PI * t); };
  models::StickSlipParameters truth;
  models::SimulateStickSlip(truth, force, times, 0.0, 0.0, 1e-4, &setup.truth, nullptr);
  setup.noise_standard_deviation = Eigen::Vector3d(1e-5, 0.02, 0.01);
  setup.weights = BaseWeights(1, setup.noise_standard_deviation, times(1) - times(0));
  setup.position_columns = {0};
  setup.acceleration_columns = {1};
  setup.input_columns = {2};
  return std::make_unique<ModelGridCase<models::FrictionMass>>(std::move(setup));
}

#pragma GCC diagnostic pop

// RT manipulator, rigid estimator (theta = [payload 2 kg]) along the reference line of van de
// Molengraft (1990) App. D3 with open-loop inputs from the rigid inverse dynamics, 1 s, default 501
// nodes (h = 2 ms); noise sigma = [1e-5 m, 1e-5 rad, 1e-3 m/s², 1e-3 m/s², 1e-2 N, 1e-2 N m]. Data
// from the rigid model (flexible = false) or from the flexible true system, k = 2000 N m/rad.
std::unique_ptr<solvers::WeightGridCase> MakeRtCase(bool flexible, int num_nodes) {
  GridCaseSetup<models::RtManipulatorRigid> setup;
  setup.name = flexible ? "rt_flexible" : "rt_rigid";
  setup.description = flexible ? "RT manipulator payload, rigid estimator on data of the flexible "
                                 "true system (k = 2000 N m/rad), 1 s"
                               : "RT manipulator payload, rigid estimator on rigid data, 1 s";
  const models::RtManipulatorParameters parameters;
  setup.model = models::RtManipulatorRigid(parameters);
  setup.theta_true = setup.model.NominalParameters();
  const int nodes = num_nodes > 0 ? num_nodes : 501;
  const Eigen::VectorXd times = Times(1.0, nodes);
  auto input = [&](double t, double* u) {
    const Eigen::Vector2d f = models::RtManipulatorReferenceInputs(parameters, t);
    u[0] = f(0), u[1] = f(1);
  };
  if (flexible) {
    const models::RtManipulatorFlexible model(parameters);
    const models::Trajectory full =
        models::Simulate(model, model.NominalParameters(), Eigen::Vector3d(0.25, 0.0, 0.0),
                         Eigen::Vector3d::Zero(), input, times, 10);
    // The estimator's (rigid) trajectory: r and the joint angle phi.
    setup.truth = full;
    setup.truth.positions = full.positions.leftCols(2);
    setup.truth.velocities = full.velocities.leftCols(2);
    setup.truth.accelerations = full.accelerations.leftCols(2);
  } else {
    setup.truth =
        models::Simulate(setup.model, setup.model.NominalParameters(), Eigen::Vector2d(0.25, 0.0),
                         Eigen::Vector2d::Zero(), input, times, 10);
  }
  Eigen::VectorXd sigma(6);
  sigma << 1e-5, 1e-5, 1e-3, 1e-3, 1e-2, 1e-2;
  setup.noise_standard_deviation = sigma;
  setup.weights = BaseWeights(2, sigma, times(1) - times(0));
  setup.position_columns = {0, 1};
  setup.acceleration_columns = {-1, -1};
  setup.input_columns = {4, 5};
  return std::make_unique<ModelGridCase<models::RtManipulatorRigid>>(std::move(setup));
}

// The xy-table (van de Molengraft (1990) ch. 5), flexible model with acceleration measurements, on
// data of a simulated table with exactly the model's structure (no belt mode, no spindle damping;
// xy_table_study::MakeXyTableCase with xy_table_study::XyTableModelStructureSystem at the model's
// nominal theta), on the thesis's identification interval [3.33, 4.99] s at 2 ms (default 831
// nodes; --nodes changes the sampling period over the same interval). Noise added by the grid
// evaluation: sigma = [1e-4 m, 1e-4 m, 0.05 m/s², 0.05 m/s², encoder step/sqrt(12) rad (2000
// lines/rev) × 2, 0.02 A, 0.02 A]. Base weights: the thesis's rule (xy_table_study::XyTableWeights,
// stage 2); start trajectory by xy_table_study::InitializeXyTableVariables.
std::unique_ptr<solvers::WeightGridCase> MakeXyTableFlexibleCase(int num_nodes) {
  xy_table_study::XyTableCaseOptions options;
  const models::XyTableFlexible nominal(options.system.table);
  options.system = xy_table_study::XyTableModelStructureSystem(options.system.table,
                                                               nominal.NominalParameters());
  options.experiment.duration_s = 5.0;
  if (num_nodes > 0) {
    options.experiment.sample_period_s =
        (options.interval_end_s - options.interval_start_s) / (num_nodes - 1);
  }
  options.experiment.position_noise_m = 0.0;
  options.experiment.acceleration_noise_m_per_s2 = 0.0;
  options.experiment.current_noise_a = 0.0;
  const double encoder_step = options.experiment.encoder_resolution_rad;
  options.experiment.encoder_resolution_rad = 0.0;
  const xy_table_study::XyTableCase xy = xy_table_study::MakeXyTableCase(options);
  const xy_table_study::XyStage stage = xy_table_study::XyStage::kFlexibleWithAccelerations;

  GridCaseSetup<models::XyTableFlexible> setup;
  setup.name = "xy_flexible";
  setup.description =
      "xy-table, flexible model with accelerations, data of a table with the model's structure, "
      "[3.33, 4.99] s";
  setup.model = xy.flexible;
  setup.theta_true = setup.model.NominalParameters();
  const int first = xy.first_sample, count = static_cast<int>(xy.data.time.size());
  setup.truth.time = xy.data.time;
  setup.truth.positions = xy.record.positions.block(first, 0, count, 3);
  setup.truth.velocities = xy.record.velocities.block(first, 0, count, 3);
  setup.truth.accelerations = xy.record.accelerations.block(first, 0, count, 3);
  setup.truth.measurements = xy.record.clean_measurements.middleRows(first, count);
  setup.truth.inputs = setup.truth.measurements.rightCols(2);
  Eigen::VectorXd sigma(8);
  const double encoder_sigma = encoder_step / std::sqrt(12.0);
  sigma << 1e-4, 1e-4, 0.05, 0.05, encoder_sigma, encoder_sigma, 0.02, 0.02;
  setup.noise_standard_deviation = sigma;
  setup.weights = xy.weights[static_cast<int>(stage)];
  setup.position_columns = {4, 5, -1};
  setup.acceleration_columns = {-1, -1, -1};
  setup.input_columns = {6, 7};
  const models::XyTableParameters parameters = xy.parameters;
  setup.initialize = [parameters, stage](const problems::WeightedResidualData& data,
                                         const Eigen::VectorXd& theta_start,
                                         problems::WeightedResidualVariables* variables) {
    xy_table_study::InitializeXyTableVariables(stage, data, parameters, theta_start, variables);
  };
  return std::make_unique<ModelGridCase<models::XyTableFlexible>>(std::move(setup));
}

// The registry: name → factory. Add new cases here.
const std::map<std::string, std::function<std::unique_ptr<solvers::WeightGridCase>(int)>>&
Registry() {
  static const auto* registry =
      new std::map<std::string, std::function<std::unique_ptr<solvers::WeightGridCase>(int)>>{
          {"msd", MakeMassSpringDamperCase},
          {"friction_mass", MakeFrictionMassCase},
          {"rt_rigid", [](int nodes) { return MakeRtCase(false, nodes); }},
          {"rt_flexible", [](int nodes) { return MakeRtCase(true, nodes); }},
          {"xy_flexible", MakeXyTableFlexibleCase},
      };
  return *registry;
}

}  // namespace

std::vector<std::string> GridCaseNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Registry()) names.push_back(name);
  return names;
}

std::unique_ptr<solvers::WeightGridCase> MakeGridCase(const std::string& name,
                                                      const GridCaseOptions& options,
                                                      std::string* error) {
  const auto it = Registry().find(name);
  if (it == Registry().end()) {
    std::string known;
    for (const std::string& n : GridCaseNames()) known += (known.empty() ? "" : ", ") + n;
    *error = "unknown case '" + name + "' (known: " + known + ")";
    return nullptr;
  }
  if (options.num_nodes != 0 && (options.num_nodes < 20 || options.num_nodes > 1000000)) {
    *error = "num_nodes must be 0 (case default) or in [20, 1e6], got " +
             std::to_string(options.num_nodes);
    return nullptr;
  }
  return it->second(options.num_nodes);
}

}  // namespace dynid::experiments
