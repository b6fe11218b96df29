#include "dynid/solvers/irw_smoother.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/StdVector>
#include <glog/logging.h>

#include "dynid/solvers/internal/irw_diffuse_start.h"
#include "dynid/solvers/internal/nvr_search.h"

namespace dynid::solvers {
namespace {

template <int NX>
using Mat = Eigen::Matrix<double, NX, NX>;
template <int NX>
using Vec = Eigen::Matrix<double, NX, 1>;
template <class T>
using AlignedVector = std::vector<T, Eigen::aligned_allocator<T>>;

template <int NX>
Mat<NX> TransitionMatrix() {
  Mat<NX> a = Mat<NX>::Identity();
  for (int i = 0; i + 1 < NX; ++i) a(i, i + 1) = 1.0;
  return a;
}

// Two covariance matrices agree to rounding. The recursion subtracts nearly equal terms of the
// size of the predicted covariance, so its rounding noise is relative to that scale, element by
// element: |a_ij - b_ij| <= c * sqrt(scale_ii scale_jj). Per element, because the entries of the
// higher increments are many orders of magnitude below the position variance (a test against
// the largest entry would freeze them too early); against the predicted scale, because a test
// relative to an element that results from cancellation never settles (it cycles in its last
// bits, e.g. the IRWSM1 cross term at large NVR).
template <int NX>
bool Settled(const Mat<NX>& a, const Mat<NX>& b, const Mat<NX>& scale) {
  for (int i = 0; i < NX; ++i) {
    for (int j = 0; j <= i; ++j) {
      const double tolerance = 4e-15 * std::sqrt(std::abs(scale(i, i) * scale(j, j)));
      if (std::abs(a(i, j) - b(i, j)) > tolerance) return false;
    }
  }
  return true;
}

// The data-independent part of the filter and smoother: covariances, gains and RTS gains.
// Everything is indexed by the sample k; entries stop changing (to rounding) once the
// Riccati recursion has converged, so only the first `converged_index + 1` are stored and
// later samples reuse the last entry. The recursion is exact: an entry is shared only when
// consecutive updates no longer change any element by more than a few ulps.
template <int NX>
struct IrwRiccati {
  static constexpr int kFirst = NX - 1;  // first sample with a proper filtered posterior
  double nvr = 0.0;
  int num_samples = 0;
  int converged_index = 0;         // k from which all quantities are constant
  AlignedVector<Mat<NX>> filtered;  // P(k|k), k >= kFirst
  AlignedVector<Mat<NX>> rts_gain;  // C(k) = P(k|k) A^T P(k+1|k)^{-1}, k >= kFirst
  AlignedVector<Vec<NX>> gain;      // g(k), k >= NX
  std::vector<double> nu;           // nu(k) = 1 + P(k|k-1)(0,0), k >= NX

  int Index(int k) const { return std::min(k, converged_index) - kFirst; }

