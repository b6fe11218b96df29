// experiments/friction_filter_study/friction_filter_record — the simulated or measured record of
// friction_filter_study (see friction_filter_record.h).
#include "experiments/friction_filter_study/friction_filter_record.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/models/friction_mass.h"
#include "experiments/friction_filter_study/friction_filter_flags.h"
#include "experiments/friction_filter_study/friction_filter_measures.h"
#include "experiments/friction_filter_study/friction_filter_sensors.h"

namespace dynid::friction_filter_study {

namespace data = dynid::data;
namespace models = dynid::models;

bool LoadRecord(Record* record, std::string* error) {
  const bool measured = !FLAGS_measurements_csv.empty();
  record->measured = measured;
  // The measured record, read before anything is written.
  Eigen::VectorXd& measured_time = record->measured_time;
  Eigen::MatrixXd& measured_values = record->measured_values;
  if (measured) {
    data::CsvTable table;
    if (!data::ReadCsvWithHeader(FLAGS_measurements_csv, {"t", "s", "a", "f"}, &table, error)) {
      return false;
    }
    const int rows = static_cast<int>(table.values.rows());
    if (rows < 20) {
      *error =
          FLAGS_measurements_csv + ": expected at least 20 data rows, got " + std::to_string(rows);
      return false;
    }
    if (!data::CheckTimeColumnIncreasing(table, FLAGS_measurements_csv, error)) {
      return false;
    }
    measured_time = table.values.col(0);
    measured_values = table.values.rightCols(3);
    if (!(FLAGS_transient_s >= 0.0 && FLAGS_transient_s < measured_time(rows - 1))) {
      *error = "--transient_s must be in [0, the record's last time " +
               Format(measured_time(rows - 1)) + " s)";
      return false;
    }
  }
  const int num = measured
                      ? static_cast<int>(measured_time.size())
                      : static_cast<int>(std::round(FLAGS_duration_s / FLAGS_sample_period_s)) + 1;
  const Eigen::VectorXd times =
      measured ? measured_time
               : Eigen::VectorXd::LinSpaced(num, 0.0, FLAGS_sample_period_s * (num - 1));
  // The first sample at or after the transient.
  const int first_after =
      measured
          ? static_cast<int>(std::lower_bound(times.data(), times.data() + num, FLAGS_transient_s) -
                             times.data())
          : static_cast<int>(std::ceil(FLAGS_transient_s / FLAGS_sample_period_s));
  record->num = num;
  record->times = times;
  record->first_after = first_after;
  return true;
}

std::uint64_t SensorSeed(std::int64_t seed, size_t c) {
  return static_cast<std::uint64_t>(seed) * 1000u + c;
}

bool MakeCaseRecord(const Record& record, const std::vector<double>& true_masses, size_t c,
                    std::int64_t seed, CaseRecord* result, std::string* error) {
  const auto force_at = [](double t) {
    return FLAGS_force_amplitude * std::sin(2.0 * M_PI * FLAGS_force_frequency_hz * t);
  };
  const auto force = [&force_at](double t, double* f) { f[0] = force_at(t); };
  const bool measured = record.measured;
  const int num = record.num;
  const Eigen::VectorXd& times = record.times;
  models::Trajectory& truth = result->truth;
  Eigen::VectorXd& friction = result->friction;
  Eigen::MatrixXd& measurements = result->measurements;
  if (measured) {
    result->file = "case_measured.csv";
    measurements = record.measured_values;
  } else {
    result->true_mass = true_masses[c];
    char name[64];
    std::snprintf(name, sizeof(name), "case_mass%g.csv", true_masses[c]);
    result->file = name;
    models::StickSlipParameters truth_parameters;
    truth_parameters.mass_kg = true_masses[c];
    truth_parameters.static_friction_n = FLAGS_static_friction;
    truth_parameters.dynamic_friction_n = FLAGS_dynamic_friction;
    models::SimulateStickSlip(truth_parameters, force, times, 0.0, 0.0,
                              std::min(1e-4, FLAGS_sample_period_s), &truth, &friction);
    if (FLAGS_sensors == "realistic") {
      SensorLevels levels;
      levels.encoder_resolution_m = FLAGS_encoder_resolution_m;
      levels.accelerometer_sd = FLAGS_accelerometer_noise;
      levels.force_sd = FLAGS_force_sensor_noise;
      levels.force_delay_s = FLAGS_force_delay_s;
      measurements = SensorMeasurements(times, truth.positions.col(0), truth.accelerations.col(0),
                                        force_at, levels, SensorSeed(seed, c));
    } else {
      measurements = truth.measurements;
      std::mt19937 rng(static_cast<std::mt19937::result_type>(seed + static_cast<int>(c)));
      std::normal_distribution<double> normal(0.0, 1.0);
      const Eigen::Vector3d noise_sd = FLAGS_noise_scale * Eigen::Vector3d(1e-4, 1e-2, 1e-2);
      for (int k = 0; k < num; ++k) {
        for (int j = 0; j < 3; ++j) measurements(k, j) += noise_sd(j) * normal(rng);
      }
    }
  }
  const double period = (times(num - 1) - times(0)) / (num - 1);
  return Prefilter(measurements, FLAGS_prefilter_hz, period, &result->filter_measurements, error);
}

}  // namespace dynid::friction_filter_study
