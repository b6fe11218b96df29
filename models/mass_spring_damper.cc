#include "dynid/models/mass_spring_damper.h"

#include "dynid/models/model_linearization.h"

namespace dynid::models {

ModelInfo MassSpringDamper::Info() const {
  ModelInfo info;
  info.name = "mass_spring_damper";
  info.positions = {{"s", "m"}};
  info.inputs = {{"f", "N"}};
  info.parameters = {{"mass", "kg"}, {"damping", "N s/m"}, {"stiffness", "N/m"}};
  info.measurements = {{"s_measured", "m"}, {"a_measured", "m/s^2"}, {"f_measured", "N"}};
  info.equations = {{"force_balance", "N"}};
  return info;
}

MassSpringDamper::ParameterVector MassSpringDamper::NominalParameters() const {
  return ParameterVector(parameters_.mass_kg, parameters_.damping_ns_per_m,
                         parameters_.stiffness_n_per_m);
}

template void LinearizeModelInto<MassSpringDamper>(
    const MassSpringDamper&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models
