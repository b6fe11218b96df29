#include "dynid/problems/weighted_residual_weights.h"

#include <glog/logging.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace dynid::problems {

std::vector<WeightEntry> ListWeightEntries(const models::ModelInfo& info) {
  std::vector<WeightEntry> entries;
  auto add = [&](WeightMatrix matrix, const std::string& name) {
    int index = 0;
    for (const WeightEntry& e : entries) index += e.matrix == matrix ? 1 : 0;
    entries.push_back({matrix, index, name});
  };
  for (const auto& q : info.positions) add(WeightMatrix::kKinematic, "W.s." + q.name);
  for (const auto& q : info.positions) add(WeightMatrix::kKinematic, "W.v." + q.name);
  for (const auto& q : info.equations) add(WeightMatrix::kResidual, "V.eom." + q.name);
  for (const auto& q : info.measurements) add(WeightMatrix::kResidual, "V.z." + q.name);
  for (const auto& q : info.positions) add(WeightMatrix::kInitial, "R0.s." + q.name);
  for (const auto& q : info.positions) add(WeightMatrix::kInitial, "R0.v." + q.name);
  for (const auto& q : info.parameters) add(WeightMatrix::kInitial, "R0.theta." + q.name);
  return entries;
}

bool ParseWeightEntry(const std::string& text, const models::ModelInfo& info, WeightEntry* entry,
                      std::string* error) {
  const std::vector<WeightEntry> entries = ListWeightEntries(info);
  for (const WeightEntry& e : entries) {
    if (e.name == text) {
      *entry = e;
      return true;
    }
  }
  // Index form.
  const size_t open = text.find('[');
  if (open != std::string::npos && !text.empty() && text.back() == ']') {
    const std::string matrix = text.substr(0, open);
    const std::string number = text.substr(open + 1, text.size() - open - 2);
    char* end = nullptr;
    const long index = std::strtol(number.c_str(), &end, 10);
    WeightMatrix which;
    bool known = true;
    if (matrix == "W") {
      which = WeightMatrix::kKinematic;
    } else if (matrix == "V") {
      which = WeightMatrix::kResidual;
    } else if (matrix == "R0") {
      which = WeightMatrix::kInitial;
    } else {
      known = false;
    }
    if (known && !number.empty() && end != nullptr && *end == '\0') {
      for (const WeightEntry& e : entries) {
        if (e.matrix == which && e.index == index) {
          *entry = e;
          return true;
        }
      }
    }
  }
  std::ostringstream out;
  out << "unknown weight '" << text << "' for model " << info.name << "; valid names:";
  for (const WeightEntry& e : entries) out << " " << e.name;
  out << " (or W[i], V[i], R0[i])";
  *error = out.str();
  return false;
}

namespace {

// The diagonal of one group: 1 / (σ·σ) / h for standard deviations, the weights as they are.
Eigen::VectorXd GroupDiagonal(const char* group, const Eigen::VectorXd& sigma,
                              const Eigen::VectorXd& weights, double h) {
  CHECK((sigma.size() == 0) != (weights.size() == 0))
      << group << ": give either standard deviations or weights (exactly one)";
  if (weights.size() > 0) return weights;
  for (Eigen::Index i = 0; i < sigma.size(); ++i) {
    CHECK(sigma(i) > 0.0 && std::isfinite(sigma(i)))
        << group << " standard deviation " << i << " must be positive and finite, got "
        << sigma(i);
  }
  return sigma.cwiseAbs2().cwiseInverse() / h;
}

const char* MatrixName(WeightMatrix matrix) {
  switch (matrix) {
    case WeightMatrix::kKinematic:
      return "W";
    case WeightMatrix::kResidual:
      return "V";
    case WeightMatrix::kInitial:
      return "R0";
  }
  return "?";
}

}  // namespace

