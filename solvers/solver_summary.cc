#include "dynid/solvers/solver_summary.h"

#include <sstream>

namespace dynid::solvers {

bool ProgressOptions::IsValid(std::string* why) const {
  if (progress_period_s >= 0.0) return true;
  if (why != nullptr) {
    std::ostringstream out;
    out << "progress_period_s must be >= 0, got " << progress_period_s;
    *why = out.str();
  }
  return false;
}

}  // namespace dynid::solvers
