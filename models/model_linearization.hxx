// Definition of models::LinearizeModelInto (Ceres Jets), included by model_linearization.h: any
// model, the library's or a user's, is linearised by including that header.
#ifndef DYNID_MODELS_MODEL_LINEARIZATION_HXX_
#define DYNID_MODELS_MODEL_LINEARIZATION_HXX_

#include <ceres/jet.h>
#include <glog/logging.h>

namespace dynid::models {

template <class Model>
void LinearizeModelInto(const Model& model, const double* s, const double* v, const double* a,
                        const double* u, const double* theta, double t,
                        const LinearizationTarget& out) {
  constexpr int n = Model::kNumPositions;
  constexpr int m = Model::kNumInputs;
  constexpr int p = Model::kNumParameters;
  constexpr int l = Model::kNumMeasurements;
  // Derivative slots: [s (n), v (n), theta (p), a (n), u (m)] so that the first 2n + p slots are
  // x and the last n + m are p̄ (compile-time slots: the compiler folds the seeds' zeros).
  constexpr int kSize = 3 * n + m + p;
  constexpr int kX = 2 * n + p, kP = n + m;
  using Jet = ceres::Jet<double, kSize>;
  Jet js[n], jv[n], ja[n], ju[m], jtheta[p], jr[n], jz[l];
  for (int i = 0; i < n; ++i) js[i] = Jet(s[i], i);
  for (int i = 0; i < n; ++i) jv[i] = Jet(v[i], n + i);
  for (int i = 0; i < p; ++i) jtheta[i] = Jet(theta[i], 2 * n + i);
  for (int i = 0; i < n; ++i) ja[i] = Jet(a[i], 2 * n + p + i);
  for (int i = 0; i < m; ++i) ju[i] = Jet(u[i], 3 * n + p + i);
  model.EquationsOfMotion(js, jv, ja, ju, jtheta, t, jr);
  model.Measurements(js, jv, ja, ju, jtheta, t, jz);
  using RowX = Eigen::Map<Eigen::Matrix<double, 1, kX>>;
  using RowP = Eigen::Map<Eigen::Matrix<double, 1, kP>>;
  using RowA = Eigen::Map<Eigen::Matrix<double, 1, n>>;
  using RowU = Eigen::Map<Eigen::Matrix<double, 1, m>>;
  const int x_stride = out.stride > 0 ? out.stride : kX;
  const int pbar_stride = out.stride > 0 ? out.stride : kP;
  const int value_stride = out.stride > 0 ? out.stride : 1;
  for (int i = 0; i < n; ++i) {
    out.equations[i * value_stride] = jr[i].a;
    RowX(out.J_r_x + i * x_stride) = jr[i].v.template head<kX>().transpose();
  }
  for (int i = 0; i < l; ++i) {
    out.measurements[i * value_stride] = jz[i].a;
    RowX(out.J_z_x + i * x_stride) = jz[i].v.template head<kX>().transpose();
  }
  if (out.inputs_first) {
    for (int i = 0; i < n; ++i) {
      RowU(out.J_r_pbar + i * pbar_stride) = jr[i].v.template tail<m>().transpose();
      RowA(out.J_r_pbar + i * pbar_stride + m) = jr[i].v.template segment<n>(kX).transpose();
    }
    for (int i = 0; i < l; ++i) {
      RowU(out.J_z_pbar + i * pbar_stride) = jz[i].v.template tail<m>().transpose();
      RowA(out.J_z_pbar + i * pbar_stride + m) = jz[i].v.template segment<n>(kX).transpose();
    }
  } else {
    for (int i = 0; i < n; ++i) {
      RowP(out.J_r_pbar + i * pbar_stride) = jr[i].v.template tail<kP>().transpose();
    }
    for (int i = 0; i < l; ++i) {
      RowP(out.J_z_pbar + i * pbar_stride) = jz[i].v.template tail<kP>().transpose();
    }
  }
}

}  // namespace dynid::models

#endif  // DYNID_MODELS_MODEL_LINEARIZATION_HXX_
