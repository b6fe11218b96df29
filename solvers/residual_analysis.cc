#include "dynid/solvers/residual_analysis.h"

#include <glog/logging.h>

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "dynid/solvers/internal/flat_top.h"

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
    if (block.num_samples == 0) continue;  // a block without rows (an unmeasured joint)
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

namespace {

// The moving sums h_t = g_{t−L} + … + g_t of one block, fed g_t sample by sample (a zero row
// for a sample without a row); the sums go to Ω in batches of rows (one BLAS-3 update each), so
// a block holds L + 1 + batch rows instead of its whole span.
class MovingSums {
 public:
  MovingSums(int lags, Eigen::Index b, Eigen::Index batch)
      : ring_(Eigen::MatrixXd::Zero(lags + 1, b)),
        sum_(Eigen::RowVectorXd::Zero(b)),
        batch_(batch, b) {}
  Eigen::Index next_sample() const { return next_; }
  template <typename Row>
  void Push(const Row& g, Eigen::MatrixXd* omega) {
    auto oldest = ring_.row(next_ % ring_.rows());  // g_{t−L−1}
    sum_ += g - oldest;
    oldest = g;
    batch_.row(filled_++) = sum_;
    ++next_;
    if (filled_ == batch_.rows()) Flush(omega);
  }
  void PushZero(Eigen::MatrixXd* omega) {
    auto oldest = ring_.row(next_ % ring_.rows());
    sum_ -= oldest;
    oldest.setZero();
    batch_.row(filled_++) = sum_;
    ++next_;
    if (filled_ == batch_.rows()) Flush(omega);
  }
  void Flush(Eigen::MatrixXd* omega) {
    if (filled_ == 0) return;
    omega->selfadjointView<Eigen::Lower>().rankUpdate(batch_.topRows(filled_).transpose(),
                                                      1.0 / static_cast<double>(ring_.rows()));
    filled_ = 0;
  }

 private:
  Eigen::MatrixXd ring_;  // g_{t−L−1} … g_{t−1}, row t mod (L + 1)
  Eigen::RowVectorXd sum_;
  Eigen::MatrixXd batch_;
  Eigen::Index filled_ = 0, next_ = 0;
};

}  // namespace

const char* HacBandwidthName(HacBandwidth bandwidth) {
  switch (bandwidth) {
    case HacBandwidth::kAr1:
      return "ar1";
    case HacBandwidth::kAutocorrelation:
      return "acf";
  }
  return "?";
}

const char* HacCriticalValueName(HacCriticalValue rule) {
  switch (rule) {
    case HacCriticalValue::kNormal:
      return "normal";
    case HacCriticalValue::kFixedB:
      return "fixed_b";
  }
  return "?";
}

double HacCriticalValue95(const HacScoreCovariance& hac, HacCriticalValue rule) {
  constexpr double kNormal975 = 1.959963984540054;
  if (rule == HacCriticalValue::kNormal) return kNormal975;
  const double b = std::clamp(hac.bandwidth_fraction, 0.0, 1.0);
  return kNormal975 + b * (2.9694 + b * (0.4160 - 0.5324 * b));  // Kiefer & Vogelsang (2005)
}

HacCovariance ComputeHacCovariance(const Eigen::MatrixXd& z, const Eigen::MatrixXd& x,
                                   const Eigen::VectorXd& residual, const RowBlocks& blocks,
                                   int lags, HacBandwidth bandwidth) {
  if (z.rows() != x.rows() || z.cols() != x.cols() || residual.size() != x.rows()) {
    HacCovariance result;
    result.message =
        "HAC: expected Z and X of equal shape with more rows than columns and a "
        "residual per row";
    return result;
  }
  return ComputeHacCovarianceFromRows(
      [&](const HacRowConsumer& consume, std::string*) {
        constexpr Eigen::Index kPiece = 4096;
        for (Eigen::Index start = 0; start < z.rows(); start += kPiece) {
          consume(start, z.middleRows(start, std::min(kPiece, z.rows() - start)));
        }
        return true;
      },
      z.transpose() * x, residual, blocks, lags, bandwidth);
}