WeightedResidualWeights WeightedResidualWeights::FromStandardDeviations(
    const NoiseStandardDeviations& sigma, double node_spacing_s) {
  CHECK(node_spacing_s > 0.0 && std::isfinite(node_spacing_s))
      << "node spacing must be positive and finite, got " << node_spacing_s;
  const Eigen::VectorXd kinematic =
      GroupDiagonal("kinematic", sigma.kinematic, sigma.kinematic_weights, node_spacing_s);
  const Eigen::VectorXd equations =
      GroupDiagonal("equations", sigma.equations, sigma.equation_weights, node_spacing_s);
  const Eigen::VectorXd measurements = GroupDiagonal("measurements", sigma.measurements,
                                                     sigma.measurement_weights, node_spacing_s);
  CHECK_EQ(kinematic.size(), 2 * equations.size())
      << "the kinematic group needs 2n entries for n equations of motion";
  WeightedResidualWeights w;
  w.kinematic = kinematic.asDiagonal();
  Eigen::VectorXd residual(equations.size() + measurements.size());
  residual << equations, measurements;
  w.residual = residual.asDiagonal();
  return w;
}

namespace {

// The matrix an entry lives in (const or not), and a CHECK that its index lies inside it.
template <class Weights>
auto* EntryMatrix(Weights* weights, const WeightEntry& entry) {
  decltype(&weights->kinematic) matrix = &weights->kinematic;
  if (entry.matrix == WeightMatrix::kResidual) matrix = &weights->residual;
  if (entry.matrix == WeightMatrix::kInitial) matrix = &weights->initial;
  CHECK(entry.index >= 0 && entry.index < matrix->rows() && entry.index < matrix->cols())
      << entry.name << " (" << MatrixName(entry.matrix) << "[" << entry.index
      << "]) outside its " << matrix->rows() << " × " << matrix->cols() << " matrix";
  return matrix;
}

}  // namespace

double WeightedResidualWeights::Get(const WeightEntry& entry) const {
  if (entry.matrix == WeightMatrix::kInitial && initial.size() == 0) return 0.0;
  const Eigen::MatrixXd* matrix = EntryMatrix(this, entry);
  return (*matrix)(entry.index, entry.index);
}

void WeightedResidualWeights::Set(const WeightEntry& entry, double weight) {
  Eigen::MatrixXd* matrix = EntryMatrix(this, entry);
  (*matrix)(entry.index, entry.index) = weight;
}

bool WeightedResidualWeights::Set(const models::ModelInfo& info, const std::string& name,
                                  double weight, std::string* error) {
  WeightEntry entry;
  if (!ParseWeightEntry(name, info, &entry, error)) return false;
  const int n = static_cast<int>(info.positions.size());
  const int l = static_cast<int>(info.measurements.size());
  const int p = static_cast<int>(info.parameters.size());
  Eigen::MatrixXd* matrix = nullptr;
  int size = 0;
  switch (entry.matrix) {
    case WeightMatrix::kKinematic:
      matrix = &kinematic;
      size = 2 * n;
      break;
    case WeightMatrix::kResidual:
      matrix = &residual;
      size = n + l;
      break;
    case WeightMatrix::kInitial:
      matrix = &initial;
      size = 2 * n + p;
      break;
  }
  if (matrix->size() == 0) {
    *matrix = Eigen::MatrixXd::Zero(size, size);
    if (entry.matrix == WeightMatrix::kInitial) initial_guess = Eigen::VectorXd::Zero(size);
  } else if (entry.index >= matrix->rows() || entry.index >= matrix->cols()) {
    std::ostringstream out;
    out << "weight " << entry.name << " (" << MatrixName(entry.matrix) << "[" << entry.index
        << "]) outside the " << matrix->rows() << " × " << matrix->cols() << " matrix "
        << MatrixName(entry.matrix) << " of model " << info.name;
    *error = out.str();
    return false;
  }
  (*matrix)(entry.index, entry.index) = weight;
  return true;
}

}  // namespace dynid::problems
