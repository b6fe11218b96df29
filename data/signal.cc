#include "dynid/data/signal.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "dynid/data/parallel_for.h"

namespace dynid::data {
namespace {

using Complex = std::complex<double>;

void SetError(std::string* error, const std::string& message) {
  if (error != nullptr) *error = message;
}

// Filter design follows scipy's path step by step (analog prototype → lp2lp_zpk with the
// pre-warped cut-off → bilinear_zpk at fs = 2 → zpk2sos with 'nearest' pairing), so that the
// sections, their order and the gain placement are the ones scipy returns, not merely an
// equivalent cascade.
struct DigitalZpk {
  std::vector<Complex> poles;
  std::vector<double> zeros;  // low-pass designs only have real zeros (all at z = -1)
  double gain = 1.0;
};

bool ValidateDesign(const char* name, int order, double wn, std::string* error) {
  if (order < 1) {
    SetError(error,
             std::string(name) + ": filter order must be >= 1, got " + std::to_string(order));
    return false;
  }
  if (!std::isfinite(wn) || wn <= 0.0 || wn >= 1.0) {
    std::ostringstream message;
    message << name << ": normalised cut-off must lie strictly between 0 and 1 (Nyquist), got "
            << wn;
    SetError(error, message.str());
    return false;
  }
  return true;
}

bool NormalisedCutoff(const char* name, double cutoff_hz, double sample_rate_hz, double* wn,
                      std::string* error) {
  if (!std::isfinite(sample_rate_hz) || sample_rate_hz <= 0.0) {
    std::ostringstream message;
    message << name << ": sampling rate must be positive and finite, got " << sample_rate_hz
            << " Hz";
    SetError(error, message.str());
    return false;
  }
  const double nyquist_hz = 0.5 * sample_rate_hz;
  if (!std::isfinite(cutoff_hz) || cutoff_hz <= 0.0) {
    std::ostringstream message;
    message << name << ": cut-off must be positive and finite, got " << cutoff_hz << " Hz";
    SetError(error, message.str());
    return false;
  }
  if (cutoff_hz >= nyquist_hz) {
    std::ostringstream message;
    message << name << ": cut-off " << cutoff_hz << " Hz is at or above the Nyquist frequency "
            << nyquist_hz << " Hz (sampling at " << sample_rate_hz << " Hz)";
    SetError(error, message.str());
    return false;
  }
  *wn = cutoff_hz / nyquist_hz;
  return true;
}

// lp2lp_zpk + bilinear_zpk with fs = 2 (scipy's normalised digital design).
DigitalZpk AnalogToDigital(const std::vector<Complex>& analog_poles, double analog_gain,
                           double wn) {
  const double fs = 2.0;
  const double warped = 2.0 * fs * std::tan(M_PI * wn / fs);
  const double fs2 = 2.0 * fs;
  const int degree = static_cast<int>(analog_poles.size());
  DigitalZpk zpk;
  Complex denominator_product(1.0, 0.0);
  for (const Complex& p : analog_poles) {
    const Complex scaled = warped * p;
    zpk.poles.push_back((fs2 + scaled) / (fs2 - scaled));
    denominator_product *= (fs2 - scaled);
  }
  zpk.zeros.assign(degree, -1.0);
  const double gain = analog_gain * std::pow(warped, degree);
  zpk.gain = gain * (Complex(1.0, 0.0) / denominator_product).real();
  return zpk;
}

bool IsReal(const Complex& value) { return value.imag() == 0.0; }

// scipy's _cplxreal: one member (positive imaginary part, conjugates averaged) of every
// complex pair sorted by real part then |imag|, followed by the real values sorted.
std::vector<Complex> ComplexThenReal(const std::vector<Complex>& values) {
  std::vector<Complex> sorted = values;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Complex& a, const Complex& b) {
    if (a.real() != b.real()) return a.real() < b.real();
    return std::abs(a.imag()) < std::abs(b.imag());
  });
  const double tolerance = 100.0 * std::numeric_limits<double>::epsilon();
  std::vector<Complex> positive, negative, real;
  for (const Complex& value : sorted) {
    if (std::abs(value.imag()) <= tolerance * std::abs(value)) {
      real.emplace_back(value.real(), 0.0);
    } else if (value.imag() > 0.0) {
      positive.push_back(value);
    } else {
      negative.push_back(value);
    }
  }
  CHECK_EQ(positive.size(), negative.size()) << "unpaired complex pole";
  std::vector<Complex> result;
  for (size_t i = 0; i < positive.size(); ++i) {
    result.push_back((positive[i] + std::conj(negative[i])) / 2.0);
  }
  result.insert(result.end(), real.begin(), real.end());
  return result;
}

int IndexClosestToUnitCircle(const std::vector<Complex>& values) {
  CHECK(!values.empty());
  int best = 0;
  for (int i = 1; i < static_cast<int>(values.size()); ++i) {
    if (std::abs(1.0 - std::abs(values[i])) < std::abs(1.0 - std::abs(values[best]))) best = i;
  }
  return best;
}

int IndexNearest(const std::vector<double>& zeros, const Complex& to) {
  CHECK(!zeros.empty());
  int best = 0;
  for (int i = 1; i < static_cast<int>(zeros.size()); ++i) {
    if (std::abs(zeros[i] - to) < std::abs(zeros[best] - to)) best = i;
  }
  return best;
}

