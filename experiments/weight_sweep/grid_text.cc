#include "experiments/weight_sweep/grid_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

namespace dynid::experiments {

namespace {

bool ParsePositiveNumber(const std::string& text, double* value) {
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return !text.empty() && end != nullptr && *end == '\0' && std::isfinite(*value) && *value > 0;
}

}  // namespace

bool ParseWeightGrid(const std::string& text, const models::ModelInfo& info,
                     const std::string& what, std::vector<solvers::WeightAxis>* axes,
                     std::string* error) {
  axes->clear();
  if (text.empty()) {
    *error = what + ": empty grid; give at least one NAME:LOW:HIGH:COUNT";
    return false;
  }
  std::stringstream in(text);
  std::string item;
  std::set<std::string> seen;
  long long total = 1;
  while (std::getline(in, item, ',')) {
    std::vector<std::string> parts;
    std::stringstream fields(item);
    std::string field;
    while (std::getline(fields, field, ':')) parts.push_back(field);
    if (parts.size() != 4) {
      *error = what + ": '" + item + "' is not NAME:LOW:HIGH:COUNT";
      return false;
    }
    solvers::WeightAxis axis;
    std::string why;
    if (!solvers::ParseWeightEntry(parts[0], info, &axis.entry, &why)) {
      *error = what + ": " + why;
      return false;
    }
    if (!seen.insert(axis.entry.name).second) {
      *error = what + ": weight '" + axis.entry.name + "' appears twice";
      return false;
    }
    if (!ParsePositiveNumber(parts[1], &axis.low) || !ParsePositiveNumber(parts[2], &axis.high)) {
      *error = what + ": '" + item + "': LOW and HIGH must be positive numbers";
      return false;
    }
    char* end = nullptr;
    const long count = std::strtol(parts[3].c_str(), &end, 10);
    if (parts[3].empty() || *end != '\0' || count < 1 || count > 10000) {
      *error = what + ": '" + item + "': COUNT must be an integer in [1, 10000]";
      return false;
    }
    axis.count = static_cast<int>(count);
    total *= count;
    if (total > 1000000) {
      *error = what + ": more than 1e6 grid points";
      return false;
    }
    axes->push_back(axis);
  }
  if (axes->empty()) {
    *error = what + ": empty grid; give at least one NAME:LOW:HIGH:COUNT";
    return false;
  }
  return true;
}

std::string ProgressBar(int done, int total, double elapsed_s) {
  constexpr int kWidth = 30;
  const int filled = total > 0 ? static_cast<int>(static_cast<double>(kWidth) * done / total) : 0;
  std::string bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]";
  char text[160];
  if (done > 0 && done < total) {
    const double eta = elapsed_s / done * (total - done);
    std::snprintf(text, sizeof(text), " %d/%d points, %.0f s, ETA %.0f s", done, total, elapsed_s,
                  eta);
  } else {
    std::snprintf(text, sizeof(text), " %d/%d points, %.0f s", done, total, elapsed_s);
  }
  return bar + text;
}

}  // namespace dynid::experiments