  // RTS gains are only needed by the smoother, not by the likelihood.
  void Compute(double nvr_in, int n, const Mat<NX>& first_filtered, bool with_rts_gains) {
    nvr = nvr_in;
    num_samples = n;
    const Mat<NX> a = TransitionMatrix<NX>();
    filtered.assign(1, first_filtered);
    gain.assign(1, Vec<NX>::Zero());  // placeholder for index kFirst (no update there)
    nu.assign(1, 1.0);
    rts_gain.clear();
    const size_t expected = static_cast<size_t>(std::min(n, 2048));
    filtered.reserve(expected);
    gain.reserve(expected);
    nu.reserve(expected);
    if (with_rts_gains) rts_gain.reserve(expected);
    converged_index = n - 1;
    for (int k = NX; k < n; ++k) {
      const Mat<NX>& previous = filtered.back();
      Mat<NX> predicted = a * previous * a.transpose();
      predicted(NX - 1, NX - 1) += nvr;
      if (with_rts_gains) rts_gain.push_back(previous * a.transpose() * predicted.inverse());
      const double nu_k = 1.0 + predicted(0, 0);
      const Vec<NX> g = predicted.col(0) / nu_k;
      Mat<NX> updated = predicted - g * g.transpose() * nu_k;
      updated = 0.5 * (updated + updated.transpose());
      const bool settled = Settled<NX>(updated, previous, predicted) &&
                           std::abs(nu_k - nu.back()) <= 4e-15 * nu_k;
      filtered.push_back(updated);
      gain.push_back(g);
      nu.push_back(nu_k);
      if (settled && k > NX + 1) {
        converged_index = k;
        break;
      }
    }
    if (with_rts_gains) {  // the RTS gain at the last stored index, the steady one
      Mat<NX> predicted = a * filtered.back() * a.transpose();
      predicted(NX - 1, NX - 1) += nvr;
      rts_gain.push_back(filtered.back() * a.transpose() * predicted.inverse());
    }
  }
};

// Exact diffuse start (internal/irw_diffuse_start.h) of the uniform models: every step has the
// transition A and the noise sqrt(nvr) G, G = [0 .. 0 1]^T.
template <int NX>
struct DiffuseStart : internal::IrwDiffuseStart<NX, 1> {
  explicit DiffuseStart(double nvr)
      : internal::IrwDiffuseStart<NX, 1>(Filled(TransitionMatrix<NX>()),
                                         Filled<Vec<NX>>(std::sqrt(nvr) * Vec<NX>::Unit(NX - 1))) {}

 private:
  template <class T>
  static std::array<T, NX - 1> Filled(const T& value) {
    std::array<T, NX - 1> values;
    values.fill(value);
    return values;
  }
};

// The smoothed covariances P(k|N) (and the lag-one covariance Cov(∇x(k), ∇x(k+1) | N) used for
// centred IRWSM1 velocities) are data-independent. Far from both ends they are constant, so
// they are stored as a head (k below the filter's convergence index), one middle value, and a
// tail (from the point where the backward recursion has settled to the end): O(1) memory in N
// for long records, while every sample still gets its exact value (to rounding).
template <int NX>
struct SmoothedCovariance {
  int head_end = 0;    // k < head_end: head[k]
  int tail_begin = 0;  // k >= tail_begin: tail[k - tail_begin]; middle in between
  AlignedVector<Mat<NX>> head, tail;
  std::vector<double> head_lag, tail_lag;
  Mat<NX> middle = Mat<NX>::Zero();
  double middle_lag = 0.0;

  const Mat<NX>& At(int k) const {
    if (k < head_end) return head[k];
    if (k >= tail_begin) return tail[k - tail_begin];
    return middle;
  }
  double LagOne11(int k) const {
    if (k < head_end) return head_lag[k];
    if (k >= tail_begin) return tail_lag[k - tail_begin];
    return middle_lag;
  }