// One section from up to two real zeros and two poles (numpy.poly, right-aligned as in
// scipy's _single_zpksos).
void SingleSection(const std::vector<double>& zeros, const Complex& p1, const Complex& p2,
                   double* row) {
  for (int i = 0; i < 6; ++i) row[i] = 0.0;
  if (zeros.size() == 2) {
    row[0] = 1.0;
    row[1] = -zeros[0] - zeros[1];
    row[2] = zeros[0] * zeros[1];
  } else {
    CHECK_EQ(zeros.size(), 1u);
    row[1] = 1.0;
    row[2] = -zeros[0];
  }
  row[3] = 1.0;
  row[4] = (-p1 - p2).real();
  row[5] = (p1 * p2).real();
}

// scipy.signal.zpk2sos(z, p, k, pairing='nearest') for real zeros.
SecondOrderSections ZpkToSos(DigitalZpk zpk) {
  std::vector<Complex> poles = zpk.poles;
  std::vector<double> zeros = zpk.zeros;
  CHECK_EQ(poles.size(), zeros.size());
  const int num_sections = (static_cast<int>(poles.size()) + 1) / 2;
  if (poles.size() % 2 == 1) {
    poles.emplace_back(0.0, 0.0);
    zeros.push_back(0.0);
  }
  poles = ComplexThenReal(poles);
  std::sort(zeros.begin(), zeros.end());

  auto count_real = [](const std::vector<Complex>& values) {
    return std::count_if(values.begin(), values.end(), IsReal);
  };
  SecondOrderSections sos(num_sections, 6);
  // The poles closest to the unit circle go to the last section.
  for (int section = num_sections - 1; section >= 0; --section) {
    const int p1_index = IndexClosestToUnitCircle(poles);
    const Complex p1 = poles[p1_index];
    poles.erase(poles.begin() + p1_index);
    double* row = sos.row(section).data();
    if (IsReal(p1) && count_real(poles) == 0) {
      // The last remaining real pole, paired with the padding pole at 0.
      const int z1_index = IndexNearest(zeros, p1);
      const double z1 = zeros[z1_index];
      zeros.erase(zeros.begin() + z1_index);
      SingleSection({z1, 0.0}, p1, Complex(0.0, 0.0), row);
      continue;
    }
    Complex p2;
    if (IsReal(p1)) {
      std::vector<Complex> real_poles;
      std::vector<int> real_index;
      for (int i = 0; i < static_cast<int>(poles.size()); ++i) {
        if (IsReal(poles[i])) {
          real_poles.push_back(poles[i]);
          real_index.push_back(i);
        }
      }
      const int p2_index = real_index[IndexClosestToUnitCircle(real_poles)];
      p2 = poles[p2_index];
      poles.erase(poles.begin() + p2_index);
    } else {
      p2 = std::conj(p1);
    }
    const int z1_index = IndexNearest(zeros, p1);
    const double z1 = zeros[z1_index];
    zeros.erase(zeros.begin() + z1_index);
    if (!zeros.empty()) {
      const int z2_index = IndexNearest(zeros, p1);
      const double z2 = zeros[z2_index];
      zeros.erase(zeros.begin() + z2_index);
      SingleSection({z1, z2}, p1, p2, row);
    } else {
      SingleSection({z1}, p1, p2, row);
    }
  }
  CHECK(poles.empty() && zeros.empty());
  sos.row(0).head<3>() *= zpk.gain;
  return sos;
}

// The analog prototypes' poles in scipy's order m = -N+1, -N+3, ..., N-1.
std::vector<Complex> ButterworthPrototypePoles(int order) {
  std::vector<Complex> poles;
  for (int m = -order + 1; m < order; m += 2) {
    poles.push_back(-std::exp(Complex(0.0, M_PI * m / (2.0 * order))));
  }
  return poles;
}

// --- Filtering kernels -----------------------------------------------------------------------

// In-place direct form II transposed cascade (scipy's _sosfilt) over data[0..n), with the
// per-section state `state` (num_sections × 2, row-major) updated.
void FilterInPlace(const SecondOrderSections& sos, double* state, double* data, int n) {
  const int num_sections = static_cast<int>(sos.rows());
  for (int k = 0; k < n; ++k) {
    double x = data[k];
    for (int s = 0; s < num_sections; ++s) {
      const double* c = sos.row(s).data();
      double* z = state + 2 * s;
      const double y = c[0] * x + z[0];
      z[0] = c[1] * x - c[4] * y + z[1];
      z[1] = c[2] * x - c[5] * y;
      x = y;
    }
    data[k] = x;
  }
}

// Zero-phase filtering supports cascades of up to 8 sections (order 16); CheckLength reports
// longer ones as an error.
constexpr int kMaxSections = 8;

// One sample through the cascade, direct form II transposed per section (scipy's _sosfilt), for
// G interleaved series: x[g] in, the output back in x[g]; state[(2 s + i) * G + g].
template <int G>
inline void CascadeStep(const double (*coefficients)[6], int num_sections, double* state,
                        double* x) {
  for (int s = 0; s < num_sections; ++s) {
    const double* c = coefficients[s];
    double* z0 = state + (2 * s) * G;
    double* z1 = z0 + G;
    for (int g = 0; g < G; ++g) {
      const double y = c[0] * x[g] + z0[g];
      z0[g] = c[1] * x[g] - c[4] * y + z1[g];
      z1[g] = c[2] * x[g] - c[5] * y;
      x[g] = y;
    }
  }
}

