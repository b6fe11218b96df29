#include "dynid/solvers/irw_irregular.h"

#include <glog/logging.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <vector>

#include "dynid/solvers/internal/irw_diffuse_start.h"
#include "dynid/solvers/internal/nvr_search.h"

namespace dynid::solvers {
namespace {

// The sampled continuous-time models: the process noise of a step has full rank.
template <int NX>
using DiffuseStart = internal::IrwDiffuseStart<NX, NX>;
template <int NX>
using Mat = typename DiffuseStart<NX>::Mat;
template <int NX>
using Vec = Eigen::Matrix<double, NX, 1>;

// Everything below runs in time scaled by the nominal step, tau = t / h0, so that the steps
// eta_k = h_k / h0 are close to 1 whatever the sampling rate. The scaled state is
// z = [p, h0 v(, h0^2 a)], whose last entry is driven by white noise of intensity
// q h0^(2m+1) = NVR sigma^2: in NVR-normalised units (sigma^2 = 1) the process noise over a step
// eta is NVR Qbar(eta).

// F(eta) = exp(A eta) for the chain of integrators: entry (i, i + d) = eta^d / d!.
template <int NX>
Mat<NX> Transition(double eta) {
  Mat<NX> f = Mat<NX>::Identity();
  double term = 1.0;
  for (int d = 1; d < NX; ++d) {
    term *= eta / d;
    for (int i = 0; i + d < NX; ++i) f(i, i + d) = term;
  }
  return f;
}

// Qbar(eta) = ∫_0^eta g(u) g(u)^T du with g(u)_i = u^(NX-1-i) / (NX-1-i)!: the covariance
// gained over a step by unit-intensity white noise on the last state,
//   Qbar_ij = eta^(2NX-1-i-j) / ((2NX-1-i-j) (NX-1-i)! (NX-1-j)!).
template <int NX>
Mat<NX> NoiseCovariance(double eta) {
  double power[2 * NX];  // eta^0 .. eta^(2NX-1)
  power[0] = 1.0;
  for (int e = 1; e < 2 * NX; ++e) power[e] = power[e - 1] * eta;
  double factorial[NX] = {1.0};
  for (int i = 1; i < NX; ++i) factorial[i] = factorial[i - 1] * i;
  Mat<NX> q;
  for (int i = 0; i < NX; ++i) {
    for (int j = 0; j < NX; ++j) {
      const int e = 2 * NX - 1 - i - j;
      q(i, j) = power[e] / (e * factorial[NX - 1 - i] * factorial[NX - 1 - j]);
    }
  }
  return q;
}

// A Cholesky factor of Qbar(eta). Qbar(eta) = D Qbar(1) D with D = diag(eta^(NX-i-1/2)), so
// D chol(Qbar(1)) is one, with the relative accuracy of chol(Qbar(1)) for any step length.
template <int NX>
Mat<NX> NoiseFactor(double eta) {
  static const Mat<NX> unit_factor = NoiseCovariance<NX>(1.0).llt().matrixL();
  Vec<NX> scale;
  for (int i = 0; i < NX; ++i) scale[i] = std::pow(eta, NX - i - 0.5);
  return scale.asDiagonal() * unit_factor;
}

template <int NX>
DiffuseStart<NX> MakeDiffuseStart(const Eigen::VectorXd& eta, double nvr) {
  std::array<Mat<NX>, NX - 1> transitions;
  std::array<Mat<NX>, NX - 1> noise_factors;
  for (int j = 0; j + 1 < NX; ++j) {
    transitions[j] = Transition<NX>(eta[j]);
    noise_factors[j] = std::sqrt(nvr) * NoiseFactor<NX>(eta[j]);
  }
  return DiffuseStart<NX>(transitions, noise_factors);
}

// The Kalman filter from the diffuse start: for k >= NX, predicts x(k|k-1), P(k|k-1) over the
// step eta_{k-1}, then updates with y(k); `store(k, x(k|k), P(k|k))` is called for every
// k >= NX - 1 (the start included). Returns the innovation sums over k >= NX.
template <int NX, class Store>
IrwInnovationSums RunFilter(const Eigen::VectorXd& eta, const Eigen::VectorXd& y, double nvr,
                            const DiffuseStart<NX>& start, Store&& store) {
  const int n = static_cast<int>(y.size());
  const Vec<NX> y0 = y.template head<NX>();
  Vec<NX> x = start.map[NX - 1] * (start.information_from_y * y0);
  Mat<NX> p = start.Covariance(NX - 1, NX - 1);
  store(NX - 1, x, p);
  IrwInnovationSums sums;
  for (int k = NX; k < n; ++k) {
    const Mat<NX> f = Transition<NX>(eta[k - 1]);
    x = (f * x).eval();
    const Mat<NX> predicted = f * p * f.transpose() + nvr * NoiseCovariance<NX>(eta[k - 1]);
    const double nu = 1.0 + predicted(0, 0);
    const double eps = y[k] - x[0];
    const Vec<NX> g = predicted.col(0) / nu;
    x += g * eps;
    p = predicted - g * g.transpose() * nu;
    p = (0.5 * (p + p.transpose())).eval();
    sums.sum_log_nu += std::log(nu);
    sums.sum_squared_normalised += eps * eps / nu;
    store(k, x, p);
  }
  sums.count = n - NX;
  return sums;
}

template <int NX>
IrwInnovationSums FilterInnovationsImpl(const Eigen::VectorXd& eta, const Eigen::VectorXd& y,
                                        double nvr) {
  return RunFilter<NX>(eta, y, nvr, MakeDiffuseStart<NX>(eta, nvr),
                       [](int, const Vec<NX>&, const Mat<NX>&) {});
}

IrwInnovationSums FilterInnovations(const Eigen::VectorXd& eta, const Eigen::VectorXd& y,
                                    IrwModel model, double nvr) {
  return model == IrwModel::kIrw1 ? FilterInnovationsImpl<2>(eta, y, nvr)
                                  : FilterInnovationsImpl<3>(eta, y, nvr);
}

// IRW1's acceleration: the second derivative of the cubic Hermite interpolant of the states
// (p, u) at both ends of a step eta, a = c0 . x(start) + c1 . x(end), evaluated at the start of
// the step or, with at_end, at its end:
//   a(start) = (6 (p1 - p0) - eta (4 u0 + 2 u1)) / eta^2,
//   a(end)   = (-6 (p1 - p0) + eta (2 u0 + 4 u1)) / eta^2.
void HermiteSecondDerivative(double eta, bool at_end, Vec<2>* c0, Vec<2>* c1) {
  const double e2 = eta * eta;
  if (at_end) {
    *c0 << 6.0 / e2, 2.0 / eta;
    *c1 << -6.0 / e2, 4.0 / eta;
  } else {
    *c0 << -6.0 / e2, -4.0 / eta;
    *c1 << 6.0 / e2, -2.0 / eta;
  }
}

template <int NX>
void SmoothImpl(const Eigen::VectorXd& eta, double h0, const Eigen::VectorXd& y,
                const IrwSmootherOptions& options, IrwSmootherResult* result) {
  const int n = static_cast<int>(y.size());
  const double nvr = options.nvr;
  const bool want_std = options.compute_standard_deviations;
  const DiffuseStart<NX> start = MakeDiffuseStart<NX>(eta, nvr);

  // Forward pass: x(k|k) into the result's states (scaled units until the end), P(k|k) kept.
  result->states.resize(NX, n);
  Eigen::Map<Eigen::Matrix<double, NX, Eigen::Dynamic>> states(result->states.data(), NX, n);
  const Eigen::Matrix<double, DiffuseStart<NX>::kW, 1> w_hat =
      start.information_from_y * y.template head<NX>();
  for (int j = 0; j < NX; ++j) states.col(j) = start.map[j] * w_hat;
  const Vec<NX> start_filtered = states.col(NX - 1);
  std::vector<Mat<NX>> covariance(n);  // P(k|k), then P(k|N)
  const IrwInnovationSums sums =
      RunFilter<NX>(eta, y, nvr, start, [&](int k, const Vec<NX>& x, const Mat<NX>& p) {
        states.col(k) = x;
        covariance[k] = p;
      });
  result->sigma2 = sums.sum_squared_normalised / sums.count;
  result->log_likelihood = ConcentratedLogLikelihood(sums);
  result->nvr = nvr;
  result->sample_period = h0;

  // Backward pass (RTS): C(k) = P(k|k) F^T P(k+1|k)^{-1},
  //   x(k|N) = x(k|k) + C(k) (x(k+1|N) - F x(k|k)),
  //   P(k|N) = P(k|k) + C(k) (P(k+1|N) - P(k+1|k)) C(k)^T,  Cov(x(k), x(k+1) | N) = C(k) P(k+1|N).
  // The lag-one covariances are needed only for IRW1's acceleration standard deviation.
  const bool want_lag = want_std && NX == 2;
  std::vector<Mat<NX>> lag(want_lag ? n - 1 : 0);
  for (int k = n - 2; k >= NX - 1; --k) {
    const Mat<NX> f = Transition<NX>(eta[k]);
    const Mat<NX> filtered = covariance[k];
    const Mat<NX> predicted = f * filtered * f.transpose() + nvr * NoiseCovariance<NX>(eta[k]);
    const Mat<NX> c = predicted.llt().solve(f * filtered).transpose();
    const Vec<NX> predicted_state = f * states.col(k);
    states.col(k) += c * (states.col(k + 1) - predicted_state);
    if (!want_std) continue;
    if (want_lag) lag[k] = c * covariance[k + 1];
    covariance[k] = filtered + c * (covariance[k + 1] - predicted) * c.transpose();
  }
  // Samples before the diffuse start: through their joint posterior with x(NX-1).
  start.SmoothStates(start_filtered, states);
  if (want_std) {
    Mat<NX> smoothed[NX - 1];
    Mat<NX> start_lag[NX - 1];
    start.SmoothCovariances(covariance[NX - 1], smoothed, start_lag);
    for (int j = 0; j < NX - 1; ++j) {
      covariance[j] = smoothed[j];
      if (want_lag) lag[j] = start_lag[j];
    }
  }

  // Outputs in physical units: row r of the scaled state is h0^r times the r-th derivative.
  const double h02 = h0 * h0;
  result->position = states.row(0).transpose();
  result->velocity = states.row(1).transpose() / h0;
  result->acceleration.resize(n);
  if (NX == 3) {
    result->acceleration = states.row(NX - 1).transpose() / h02;
  } else {
    Vec<2> c0;
    Vec<2> c1;
    for (int k = 0; k < n; ++k) {
      const int step = std::min(k, n - 2);  // the step after t_k; before it at the last sample
      HermiteSecondDerivative(eta[step], k == n - 1, &c0, &c1);
      result->acceleration[k] = (c0.dot(states.col(step).template head<2>()) +
                                 c1.dot(states.col(step + 1).template head<2>())) /
                                h02;
    }
  }
  if (!want_std) {
    result->position_std.resize(0);
    result->velocity_std.resize(0);
    result->acceleration_std.resize(0);
  } else {
    const double s2 = result->sigma2;
    auto root = [](double v) { return std::sqrt(std::max(v, 0.0)); };
    result->position_std.resize(n);
    result->velocity_std.resize(n);
    result->acceleration_std.resize(n);
    for (int k = 0; k < n; ++k) {
      result->position_std[k] = root(s2 * covariance[k](0, 0));
      result->velocity_std[k] = root(s2 * covariance[k](1, 1)) / h0;
      if (NX == 3) {
        result->acceleration_std[k] = root(s2 * covariance[k](NX - 1, NX - 1)) / h02;
      } else {
        const int step = std::min(k, n - 2);
        Vec<2> c0;
        Vec<2> c1;
        HermiteSecondDerivative(eta[step], k == n - 1, &c0, &c1);
        const double variance = c0.dot(covariance[step].template topLeftCorner<2, 2>() * c0) +
                                c1.dot(covariance[step + 1].template topLeftCorner<2, 2>() * c1) +
                                2.0 * c0.dot(lag[step].template topLeftCorner<2, 2>() * c1);
        result->acceleration_std[k] = root(s2 * variance) / h02;
      }
    }
  }
  for (int r = 1; r < NX; ++r) result->states.row(r) /= std::pow(h0, r);
}

// The steps in units of the nominal step: eta_k = (t_{k+1} - t_k) / h0.
Eigen::VectorXd ScaledSteps(const Eigen::VectorXd& t, double h0) {
  const Eigen::Index n = t.size();
  return (t.tail(n - 1) - t.head(n - 1)) / h0;
}

}  // namespace

double MedianTimeStep(const Eigen::VectorXd& t) {
  CHECK_GE(t.size(), 2) << "MedianTimeStep: expected at least 2 time stamps";
  const Eigen::Index n = t.size();
  std::vector<double> steps(n - 1);
  Eigen::Map<Eigen::VectorXd>(steps.data(), n - 1) = t.tail(n - 1) - t.head(n - 1);
  const size_t middle = steps.size() / 2;
  std::nth_element(steps.begin(), steps.begin() + middle, steps.end());
  const double upper = steps[middle];
  if (steps.size() % 2 == 1) return upper;
  const double lower = *std::max_element(steps.begin(), steps.begin() + middle);
  return 0.5 * (lower + upper);
}

bool CheckIrregularSamples(const Eigen::VectorXd& t, const Eigen::VectorXd& y, int min_samples,
                           std::string* error) {
  CHECK(error != nullptr);
  std::ostringstream out;
  out.precision(10);
  if (t.size() != y.size()) {
    out << "expected one time stamp per sample, got " << t.size() << " time stamps and " << y.size()
        << " samples";
  } else if (y.size() < min_samples) {
    out << "expected at least " << min_samples << " samples, got " << y.size();
  } else {
    for (Eigen::Index k = 0; k < t.size(); ++k) {
      if (!std::isfinite(t[k])) {
        out << "time stamp " << k << " is NaN or Inf";
        break;
      }
      if (!std::isfinite(y[k])) {
        out << "the signal contains NaN or Inf (sample " << k << ")";
        break;
      }
      if (k > 0 && !(t[k] > t[k - 1])) {
        out << "time stamps not strictly increasing at sample " << k << " (t = " << t[k]
            << " s after " << t[k - 1] << " s)";
        break;
      }
    }
  }
  *error = out.str();
  return error->empty();
}

bool SmoothIrwAtTimes(const Eigen::VectorXd& t, const Eigen::VectorXd& y,
                      const IrwSmootherOptions& options, IrwSmootherResult* result,
                      std::string* error) {
  CHECK(result != nullptr && error != nullptr);
  if (!options.IsValid(error)) return false;
  if (!CheckIrregularSamples(t, y, IrwStateSize(options.model) + 2, error)) {
    *error = "IRW smoothing: " + *error;
    return false;
  }
  const double h0 = MedianTimeStep(t);
  const Eigen::VectorXd eta = ScaledSteps(t, h0);
  if (options.model == IrwModel::kIrw1) {
    SmoothImpl<2>(eta, h0, y, options, result);
  } else {
    SmoothImpl<3>(eta, h0, y, options, result);
  }
  return true;
}

IrwInnovationSums IrwFilterInnovationsAtTimes(const Eigen::VectorXd& t, const Eigen::VectorXd& y,
                                              IrwModel model, double nvr) {
  std::string error;
  CHECK(CheckIrregularSamples(t, y, IrwStateSize(model) + 2, &error))
      << "IrwFilterInnovationsAtTimes: " << error;
  CHECK(nvr > 0.0 && std::isfinite(nvr)) << "IrwFilterInnovationsAtTimes: nvr " << nvr;
  return FilterInnovations(ScaledSteps(t, MedianTimeStep(t)), y, model, nvr);
}

double IrwLogLikelihoodAtTimes(const Eigen::VectorXd& t, const Eigen::VectorXd& y, IrwModel model,
                               double nvr) {
  return ConcentratedLogLikelihood(IrwFilterInnovationsAtTimes(t, y, model, nvr));
}

bool FitNvrAtTimes(const Eigen::VectorXd& t, const Eigen::VectorXd& y, const NvrFitOptions& options,
                   NvrFitSummary* summary, std::string* error) {
  CHECK(summary != nullptr && error != nullptr);
  if (!options.IsValid(error)) return false;
  if (options.criterion != NvrCriterion::kMaximumLikelihood) {
    *error = std::string("NVR criterion ") + NvrCriterionName(options.criterion) +
             " is not available on irregular time stamps (maximum likelihood only: ml)";
    return false;
  }
  if (!CheckIrregularSamples(t, y, IrwStateSize(options.model) + 3, error)) {
    *error = "NVR fitting: " + *error;
    return false;
  }
  const Eigen::VectorXd eta = ScaledSteps(t, MedianTimeStep(t));
  auto cost = [&](double log10_nvr) {
    const double nvr = std::pow(10.0, log10_nvr);
    return -ConcentratedLogLikelihood(FilterInnovations(eta, y, options.model, nvr));
  };
  const double f_min = internal::MinimizeOverLog10Nvr(cost, options, summary);
  summary->criterion_value = -f_min;
  summary->log_likelihood = -f_min;
  return true;
}

bool SmoothColumnsAtTimesWithFittedNvr(const Eigen::VectorXd& t, const Eigen::MatrixXd& columns,
                                       const NvrFitOptions& fit_options,
                                       bool compute_standard_deviations,
                                       const std::vector<std::string>& names,
                                       std::vector<NvrFitSummary>* fits,
                                       std::vector<IrwSmootherResult>* results, std::string* error,
                                       int num_threads) {
  return internal::FitThenSmoothColumns(columns, &t, 0.0, fit_options, compute_standard_deviations,
                                        names, fits, results, error, num_threads);
}

}  // namespace dynid::solvers
