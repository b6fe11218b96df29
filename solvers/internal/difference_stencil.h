// solvers/internal/difference_stencil — coefficients of the d-th backward difference
// Δ^d y_k = Σ_i c_i y_{k−d+i}: for an integrated random walk of order d (Brunot et al. (2018)
// §3) the d-th difference of the trend is its white driving noise. Used by the IRW smoother in
// its banded least-squares form and by the NVR fit.
#ifndef DYNID_SOLVERS_INTERNAL_DIFFERENCE_STENCIL_H_
#define DYNID_SOLVERS_INTERNAL_DIFFERENCE_STENCIL_H_

#include <cstddef>
#include <vector>

namespace dynid::solvers::internal {

// d + 1 coefficients, oldest sample first: d = 1 -> [-1, 1], d = 2 -> [1, -2, 1],
// d = 3 -> [-1, 3, -3, 1]. d = 0 gives [1].
inline std::vector<double> DifferenceStencil(int order) {
  std::vector<double> stencil = {1.0};
  for (int i = 0; i < order; ++i) {
    std::vector<double> next(stencil.size() + 1, 0.0);
    for (std::size_t j = 0; j < stencil.size(); ++j) {
      next[j] -= stencil[j];
      next[j + 1] += stencil[j];
    }
    stencil = next;
  }
  return stencil;
}

}  // namespace dynid::solvers::internal

#endif  // DYNID_SOLVERS_INTERNAL_DIFFERENCE_STENCIL_H_