// Forward-backward filtering of `G` independent series at once. A single IIR recursion is
// latency bound (each output waits for the previous one); interleaving G series in one loop lets
// the CPU overlap their chains, which is where the speed of "parallel filtering" on one core
// comes from. The arithmetic per series is exactly that of scipy's sosfiltfilt (same operations
// in the same order), so the result does not depend on G.
//
// Series g is read from in[g] with `in_stride` (n samples) and every `keep_every`-th output
// sample (starting at 0) is written to out[g] with `out_stride`. `work` is reused per thread.
template <int G>
void FiltFiltBatch(const SecondOrderSections& sos, const Eigen::MatrixXd& steady_state, int pad,
                   const double* const* in, int in_stride, int n, int keep_every,
                   double* const* out, int out_stride, std::vector<double>* work) {
  const int num_sections = static_cast<int>(sos.rows());
  const int extended = n + 2 * pad;
  work->resize(static_cast<size_t>(extended) * G);
  double* data = work->data();  // data[k * G + g]
  // The state and coefficients live in local arrays so that the compiler can keep them in
  // registers (they cannot alias `data`).
  CHECK_LE(num_sections, kMaxSections) << "sections: expected <= " << kMaxSections;
  double state[2 * kMaxSections * G];  // state[(2 s + i) * G + g]
  double coefficients[kMaxSections][6];
  for (int s = 0; s < num_sections; ++s) {
    for (int i = 0; i < 6; ++i) coefficients[s][i] = sos(s, i);
  }
  // Odd extension: 2 x[0] − x[pad − i] on the left, 2 x[n−1] − x[n−2−i] on the right.
  for (int g = 0; g < G; ++g) {
    const double* x = in[g];
    const double first = x[0];
    const double last = x[static_cast<ptrdiff_t>(n - 1) * in_stride];
    for (int i = 0; i < pad; ++i) {
      data[i * G + g] = 2.0 * first - x[static_cast<ptrdiff_t>(pad - i) * in_stride];
      data[(pad + n + i) * G + g] = 2.0 * last - x[static_cast<ptrdiff_t>(n - 2 - i) * in_stride];
    }
    for (int k = 0; k < n; ++k) data[(pad + k) * G + g] = x[static_cast<ptrdiff_t>(k) * in_stride];
  }
  auto set_state = [&](int sample) {
    for (int s = 0; s < num_sections; ++s) {
      for (int g = 0; g < G; ++g) {
        state[(2 * s) * G + g] = steady_state(s, 0) * data[sample * G + g];
        state[(2 * s + 1) * G + g] = steady_state(s, 1) * data[sample * G + g];
      }
    }
  };
  // Direct form II transposed per section (scipy's _sosfilt), on sample k in place.
  auto step = [&](int k) {
    double x[G];
    for (int g = 0; g < G; ++g) x[g] = data[k * G + g];
    CascadeStep<G>(coefficients, num_sections, state, x);
    for (int g = 0; g < G; ++g) data[k * G + g] = x[g];
  };
  set_state(0);
  for (int k = 0; k < extended; ++k) step(k);
  // The backward pass runs over the forward output in reverse, starting from the steady state
  // of its last sample; iterating k downwards equals scipy's reverse–filter–reverse.
  set_state(extended - 1);
  for (int k = extended - 1; k >= 0; --k) step(k);
  const int num_out = (n + keep_every - 1) / keep_every;
  for (int g = 0; g < G; ++g) {
    for (int i = 0; i < num_out; ++i) {
      out[g][static_cast<ptrdiff_t>(i) * out_stride] = data[(pad + i * keep_every) * G + g];
    }
  }
}

// One series to filter: where it is read from and where its (kept) output goes.
struct SeriesJob {
  const double* in;
  double* out;
};

// Zero-phase filtering (and down-sampling by keep_every) of every job, in batches of
// kBatch series per kernel call, batches spread over threads.
void RunFiltFiltJobs(const SecondOrderSections& sos, const std::vector<SeriesJob>& jobs,
                     int in_stride, int n, int keep_every, int out_stride, int num_threads) {
  constexpr int kBatch = 4;
  const Eigen::MatrixXd steady_state = SosSteadyState(sos);
  const int pad = FiltFiltPadLength(sos);
  const int num_jobs = static_cast<int>(jobs.size());
  const int num_batches = (num_jobs + kBatch - 1) / kBatch;
  // One scratch buffer per worker.
  std::vector<std::vector<double>> workspaces(ParallelForThreads(num_threads, num_batches));
  ParallelForWithThreadId(0, num_batches, num_threads, [&](int thread_id, int batch) {
    std::vector<double>* work = &workspaces[thread_id];
    const int first = batch * kBatch;
    const int count = std::min(kBatch, num_jobs - first);
    if (count == kBatch) {
      const double* in[kBatch];
      double* out[kBatch];
      for (int g = 0; g < kBatch; ++g) {
        in[g] = jobs[first + g].in;
        out[g] = jobs[first + g].out;
      }
      FiltFiltBatch<kBatch>(sos, steady_state, pad, in, in_stride, n, keep_every, out, out_stride,
                            work);
    } else {
      for (int g = 0; g < count; ++g) {
        const double* in[1] = {jobs[first + g].in};
        double* out[1] = {jobs[first + g].out};
        FiltFiltBatch<1>(sos, steady_state, pad, in, in_stride, n, keep_every, out, out_stride,
                         work);
      }
    }
  });
}