  void Compute(const IrwRiccati<NX>& riccati, const DiffuseStart<NX>& start, int n) {
    const Mat<NX> a = TransitionMatrix<NX>();
    const double nvr = riccati.nvr;
    // One RTS step: S(k) = P(k|k) + C(k) (S(k+1) - P(k+1|k)) C(k)^T; lag-one = C(k) S(k+1).
    auto step = [&](int k, const Mat<NX>& next, Mat<NX>* current, double* lag) {
      const int i = riccati.Index(k);
      const Mat<NX>& filtered = riccati.filtered[i];
      const Mat<NX>& c = riccati.rts_gain[i];
      Mat<NX> predicted = a * filtered * a.transpose();
      predicted(NX - 1, NX - 1) += nvr;
      *current = filtered + c * (next - predicted) * c.transpose();
      *lag = (c * next)(1, 1);
    };
    const int steady_from = riccati.converged_index;  // coefficients constant for k >= this
    Mat<NX> steady_predicted = a * riccati.filtered.back() * a.transpose();
    steady_predicted(NX - 1, NX - 1) += nvr;
    AlignedVector<Mat<NX>> reversed = {riccati.filtered[riccati.Index(n - 1)]};
    std::vector<double> reversed_lag = {0.0};
    int k = n - 2;
    bool settled = false;
    for (; k >= NX - 1; --k) {
      Mat<NX> current;
      double lag = 0.0;
      step(k, reversed.back(), &current, &lag);
      if (k >= steady_from && Settled<NX>(current, reversed.back(), steady_predicted)) {
        middle = current;
        middle_lag = lag;
        settled = true;
        break;
      }
      // lag belongs to sample k (pairs k, k+1).
      reversed.push_back(current);
      reversed_lag.push_back(lag);
    }
    // reversed[j] is sample n-1-j; its lag entry is Cov(k, k+1) for k = n-1-j (0 for n-1).
    tail_begin = n - static_cast<int>(reversed.size());
    tail.assign(reversed.rbegin(), reversed.rend());
    tail_lag.assign(reversed_lag.rbegin(), reversed_lag.rend());
    Mat<NX> next;
    if (settled) {
      head_end = std::min(steady_from, tail_begin);
      next = middle;
    } else {
      head_end = 0;
      next = tail.front();
    }
    // Head: from just below the middle (or the tail) down to the diffuse start.
    head.resize(std::max(head_end, 0));
    head_lag.assign(head.size(), 0.0);
    for (int j = head_end - 1; j >= NX - 1; --j) {
      step(j, next, &head[j], &head_lag[j]);
      next = head[j];
    }
    if (head_end < NX - 1) {
      // Very short record: move everything into the head so the diffuse samples have slots.
      AlignedVector<Mat<NX>> all(n);
      std::vector<double> all_lag(n, 0.0);
      for (int j = NX - 1; j < n; ++j) {
        all[j] = At(j);
        all_lag[j] = LagOne11(j);
      }
      head = std::move(all);
      head_lag = std::move(all_lag);
      head_end = n;
      tail_begin = n;
      tail.clear();
      tail_lag.clear();
    }
    // Samples before the diffuse start, through their joint posterior with x(NX-1).
    Mat<NX> smoothed[NX - 1];
    Mat<NX> lag[NX - 1];
    start.SmoothCovariances(At(NX - 1), smoothed, lag);
    for (int j = 0; j < NX - 1; ++j) {
      head[j] = smoothed[j];
      head_lag[j] = lag[j](1, 1);
    }
  }

