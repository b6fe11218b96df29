#include "dynid/models/scara3_model.h"

#include "dynid/models/model_linearization.h"

namespace dynid::models {

ModelInfo Scara3Model::Info() const {
  ModelInfo info;
  info.name = "scara3";
  info.positions = {{"q1", "rad"}, {"q2", "rad"}, {"d3", "m"}};
  info.inputs = {{"tau1", "N m"}, {"tau2", "N m"}, {"F3", "N"}};
  info.parameters = {{"IZZ1", "kg m^2"}, {"IZZ2", "kg m^2"}, {"mr", "kg m^2"}, {"m3", "kg"}};
  info.measurements = {{"q1", "rad"},  {"q1_dot", "rad/s"}, {"q2", "rad"},
                       {"q2_dot", "rad/s"}, {"d3", "m"},       {"d3_dot", "m/s"}};
  info.equations = {{"torque1", "N m"}, {"torque2", "N m"}, {"force3", "N"}};
  return info;
}

ModelInfo Scara3TorqueModel::Info() const {
  ModelInfo info = base_.Info();
  info.name = "scara3_torque_measured";
  info.measurements.push_back({"tau1", "N m"});
  info.measurements.push_back({"tau2", "N m"});
  info.measurements.push_back({"F3", "N"});
  return info;
}

template void LinearizeModelInto<Scara3Model>(
    const Scara3Model&, const double*, const double*, const double*, const double*,
    const double*, double, const LinearizationTarget&);

}  // namespace dynid::models