bool CheckLength(const SecondOrderSections& sos, int n, const char* what, std::string* error) {
  if (sos.rows() > kMaxSections) {
    std::ostringstream message;
    message << what << ": zero-phase filtering supports at most " << kMaxSections
            << " second-order sections (order " << 2 * kMaxSections << "), got " << sos.rows();
    SetError(error, message.str());
    return false;
  }
  const int minimum = MinimumFiltFiltLength(sos);
  if (n < minimum) {
    std::ostringstream message;
    message << what << ": signal of " << n << " samples is too short for zero-phase filtering "
            << "with " << sos.rows() << " sections (needs at least " << minimum
            << " samples: the odd-reflection pad is " << FiltFiltPadLength(sos) << ")";
    SetError(error, message.str());
    return false;
  }
  return true;
}

bool CheckFactor(int factor, std::string* error) {
  if (factor < 1) {
    SetError(error, "Decimate: factor must be >= 1, got " + std::to_string(factor));
    return false;
  }
  return true;
}

}  // namespace

bool DesignButterworthLowPassNormalized(int order, double wn, SecondOrderSections* sos,
                                        std::string* error) {
  CHECK(sos != nullptr);
  if (!ValidateDesign("Butterworth design", order, wn, error)) return false;
  *sos = ZpkToSos(AnalogToDigital(ButterworthPrototypePoles(order), 1.0, wn));
  return true;
}

bool DesignButterworthLowPass(int order, double cutoff_hz, double sample_rate_hz,
                              SecondOrderSections* sos, std::string* error) {
  double wn = 0.0;
  if (!NormalisedCutoff("Butterworth design", cutoff_hz, sample_rate_hz, &wn, error)) {
    return false;
  }
  return DesignButterworthLowPassNormalized(order, wn, sos, error);
}

bool DesignChebyshev1LowPassNormalized(int order, double passband_ripple_db, double wn,
                                       SecondOrderSections* sos, std::string* error) {
  CHECK(sos != nullptr);
  if (!ValidateDesign("Chebyshev I design", order, wn, error)) return false;
  if (!std::isfinite(passband_ripple_db) || passband_ripple_db <= 0.0) {
    std::ostringstream message;
    message << "Chebyshev I design: pass-band ripple must be positive (dB), got "
            << passband_ripple_db;
    SetError(error, message.str());
    return false;
  }
  // scipy's cheb1ap: poles on an ellipse, gain normalised to 1 (even orders: to the ripple
  // floor 1/sqrt(1 + eps²)) at DC.
  const double eps = std::sqrt(std::pow(10.0, 0.1 * passband_ripple_db) - 1.0);
  const double mu = std::asinh(1.0 / eps) / order;
  std::vector<Complex> poles;
  Complex product(1.0, 0.0);
  for (int m = -order + 1; m < order; m += 2) {
    const double theta = M_PI * m / (2.0 * order);
    poles.push_back(-std::sinh(Complex(mu, theta)));
    product *= -poles.back();
  }
  double gain = product.real();
  if (order % 2 == 0) gain /= std::sqrt(1.0 + eps * eps);
  *sos = ZpkToSos(AnalogToDigital(poles, gain, wn));
  return true;
}

bool DesignChebyshev1LowPass(int order, double passband_ripple_db, double cutoff_hz,
                             double sample_rate_hz, SecondOrderSections* sos, std::string* error) {
  double wn = 0.0;
  if (!NormalisedCutoff("Chebyshev I design", cutoff_hz, sample_rate_hz, &wn, error)) {
    return false;
  }
  return DesignChebyshev1LowPassNormalized(order, passband_ripple_db, wn, sos, error);
}

SecondOrderSections DecimationFilter(int factor) {
  CHECK_GE(factor, 1) << "decimation factor: expected >= 1, got " << factor;
  SecondOrderSections sos;
  std::string error;
  CHECK(DesignChebyshev1LowPassNormalized(8, 0.05, 0.8 / factor, &sos, &error)) << error;
  return sos;
}

Eigen::VectorXd SosFilter(const SecondOrderSections& sos, const Eigen::VectorXd& x) {
  Eigen::VectorXd y = x;
  std::vector<double> state(2 * sos.rows(), 0.0);
  FilterInPlace(sos, state.data(), y.data(), static_cast<int>(y.size()));
  return y;
}

Eigen::MatrixXd SosSteadyState(const SecondOrderSections& sos) {
  // Per section, lfilter_zi solves (I − companion(a)ᵀ) zi = b[1:] − a[1:] b0, i.e. the 2 × 2
  // system below; the input of section s in steady state is the DC gain of sections < s.
  Eigen::MatrixXd zi(sos.rows(), 2);
  double scale = 1.0;
  for (int s = 0; s < sos.rows(); ++s) {
    const double b0 = sos(s, 0), b1 = sos(s, 1), b2 = sos(s, 2);
    const double a0 = sos(s, 3), a1 = sos(s, 4) / a0, a2 = sos(s, 5) / a0;
    CHECK_NE(a0, 0.0) << "section " << s << " has a0 = 0";
    const double n0 = b0 / a0, n1 = b1 / a0, n2 = b2 / a0;
    const double rhs0 = n1 - a1 * n0;
    const double rhs1 = n2 - a2 * n0;
    // [1 + a1, -1; a2, 1] zi = rhs  ⇒  zi0 (1 + a1 + a2) = rhs0 + rhs1.
    const double zi0 = (rhs0 + rhs1) / (1.0 + a1 + a2);
    zi(s, 0) = scale * zi0;
    zi(s, 1) = scale * (rhs1 - a2 * zi0);
    scale *= (b0 + b1 + b2) / (sos(s, 3) + sos(s, 4) + sos(s, 5));
  }
  return zi;
}

