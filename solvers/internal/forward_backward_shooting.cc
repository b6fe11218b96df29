// Options validation of solvers::RunForwardBackwardShooting (the solver itself is a template in
// forward_backward_shooting.h, instantiated per model where it is used).
#include "dynid/solvers/internal/forward_backward_shooting.h"

#include <sstream>

namespace dynid::solvers {

bool ForwardBackwardShootingOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  if (max_iterations < 1) {
    out << "max_iterations must be >= 1, got " << max_iterations;
  } else if (!(damping > 0.0 && damping <= 1.0)) {
    out << "damping must be in (0, 1], got " << damping;
  } else if (!(tolerance >= 0.0)) {
    out << "tolerance must be >= 0, got " << tolerance;
  } else if (max_newton_iterations < 1) {
    out << "max_newton_iterations must be >= 1, got " << max_newton_iterations;
  } else if (max_nodes < 2) {
    out << "max_nodes must be >= 2, got " << max_nodes;
  }
  if (out.str().empty()) return true;
  if (why != nullptr) *why = out.str();
  return false;
}

}  // namespace dynid::solvers
