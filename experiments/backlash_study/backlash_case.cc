// experiments/backlash_study/backlash_case — the simulated and measured cases (see
// backlash_case.h).
#include "experiments/backlash_study/backlash_case.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"
#include "experiments/backlash_study/backlash_flags.h"
#include "experiments/common/cli.h"

namespace dynid::backlash_study {

double TrueBacklash(const Case& c) {
  return c.parameters.shape == models::SpringShape::kLinear ? 0.0 : c.parameters.backlash_rad;
}

Case MakeCase(const std::string& name) {
  Case c;
  c.name = name;
  if (name == "sim1") {
    c.description = "Hovland et al. (2002) Simulation 1 (motor velocity only)";
    c.parameters = models::HovlandSimulation1Parameters();
    c.sample_period_s = 1e-3;
    c.default_samples = 20000;
    c.prbs = false;
    c.sine_options.amplitude = FLAGS_sine_amplitude;
    c.sine_options.start_frequency_hz = 0.5;
    c.sine_options.end_frequency_hz = 5.0;
    c.measure_arm_velocity = false;
    c.tau_noise_intensity = 1.0;
    c.measurement_variance = 2.5e-4;
  } else {
    c.description = name == "sim2" ? "Hovland et al. (2002) Simulation 2 (motor and arm velocity)"
                                   : "Simulation 2 axis, linear spring K = 67 Nm/rad";
    c.parameters = models::HovlandSimulation2Parameters();
    if (name == "linear") {
      c.parameters.shape = models::SpringShape::kLinear;
      c.parameters.backlash_rad = 0.0;
      c.parameters.stiffness_nm_per_rad = 67.0;
    }
    c.sample_period_s = 1e-4;
    c.default_samples = 20000;
    c.prbs = true;
    c.prbs_options.amplitude = FLAGS_prbs_amplitude;
    c.prbs_options.clock_period_s = FLAGS_prbs_clock;
    c.prbs_options.register_bits = 11;
    c.prbs_options.seed = 0x5a5;
    c.measure_arm_velocity = true;
    c.state_noise_intensity << 0.0, 0.0, 1000.0, 0.0;
    c.tau_noise_intensity = 100.0;
    c.measurement_variance = 1.0;
  }
  c.estimator_parameters = c.parameters;
  models::TwoMassTransmissionParameters& m = c.estimator_parameters;
  m.arm_inertia_kgm2 *= FLAGS_model_arm_inertia_scale;
  m.motor_inertia_kgm2 *= FLAGS_model_motor_inertia_scale;
  m.damping_nms_per_rad *= FLAGS_model_damping_scale;
  m.viscous_friction_nms_per_rad *= FLAGS_model_friction_scale;
  m.coulomb_friction_nm *= FLAGS_model_friction_scale;
  c.encoder_counts = FLAGS_encoder_counts;
  return c;
}

std::string ModelMismatchDescription() {
  std::string text;
  const std::pair<const char*, double> factors[] = {
      {"arm inertia", FLAGS_model_arm_inertia_scale},
      {"motor inertia", FLAGS_model_motor_inertia_scale},
      {"damping", FLAGS_model_damping_scale},
      {"motor friction Cv and Cc", FLAGS_model_friction_scale}};
  for (const auto& [name, factor] : factors) {
    if (factor == 1.0) continue;
    char part[128];
    std::snprintf(part, sizeof(part), "%sestimators' %s x%.6g of the true (%+.4g %%)",
                  text.empty() ? "" : "; ", name, factor, 100.0 * (factor - 1.0));
    text += part;
  }
  if (FLAGS_encoder_counts > 0) {
    char part[160];
    std::snprintf(part, sizeof(part),
                  "%sunmodelled: velocities from %d-count/rev encoders (backward differences)",
                  text.empty() ? "" : "; ", FLAGS_encoder_counts);
    text += part;
  }
  return text;
}

nlohmann::json ModelMismatchJson() {
  const std::string description = ModelMismatchDescription();
  nlohmann::json json;
  json["exact_model"] = description.empty();
  json["description"] = description.empty()
                            ? "none: the estimators have the simulator's model (b and K unknown)"
                            : description;
  json["estimator_model_factors"] = {{"arm_inertia", FLAGS_model_arm_inertia_scale},
                                     {"motor_inertia", FLAGS_model_motor_inertia_scale},
                                     {"damping", FLAGS_model_damping_scale},
                                     {"motor_friction", FLAGS_model_friction_scale}};
  json["unmodelled_effect"] =
      FLAGS_encoder_counts > 0
          ? nlohmann::json{{"type", "encoder quantisation"},
                           {"counts_per_revolution", FLAGS_encoder_counts},
                           {"resolution_rad", 2.0 * M_PI / FLAGS_encoder_counts},
                           {"velocity", "backward difference of the readings over one sample"}}
          : nlohmann::json();
  return json;
}

bool MakeMeasuredCase(const std::string& path, Case* c, std::string* error) {
  c->name = "measured";
  c->measured = true;
  c->source = path;
  c->description = "measured record " + path;
  models::TwoMassTransmissionParameters& p = c->parameters;
  struct KnownParameter {
    const char* flag;
    double value;
    double* field;
    bool positive;  // > 0 (else >= 0)
  };
  const KnownParameter known[] = {
      {"motor_inertia", FLAGS_motor_inertia, &p.motor_inertia_kgm2, true},
      {"arm_inertia", FLAGS_arm_inertia, &p.arm_inertia_kgm2, true},
      {"damping", FLAGS_damping, &p.damping_nms_per_rad, false},
      {"position_gain", FLAGS_position_gain, &p.position_gain_nm_per_rad, false},
      {"viscous_friction", FLAGS_viscous_friction, &p.viscous_friction_nms_per_rad, false},
      {"coulomb_friction", FLAGS_coulomb_friction, &p.coulomb_friction_nm, false},
      {"friction_sharpness", FLAGS_friction_sharpness, &p.friction_sharpness_s_per_rad, true}};
  for (const KnownParameter& k : known) {
    if (!std::isfinite(k.value) || !(k.positive ? k.value > 0.0 : k.value >= 0.0)) {
      *error = std::string("--") + k.flag + " must be a number " + (k.positive ? "> 0" : ">= 0");
      return false;
    }
    *k.field = k.value;
  }
  c->estimator_parameters = p;
  if (!(FLAGS_qpp > 0.0) || !std::isfinite(FLAGS_qpp)) {
    *error = "--qpp must be a number > 0";
    return false;
  }
  if (!(FLAGS_measurement_variance > 0.0) || !std::isfinite(FLAGS_measurement_variance)) {
    *error = "--measurement_variance must be a number > 0";
    return false;
  }
  std::vector<double> qxx;  // the diagonal of Q_xx
  if (!cli::ParseNumberList("qxx", FLAGS_qxx, 4, 0.0, &qxx, error)) return false;
  for (int i = 0; i < 4; ++i) c->state_noise_intensity(i) = qxx[i];
  c->tau_noise_intensity = FLAGS_qpp;
  c->measurement_variance = FLAGS_measurement_variance;

  data::CsvTable table;
  if (!data::ReadCsv(path, &table, error)) return false;
  const std::vector<std::string> motor_only = {"t", "u", "x3"}, both = {"t", "u", "x3", "x4"};
  if (table.header != motor_only && table.header != both) {
    std::string got;
    for (const std::string& name : table.header) got += (got.empty() ? "" : ",") + name;
    *error = path + ":1: expected the header t,u,x3 (motor velocity) or t,u,x3,x4 (motor and " +
             "arm velocity), got " + got;
    return false;
  }
  const int rows = static_cast<int>(table.values.rows());
  if (rows < 100) {
    *error = path + ": expected at least 100 data rows, got " + std::to_string(rows);
    return false;
  }
  double step = 0.0;
  if (!data::CheckTimeColumnIncreasing(table, path, error) ||
      !data::CheckUniformTimeStep(table, path, 0, false, 0.01,
                                  "the estimators need a uniform sample period", &step, error)) {
    return false;
  }
  const Eigen::VectorXd t = table.values.col(0);
  c->sample_period_s = step;
  c->default_samples = rows;
  c->measure_arm_velocity = table.header.size() == 4;
  c->time = t;
  c->input = table.values.col(1);
  c->measurements = table.values.rightCols(table.header.size() - 2);
  return true;
}

std::uint64_t NoiseSeed(const std::string& case_name) { return NoiseSeed(case_name, FLAGS_seed); }

std::uint64_t NoiseSeed(const std::string& case_name, std::uint64_t base) {
  return base + (case_name == "sim1" ? 0 : case_name == "sim2" ? 1 : 2);
}

}  // namespace dynid::backlash_study