int FiltFiltPadLength(const SecondOrderSections& sos) {
  int zero_b2 = 0, zero_a2 = 0;
  for (int s = 0; s < sos.rows(); ++s) {
    zero_b2 += sos(s, 2) == 0.0;
    zero_a2 += sos(s, 5) == 0.0;
  }
  const int taps = 2 * static_cast<int>(sos.rows()) + 1 - std::min(zero_b2, zero_a2);
  return 3 * taps;
}

int MinimumFiltFiltLength(const SecondOrderSections& sos) { return FiltFiltPadLength(sos) + 1; }

bool FiltFilt(const SecondOrderSections& sos, const Eigen::VectorXd& x, Eigen::VectorXd* y,
              std::string* error) {
  CHECK(y != nullptr);
  CHECK_GT(sos.rows(), 0) << "empty filter";
  const int n = static_cast<int>(x.size());
  if (!CheckLength(sos, n, "FiltFilt", error)) return false;
  Eigen::VectorXd result(n);
  RunFiltFiltJobs(sos, {{x.data(), result.data()}}, 1, n, 1, 1, 1);
  *y = std::move(result);
  return true;
}

int DecimatedLength(int num_samples, int factor) {
  CHECK_GE(factor, 1) << "decimation factor: expected >= 1, got " << factor;
  return (num_samples + factor - 1) / factor;
}

bool Decimate(const Eigen::VectorXd& x, int factor, Eigen::VectorXd* y, std::string* error) {
  CHECK(y != nullptr);
  if (!CheckFactor(factor, error)) return false;
  const SecondOrderSections sos = DecimationFilter(factor);
  const int n = static_cast<int>(x.size());
  if (!CheckLength(sos, n, "Decimate", error)) return false;
  Eigen::VectorXd result(DecimatedLength(n, factor));
  RunFiltFiltJobs(sos, {{x.data(), result.data()}}, 1, n, factor, 1, 1);
  *y = std::move(result);
  return true;
}

bool FiltFiltColumns(const SecondOrderSections& sos, const Eigen::MatrixXd& signals,
                     int num_threads, Eigen::MatrixXd* filtered, std::string* error) {
  CHECK(filtered != nullptr);
  CHECK_GT(sos.rows(), 0) << "empty filter";
  const int n = static_cast<int>(signals.rows());
  if (!CheckLength(sos, n, "FiltFiltColumns", error)) return false;
  Eigen::MatrixXd result(n, signals.cols());
  std::vector<SeriesJob> jobs;
  for (Eigen::Index c = 0; c < signals.cols(); ++c) {
    jobs.push_back({signals.col(c).data(), result.col(c).data()});
  }
  RunFiltFiltJobs(sos, jobs, 1, n, 1, 1, num_threads);
  *filtered = std::move(result);
  return true;
}

bool DecimateColumns(const Eigen::MatrixXd& signals, int factor, int num_threads,
                     Eigen::MatrixXd* decimated, std::string* error) {
  CHECK(decimated != nullptr);
  if (!CheckFactor(factor, error)) return false;
  const SecondOrderSections sos = DecimationFilter(factor);
  const int n = static_cast<int>(signals.rows());
  if (!CheckLength(sos, n, "DecimateColumns", error)) return false;
  Eigen::MatrixXd result(DecimatedLength(n, factor), signals.cols());
  std::vector<SeriesJob> jobs;
  for (Eigen::Index c = 0; c < signals.cols(); ++c) {
    jobs.push_back({signals.col(c).data(), result.col(c).data()});
  }
  RunFiltFiltJobs(sos, jobs, 1, n, factor, 1, num_threads);
  *decimated = std::move(result);
  return true;
}

bool DecimateStacked(const Eigen::Ref<const Eigen::MatrixXd>& stacked, int num_joints,
                     StackOrder order, int factor, int num_threads, Eigen::MatrixXd* decimated,
                     std::string* error) {
  CHECK(decimated != nullptr);
  CHECK_GE(num_joints, 1) << "num_joints: expected >= 1, got " << num_joints;
  CHECK_EQ(stacked.rows() % num_joints, 0)
      << "stacked rows: expected a multiple of num_joints = " << num_joints << ", got "
      << stacked.rows();
  if (!CheckFactor(factor, error)) return false;
  const SecondOrderSections sos = DecimationFilter(factor);
  const int n = static_cast<int>(stacked.rows()) / num_joints;
  if (!CheckLength(sos, n, "DecimateStacked", error)) return false;
  const int n_out = DecimatedLength(n, factor);
  Eigen::MatrixXd result(static_cast<Eigen::Index>(n_out) * num_joints, stacked.cols());
  // Each (joint, column) series is read in place: contiguous for joint-major stacks, with a
  // stride of num_joints for sample-major stacks.
  const int stride = order == StackOrder::kJointMajor ? 1 : num_joints;
  // Identically zero series (regressor columns of parameters that do not act on a joint, e.g.
  // link-1 inertia on joints 2..6: about half of a TX40 X) filter to exactly zero, so they are
  // written directly instead of filtered.
  std::vector<SeriesJob> jobs;
  for (Eigen::Index c = 0; c < stacked.cols(); ++c) {
    for (int j = 0; j < num_joints; ++j) {
      const double* in = stacked.col(c).data() + StackedRow(order, num_joints, n, j, 0);
      double* out = result.col(c).data() + StackedRow(order, num_joints, n_out, j, 0);
      bool zero = true;
      for (int k = 0; k < n && zero; ++k) zero = in[static_cast<size_t>(k) * stride] == 0.0;
      if (zero) {
        for (int k = 0; k < n_out; ++k) out[static_cast<size_t>(k) * stride] = 0.0;
      } else {
        jobs.push_back({in, out});
      }
    }
  }
  RunFiltFiltJobs(sos, jobs, stride, n, factor, stride, num_threads);
  *decimated = std::move(result);
  return true;
}

