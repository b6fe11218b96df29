// experiments/xy_table_study/xy_table_record — the simulated or measured record of
// xy_table_study and its identification interval (see xy_table_record.h).
#include "experiments/xy_table_study/xy_table_record.h"

#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "experiments/xy_table_study/xy_table_flags.h"
#include "experiments/xy_table_study/xy_table_measures.h"

namespace dynid::xy_table_study {

namespace data = dynid::data;
namespace models = dynid::models;
namespace problems = dynid::problems;

const std::vector<std::string> kCsvHeader = {
    "t",    "x_effector", "y_effector", "acceleration_along", "acceleration_orthogonal", "phi1",
    "phi2", "i1",         "i2"};
const char* kMeasurementNames[8] = {"x_e", "y_e", "a_along", "a_orth", "phi1", "phi2", "i1", "i2"};

bool ReadRecord(const std::string& path, Eigen::VectorXd* time, Eigen::MatrixXd* z,
                std::string* error) {
  data::CsvTable table;
  if (!data::ReadCsvWithHeader(path, kCsvHeader, &table, error)) return false;
  if (table.values.rows() < 10) {
    *error = path + ": expected at least 10 data rows, got " + std::to_string(table.values.rows());
    return false;
  }
  if (!data::CheckTimeColumnIncreasing(table, path, error)) return false;
  *time = table.values.col(0);
  *z = table.values.rightCols(8);
  return true;
}

unsigned TruthSeedOfRun(std::uint64_t noise_seed) {
  return static_cast<unsigned>(FLAGS_truth_seed) + static_cast<unsigned>(noise_seed) -
         kDefaultNoiseSeed;
}

XyTableCaseOptions SimulationCaseOptions(unsigned noise_seed, unsigned truth_seed) {
  XyTableCaseOptions case_options;
  case_options.experiment.duration_s = FLAGS_duration_s;
  case_options.experiment.sample_period_s = FLAGS_sample_period_s;
  case_options.experiment.position_noise_m *= FLAGS_noise_scale;
  case_options.experiment.acceleration_noise_m_per_s2 *= FLAGS_noise_scale;
  case_options.experiment.current_noise_a *= FLAGS_noise_scale;
  if (FLAGS_noise_scale == 0.0) case_options.experiment.encoder_resolution_rad = 0.0;
  case_options.experiment.seed = noise_seed;
  case_options.interval_start_s = FLAGS_interval_start_s;
  case_options.interval_end_s = FLAGS_interval_end_s;
  case_options.weights.measurement_emphasis = FLAGS_measurement_emphasis;
  case_options.weights.acceleration_weight = FLAGS_acceleration_weight;
  XyTableTrueSystem& system = case_options.system;
  if (FLAGS_truth == "drawn") {
    system = DrawXyTableTrueSystem(system, truth_seed, FLAGS_truth_spread);
  }
  system.viscous_friction1_nms_per_rad =
      FLAGS_viscous_friction * system.table.friction1_nm / kViscousReferenceSpeedRadPerS;
  system.viscous_friction2_nms_per_rad =
      FLAGS_viscous_friction * system.table.friction2_nm / kViscousReferenceSpeedRadPerS;
  system.table.friction_smoothing_rad_per_s = FLAGS_friction_smoothing;
  return case_options;
}

models::XyTableParameters ModelParameters() {
  models::XyTableParameters parameters;  // the thesis's constants (and nominal theta)
  parameters.friction_smoothing_rad_per_s = FLAGS_friction_smoothing;
  parameters.transverse_mass_kg *= FLAGS_model_transverse_mass_scale;
  return parameters;
}

namespace {

// The identification interval of out->time, out->z into out->first, count, d.
bool SelectIdentificationInterval(Record* out, std::string* error) {
  SelectInterval(out->time, FLAGS_interval_start_s, FLAGS_interval_end_s, &out->first, &out->count);
  if (out->count < 20) {
    *error = "identification interval [" + Fmt(FLAGS_interval_start_s) + ", " +
             Fmt(FLAGS_interval_end_s) + "] s holds " + std::to_string(out->count) +
             " samples of the record; need at least 20";
    return false;
  }
  out->d = problems::WeightedResidualData{out->time.segment(out->first, out->count),
                                          out->z.middleRows(out->first, out->count)};
  return true;
}

}  // namespace

bool SimulateRecord(const XyTableCaseOptions& case_options, double duration_s, Record* out,
                    std::string* error) {
  out->case_options = case_options;
  out->case_options.experiment.duration_s = duration_s;
  out->simulated = true;
  out->parameters = ModelParameters();
  out->simulation = SimulateXyTable(out->case_options.system, out->case_options.experiment);
  out->time = out->simulation.time;
  out->z = out->simulation.measurements;
  return SelectIdentificationInterval(out, error);
}

bool LoadRecord(Record* out, std::string* error) {
  const XyTableCaseOptions case_options = SimulationCaseOptions(
      static_cast<unsigned>(FLAGS_seed), TruthSeedOfRun(static_cast<std::uint64_t>(FLAGS_seed)));
  if (FLAGS_measurements_csv.empty()) {
    return SimulateRecord(case_options, FLAGS_duration_s, out, error);
  }
  out->case_options = case_options;
  out->simulated = false;
  out->parameters = ModelParameters();
  if (!ReadRecord(FLAGS_measurements_csv, &out->time, &out->z, error)) return false;
  return SelectIdentificationInterval(out, error);
}

nlohmann::json TrueSystemJson(const Record& rec) {
  const XyTableRecord& record = rec.simulation;
  const int first = rec.first;
  const XyTableTrueSystem& sys = rec.case_options.system;
  const Eigen::VectorXd q0 = record.positions.row(first).transpose();
  const Eigen::VectorXd modes = XyTableClampedFrequencies(sys, q0);
  return {{"truth", FLAGS_truth == "drawn"
                        ? "drawn (seed " + std::to_string(TruthSeedOfRun(FLAGS_seed)) +
                              ", spread " + Fmt(FLAGS_truth_spread) + ")"
                        : std::string("thesis")},
          {"J1", sys.table.inertia1_kg_m2},
          {"J2", sys.table.inertia2_kg_m2},
          {"w1", sys.table.friction1_nm},
          {"w2", sys.table.friction2_nm},
          {"spindle_stiffness", sys.spindle_stiffness_nm_per_rad},
          {"spindle_damping", sys.spindle_damping_nms_per_rad},
          {"belt_stiffness", sys.belt_stiffness_n_per_m},
          {"belt_damping", sys.belt_damping_ns_per_m},
          {"spindle_end_inertia", sys.spindle_end_inertia_kg_m2},
          {"viscous_friction1", sys.viscous_friction1_nms_per_rad},
          {"viscous_friction2", sys.viscous_friction2_nms_per_rad},
          {"clamped_mode_frequencies_hz",
           std::vector<double>(modes.data(), modes.data() + modes.size())},
          {"max_deformation_x_m", record.deformation_x_m.cwiseAbs().maxCoeff()}};
}

}  // namespace dynid::xy_table_study
