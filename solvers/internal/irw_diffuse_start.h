// solvers/internal/irw_diffuse_start — the exact diffuse start shared by the integrated-random-
// walk Kalman filters (uniform IRWSM1/IRWSM2 in irw_smoother.cc, irregular-step IRW1/IRW2 in
// irw_irregular.cc).
//
// x(0) has a flat prior. Over the first n_x samples, in NVR-normalised units (unit measurement
// variance),
//   x(j+1) = F_j x(j) + L_j xi_j,  xi_j ~ N(0, I_R),  y(j) = x(j)[0] + e(j),  e(j) ~ N(0, 1),
// with L_j a factor of the step's process-noise covariance (R = 1 for the uniform models, whose
// noise enters the last state only; R = n_x for the sampled continuous-time models). The
// unknowns w = [x(0); xi_0; ...; xi_{n_x-2}] get the information of the n_x samples plus the
// unit prior of the xi; the n_x samples determine x(0), so the posterior of w, and through the
// linear maps x(j) = map[j] w that of x(0..n_x-1), is proper and computed in closed form (a
// small generalised least-squares problem, no "large P0"). The filter then starts from
// x̂(n_x-1 | n_x-1), and the smoother carries its correction of x(n_x-1) back to the earlier
// samples through their joint posterior (SmootherGain).
#ifndef DYNID_SOLVERS_INTERNAL_IRW_DIFFUSE_START_H_
#define DYNID_SOLVERS_INTERNAL_IRW_DIFFUSE_START_H_

#include <Eigen/Core>
#include <Eigen/LU>
#include <array>

namespace dynid::solvers::internal {

template <int NX, int R>
struct IrwDiffuseStart {
  static constexpr int kW = NX + (NX - 1) * R;
  using Mat = Eigen::Matrix<double, NX, NX>;
  using NoiseFactor = Eigen::Matrix<double, NX, R>;
  using MatW = Eigen::Matrix<double, kW, kW>;
  using MapW = Eigen::Matrix<double, NX, kW>;

  MapW map[NX];                                      // x(j) = map[j] * w
  MatW covariance;                                   // posterior covariance of w (normalised units)
  Eigen::Matrix<double, kW, NX> information_from_y;  // w_hat = information_from_y * y(0..NX-1)
  Mat start_inverse;                                 // P(NX-1 | NX-1)^{-1}

  // transitions[j] = F_j and noise_factors[j] = L_j for the steps j -> j+1, j = 0..NX-2.
  IrwDiffuseStart(const std::array<Mat, NX - 1>& transitions,
                  const std::array<NoiseFactor, NX - 1>& noise_factors) {
    map[0].setZero();
    map[0].template leftCols<NX>().setIdentity();
    for (int j = 0; j + 1 < NX; ++j) {
      map[j + 1] = transitions[j] * map[j];
      map[j + 1].template block<NX, R>(0, NX + j * R) += noise_factors[j];
    }
    MatW information = MatW::Zero();
    for (int j = NX; j < kW; ++j) information(j, j) = 1.0;
    Eigen::Matrix<double, kW, NX> observation_rows;
    for (int j = 0; j < NX; ++j) {
      const Eigen::Matrix<double, 1, kW> row = map[j].row(0);
      information += row.transpose() * row;
      observation_rows.col(j) = row.transpose();
    }
    covariance = information.inverse();
    information_from_y = covariance * observation_rows;
    start_inverse = Covariance(NX - 1, NX - 1).inverse();
  }

  // Cov(x(i), x(j) | y(0..NX-1)).
  Mat Covariance(int i, int j) const { return map[i] * covariance * map[j].transpose(); }

  // Cov(x(j), x(NX-1)) P(NX-1 | NX-1)^{-1}: x̂(j|N) = x̂(j|NX-1) + gain (x̂(NX-1|N) −
  // x̂(NX-1|NX-1)), and P(j|N) = P(j|NX-1) + gain (P(NX-1|N) − P(NX-1|NX-1)) gain^T. The later
  // samples reach x(j) only through x(NX-1) (Markov), hence the joint posterior.
  Mat SmootherGain(int j) const { return Covariance(j, NX - 1) * start_inverse; }

  // The smoother over the first NX-1 samples: states.col(NX-1) holds x̂(NX-1|N) and
  // filtered_last x̂(NX-1|NX-1); writes x̂(j|N) into states.col(j), j < NX-1.
  template <class States>
  void SmoothStates(const Eigen::Matrix<double, NX, 1>& filtered_last, States& states) const {
    const Eigen::Matrix<double, NX, 1> correction = states.col(NX - 1) - filtered_last;
    for (int j = 0; j < NX - 1; ++j) states.col(j) += SmootherGain(j) * correction;
  }

  // From P(NX-1|N) = smoothed_last: smoothed[j] = P(j|N) and lag[j] = Cov(x(j), x(j+1) | N) for
  // j < NX-1 (arrays of NX-1 entries).
  void SmoothCovariances(const Mat& smoothed_last, Mat* smoothed, Mat* lag) const {
    const Mat delta = smoothed_last - Covariance(NX - 1, NX - 1);
    Mat gains[NX];
    gains[NX - 1].setIdentity();
    for (int j = 0; j < NX - 1; ++j) gains[j] = SmootherGain(j);
    for (int j = 0; j < NX - 1; ++j) {
      smoothed[j] = Covariance(j, j) + gains[j] * delta * gains[j].transpose();
      lag[j] = Covariance(j, j + 1) + gains[j] * delta * gains[j + 1].transpose();
    }
  }
};

}  // namespace dynid::solvers::internal

#endif  // DYNID_SOLVERS_INTERNAL_IRW_DIFFUSE_START_H_