bool DecimateStacked(const Eigen::VectorXd& stacked, int num_joints, StackOrder order, int factor,
                     int num_threads, Eigen::VectorXd* decimated, std::string* error) {
  CHECK(decimated != nullptr);
  Eigen::MatrixXd result;
  // Binds to the Ref overload as a one-column matrix, without a copy.
  const Eigen::Ref<const Eigen::MatrixXd> as_matrix(stacked);
  if (!DecimateStacked(as_matrix, num_joints, order, factor, num_threads, &result, error)) {
    return false;
  }
  *decimated = result.col(0);
  return true;
}

// ---- BlockDecimator ----

namespace {

// The cascade of FiltFiltBatch's `step` over rows [begin, end) of G series (data[g][k]), forward
// or backward; state[(2 s + i) * G + g]. Same operations in the same order, so the same result.
template <int G>
void RunCascade(const SecondOrderSections& sos, double* state, double* const* data, int begin,
                int end, bool forward) {
  const int num_sections = static_cast<int>(sos.rows());
  double coefficients[kMaxSections][6];
  for (int s = 0; s < num_sections; ++s) {
    for (int i = 0; i < 6; ++i) coefficients[s][i] = sos(s, i);
  }
  double local[2 * kMaxSections * G];
  std::copy(state, state + 2 * num_sections * G, local);
  for (int step = 0; step < end - begin; ++step) {
    const int k = forward ? begin + step : end - 1 - step;
    double x[G];
    for (int g = 0; g < G; ++g) x[g] = data[g][k];
    CascadeStep<G>(coefficients, num_sections, local, x);
    for (int g = 0; g < G; ++g) data[g][k] = x[g];
  }
  std::copy(local, local + 2 * num_sections * G, state);
}

// Runs `function(first, count)` over the active series in batches of up to 4, on threads.
template <typename Function>
void ForActiveBatches(const std::vector<char>& active, int num_threads, const Function& function) {
  std::vector<int> series;
  for (int s = 0; s < static_cast<int>(active.size()); ++s) {
    if (active[s]) series.push_back(s);
  }
  constexpr int kBatch = 4;
  const int num_batches = (static_cast<int>(series.size()) + kBatch - 1) / kBatch;
  ParallelFor(0, num_batches, num_threads, [&](int batch) {
    const int first = batch * kBatch;
    function(series.data() + first, std::min(kBatch, static_cast<int>(series.size()) - first));
  });
}

// Cascade over `count` (1..4) series: batches of 4 interleaved, the rest one by one.
void RunCascadeBatch(const SecondOrderSections& sos, double* const* states, double* const* data,
                     int count, int begin, int end, bool forward) {
  const int sections2 = 2 * static_cast<int>(sos.rows());
  if (count == 4) {
    double state[2 * kMaxSections * 4];
    for (int i = 0; i < sections2; ++i) {
      for (int g = 0; g < 4; ++g) state[i * 4 + g] = states[g][i];
    }
    RunCascade<4>(sos, state, data, begin, end, forward);
    for (int i = 0; i < sections2; ++i) {
      for (int g = 0; g < 4; ++g) states[g][i] = state[i * 4 + g];
    }
    return;
  }
  for (int g = 0; g < count; ++g) RunCascade<1>(sos, states[g], data + g, begin, end, forward);
}

}  // namespace

bool BlockDecimator::Init(int num_series, int num_samples, int factor, int num_threads,
                          std::string* error) {
  CHECK_GE(num_series, 0) << "num_series: expected >= 0";
  if (!CheckFactor(factor, error)) return false;
  sos_ = DecimationFilter(factor);
  if (!CheckLength(sos_, num_samples, "BlockDecimator", error)) return false;
  steady_state_ = SosSteadyState(sos_);
  num_series_ = num_series;
  num_samples_ = num_samples;
  factor_ = factor;
  num_threads_ = num_threads;
  pad_ = FiltFiltPadLength(sos_);
  // Lookahead: the length after which the impulse response of one pass stays below 1e-17 of
  // its peak (measured on the filter itself: ≈ 190 R).
  {
    const int probe = 400 * factor + 1000;
    Eigen::VectorXd impulse = Eigen::VectorXd::Zero(probe);
    impulse[0] = 1.0;
    const Eigen::VectorXd h = SosFilter(sos_, impulse);
    const double peak = h.cwiseAbs().maxCoeff();
    int last = 0;
    for (int k = 0; k < probe; ++k) {
      if (std::abs(h[k]) > 1e-17 * peak) last = k;
    }
    lookahead_ = last + 1;
  }
  capacity_ = 0;
  fed_ = base_ = rows_ = 0;
  std::vector<std::vector<double>>(num_series).swap(buffer_);
  state_ = Eigen::MatrixXd::Zero(2 * sos_.rows(), num_series);
  tail_.resize(0, num_series);
  nonzero_.assign(num_series, 0);
  decimated_.resize(0, 0);  // allocated by the first Feed unless SetOutput gave a matrix
  output_ = nullptr;
  group_ = 1;
  output_row_.clear();
  return true;
}

