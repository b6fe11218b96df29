#include "solvers/residual_analysis.h"

#include <glog/logging.h>

#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

namespace dynid::solvers {
namespace {

// Regularised lower incomplete gamma P(a, x) by its series (x < a + 1) and the upper Q(a, x)
// by Lentz's continued fraction otherwise (Numerical Recipes §6.2).
double GammaSeriesP(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int n = 1; n < 10000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::abs(term) < std::abs(sum) * 1e-16) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

double GammaContinuedFractionQ(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

// Continued fraction of the incomplete beta function (Numerical Recipes §6.4, modified Lentz).
double BetaContinuedFraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::abs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m < 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + aa * d;
    if (std::abs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + aa * d;
    if (std::abs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < 1e-16) break;
  }
  return h;
}

// Regularised incomplete beta I_x(a, b).
double RegularisedBeta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry
  // I_x(a, b) = 1 − I_{1−x}(b, a) otherwise.
  if (x < (a + 1.0) / (a + b + 2.0))
    return std::exp(log_front) * BetaContinuedFraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * BetaContinuedFraction(b, a, 1.0 - x) / b;
}

}  // namespace

double FisherSurvival(double statistic, int dof1, int dof2) {
  CHECK_GE(dof1, 1) << "dof1: expected >= 1, got " << dof1;
  CHECK_GE(dof2, 1) << "dof2: expected >= 1, got " << dof2;
  if (statistic <= 0.0) return 1.0;
  // P(F > f) = I_{d2 / (d2 + d1 f)}(d2 / 2, d1 / 2).
  const double x = dof2 / (dof2 + dof1 * statistic);
  return RegularisedBeta(0.5 * dof2, 0.5 * dof1, x);
}

bool WhitenessOptions::IsValid(std::string* why) const {
  if (max_lag < 1) {
    if (why != nullptr) *why = "max_lag must be >= 1, got " + std::to_string(max_lag);
    return false;
  }
  if (!(significance > 0.0 && significance < 1.0)) {
    if (why != nullptr)
      *why = "significance must lie in (0, 1), got " + std::to_string(significance);
    return false;
  }
  return true;
}

Eigen::VectorXd Autocorrelation(const Eigen::VectorXd& x, int max_lag) {
  CHECK_GE(max_lag, 0) << "max_lag: expected >= 0, got " << max_lag;
  CHECK_LT(max_lag, x.size()) << "max_lag: expected < " << x.size() << " samples, got " << max_lag;
  const Eigen::Index n = x.size();
  const Eigen::VectorXd centred = x.array() - x.mean();
  const double denominator = centred.squaredNorm();
  Eigen::VectorXd r = Eigen::VectorXd::Zero(max_lag + 1);
  r(0) = 1.0;
  if (denominator == 0.0) return r;
  for (int k = 1; k <= max_lag; ++k) {
    r(k) = centred.head(n - k).dot(centred.tail(n - k)) / denominator;
  }
  return r;
}

double ChiSquareSurvival(double statistic, int dof) {
  CHECK_GE(dof, 1) << "dof: expected >= 1, got " << dof;
  if (statistic <= 0.0) return 1.0;
  const double a = 0.5 * dof, x = 0.5 * statistic;
  if (x < a + 1.0) return 1.0 - GammaSeriesP(a, x);
  return GammaContinuedFractionQ(a, x);
}

WhitenessSummary AnalyseResidualWhiteness(const Eigen::VectorXd& residual, const RowBlocks& blocks,
                                          const WhitenessOptions& options) {
  WhitenessSummary summary;
  std::string why;
  if (!options.IsValid(&why) || !blocks.IsValid(static_cast<int>(residual.size()), &why)) {
    summary.message = "invalid input: " + why;
    return summary;
  }
  const int num_blocks = blocks.num_blocks();
  std::vector<std::vector<double>> series(num_blocks);
  for (Eigen::Index i = 0; i < residual.size(); ++i) {
    series[blocks.BlockOf(static_cast<int>(i))].push_back(residual(i));
  }
  summary.all_white = true;
  for (int j = 0; j < num_blocks; ++j) {
    BlockWhiteness block;
    block.name = blocks.BlockName(j);
    block.num_samples = static_cast<int>(series[j].size());
    if (block.num_samples <= options.max_lag + 1) {
      summary.message = block.name + " has " + std::to_string(block.num_samples) +
                        " residuals; whiteness up to lag " + std::to_string(options.max_lag) +
                        " needs more than " + std::to_string(options.max_lag + 1);
      summary.blocks.clear();
      summary.all_white = false;
      return summary;
    }
    const Eigen::VectorXd x =
        Eigen::Map<const Eigen::VectorXd>(series[j].data(), block.num_samples);
    block.autocorrelation = Autocorrelation(x, options.max_lag);
    const double n = block.num_samples;
    block.bound = 1.96 / std::sqrt(n);
    int outside = 0;
    double q = 0.0;
    for (int k = 1; k <= options.max_lag; ++k) {
      const double r = block.autocorrelation(k);
      outside += std::abs(r) > block.bound;
      q += r * r / (n - k);
    }
    block.fraction_outside = static_cast<double>(outside) / options.max_lag;
    block.ljung_box_q = n * (n + 2.0) * q;
    block.p_value = ChiSquareSurvival(block.ljung_box_q, options.max_lag);
    block.white = block.p_value >= options.significance;
    summary.all_white = summary.all_white && block.white;
    summary.blocks.push_back(std::move(block));
  }
  summary.success = true;
  summary.message = summary.all_white ? "residuals white in every block (Ljung–Box)"
                                      : "residuals NOT white: the standard deviations assume "
                                        "white residuals and are not valid";
  return summary;
}

std::string WhitenessSummary::Report() const {
  std::ostringstream text;
  if (!success) return "whiteness: " + message + "\n";
  for (const BlockWhiteness& block : blocks) {
    const int lags = static_cast<int>(block.autocorrelation.size()) - 1;
    text << block.name << ": N = " << block.num_samples << ", "
         << static_cast<int>(std::lround(block.fraction_outside * lags)) << "/" << lags
         << " lags outside ±" << std::setprecision(3) << block.bound
         << ", Ljung–Box Q = " << std::setprecision(4) << block.ljung_box_q
         << ", p = " << std::setprecision(3) << block.p_value << " → "
         << (block.white ? "white" : "NOT white") << "\n";
  }
  text << message << "\n";
  return text.str();
}

}  // namespace dynid::solvers