  // sum_k P(k|N)(0, 0): the trace of the smoother's hat matrix (NVR-normalised units).
  double PositionVarianceSum(int n) const {
    double sum = 0.0;
    for (int k = 0; k < head_end; ++k) sum += head[k](0, 0);
    for (const Mat<NX>& m : tail) sum += m(0, 0);
    sum += static_cast<double>(tail_begin - head_end) * middle(0, 0);
    CHECK_EQ(static_cast<int>(head.size() + tail.size()) + tail_begin - head_end, n);
    return sum;
  }
};

template <int NX>
void FilterInnovationsImpl(const Eigen::VectorXd& y, double nvr, IrwInnovationSums* sums) {
  const int n = static_cast<int>(y.size());
  const DiffuseStart<NX> start(nvr);
  IrwRiccati<NX> riccati;
  riccati.Compute(nvr, n, start.Covariance(NX - 1, NX - 1), /*with_rts_gains=*/false);
  const Eigen::Matrix<double, NX, 1> y0 = y.template head<NX>();
  Vec<NX> x = start.map[NX - 1] * (start.information_from_y * y0);
  double sum_log_nu = 0.0;
  double sum_squared = 0.0;
  const int converged = std::min(riccati.converged_index, n - 1);
  int k = NX;
  for (; k <= converged; ++k) {
    const int i = riccati.Index(k);
    // x(k|k-1) = A x(k-1|k-1), written out for the upper-bidiagonal A.
    for (int r = 0; r + 1 < NX; ++r) x[r] += x[r + 1];
    const double eps = y[k] - x[0];
    const double nu = riccati.nu[i];
    sum_log_nu += std::log(nu);
    sum_squared += eps * eps / nu;
    x += riccati.gain[i] * eps;
  }
  if (k < n) {
    const int i = riccati.Index(k);
    const Vec<NX> g = riccati.gain[i];
    const double nu = riccati.nu[i];
    double steady_squared = 0.0;
    for (; k < n; ++k) {
      for (int r = 0; r + 1 < NX; ++r) x[r] += x[r + 1];
      const double eps = y[k] - x[0];
      steady_squared += eps * eps;
      x += g * eps;
    }
    const int steady_count = n - 1 - converged;
    sum_log_nu += steady_count * std::log(nu);
    sum_squared += steady_squared / nu;
  }
  sums->sum_log_nu = sum_log_nu;
  sums->sum_squared_normalised = sum_squared;
  sums->count = n - NX;
}

template <int NX>
void SmoothImpl(const Eigen::VectorXd& y, double ts, const IrwSmootherOptions& options,
                IrwSmootherResult* result) {
  const int n = static_cast<int>(y.size());
  const double nvr = options.nvr;
  const bool want_std = options.compute_standard_deviations;
  const DiffuseStart<NX> start(nvr);
  IrwRiccati<NX> riccati;
  const Mat<NX> p_start = start.Covariance(NX - 1, NX - 1);
  riccati.Compute(nvr, n, p_start, /*with_rts_gains=*/true);

  // Forward pass: filtered states x(k|k) for k >= NX-1, one column per sample, written in
  // place into the result (no copy, and no new pages when a result object is reused).
  result->states.resize(NX, n);
  Eigen::Map<Eigen::Matrix<double, NX, Eigen::Dynamic>> states(result->states.data(), NX, n);
  const Eigen::Matrix<double, NX, 1> y0 = y.template head<NX>();
  const Eigen::Matrix<double, 2 * NX - 1, 1> w_hat = start.information_from_y * y0;
  for (int j = 0; j < NX; ++j) states.col(j) = start.map[j] * w_hat;
  const Vec<NX> start_filtered = states.col(NX - 1);
  double sum_log_nu = 0.0;
  double sum_squared = 0.0;
  {
    Vec<NX> x = start_filtered;
    for (int k = NX; k < n; ++k) {
      const int i = riccati.Index(k);
      for (int r = 0; r + 1 < NX; ++r) x[r] += x[r + 1];
      const double eps = y[k] - x[0];
      const double nu = riccati.nu[i];
      sum_log_nu += std::log(nu);
      sum_squared += eps * eps / nu;
      x += riccati.gain[i] * eps;
      states.col(k) = x;
    }
  }
  IrwInnovationSums sums{sum_log_nu, sum_squared, n - NX};
  result->sigma2 = sum_squared / (n - NX);
  result->log_likelihood = ConcentratedLogLikelihood(sums);
  result->nvr = nvr;
  result->sample_period = ts;

  // Backward pass (RTS): x(k|N) = x(k|k) + C(k) (x(k+1|N) - A x(k|k)).
  for (int k = n - 2; k >= NX - 1; --k) {
    const Mat<NX>& c = riccati.rts_gain[riccati.Index(k)];
    Vec<NX> predicted = states.col(k);
    for (int r = 0; r + 1 < NX; ++r) predicted[r] += predicted[r + 1];
    states.col(k) += c * (states.col(k + 1) - predicted);
  }
  // Samples before the diffuse start: through their joint posterior with x(NX-1).
  start.SmoothStates(start_filtered, states);
  SmoothedCovariance<NX> smoothed_cov;
  if (want_std) smoothed_cov.Compute(riccati, start, n);

  result->position = states.row(0).transpose();
  result->velocity.resize(n);
  result->acceleration.resize(n);
  const double ts2 = ts * ts;
  if (NX == 2) {
    for (int k = 1; k < n; ++k) {
      result->velocity[k] = 0.5 * (states(1, k - 1) + states(1, k)) / ts;
      result->acceleration[k] = (states(1, k) - states(1, k - 1)) / ts2;
    }
    result->velocity[0] = states(1, 0) / ts;
    result->acceleration[0] = n > 1 ? result->acceleration[1] : 0.0;
  } else {
    // Velocity and acceleration at k from x(k-1): (∇x + ∇²x/2) and ∇²x.
    for (int k = 1; k < n; ++k) {
      result->velocity[k] = (states(1, k - 1) + 0.5 * states(NX - 1, k - 1)) / ts;
      result->acceleration[k] = states(NX - 1, k - 1) / ts2;
    }
    // At k = 0, x(-1) = A^{-1}(x(0) - G eta): velocity row [0, 1, -1/2], acceleration [0, 0, 1].
    result->velocity[0] = (states(1, 0) - 0.5 * states(NX - 1, 0)) / ts;
    result->acceleration[0] = states(NX - 1, 0) / ts2;
  }

  if (!want_std) {
    result->position_std.resize(0);
    result->velocity_std.resize(0);
    result->acceleration_std.resize(0);
    return;
  }
  const double s2 = result->sigma2;
  result->position_std.resize(n);
  result->velocity_std.resize(n);
  result->acceleration_std.resize(n);
  for (int k = 0; k < n; ++k) {
    result->position_std[k] = std::sqrt(s2 * smoothed_cov.At(k)(0, 0));
  }
  auto root = [](double v) { return std::sqrt(std::max(v, 0.0)); };
  if (NX == 2) {
    for (int k = 1; k < n; ++k) {
      const double p0 = smoothed_cov.At(k - 1)(1, 1);
      const double p1 = smoothed_cov.At(k)(1, 1);
      const double cross = smoothed_cov.LagOne11(k - 1);
      result->velocity_std[k] = root(s2 * 0.25 * (p0 + p1 + 2.0 * cross)) / ts;
      result->acceleration_std[k] = root(s2 * (p0 + p1 - 2.0 * cross)) / ts2;
    }
    result->velocity_std[0] = root(s2 * (smoothed_cov.At(0)(1, 1) + 0.25 * nvr)) / ts;
    result->acceleration_std[0] = n > 1 ? result->acceleration_std[1] : 0.0;
  } else {
    Vec<NX> cv = Vec<NX>::Zero();
    cv[1] = 1.0;
    cv[NX - 1] = 0.5;
    for (int k = 1; k < n; ++k) {
      const Mat<NX>& p = smoothed_cov.At(k - 1);
      result->velocity_std[k] = root(s2 * cv.dot(p * cv)) / ts;
      result->acceleration_std[k] = root(s2 * p(NX - 1, NX - 1)) / ts2;
    }
    Vec<NX> cv0 = Vec<NX>::Zero();
    cv0[1] = 1.0;
    cv0[NX - 1] = -0.5;
    result->velocity_std[0] = root(s2 * (cv0.dot(smoothed_cov.At(0) * cv0) + 0.25 * nvr)) / ts;
    result->acceleration_std[0] = root(s2 * (smoothed_cov.At(0)(NX - 1, NX - 1) + nvr)) / ts2;
  }
}

template <int NX>
double HatMatrixTraceImpl(double nvr, int n) {
  const DiffuseStart<NX> start(nvr);
  IrwRiccati<NX> riccati;
  riccati.Compute(nvr, n, start.Covariance(NX - 1, NX - 1), /*with_rts_gains=*/true);
  SmoothedCovariance<NX> covariance;
  covariance.Compute(riccati, start, n);
  return covariance.PositionVarianceSum(n);
}

}  // namespace

double IrwHatMatrixTrace(IrwModel model, double nvr, int num_samples) {
  CHECK_GE(num_samples, IrwStateSize(model) + 2);
  CHECK_GT(nvr, 0.0);
  return model == IrwModel::kIrw1 ? HatMatrixTraceImpl<2>(nvr, num_samples)
                                  : HatMatrixTraceImpl<3>(nvr, num_samples);
}

bool ParseIrwModel(const std::string& text, IrwModel* model, std::string* error) {
  if (text == "irw1") {
    *model = IrwModel::kIrw1;
    return true;
  }
  if (text == "irw2") {
    *model = IrwModel::kIrw2;
    return true;
  }
  *error = "unknown IRW model '" + text + "' (expected irw1 or irw2)";
  return false;
}

const char* IrwModelName(IrwModel model) {
  return model == IrwModel::kIrw1 ? "irw1" : "irw2";
}

int IrwStateSize(IrwModel model) { return model == IrwModel::kIrw1 ? 2 : 3; }

bool IrwSmootherOptions::IsValid(std::string* why) const {
  if (!(nvr > 0.0) || !std::isfinite(nvr)) {
    *why = "nvr must be a positive finite number, got " + std::to_string(nvr);
    return false;
  }
  return true;
}

double ConcentratedLogLikelihood(const IrwInnovationSums& sums) {
  const double count = sums.count;
  const double sigma2 = sums.sum_squared_normalised / count;
  return -0.5 * sums.sum_log_nu - 0.5 * count * std::log(sigma2) -
         0.5 * count * (1.0 + std::log(2.0 * M_PI));
}

IrwInnovationSums IrwFilterInnovations(const Eigen::VectorXd& y, IrwModel model, double nvr) {
  const int nx = IrwStateSize(model);
  CHECK_GE(y.size(), nx + 2) << "IrwFilterInnovations: expected at least " << nx + 2
                             << " samples, got " << y.size();
  IrwInnovationSums sums;
  if (model == IrwModel::kIrw1) {
    FilterInnovationsImpl<2>(y, nvr, &sums);
  } else {
    FilterInnovationsImpl<3>(y, nvr, &sums);
  }
  return sums;
}

bool SmoothIrw(const Eigen::VectorXd& y, double sample_period_s,
               const IrwSmootherOptions& options, IrwSmootherResult* result,
               std::string* error) {
  CHECK(result != nullptr && error != nullptr);
  if (!options.IsValid(error)) return false;
  if (!(sample_period_s > 0.0) || !std::isfinite(sample_period_s)) {
    *error = "sample period must be positive, got " + std::to_string(sample_period_s);
    return false;
  }
  const int nx = IrwStateSize(options.model);
  if (y.size() < nx + 2) {
    *error = "IRW smoothing needs at least " + std::to_string(nx + 2) + " samples, got " +
             std::to_string(y.size());
    return false;
  }
  if (!y.allFinite()) {
    *error = "the signal contains NaN or Inf";
    return false;
  }
  if (options.model == IrwModel::kIrw1) {
    SmoothImpl<2>(y, sample_period_s, options, result);
  } else {
    SmoothImpl<3>(y, sample_period_s, options, result);
  }
  return true;
}

bool SmoothIrwColumns(const Eigen::MatrixXd& columns, double sample_period_s,
                      const std::vector<IrwSmootherOptions>& options,
                      std::vector<IrwSmootherResult>* results, std::string* error,
                      int num_threads) {
  const int channels = static_cast<int>(columns.cols());
  CHECK_EQ(static_cast<int>(options.size()), channels)
      << "SmoothIrwColumns: expected one options entry per column";
  return internal::SmoothEachColumn(
      channels, num_threads,
      [&](int c, IrwSmootherResult* result, std::string* column_error) {
        return SmoothIrw(columns.col(c), sample_period_s, options[c], result, column_error);
      },
      results, error);
}

}  // namespace dynid::solvers
