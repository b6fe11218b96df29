#include "dynid/data/signal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/csv.h"

namespace dynid::data {
namespace {

using ::testing::HasSubstr;

// Reference vectors from tests/data/reference/make_signal_reference.py (scipy 1.10.1).
Eigen::MatrixXd Reference(const std::string& name) {
  CsvTable table;
  std::string error;
  const std::string path = std::string(DYNID_SOURCE_DIR) + "/tests/data/reference/" + name;
  EXPECT_TRUE(ReadCsv(path, &table, &error)) << error;
  return table.values;
}

SecondOrderSections ReferenceSos(const std::string& name) {
  return Reference(name);  // columns b0 b1 b2 a0 a1 a2
}

double RelativeDifference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return (a - b).norm() / std::max(b.norm(), 1e-300);
}

TEST(SignalDesignTest, ButterworthMatchesScipySectionBySection) {
  SecondOrderSections sos;
  std::string error;
  ASSERT_TRUE(DesignButterworthLowPass(4, 50.0, 5000.0, &sos, &error)) << error;
  EXPECT_LT(RelativeDifference(sos, ReferenceSos("butter4_50hz_5khz_sos.csv")), 1e-12);
  // Odd orders: a first-order section with a padded zero, and the pairing order of scipy.
  ASSERT_TRUE(DesignButterworthLowPass(5, 180.0, 5000.0, &sos, &error)) << error;
  EXPECT_LT(RelativeDifference(sos, ReferenceSos("butter5_180hz_5khz_sos.csv")), 1e-12);
  ASSERT_TRUE(DesignButterworthLowPassNormalized(3, 0.3, &sos, &error)) << error;
  EXPECT_LT(RelativeDifference(sos, ReferenceSos("butter3_0p3_sos.csv")), 1e-12);
}

TEST(SignalDesignTest, ChebyshevTypeOneMatchesScipy) {
  SecondOrderSections sos;
  std::string error;
  EXPECT_LT(RelativeDifference(DecimationFilter(25), ReferenceSos("cheby1_8_0p05_0p032_sos.csv")),
            1e-12);
  ASSERT_TRUE(DesignChebyshev1LowPassNormalized(5, 1.0, 0.4, &sos, &error)) << error;
  EXPECT_LT(RelativeDifference(sos, ReferenceSos("cheby1_5_1_0p4_sos.csv")), 1e-12);
  // The Hz form gives the same sections as the normalised one.
  SecondOrderSections hz;
  ASSERT_TRUE(DesignChebyshev1LowPass(5, 1.0, 400.0, 2000.0, &hz, &error)) << error;
  EXPECT_LT(RelativeDifference(hz, sos), 1e-15);
}

TEST(SignalDesignTest, DcGainIsOneAndNyquistGainIsZero) {
  // Independent check of the designs: evaluate H(z) at z = 1 and z = -1.
  SecondOrderSections sos;
  std::string error;
  ASSERT_TRUE(DesignButterworthLowPass(6, 20.0, 1000.0, &sos, &error)) << error;
  double dc = 1.0, nyquist = 1.0;
  for (int s = 0; s < sos.rows(); ++s) {
    dc *= (sos(s, 0) + sos(s, 1) + sos(s, 2)) / (sos(s, 3) + sos(s, 4) + sos(s, 5));
    nyquist *= (sos(s, 0) - sos(s, 1) + sos(s, 2)) / (sos(s, 3) - sos(s, 4) + sos(s, 5));
  }
  EXPECT_NEAR(dc, 1.0, 1e-12);
  EXPECT_NEAR(nyquist, 0.0, 1e-12);
}

TEST(SignalDesignTest, CutOffAtOrAboveNyquistIsAnError) {
  SecondOrderSections sos;
  std::string error;
  EXPECT_FALSE(DesignButterworthLowPass(4, 2500.0, 5000.0, &sos, &error));
  EXPECT_THAT(error, HasSubstr("at or above the Nyquist frequency 2500 Hz"));
  EXPECT_FALSE(DesignButterworthLowPass(4, 3000.0, 5000.0, &sos, &error));
  EXPECT_THAT(error, HasSubstr("3000 Hz"));
  EXPECT_FALSE(DesignChebyshev1LowPass(8, 0.05, 2500.0, 5000.0, &sos, &error));
  EXPECT_THAT(error, HasSubstr("Nyquist"));
  EXPECT_FALSE(DesignButterworthLowPass(4, 0.0, 5000.0, &sos, &error));
  EXPECT_THAT(error, HasSubstr("cut-off must be positive"));
  EXPECT_FALSE(DesignButterworthLowPass(0, 50.0, 5000.0, &sos, &error));
  EXPECT_THAT(error, HasSubstr("order must be >= 1, got 0"));
  EXPECT_FALSE(DesignButterworthLowPassNormalized(2, 1.0, &sos, &error));
  EXPECT_FALSE(DesignChebyshev1LowPassNormalized(4, 0.0, 0.5, &sos, &error));
  EXPECT_THAT(error, HasSubstr("ripple"));
}

TEST(SignalFilterTest, SosFilterAndSteadyStateMatchScipy) {
  const SecondOrderSections sos = ReferenceSos("butter4_50hz_5khz_sos.csv");
  const Eigen::MatrixXd io = Reference("butter4_50hz_5khz_sosfilt.csv");
  EXPECT_LT(RelativeDifference(SosFilter(sos, io.col(0)), io.col(1)), 1e-12);
  EXPECT_LT(RelativeDifference(SosSteadyState(sos), Reference("butter4_50hz_5khz_zi.csv")), 1e-12);
}

TEST(SignalFilterTest, FiltFiltMatchesScipySosfiltfilt) {
  SecondOrderSections sos;
  std::string error;
  Eigen::VectorXd y;
  struct Case {
    int order;
    double wn;
    const char* file;
  };
  for (const Case& c : {Case{4, 50.0 / 2500.0, "butter4_50hz_5khz_filtfilt.csv"},
                        Case{5, 180.0 / 2500.0, "butter5_180hz_5khz_filtfilt.csv"},
                        Case{3, 0.3, "butter3_0p3_filtfilt.csv"}}) {
    ASSERT_TRUE(DesignButterworthLowPassNormalized(c.order, c.wn, &sos, &error)) << error;
    const Eigen::MatrixXd io = Reference(c.file);
    ASSERT_TRUE(FiltFilt(sos, io.col(0), &y, &error)) << error;
    EXPECT_LT(RelativeDifference(y, io.col(1)), 1e-10) << c.file;
  }
}

TEST(SignalFilterTest, PadLengthFollowsScipyAndShortSignalsAreRejected) {
  SecondOrderSections sos;
  std::string error;
  ASSERT_TRUE(DesignButterworthLowPassNormalized(4, 0.1, &sos, &error));
  EXPECT_EQ(FiltFiltPadLength(sos), 15);  // 3 · (2·2 + 1)
  ASSERT_TRUE(DesignButterworthLowPassNormalized(3, 0.3, &sos, &error));
  EXPECT_EQ(FiltFiltPadLength(sos), 12);  // 3 · (2·2 + 1 − 1): one section has b2 = a2 = 0
  EXPECT_EQ(FiltFiltPadLength(DecimationFilter(10)), 27);
  Eigen::VectorXd y;
  EXPECT_FALSE(FiltFilt(sos, Eigen::VectorXd::Ones(12), &y, &error));
  EXPECT_THAT(error, HasSubstr("12 samples is too short"));
  EXPECT_THAT(error, HasSubstr("at least 13"));
  EXPECT_TRUE(FiltFilt(sos, Eigen::VectorXd::Ones(13), &y, &error)) << error;
  // A constant passes unchanged (steady-state initial conditions: no edge transient).
  EXPECT_LT((y - Eigen::VectorXd::Ones(13)).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(SignalDecimateTest, MatchesScipyDecimateForSeveralFactors) {
  const Eigen::VectorXd x = Reference("decimate_input_2013.csv").col(0);
  std::string error;
  Eigen::VectorXd y;
  for (int r : {25, 4, 1}) {
    const Eigen::VectorXd expected = Reference("decimate_r" + std::to_string(r) + ".csv").col(0);
    ASSERT_TRUE(Decimate(x, r, &y, &error)) << error;
    ASSERT_EQ(y.size(), DecimatedLength(2013, r));
    EXPECT_LT(RelativeDifference(y, expected), 1e-10) << "R = " << r;
  }
  // R = 1 still low-passes at 0.8 of Nyquist (scipy's behaviour, unlike Matlab's).
  ASSERT_TRUE(Decimate(x, 1, &y, &error));
  EXPECT_GT((y - x).norm(), 1e-3 * x.norm());
}

TEST(SignalDecimateTest, ShortestAdmissibleSignalAndErrors) {
  const Eigen::VectorXd x = Reference("decimate_short28_r3.csv").col(0);
  std::string error;
  Eigen::VectorXd y;
  ASSERT_TRUE(Decimate(x, 3, &y, &error)) << error;
  EXPECT_LT(RelativeDifference(y, Reference("decimate_short28_r3_out.csv").col(0)), 1e-10);
  EXPECT_FALSE(Decimate(x.head(27), 3, &y, &error));
  EXPECT_THAT(error, HasSubstr("27 samples is too short"));
  EXPECT_FALSE(Decimate(x, 0, &y, &error));
  EXPECT_THAT(error, HasSubstr("factor must be >= 1, got 0"));
}

// Series for BlockDecimator: tones, a chirp, a step, a series that is zero throughout and one
// that is zero for its first third (a regressor's Coulomb column of a joint at rest).
Eigen::MatrixXd BlockTestSeries(int ns) {
  Eigen::MatrixXd series(ns, 6);
  for (int k = 0; k < ns; ++k) {
    const double t = k / 5000.0;
    series(k, 0) = std::sin(2.0 * M_PI * 1.3 * t) + 0.1 * std::sin(2.0 * M_PI * 400.0 * t);
    series(k, 1) = std::cos(2.0 * M_PI * (0.5 + 3.0 * t) * t) * (1.0 + t);
    series(k, 2) = k < ns / 2 ? -2.0 : 3.0;
    series(k, 3) = 0.0;
    series(k, 4) = k < ns / 3 ? 0.0 : std::sin(0.01 * k) + 1e3;
    series(k, 5) = std::sin(1e-3 * k * k / ns) * 1e-4;
  }
  return series;
}

// Fed in blocks, against the whole-record filter: round-off when the backward pass starts
// within the record (records longer than three lookaheads), bitwise otherwise, including both
// ends of the record.
TEST(BlockDecimatorTest, EqualsWholeRecordDecimation) {
  std::string error;
  for (const auto& [factor, ns] :
       std::vector<std::pair<int, int>>{{13, 3000}, {13, 140000}, {50, 150000}, {100, 70000}}) {
    const Eigen::MatrixXd series = BlockTestSeries(ns);
    Eigen::MatrixXd expected;
    ASSERT_TRUE(DecimateColumns(series, factor, 1, &expected, &error)) << error;
    for (int threads : {1, 2}) {
      BlockDecimator decimator;
      ASSERT_TRUE(decimator.Init(6, ns, factor, threads, &error)) << error;
      // Impulse response below 1e-17 of its peak after ≈ 210 R samples.
      EXPECT_GT(decimator.lookahead(), 150 * factor);
      EXPECT_LT(decimator.lookahead(), 250 * factor);
      int fed = 0;
      for (int i = 0; fed < ns; ++i) {
        const int m = std::min(ns - fed, i % 2 == 0 ? 2048 : 777);
        decimator.Feed(series.middleRows(fed, m));
        fed += m;
      }
      const Eigen::MatrixXd& decimated = decimator.decimated();
      ASSERT_EQ(decimated.rows(), DecimatedLength(ns, factor));
      ASSERT_EQ(decimated.cols(), 6);
      const bool one_buffer =
          ns < std::max(3 * decimator.lookahead(), BlockDecimator::kMinBufferSamples);
      for (int c = 0; c < 6; ++c) {
        const double scale = expected.col(c).cwiseAbs().maxCoeff();
        const double difference = (decimated.col(c) - expected.col(c)).cwiseAbs().maxCoeff();
        if (one_buffer || c == 3) {
          EXPECT_EQ(difference, 0.0) << "R " << factor << " Ns " << ns << " series " << c;
        } else {
          // The filter's own round-off (poles near the unit circle): a lookahead to 1e-22 of
          // the peak instead of 1e-17 gives the same differences (≤ 3.3e-13 of the scale).
          EXPECT_LE(difference, 5e-12 * scale) << "R " << factor << " Ns " << ns << " series " << c;
        }
      }
      // The end of the record (the last buffer, at least a lookahead long) is computed as the
      // whole-record filter computes it.
      const int last = decimator.lookahead() / factor;
      EXPECT_EQ((decimated.bottomRows(last) - expected.bottomRows(last)).cwiseAbs().maxCoeff(),
                0.0);
    }
  }
  BlockDecimator decimator;
  EXPECT_FALSE(decimator.Init(2, 27, 3, 1, &error));
  EXPECT_THAT(error, HasSubstr("BlockDecimator"));
  EXPECT_FALSE(decimator.Init(2, 1000, 0, 1, &error));
}

// Series that become nonzero only after the buffer has emitted samples and moved its lookahead
// (the buffer holds no column for a series until then) and one that stays zero: the
// whole-record filter's values up to round-off, the last buffer bitwise, the zero series exactly
// zero.
TEST(BlockDecimatorTest, SeriesThatStartLateEqualTheWholeRecordFilter) {
  std::string error;
  const int factor = 13, ns = 230000;
  Eigen::MatrixXd series = Eigen::MatrixXd::Zero(ns, 4);
  for (int k = 0; k < ns; ++k) {
    const double t = k / 5000.0;
    series(k, 0) = std::sin(2.0 * M_PI * 0.7 * t);
    if (k >= 150000) series(k, 1) = std::cos(2.0 * M_PI * 2.1 * t) + 0.5;
    if (k >= 90001) series(k, 3) = k % 7 == 0 ? 1.0 : -0.25;  // starts inside a block
  }
  Eigen::MatrixXd expected;
  ASSERT_TRUE(DecimateColumns(series, factor, 1, &expected, &error)) << error;
  for (int threads : {1, 2}) {
    BlockDecimator decimator;
    ASSERT_TRUE(decimator.Init(4, ns, factor, threads, &error)) << error;
    ASSERT_LT(std::max(3 * decimator.lookahead(), BlockDecimator::kMinBufferSamples), 90000);
    for (int fed = 0; fed < ns; fed += 2048) {
      decimator.Feed(series.middleRows(fed, std::min(2048, ns - fed)));
    }
    const Eigen::MatrixXd& decimated = decimator.decimated();
    ASSERT_EQ(decimated.rows(), DecimatedLength(ns, factor));
    EXPECT_EQ(decimated.col(2).cwiseAbs().maxCoeff(), 0.0);
    for (int c : {0, 1, 3}) {
      const double scale = expected.col(c).cwiseAbs().maxCoeff();
      EXPECT_LE((decimated.col(c) - expected.col(c)).cwiseAbs().maxCoeff(), 5e-12 * scale)
          << "series " << c << " threads " << threads;
    }
    const int last = decimator.lookahead() / factor;
    EXPECT_EQ((decimated.bottomRows(last) - expected.bottomRows(last)).cwiseAbs().maxCoeff(), 0.0);
  }
}

// SetOutput: the 6 series as 3 columns of a stack of 2 series each, all rows or only some, go
// straight into the caller's matrix with the values decimated() holds (bitwise), on a record of
// one buffer and on one of several; a matrix of that shape keeps its storage.
TEST(BlockDecimatorTest, OutputIntoKeptRowsOfAStackEqualsTheDecimatedSeries) {
  std::string error;
  for (const auto& [factor, ns] : std::vector<std::pair<int, int>>{{13, 3000}, {13, 140000}}) {
    const Eigen::MatrixXd series = BlockTestSeries(ns);
    BlockDecimator reference;
    ASSERT_TRUE(reference.Init(6, ns, factor, 1, &error)) << error;
    for (int fed = 0; fed < ns; fed += 2048) {
      reference.Feed(series.middleRows(fed, std::min(2048, ns - fed)));
    }
    const Eigen::MatrixXd& expected = reference.decimated();
    const int nd = DecimatedLength(ns, factor);
    std::vector<int> some;  // rows of the stack of 2 · nd: a gap at the start, every 3rd, the end
    for (int r = 5; r < 2 * nd; r += 3) some.push_back(r);
    if (some.back() != 2 * nd - 1) some.push_back(2 * nd - 1);
    for (const std::vector<int>* kept : std::vector<const std::vector<int>*>{nullptr, &some}) {
      BlockDecimator decimator;
      ASSERT_TRUE(decimator.Init(6, ns, factor, 2, &error)) << error;
      const int rows = kept == nullptr ? 2 * nd : static_cast<int>(kept->size());
      Eigen::MatrixXd output = Eigen::MatrixXd::Constant(rows, 3, 7.0);
      const double* storage = output.data();
      decimator.SetOutput(&output, 2, kept);
      for (int fed = 0; fed < ns; fed += 2048) {
        decimator.Feed(series.middleRows(fed, std::min(2048, ns - fed)));
      }
      ASSERT_EQ(output.rows(), rows);
      ASSERT_EQ(output.cols(), 3);
      EXPECT_EQ(output.data(), storage);
      for (int c = 0; c < 3; ++c) {
        for (int p = 0; p < rows; ++p) {
          const int r = kept == nullptr ? p : (*kept)[p];
          ASSERT_EQ(output(p, c), expected(r % nd, 2 * c + r / nd))
              << "R " << factor << " Ns " << ns << " column " << c << " row " << r;
        }
      }
    }
    EXPECT_GT(expected.cwiseAbs().maxCoeff(), 0.0);
  }
}

TEST(SignalDecimateTest, ParallelColumnsEqualSerialDecimation) {
  const Eigen::VectorXd x = Reference("decimate_input_2013.csv").col(0);
  Eigen::MatrixXd signals(x.size(), 5);
  for (int c = 0; c < 5; ++c)
    signals.col(c) = x * (c + 1.0) + Eigen::VectorXd::Constant(x.size(), c);
  std::string error;
  for (int threads : {1, 2, 3}) {
    Eigen::MatrixXd decimated;
    ASSERT_TRUE(DecimateColumns(signals, 25, threads, &decimated, &error)) << error;
    ASSERT_EQ(decimated.rows(), DecimatedLength(2013, 25));
    for (int c = 0; c < 5; ++c) {
      Eigen::VectorXd y;
      ASSERT_TRUE(Decimate(signals.col(c), 25, &y, &error));
      EXPECT_EQ((decimated.col(c) - y).cwiseAbs().maxCoeff(), 0.0) << "threads " << threads;
    }
  }
  Eigen::MatrixXd filtered;
  ASSERT_TRUE(FiltFiltColumns(DecimationFilter(25), signals, 2, &filtered, &error));
  Eigen::VectorXd y;
  ASSERT_TRUE(FiltFilt(DecimationFilter(25), signals.col(3), &y, &error));
  EXPECT_EQ((filtered.col(3) - y).cwiseAbs().maxCoeff(), 0.0);
}

TEST(SignalDecimateTest, StackedDecimationFiltersEveryJointSeparatelyInBothOrders) {
  const Eigen::VectorXd x = Reference("decimate_input_2013.csv").col(0);
  const int n = 400, joints = 3, columns = 2, r = 5;
  // series(j, c) = a distinct slice of the reference signal.
  auto series = [&](int j, int c) -> Eigen::VectorXd {
    return x.segment(100 * j + 37 * c, n) * (1.0 + j) -
           Eigen::VectorXd::Constant(n, static_cast<double>(c));
  };
  std::string error;
  for (StackOrder order : {StackOrder::kJointMajor, StackOrder::kSampleMajor}) {
    Eigen::MatrixXd stacked(n * joints, columns);
    for (int j = 0; j < joints; ++j) {
      for (int c = 0; c < columns; ++c) {
        const Eigen::VectorXd s = series(j, c);
        for (int k = 0; k < n; ++k) stacked(StackedRow(order, joints, n, j, k), c) = s(k);
      }
    }
    Eigen::MatrixXd decimated;
    ASSERT_TRUE(DecimateStacked(stacked, joints, order, r, 2, &decimated, &error)) << error;
    const int n_out = DecimatedLength(n, r);
    ASSERT_EQ(decimated.rows(), n_out * joints);
    for (int j = 0; j < joints; ++j) {
      for (int c = 0; c < columns; ++c) {
        Eigen::VectorXd expected;
        ASSERT_TRUE(Decimate(series(j, c), r, &expected, &error));
        for (int k = 0; k < n_out; ++k) {
          EXPECT_EQ(decimated(StackedRow(order, joints, n_out, j, k), c), expected(k));
        }
      }
    }
    // The vector overload (torques) equals the matrix one on a single column.
    Eigen::VectorXd torque;
    ASSERT_TRUE(
        DecimateStacked(Eigen::VectorXd(stacked.col(1)), joints, order, r, 1, &torque, &error));
    EXPECT_EQ((torque - decimated.col(1)).cwiseAbs().maxCoeff(), 0.0);
  }
}

TEST(SignalFilterTest, TooManySectionsIsAnError) {
  SecondOrderSections sos;
  std::string error;
  ASSERT_TRUE(DesignButterworthLowPassNormalized(18, 0.5, &sos, &error)) << error;
  Eigen::VectorXd y;
  EXPECT_FALSE(FiltFilt(sos, Eigen::VectorXd::Ones(500), &y, &error));
  EXPECT_THAT(error, HasSubstr("at most 8 second-order sections (order 16), got 9"));
}

TEST(SignalDifferenceTest, CentralDifferencesAreExactForPolynomials) {
  const double dt = 0.01;
  const int n = 50;
  Eigen::VectorXd q(n), dq(n), ddq(n);
  for (int k = 0; k < n; ++k) {
    const double t = k * dt;
    q(k) = 1.0 + 2.0 * t - 3.0 * t * t;
    dq(k) = 2.0 - 6.0 * t;
    ddq(k) = -6.0;
  }
  const Eigen::VectorXd v = CentralDifference(q, dt);
  EXPECT_LT((v.segment(1, n - 2) - dq.segment(1, n - 2)).cwiseAbs().maxCoeff(), 1e-9);
  // One-sided ends (numpy.gradient, edge_order = 1): error dt · |q''| / 2.
  EXPECT_NEAR(v(0), (q(1) - q(0)) / dt, 1e-12);
  EXPECT_NEAR(v(0), dq(0) - 3.0 * dt, 1e-9);
  EXPECT_NEAR(v(n - 1), dq(n - 1) + 3.0 * dt, 1e-9);
  EXPECT_LT((CentralSecondDifference(q, dt) - ddq).cwiseAbs().maxCoeff(), 1e-7);
  // A cubic: second difference exact inside.
  Eigen::VectorXd cubic(n), cubic_acc(n);
  for (int k = 0; k < n; ++k) {
    const double t = k * dt;
    cubic(k) = t * t * t;
    cubic_acc(k) = 6.0 * t;
  }
  const Eigen::VectorXd a = CentralSecondDifference(cubic, dt);
  EXPECT_LT((a.segment(1, n - 2) - cubic_acc.segment(1, n - 2)).cwiseAbs().maxCoeff(), 1e-7);
  EXPECT_EQ(a(0), a(1));
}

TEST(SignalDifferenceTest, ButterworthThenDifferencesRecoverSineDerivatives) {
  // The conventional step 1 of Brunot et al. (2017) §2.3 on a noisy sine: filtfilt + central
  // differences.
  const double fs = 1000.0, dt = 1.0 / fs, w = 2.0 * M_PI * 2.0;
  const int n = 3000;
  Eigen::VectorXd q(n);
  for (int k = 0; k < n; ++k) q(k) = std::sin(w * k * dt) + 1e-5 * std::sin(9876.5 * k * k);
  SecondOrderSections sos;
  std::string error;
  ASSERT_TRUE(DesignButterworthLowPass(4, 20.0, fs, &sos, &error));
  Eigen::VectorXd q_filtered;
  ASSERT_TRUE(FiltFilt(sos, q, &q_filtered, &error));
  const Eigen::VectorXd v = CentralDifference(q_filtered, dt);
  const Eigen::VectorXd a = CentralSecondDifference(q_filtered, dt);
  double max_v_error = 0.0, max_a_error = 0.0;
  for (int k = 100; k < n - 100; ++k) {
    max_v_error = std::max(max_v_error, std::abs(v(k) - w * std::cos(w * k * dt)));
    max_a_error = std::max(max_a_error, std::abs(a(k) + w * w * std::sin(w * k * dt)));
  }
  // Residual errors come from the 1e-5 pseudo-noise amplified by differentiation (measured
  // 2.3e-3 w and 3.7e-2 w² with this signal).
  EXPECT_LT(max_v_error, 5e-3 * w);
  EXPECT_LT(max_a_error, 6e-2 * w * w);
}

}  // namespace
}  // namespace dynid::data
