// data/signal — the conventional pre-processing of robot identification (Brunot et al. (2017)
// §2.3; Brunot et al. (2018) §4.1): Butterworth and Chebyshev type I low-pass designs as
// second-order sections, zero-phase forward-backward filtering, decimation, central
// differences, and "parallel filtering" (the same decimation filter on the torques and on every
// column of the observation matrix).
//
// Every function reproduces a scipy 1.10 function and is tested against vectors produced by
// tests/data/reference/make_signal_reference.py (agreement ~1e-12 relative):
//   DesignButterworthLowPass  == scipy.signal.butter(N, Wn, output='sos')
//   DesignChebyshev1LowPass   == scipy.signal.cheby1(N, rp, Wn, output='sos')
//   SosFilter                 == scipy.signal.sosfilt(sos, x)           (zero initial state)
//   SosSteadyState            == scipy.signal.sosfilt_zi(sos)
//   FiltFilt                  == scipy.signal.sosfiltfilt(sos, x)       (padtype='odd', default
//   padlen) Decimate                  == scipy.signal.decimate(x, R, n=8, ftype='iir',
//   zero_phase=True)
//
// Differences from Matlab's `decimate` worth knowing: scipy (and this code) keeps samples
// 0, R, 2R, ... (Matlab keeps the samples that end on the last one), pads the ends by an odd
// reflection of 3·ntaps samples with steady-state initial conditions (Matlab's filtfilt uses a
// different pad length), and filters even when R = 1 (Matlab returns the input unchanged).
#ifndef DYNID_DATA_SIGNAL_H_
#define DYNID_DATA_SIGNAL_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/data/stack_order.h"