void BlockDecimator::Forward(int begin, int end) {
  // Series that were zero so far have a zero output and state, and no column (Feed).
  ForActiveBatches(nonzero_, num_threads_, [&](const int* series, int count) {
    double* data[4];
    double* states[4];
    for (int g = 0; g < count; ++g) {
      data[g] = buffer_[series[g]].data();
      states[g] = state_.col(series[g]).data();
    }
    RunCascadeBatch(sos_, states, data, count, begin, end, /*forward=*/true);
  });
}

void BlockDecimator::Backward(int end_row, int emit_end, bool exact) {
  CHECK(exact || emit_end < end_row);
  const int sections2 = 2 * static_cast<int>(sos_.rows());
  ForActiveBatches(nonzero_, num_threads_, [&](const int* series, int count) {
    // The rows after emit_end are still needed (forward output of later emissions): the pass
    // runs over a copy of them.
    const int lookahead_rows = end_row - emit_end;
    std::vector<double> copy(static_cast<size_t>(lookahead_rows) * count);
    std::vector<double> state_storage(static_cast<size_t>(sections2) * count);
    double* data[4];
    double* states[4];
    for (int g = 0; g < count; ++g) {
      const double* f = buffer_[series[g]].data();
      states[g] = state_storage.data() + static_cast<size_t>(g) * sections2;
      const double start = f[end_row - 1];
      for (int i = 0; i < sections2 / 2; ++i) {
        states[g][2 * i] = steady_state_(i, 0) * start;
        states[g][2 * i + 1] = steady_state_(i, 1) * start;
      }
    }
    if (lookahead_rows > 0) {
      for (int g = 0; g < count; ++g) {
        double* c = copy.data() + static_cast<size_t>(g) * lookahead_rows;
        std::copy(buffer_[series[g]].data() + emit_end, buffer_[series[g]].data() + end_row, c);
        data[g] = c - emit_end;  // indexed by buffer row
      }
      RunCascadeBatch(sos_, states, data, count, emit_end, end_row, /*forward=*/false);
    }
    for (int g = 0; g < count; ++g) data[g] = buffer_[series[g]].data();
    RunCascadeBatch(sos_, states, data, count, 0, emit_end, /*forward=*/false);
    // Emit the kept samples: input sample k = base + row − pad, k ≡ 0 (mod R), 0 <= k < Ns.
    for (int g = 0; g < count; ++g) {
      const double* y = buffer_[series[g]].data();
      int first_k = std::max(0, base_ - pad_);
      first_k = (first_k + factor_ - 1) / factor_ * factor_;
      if (output_ == nullptr) {
        for (int k = first_k; k < num_samples_ && k + pad_ - base_ < emit_end; k += factor_) {
          decimated_(k / factor_, series[g]) = y[k + pad_ - base_];
        }
      } else {
        // Series c · group + j → rows j · nd + d of column c, where kept.
        const int nd = static_cast<int>(output_row_.size()) / group_;
        const int* row_of = output_row_.data() + static_cast<size_t>(series[g] % group_) * nd;
        double* column = output_->col(series[g] / group_).data();
        for (int k = first_k; k < num_samples_ && k + pad_ - base_ < emit_end; k += factor_) {
          const int row = row_of[k / factor_];
          if (row >= 0) column[row] = y[k + pad_ - base_];
        }
      }
    }
  });
}

