#include "dynid/solvers/internal/first_order_smoother.h"

#include <sstream>

namespace dynid::solvers {

bool FirstOrderSmootherOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  if (max_iterations < 1) out << "max_iterations must be >= 1, got " << max_iterations;
  else if (!(damping > 0.0 && damping <= 1.0)) out << "damping must be in (0, 1], got " << damping;
  else if (!(tolerance >= 0.0)) out << "tolerance must be >= 0, got " << tolerance;
  else if (num_threads < 1) out << "num_threads must be >= 1, got " << num_threads;
  if (out.str().empty()) return true;
  if (why != nullptr) *why = out.str();
  return false;
}

bool LinearOptimalFilterOptions::IsValid(std::string* why) const {
  if (relinearizations >= 1) return true;
  if (why != nullptr) {
    *why = "relinearizations must be >= 1, got " + std::to_string(relinearizations);
  }
  return false;
}

}  // namespace dynid::solvers