namespace dynid::data {

// Second-order sections, one per row, in scipy's layout [b0 b1 b2 a0 a1 a2] with a0 = 1:
//   H_s(z) = (b0 + b1 z^-1 + b2 z^-2) / (1 + a1 z^-1 + a2 z^-2),  H = prod_s H_s.
// The overall gain sits in the first section (as in scipy.signal.zpk2sos).
using SecondOrderSections = Eigen::Matrix<double, Eigen::Dynamic, 6, Eigen::RowMajor>;

// Digital Butterworth low-pass of order `order` (>= 1) with its -3 dB point at `cutoff_hz`,
// for a signal sampled at `sample_rate_hz`: bilinear transform with pre-warping, poles paired
// into sections by scipy's 'nearest' rule. Returns false with a message when order < 1, a rate
// or cut-off is not positive and finite, or the cut-off is at or above Nyquist (fs/2).
bool DesignButterworthLowPass(int order, double cutoff_hz, double sample_rate_hz,
                              SecondOrderSections* sos, std::string* error);

// The same with the cut-off given as a fraction of the Nyquist frequency, 0 < wn < 1
// (scipy's normalised Wn).
bool DesignButterworthLowPassNormalized(int order, double wn, SecondOrderSections* sos,
                                        std::string* error);

// Digital Chebyshev type I low-pass: `passband_ripple_db` (> 0) of ripple in the pass band,
// whose edge (where the gain first drops below -ripple dB) is `cutoff_hz`. Same errors.
bool DesignChebyshev1LowPass(int order, double passband_ripple_db, double cutoff_hz,
                             double sample_rate_hz, SecondOrderSections* sos, std::string* error);
bool DesignChebyshev1LowPassNormalized(int order, double passband_ripple_db, double wn,
                                       SecondOrderSections* sos, std::string* error);

// The anti-alias filter of Decimate for factor R >= 1: cheby1(8, 0.05 dB, 0.8 / R) (CHECKs R).
SecondOrderSections DecimationFilter(int factor);

// Causal filtering from a zero initial state (scipy.signal.sosfilt), direct form II
// transposed per section. Output has the length of x.
Eigen::VectorXd SosFilter(const SecondOrderSections& sos, const Eigen::VectorXd& x);

// Initial state (num_sections × 2) of every section for a unit step's steady state
// (scipy.signal.sosfilt_zi); FiltFilt scales it by the first sample.
Eigen::MatrixXd SosSteadyState(const SecondOrderSections& sos);

// Number of samples FiltFilt adds by odd reflection at each end: 3 · ntaps with
// ntaps = 2 · sections + 1 − min(#(b2 == 0), #(a2 == 0)) (scipy's default padlen).
int FiltFiltPadLength(const SecondOrderSections& sos);

// Shortest signal FiltFilt accepts: FiltFiltPadLength(sos) + 1.
int MinimumFiltFiltLength(const SecondOrderSections& sos);

// Zero-phase filtering (scipy.signal.sosfiltfilt, padtype='odd', default padlen): extends x by
// an odd reflection of FiltFiltPadLength samples at both ends, filters forward with the state
// set to the step steady state of the first extended sample, filters the result backward the
// same way, and removes the extension. The magnitude response is |H|², the phase zero.
// Returns false (signal too short) when x.size() < MinimumFiltFiltLength(sos).
bool FiltFilt(const SecondOrderSections& sos, const Eigen::VectorXd& x, Eigen::VectorXd* y,
              std::string* error);

// Length of a decimated signal: ceil(n / R).
int DecimatedLength(int num_samples, int factor);

// Low-pass and down-sample by `factor` R >= 1 (scipy.signal.decimate(x, R) with its defaults
// n=8, ftype='iir', zero_phase=True): y = FiltFilt(DecimationFilter(R), x)[0 :: R], i.e. keeps
// samples 0, R, 2R, ...; y has DecimatedLength(x.size(), R) samples. Errors: R < 1, or x shorter
// than 28 samples (the filter's pad length 27 + 1).
bool Decimate(const Eigen::VectorXd& x, int factor, Eigen::VectorXd* y, std::string* error);

// "Parallel filtering" (Brunot et al. (2017) §2.3 step 3): Decimate applied to every column of
// `signals` (rows = samples, columns = independent signals), result DecimatedLength(rows, R) ×
// cols. Columns are split over `num_threads` std::threads (0 =
// std::thread::hardware_concurrency()). The result is identical to calling Decimate on each column.
bool DecimateColumns(const Eigen::MatrixXd& signals, int factor, int num_threads,
                     Eigen::MatrixXd* decimated, std::string* error);

// FiltFilt on every column (same threading), without down-sampling.
bool FiltFiltColumns(const SecondOrderSections& sos, const Eigen::MatrixXd& signals,
                     int num_threads, Eigen::MatrixXd* filtered, std::string* error);

// StackOrder and StackedRow: data/stack_order.h.

// Parallel filtering of a stacked matrix: `stacked` has num_joints · N_s rows in `order`;
// every (joint, column) time series of N_s samples is decimated by R independently and the
// result is re-stacked in the same order with num_joints · DecimatedLength(N_s, R) rows.
// Use it on the observation matrix X (b columns) and on the torque vector (one column) with the
// same R so that both see the same filter. CHECKs that rows are a multiple of num_joints.
bool DecimateStacked(const Eigen::Ref<const Eigen::MatrixXd>& stacked, int num_joints,
                     StackOrder order, int factor, int num_threads, Eigen::MatrixXd* decimated,
                     std::string* error);
// The same for a stacked vector (the torques), without copying it into a matrix.
bool DecimateStacked(const Eigen::VectorXd& stacked, int num_joints, StackOrder order, int factor,
                     int num_threads, Eigen::VectorXd* decimated, std::string* error);

// Decimate applied to many series that arrive in consecutive time blocks, so that a long
// record's series (e.g. the n·b columns of a regressor, formed block by block from the states)
// are never held whole. The forward pass of the zero-phase filter runs once over every sample
// with its state carried from block to block: identical to Decimate's. The backward pass needs
// the future; it runs over the forward output held in a buffer, starting `lookahead()` samples
// after the last sample it emits, from the steady state of the forward output there (as
// FiltFilt starts at the end). The filter's impulse response (cheby1(8, 0.05 dB, 0.8 / R),
// forward-backward) decays below 1e-16 of its peak within ≈ 190 R samples, and the lookahead
// is the measured length after which one pass's response stays below 1e-17 of its peak (2 748
// samples for R = 13, 21 007 for R = 100: ≈ 210 R), so the emitted samples differ from Decimate's
// by round-off; the samples of the last buffer, whose backward pass starts at the record's end, are
// computed exactly as Decimate computes them (a record that fits one buffer: bitwise equal). The
// buffer holds max(3 · lookahead, kMinBufferSamples) samples (+ a block) before it emits all but
// the last lookahead: memory ≈ 65 536 doubles for R <= 104 per series that is not identically
// zero so far (an identically zero series holds no buffer: 161 of the 330 series of the TX40's
// stacked base regressor are nonzero, 84 MB instead of 173 MB), independent of the length, and
// no more rows than the record (+ 2 pads) when it is shorter; the backward pass repeats a
// lookahead per emission (4 % more backward filtering for R = 13, 47 % for R = 100); a record
// shorter than the buffer is filtered in one pass, exactly as DecimateColumns. Identically zero
// series are not filtered (their output is exactly zero), as DecimateStacked.
class BlockDecimator {
 public:
  // num_series series of num_samples samples, decimated by `factor`. Returns false when
  // num_samples is below the filter's minimum length (DecimateColumns's message).
  bool Init(int num_series, int num_samples, int factor, int num_threads, std::string* error);
  // Samples [fed, fed + block.rows()) of every series (block: rows × num_series, one column per
  // series). The first block must hold at least MinimumFiltFiltLength samples (the odd
  // extension at the start); the blocks together exactly num_samples.
  void Feed(const Eigen::Ref<const Eigen::MatrixXd>& block);
  // After the last Feed: DecimatedLength(num_samples, factor) × num_series, equal to
  // DecimateColumns of the series up to round-off.
  const Eigen::MatrixXd& decimated() const;
  // Instead of decimated(), between Init and the first Feed: the decimated samples go straight
  // into the caller's `output` (not owned; it must outlive the feeding), so that the decimated
  // series are never held twice. The num_series series form num_series / group columns of a
  // stack: series s = c · group + j is rows [j · nd, (j + 1) · nd) of column c (nd =
  // DecimatedLength(num_samples, factor)), and of the group · nd rows of a column only those in
  // `kept` (increasing, nullptr: all) are stored, at their position in `kept`. output is resized
  // to (kept ? kept->size() : group · nd) × num_series / group (its storage reused when it has
  // that shape). The values are those decimated() would hold.
  void SetOutput(Eigen::MatrixXd* output, int group, const std::vector<int>* kept);
  int lookahead() const { return lookahead_; }
  static constexpr int kMinBufferSamples = 65536;