void BlockDecimator::Feed(const Eigen::Ref<const Eigen::MatrixXd>& block) {
  CHECK_EQ(block.cols(), num_series_) << "BlockDecimator: expected one column per series";
  const int m = static_cast<int>(block.rows());
  CHECK_LE(fed_ + m, num_samples_) << "BlockDecimator: more samples than announced";
  const bool first = fed_ == 0;
  if (first && output_ == nullptr) {
    decimated_ = Eigen::MatrixXd::Zero(DecimatedLength(num_samples_, factor_), num_series_);
  }
  if (first) {
    CHECK_GE(m, pad_ + 1) << "BlockDecimator: the first block must hold >= " << pad_ + 1
                          << " samples";
  }
  const int needed = rows_ + m + (first ? pad_ : 0) + pad_;
  if (needed > capacity_) {
    // Never more rows than the extended record has (a short record's buffer holds it whole).
    capacity_ =
        std::max(needed, std::min(std::max(3 * lookahead_, kMinBufferSamples) + m + 2 * pad_,
                                  num_samples_ + 2 * pad_));
    for (std::vector<double>& column : buffer_) {
      if (!column.empty()) column.resize(capacity_);
    }
  }
  // A series gets its column when its first nonzero sample arrives: the rows before are the
  // zero output of a zero input (the regressor's structural zeros, e.g. the parameters of link
  // k in the rows of joints after k, never do: about half of the TX40's 330 series).
  for (int s = 0; s < num_series_; ++s) {
    if (!nonzero_[s]) {
      nonzero_[s] = !block.col(s).isZero(0.0);
      if (nonzero_[s]) buffer_[s].assign(capacity_, 0.0);
    }
  }
  int begin = rows_;
  if (first) {
    // Odd extension at the start, 2 x[0] − x[pad − i], and the step steady state of its first
    // sample, as FiltFiltBatch.
    for (int s = 0; s < num_series_; ++s) {
      const double start = 2.0 * block(0, s) - block(pad_, s);
      if (nonzero_[s]) {
        for (int i = 0; i < pad_; ++i) buffer_[s][i] = 2.0 * block(0, s) - block(pad_ - i, s);
      }
      for (int i = 0; i < sos_.rows(); ++i) {
        state_(2 * i, s) = steady_state_(i, 0) * start;
        state_(2 * i + 1, s) = steady_state_(i, 1) * start;
      }
    }
    rows_ = pad_;
  }
  for (int s = 0; s < num_series_; ++s) {
    if (nonzero_[s]) Eigen::Map<Eigen::VectorXd>(buffer_[s].data() + rows_, m) = block.col(s);
  }
  rows_ += m;
  Forward(begin, rows_);
  // The last pad + 1 inputs, for the odd extension at the end.
  const int keep = std::min<int>(pad_ + 1, tail_.rows() + m);
  Eigen::MatrixXd tail(keep, num_series_);
  const int from_block = std::min(keep, m);
  tail.bottomRows(from_block) = block.bottomRows(from_block);
  if (keep > from_block) tail.topRows(keep - from_block) = tail_.bottomRows(keep - from_block);
  tail_ = std::move(tail);
  fed_ += m;
  if (fed_ == num_samples_) {
    // Odd extension at the end, 2 x[n−1] − x[n−2−i], then the exact backward pass from the end.
    for (int s = 0; s < num_series_; ++s) {
      if (!nonzero_[s]) continue;
      for (int i = 0; i < pad_; ++i) {
        buffer_[s][rows_ + i] = 2.0 * tail_(pad_, s) - tail_(pad_ - 1 - i, s);
      }
    }
    begin = rows_;
    rows_ += pad_;
    Forward(begin, rows_);
    Backward(rows_, rows_, /*exact=*/true);
    std::vector<std::vector<double>>(num_series_).swap(buffer_);
    return;
  }
  if (rows_ >= std::max(3 * lookahead_, kMinBufferSamples)) {
    const int emit_end = rows_ - lookahead_;
    Backward(rows_, emit_end, /*exact=*/false);
    // The lookahead rows move to the top, column by column in place (no temporary of
    // lookahead × num_series doubles: 55 MB for R = 100 and 330 series).
    for (std::vector<double>& column : buffer_) {
      if (!column.empty()) {
        std::copy(column.begin() + emit_end, column.begin() + rows_, column.begin());
      }
    }
    base_ += emit_end;
    rows_ -= emit_end;
  }
}

const Eigen::MatrixXd& BlockDecimator::decimated() const {
  CHECK_EQ(fed_, num_samples_) << "BlockDecimator: not all samples fed";
  CHECK(output_ == nullptr) << "BlockDecimator: the output went to SetOutput's matrix";
  return decimated_;
}

void BlockDecimator::SetOutput(Eigen::MatrixXd* output, int group, const std::vector<int>* kept) {
  CHECK(output != nullptr);
  CHECK_EQ(fed_, 0) << "BlockDecimator: SetOutput after Feed";
  CHECK(group >= 1 && num_series_ % group == 0)
      << "BlockDecimator: " << num_series_ << " series are not columns of " << group;
  const int nd = DecimatedLength(num_samples_, factor_);
  const int stack_rows = group * nd;
  output_row_.assign(stack_rows, -1);
  if (kept == nullptr) {
    for (int r = 0; r < stack_rows; ++r) output_row_[r] = r;
  } else {
    for (size_t p = 0; p < kept->size(); ++p) {
      const int r = (*kept)[p];
      CHECK(r >= 0 && r < stack_rows && (p == 0 || r > (*kept)[p - 1]))
          << "BlockDecimator: kept rows must increase within [0, " << stack_rows << ")";
      output_row_[r] = static_cast<int>(p);
    }
  }
  output->resize(kept == nullptr ? stack_rows : static_cast<Eigen::Index>(kept->size()),
                 num_series_ / group);
  output->setZero();  // the values of identically zero series, as decimated_
  output_ = output;
  group_ = group;
}

Eigen::VectorXd CentralDifference(const Eigen::VectorXd& x, double dt_s) {
  CHECK_GT(dt_s, 0.0) << "dt: expected > 0, got " << dt_s;
  const Eigen::Index n = x.size();
  CHECK_GE(n, 2) << "CentralDifference: expected >= 2 samples, got " << n;
  Eigen::VectorXd v(n);
  v(0) = (x(1) - x(0)) / dt_s;
  v(n - 1) = (x(n - 1) - x(n - 2)) / dt_s;
  if (n > 2) v.segment(1, n - 2) = (x.tail(n - 2) - x.head(n - 2)) / (2.0 * dt_s);
  return v;
}

Eigen::VectorXd CentralSecondDifference(const Eigen::VectorXd& x, double dt_s) {
  CHECK_GT(dt_s, 0.0) << "dt: expected > 0, got " << dt_s;
  const Eigen::Index n = x.size();
  CHECK_GE(n, 3) << "CentralSecondDifference: expected >= 3 samples, got " << n;
  Eigen::VectorXd a(n);
  a.segment(1, n - 2) = (x.tail(n - 2) - 2.0 * x.segment(1, n - 2) + x.head(n - 2)) / (dt_s * dt_s);
  a(0) = a(1);
  a(n - 1) = a(n - 2);
  return a;
}

}  // namespace dynid::data
