// experiments/rt_manipulator_study/rt_manipulator_record — the simulated or measured record of
// rt_manipulator_study (see rt_manipulator_record.h).
#include "experiments/rt_manipulator_study/rt_manipulator_record.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/models/mechanical_model.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "experiments/rt_manipulator_study/rt_manipulator_flags.h"

namespace dynid::rt_manipulator_study {
namespace {

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

}  // namespace

bool LoadRecord(const models::RtManipulatorParameters& parameters, Record* record,
                std::string* error) {
  if (!FLAGS_measurements_csv.empty()) {
    return ReadMeasuredRecord(FLAGS_measurements_csv, record, error);
  }
  *record = SimulateRecord(parameters, FLAGS_seed);
  return true;
}

// The flexible manipulator along the reference line with open-loop rigid inverse-dynamics
// inputs, and its measurements with Gaussian noise (--noise_scale).
Record SimulateRecord(const models::RtManipulatorParameters& parameters, int seed) {
  const models::RtManipulatorFlexible truth_model(parameters);
  const int num_nodes = static_cast<int>(std::round(FLAGS_duration_s / FLAGS_sample_period_s)) + 1;
  const Eigen::VectorXd times =
      Eigen::VectorXd::LinSpaced(num_nodes, 0.0, FLAGS_sample_period_s * (num_nodes - 1));
  auto input = [&](double t, double* u) {
    const Eigen::Vector2d f = dynid::models::RtManipulatorReferenceInputs(parameters, t);
    u[0] = f(0), u[1] = f(1);
  };
  Record record;
  record.simulated = true;
  record.true_payload_kg = parameters.payload_mass_kg;
  record.truth = dynid::models::Simulate(truth_model, truth_model.NominalParameters(),
                                         Eigen::Vector3d(0.25, 0.0, 0.0), Eigen::Vector3d::Zero(),
                                         input, times, 10);
  record.data = problems::WeightedResidualData{times, record.truth.measurements};
  Eigen::Matrix<double, 6, 1> sigma;
  sigma << 1e-5, 1e-5, 1e-3, 1e-3, 1e-2, 1e-2;
  sigma *= FLAGS_noise_scale;
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int k = 0; k < num_nodes; ++k) {
    for (int j = 0; j < 6; ++j) record.data.measurements(k, j) += sigma(j) * normal(rng);
  }
  return record;
}

}  // namespace dynid::rt_manipulator_study