HacScoreCovariance ComputeHacScoreCovariance(const HacRowSource& z_rows, Eigen::Index columns,
                                             const Eigen::VectorXd& residual,
                                             const RowBlocks& blocks, int lags,
                                             HacBandwidth bandwidth, int batch_rows) {
  HacScoreCovariance result;
  const Eigen::Index rows = residual.size();
  const Eigen::Index b = columns;
  if (b < 1 || rows <= b || batch_rows < 1) {
    result.message =
        "HAC: expected Z and X of equal shape with more rows than columns and a "
        "residual per row";
    return result;
  }
  std::string why;
  if (!blocks.IsValid(static_cast<int>(rows), &why)) {
    result.message = "HAC: " + why;
    return result;
  }
  const int num_blocks = blocks.num_blocks();
  // Rows of each block in order, with their sample positions.
  std::vector<std::vector<int>> block_rows(num_blocks);
  for (Eigen::Index r = 0; r < rows; ++r)
    block_rows[blocks.BlockOf(static_cast<int>(r))].push_back(static_cast<int>(r));
  auto sample_of = [&](int block, size_t i) {
    const int r = block_rows[block][i];
    return blocks.sample_of_row.empty() ? static_cast<int>(i) : blocks.sample_of_row[r];
  };
  // Mean lag-1 autocorrelation of the residual (over consecutive samples of a block).
  double rho_sum = 0.0;
  int rho_count = 0, nonempty = 0;
  for (int block = 0; block < num_blocks; ++block) {
    const std::vector<int>& r = block_rows[block];
    if (r.size() < 3) continue;
    ++nonempty;
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < r.size(); ++i) {
      den += residual[r[i]] * residual[r[i]];
      if (i + 1 < r.size() && sample_of(block, i + 1) == sample_of(block, i) + 1) {
        num += residual[r[i]] * residual[r[i + 1]];
      }
    }
    if (den > 0.0) {
      rho_sum += num / den;
      ++rho_count;
    }
  }
  result.rho = rho_count > 0 ? rho_sum / rho_count : 0.0;
  const double mean_rows = nonempty > 0 ? static_cast<double>(rows) / nonempty : rows;
  if (lags > 0) {
    result.lags = lags;
  } else if (bandwidth == HacBandwidth::kAr1) {
    const double rho = std::clamp(result.rho, -0.99, 0.99);
    result.alpha = 4.0 * rho * rho / ((1 - rho) * (1 - rho) * (1 + rho) * (1 + rho));
    result.lags = static_cast<int>(std::ceil(1.1447 * std::cbrt(result.alpha * mean_rows)));
    result.lags = std::max(1, std::min(result.lags, static_cast<int>(mean_rows / 2)));
  } else {
    // α = Σ_blocks Ĝ² / Σ_blocks ĝ² of the flat-top estimates from each block's autocorrelation
    // function (the residual centred, R̂(k) = (1/N_j) Σ e_t e_{t+k} over the pairs of rows k
    // samples apart), each block's autocovariances scaled to R̂(0) = 1.
    double sum_big_g2 = 0.0, sum_g2 = 0.0;
    for (int block = 0; block < num_blocks; ++block) {
      const std::vector<int>& r = block_rows[block];
      if (r.size() < 8) continue;
      const Eigen::Index n = static_cast<Eigen::Index>(r.size());
      const Eigen::Index span = sample_of(block, r.size() - 1) - sample_of(block, 0) + 1;
      double mean = 0.0;
      for (const int row : r) mean += residual[row];
      mean /= static_cast<double>(n);
      Eigen::VectorXd grid = Eigen::VectorXd::Zero(span);  // zero where the block has no row
      for (size_t i = 0; i < r.size(); ++i) {
        grid[sample_of(block, i) - sample_of(block, 0)] = residual[r[i]] - mean;
      }
      internal::FlatTopEstimate flat_top;
      if (!internal::FlatTopOfSeries(grid, n, &flat_top)) continue;
      sum_big_g2 += flat_top.big_g * flat_top.big_g;
      sum_g2 += flat_top.g * flat_top.g;
    }
    result.alpha = sum_g2 > 0.0 ? sum_big_g2 / sum_g2 : 0.0;
    result.lags = internal::AutomaticBartlettLags(result.alpha, mean_rows);
  }
  result.bandwidth_fraction = (result.lags + 1) / mean_rows;
  // Ω = Σ_blocks HᵀH / (L+1), H_t = Σ_{i=0}^{L} g_{t−i} over the block's sample grid, g_t = z_t e_t
  // (zero where the grid has no row), t = first sample … last sample + L: every window that holds
  // at least one row. The rows arrive in pieces; each block's moving sums advance over its grid.
  Eigen::MatrixXd omega = Eigen::MatrixXd::Zero(b, b);
  std::vector<MovingSums> sums;
  sums.reserve(num_blocks);
  for (int block = 0; block < num_blocks; ++block) sums.emplace_back(result.lags, b, batch_rows);
  std::vector<size_t> seen(num_blocks, 0);  // rows of each block consumed so far
  Eigen::Index consumed = 0;
  const bool formed = z_rows(
      [&](Eigen::Index first_row, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
        CHECK(piece.cols() == b && first_row >= 0 && first_row + piece.rows() <= rows)
            << "HAC: a piece of Z outside its " << rows << " × " << b << " shape";
        for (Eigen::Index i = 0; i < piece.rows(); ++i) {
          const int r = static_cast<int>(first_row + i);
          const int block = blocks.BlockOf(r);
          const size_t index = seen[block]++;
          CHECK(index < block_rows[block].size() && block_rows[block][index] == r)
              << "HAC: the rows of block " << block
              << " must arrive once each, in increasing order";
          const Eigen::Index t = sample_of(block, index) - sample_of(block, 0);
          while (sums[block].next_sample() < t) sums[block].PushZero(&omega);
          sums[block].Push(piece.row(i) * residual[r], &omega);
        }
        consumed += piece.rows();
      },
      &why);
  if (!formed) {
    result.message = "HAC: the rows of Z: " + why;
    return result;
  }
  CHECK_EQ(consumed, rows) << "HAC: every row of Z once";
  for (int block = 0; block < num_blocks; ++block) {
    const std::vector<int>& r = block_rows[block];
    if (r.empty()) continue;
    const Eigen::Index end = sample_of(block, r.size() - 1) - sample_of(block, 0) + 1 + result.lags;
    while (sums[block].next_sample() < end) sums[block].PushZero(&omega);
    sums[block].Flush(&omega);
  }
  result.omega = omega.selfadjointView<Eigen::Lower>();
  result.success = true;
  result.message = "HAC (Bartlett, L = " + std::to_string(result.lags) +
                   (lags == 0 && bandwidth == HacBandwidth::kAutocorrelation
                        ? ", bandwidth from the autocorrelation function)"
                        : ")");
  return result;
}

HacCovariance ComputeHacCovarianceFromRows(const HacRowSource& z_rows, const Eigen::MatrixXd& ztx,
                                           const Eigen::VectorXd& residual, const RowBlocks& blocks,
                                           int lags, HacBandwidth bandwidth, int batch_rows) {
  HacCovariance result;
  if (ztx.rows() != ztx.cols()) {
    result.message =
        "HAC: expected Z and X of equal shape with more rows than columns and a "
        "residual per row";
    return result;
  }
  static_cast<HacScoreCovariance&>(result) =
      ComputeHacScoreCovariance(z_rows, ztx.cols(), residual, blocks, lags, bandwidth, batch_rows);
  if (!result.success) return result;
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(ztx);
  if (!lu.isInvertible()) {
    result.success = false;
    result.message = "HAC: ZᵀX is singular";
    return result;
  }
  const Eigen::MatrixXd a = lu.inverse();
  result.covariance = a * result.omega * a.transpose();
  result.covariance = 0.5 * (result.covariance + result.covariance.transpose()).eval();
  result.standard_deviation = result.covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  return result;
}

}  // namespace dynid::solvers