 private:
  void Forward(int begin, int end);                      // buffer rows [begin, end), states carried
  void Backward(int end_row, int emit_end, bool exact);  // emits rows [0, emit_end)
  SecondOrderSections sos_;
  Eigen::MatrixXd steady_state_;
  int num_series_ = 0, num_samples_ = 0, factor_ = 1, num_threads_ = 1, pad_ = 0;
  int lookahead_ = 0, capacity_ = 0;
  int fed_ = 0;                // input samples fed
  int base_ = 0;               // extended-record index of buffer row 0
  int rows_ = 0;               // buffer rows in use
  // Forward output per series, capacity_ rows (extended indices); empty while the series has
  // been zero (its output is zero), so identically zero series hold no memory.
  std::vector<std::vector<double>> buffer_;
  Eigen::MatrixXd state_;      // forward state, 2 · sections × num_series
  Eigen::MatrixXd tail_;       // the last pad + 1 input samples (for the odd extension at the end)
  std::vector<char> nonzero_;  // per series: a nonzero input so far
  Eigen::MatrixXd decimated_;
  Eigen::MatrixXd* output_ = nullptr;  // SetOutput: the caller's matrix, else decimated_
  int group_ = 1;
  std::vector<int> output_row_;  // SetOutput: stack row → output row, −1 when not kept
};

// Central-difference derivative of a uniformly sampled signal (dt_s > 0, >= 2 samples):
// (x[k+1] − x[k−1]) / (2 dt) inside, one-sided first differences at the two ends
// (numpy.gradient(x, dt) with edge_order=1). Exact for quadratics inside.
Eigen::VectorXd CentralDifference(const Eigen::VectorXd& x, double dt_s);

// Central second derivative (x[k+1] − 2 x[k] + x[k−1]) / dt² inside (>= 3 samples); each end
// repeats its neighbour's value. Exact for cubics inside, for quadratics everywhere.
Eigen::VectorXd CentralSecondDifference(const Eigen::VectorXd& x, double dt_s);

}  // namespace dynid::data

#endif  // DYNID_DATA_SIGNAL_H_
