#include "dynid/solvers/derivative_accuracy.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include <glog/logging.h>

#include "dynid/data/signal.h"

namespace dynid::solvers {
namespace {

double InteriorRms(const Eigen::VectorXd& estimate, const Eigen::VectorXd& truth, int margin) {
  const int n = static_cast<int>(truth.size()) - 2 * margin;
  CHECK_GT(n, 0) << "margin too large";
  return std::sqrt((estimate.segment(margin, n) - truth.segment(margin, n)).squaredNorm() / n);
}

bool SmoothWithFittedNvr(const Eigen::VectorXd& y, double ts, const NvrFitOptions& fit_options,
                         IrwSmootherResult* result, std::string* error) {
  NvrFitSummary fit;
  if (!FitNvr(y, fit_options, &fit, error)) return false;
  IrwSmootherOptions options;
  options.model = fit_options.model;
  options.nvr = fit.nvr;
  options.compute_standard_deviations = false;
  return SmoothIrw(y, ts, options, result, error);
}

}  // namespace

std::vector<double> LogGrid(double low_hz, double high_hz, int per_decade) {
  std::vector<double> grid;
  const int count = static_cast<int>(std::ceil(std::log10(high_hz / low_hz) * per_decade));
  for (int i = 0; i <= count; ++i) grid.push_back(low_hz * std::pow(10.0, double(i) / per_decade));
  return grid;
}

bool IrwDerivativeErrors(const AccuracyCase& data, const NvrFitOptions& fit, bool twice,
                         DerivativeErrors* errors, std::string* error) {
  const double ts = 1.0 / data.sample_rate_hz;
  IrwSmootherResult result;
  if (!SmoothWithFittedNvr(data.measured, ts, fit, &result, error)) return false;
  char gamma[32] = "";
  if (fit.criterion == NvrCriterion::kGcv) std::snprintf(gamma, sizeof(gamma), ", gamma %.2g", fit.gcv_gamma);
  errors->method = std::string(fit.model == IrwModel::kIrw1 ? "IRWSM1" : "IRWSM2") +
                   (twice ? "x2" : "") + " (" + NvrCriterionName(fit.criterion) + gamma + ")";
  errors->velocity_rms = InteriorRms(result.velocity, data.velocity, data.margin);
  errors->velocity_setting = result.nvr;
  if (!twice) {
    errors->acceleration_rms = InteriorRms(result.acceleration, data.acceleration, data.margin);
    errors->acceleration_setting = result.nvr;
    return true;
  }
  CHECK(fit.model == IrwModel::kIrw1) << "IRWSM applied twice is an IRWSM1 option";
  IrwSmootherResult second;
  if (!SmoothWithFittedNvr(result.velocity, ts, fit, &second, error)) return false;
  errors->acceleration_rms = InteriorRms(second.velocity, data.acceleration, data.margin);
  errors->acceleration_setting = second.nvr;
  return true;
}

bool BestButterworthErrors(const AccuracyCase& data, const std::vector<double>& cutoffs_hz,
                           DerivativeErrors* errors, std::string* error) {
  const double ts = 1.0 / data.sample_rate_hz;
  errors->method = "Butterworth4 filtfilt + central differences (best cut-off)";
  errors->velocity_rms = std::numeric_limits<double>::infinity();
  errors->acceleration_rms = std::numeric_limits<double>::infinity();
  for (double cutoff : cutoffs_hz) {
    if (cutoff >= 0.5 * data.sample_rate_hz) continue;
    data::SecondOrderSections sos;
    if (!data::DesignButterworthLowPass(4, cutoff, data.sample_rate_hz, &sos, error)) return false;
    Eigen::VectorXd filtered;
    if (!data::FiltFilt(sos, data.measured, &filtered, error)) return false;
    const double velocity = InteriorRms(data::CentralDifference(filtered, ts), data.velocity,
                                        data.margin);
    const double acceleration = InteriorRms(data::CentralSecondDifference(filtered, ts),
                                            data.acceleration, data.margin);
    if (velocity < errors->velocity_rms) {
      errors->velocity_rms = velocity;
      errors->velocity_setting = cutoff;
    }
    if (acceleration < errors->acceleration_rms) {
      errors->acceleration_rms = acceleration;
      errors->acceleration_setting = cutoff;
    }
  }
  if (!std::isfinite(errors->velocity_rms)) {
    *error = "no usable cut-off below Nyquist in the grid";
    return false;
  }
  return true;
}

}  // namespace dynid::solvers
