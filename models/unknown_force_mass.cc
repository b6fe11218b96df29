#include "dynid/models/unknown_force_mass.h"

#include <glog/logging.h>

#include "dynid/models/model_linearization.h"

namespace dynid::models {

UnknownForceMass::UnknownForceMass(const Parameters& parameters) : parameters_(parameters) {
  CHECK_GT(parameters_.mass_kg, 0.0)
      << "expected a positive model mass, got " << parameters_.mass_kg;
}

ModelInfo UnknownForceMass::Info() const {
  ModelInfo info;
  info.name = "unknown_force_mass";
  info.positions = {{"s", "m"}};
  info.inputs = {{"f", "N"}};
  info.parameters = {{"unknown_force", "N"}};
  info.measurements = {{"s_measured", "m"}, {"a_measured", "m/s^2"}, {"f_measured", "N"}};
  info.equations = {{"force_balance", "N"}};
  return info;
}

UnknownForceMass::ParameterVector UnknownForceMass::NominalParameters() const {
  return ParameterVector(parameters_.nominal_force_n);
}

template void LinearizeModelInto<UnknownForceMass>(
    const UnknownForceMass&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models
