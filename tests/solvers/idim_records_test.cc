// IDIM on real-log records (solvers/idim.h): time stamps that jitter, joints without a measured
// torque, rest detection. Simulate-then-identify on a three-joint arm whose torques are exactly
// X θ plus white noise, with an analytic trajectory evaluated at the record's own time stamps.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "dynid/models/base_parameters.h"
#include "dynid/models/serial_robot.h"
#include "dynid/solvers/idim.h"

namespace dynid::solvers {
namespace {

models::SerialRobot MakeArm() {
  std::vector<models::JointGeometry> joints(3);
  joints[1].alpha_rad = M_PI / 2;
  joints[2].d_m = 0.4;
  models::Parameterization parameterization;
  parameterization.torque_offset = true;
  models::SerialRobot robot("arm3", joints, parameterization);
  const double masses[3] = {4.0, 3.0, 2.0};
  for (int j = 0; j < 3; ++j) {
    robot.SetLinkInertia(
        j, models::LinkInertia::FromCenterOfMass(masses[j], Eigen::Vector3d(0.15, 0.02 * j, 0.01),
                                                 Eigen::Vector3d(0.02, 0.03, 0.04).asDiagonal()));
    models::JointDrive drive;
    drive.ia = 0.05;
    drive.fv = 0.8 + 0.2 * j;
    drive.fc = 0.5;
    drive.offset = 0.1 * (j + 1);
    robot.SetJointDrive(j, drive);
  }
  return robot;
}

// Time stamps with steps uniform in [0.77, 1.23] × 10 ms (the jitter of a real 100 Hz log).
Eigen::VectorXd JitteredTimes(int n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> step(0.0077, 0.0123);
  Eigen::VectorXd t(n);
  t[0] = 0.0;
  for (int k = 1; k < n; ++k) t[k] = t[k - 1] + step(rng);
  return t;
}

// q_j(t) = Σ_h a sin(ω_h t + φ_jh) and its exact derivatives.
void Trajectory(const Eigen::VectorXd& t, Eigen::MatrixXd* q, Eigen::MatrixXd* qd,
                Eigen::MatrixXd* qdd) {
  const int n = static_cast<int>(t.size());
  q->setZero(n, 3);
  qd->setZero(n, 3);
  qdd->setZero(n, 3);
  const double omega[3] = {0.9, 2.1, 3.7};
  for (int j = 0; j < 3; ++j) {
    for (int h = 0; h < 3; ++h) {
      const double a = 0.6 / (h + 1), w = omega[h] * (1.0 + 0.15 * j), phase = 0.7 * j + h;
      for (int k = 0; k < n; ++k) {
        const double s = std::sin(w * t[k] + phase), c = std::cos(w * t[k] + phase);
        (*q)(k, j) += a * s;
        (*qd)(k, j) += a * w * c;
        (*qdd)(k, j) -= a * w * w * s;
      }
    }
  }
}

struct Record {
  models::SerialRobot robot = MakeArm();
  models::BaseParameterSet base;
  IdimModel model;
  Eigen::VectorXd t;
  Eigen::MatrixXd q, qd, qdd, q_measured, tau_measured;
  Eigen::VectorXd truth;  // base parameters
};

Record MakeRecord(const Eigen::VectorXd& t, double position_noise, double torque_noise,
                  std::vector<bool> measured = {}) {
  Record r;
  r.t = t;
  std::string error;
  models::NumericalBaseOptions base_options;
  base_options.measured_joints = measured;
  EXPECT_TRUE(models::ComputeBaseParameters(r.robot, base_options, &r.base, &error)) << error;
  EXPECT_TRUE(IdimModel::Create(r.robot, r.base, {}, &r.model, &error)) << error;
  Trajectory(t, &r.q, &r.qd, &r.qdd);
  Eigen::MatrixXd x;
  models::SerialRobotData data(r.robot);
  r.robot.StackedRegressor(r.q, r.qd, r.qdd, &data, &x);
  const Eigen::VectorXd tau = x * r.robot.standard_parameters();
  const int n = static_cast<int>(t.size());
  std::mt19937 rng(11);
  std::normal_distribution<double> gauss(0.0, 1.0);
  r.tau_measured.resize(n, 3);
  r.q_measured.resize(n, 3);
  for (int j = 0; j < 3; ++j) {
    for (int k = 0; k < n; ++k) {
      r.tau_measured(k, j) = tau[j * n + k] + torque_noise * gauss(rng);
      r.q_measured(k, j) = r.q(k, j) + position_noise * gauss(rng);
    }
  }
  r.truth = r.base.Reduce(r.robot.standard_parameters());
  return r;
}

IdimPreprocessingOptions IrwOptions() {
  IdimPreprocessingOptions options;
  options.differentiator = IdimDifferentiator::kIrw2;
  options.decimation_factor = 1;
  return options;
}

// Largest |θ̂ − θ| / σ over the parameters.
double MaxAbsZ(const IdimResult& result, const Eigen::VectorXd& truth) {
  return ((result.fit.theta - truth).array() / result.fit.standard_deviation.array())
      .abs()
      .maxCoeff();
}

TEST(IdimRecordsTest, UniformTimeStampsGiveTheUniformSystem) {
  const int n = 800;
  const Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(n, 0.0, (n - 1) * 0.01);
  Record r = MakeRecord(t, 1e-4, 0.05);
  IdimPreprocessingOptions options = IrwOptions();
  options.sample_rate_hz = 100.0;
  IdimSystem uniform, stamped;
  std::string error;
  ASSERT_TRUE(BuildIdimSystem(r.model, r.q_measured, r.tau_measured, options, &uniform, &error))
      << error;
  options.sample_rate_hz = 1.0;  // replaced by the stamps' rate
  ASSERT_TRUE(
      BuildIdimSystemAtTimes(r.model, t, r.q_measured, r.tau_measured, options, &stamped, &error))
      << error;
  EXPECT_NEAR(stamped.sample_rate_hz, 100.0, 1e-9);
  EXPECT_LE((stamped.x - uniform.x).cwiseAbs().maxCoeff(), 1e-9 * uniform.x.cwiseAbs().maxCoeff());
}

TEST(IdimRecordsTest, JitteredStampsAreIdentifiedAtTheirTimes) {
  // 40 s at a median 10 ms with ±23 % jitter; 0.1 mrad position noise, 0.05 N m torque noise.
  const Eigen::VectorXd t = JitteredTimes(4000, 5);
  Record r = MakeRecord(t, 1e-4, 0.05);
  IdimPreprocessingOptions options = IrwOptions();
  IdimSystem system;
  std::string error;
  ASSERT_TRUE(
      BuildIdimSystemAtTimes(r.model, t, r.q_measured, r.tau_measured, options, &system, &error))
      << error;
  // The derivatives at the stamps, relative RMS errors (measured 0.0018 and 0.029; as uniform
  // below 0.052 and 0.52), and the estimate (largest |z| 2.8 over the base parameters; as uniform
  // 33).
  const double velocity_error = (system.qd - r.qd).norm() / r.qd.norm();
  const double acceleration_error = (system.qdd - r.qdd).norm() / r.qdd.norm();
  EXPECT_LT(velocity_error, 3e-3);
  EXPECT_LT(acceleration_error, 5e-2);
  IdimRunOptions run;
  IdimResult at_times;
  ASSERT_TRUE(RunIdim(r.model, system, run, Eigen::VectorXd(), nullptr, &at_times, &error))
      << error;
  EXPECT_LT(MaxAbsZ(at_times, r.truth), 4.0);

  // The same samples taken as uniform at the mean step: the derivatives are wrong by the jitter
  // and the estimate is biased far outside its σ.
  const double mean_step = (t[t.size() - 1] - t[0]) / (t.size() - 1);
  options.sample_rate_hz = 1.0 / mean_step;
  IdimSystem uniform;
  ASSERT_TRUE(BuildIdimSystem(r.model, r.q_measured, r.tau_measured, options, &uniform, &error))
      << error;
  EXPECT_GT((uniform.qd - r.qd).norm() / r.qd.norm(), 10 * velocity_error);
  IdimResult as_uniform;
  ASSERT_TRUE(RunIdim(r.model, uniform, run, Eigen::VectorXd(), nullptr, &as_uniform, &error))
      << error;
  EXPECT_GT(MaxAbsZ(as_uniform, r.truth), 10.0);
}

TEST(IdimRecordsTest, IrregularRecordsRefuseWhatNeedsUniformSampling) {
  const Eigen::VectorXd t = JitteredTimes(500, 6);
  Record r = MakeRecord(t, 1e-4, 0.05);
  IdimSystem system;
  std::string error;
  IdimPreprocessingOptions conventional;
  conventional.decimation_factor = 1;
  EXPECT_FALSE(BuildIdimSystemAtTimes(r.model, t, r.q_measured, r.tau_measured, conventional,
                                      &system, &error));
  EXPECT_NE(error.find("conventional differentiator needs a uniform record"), std::string::npos)
      << error;
  IdimPreprocessingOptions decimated = IrwOptions();
  decimated.decimation_factor = 2;
  EXPECT_FALSE(
      BuildIdimSystemAtTimes(r.model, t, r.q_measured, r.tau_measured, decimated, &system, &error));
  EXPECT_NE(error.find("decimation"), std::string::npos) << error;
  Eigen::VectorXd backwards = t;
  backwards[100] = backwards[99];
  EXPECT_FALSE(BuildIdimSystemAtTimes(r.model, backwards, r.q_measured, r.tau_measured,
                                      IrwOptions(), &system, &error));
  EXPECT_NE(error.find("sample 101"), std::string::npos) << error;
}

TEST(IdimRecordsTest, UnmeasuredJointsLeaveTheSystemAndTheBaseParameters) {
  // Joint 2's torque is missing (NaN in the record): its rows are left out, the base parameters
  // are those of joints 1 and 3, and LS and Gautier's WLS (with an empty block) recover them.
  const std::vector<bool> measured = {true, false, true};
  const Eigen::VectorXd t = JitteredTimes(3000, 7);
  Record r = MakeRecord(t, 1e-4, 0.05, measured);
  Record all = MakeRecord(t, 1e-4, 0.05);
  EXPECT_LT(r.base.size(), all.base.size());
  EXPECT_FALSE(r.base.closed_form);
  // fv2 acts in joint 2's equation only: it is no base parameter of the measured ones.
  EXPECT_LT(r.base.Index("fv2"), 0);
  EXPECT_GE(all.base.Index("fv2"), 0);
  r.tau_measured.col(1).setConstant(std::nan(""));
  IdimPreprocessingOptions options = IrwOptions();
  options.measured_joints = measured;
  IdimSystem system;
  std::string error;
  ASSERT_TRUE(
      BuildIdimSystemAtTimes(r.model, t, r.q_measured, r.tau_measured, options, &system, &error))
      << error;
  EXPECT_EQ(system.x.rows(), 2 * t.size());
  for (int row = 0; row < system.x.rows(); ++row) EXPECT_NE(system.blocks.BlockOf(row), 1);
  for (IdimEstimator estimator :
       {IdimEstimator::kLeastSquares, IdimEstimator::kWeightedLeastSquares}) {
    IdimRunOptions run;
    run.estimator = estimator;
    IdimResult result;
    ASSERT_TRUE(RunIdim(r.model, system, run, Eigen::VectorXd(), nullptr, &result, &error))
        << error;
    ASSERT_TRUE(result.success) << result.message;
    EXPECT_LT(MaxAbsZ(result, r.truth), 4.0) << IdimEstimatorName(estimator);
  }
  // Without the flags the NaN column is an error.
  options.measured_joints.clear();
  EXPECT_FALSE(
      BuildIdimSystemAtTimes(r.model, t, r.q_measured, r.tau_measured, options, &system, &error));
}

// The IRW differentiators smooth the joints one at a time on one thread (one joint's smoother
// result held) and all together on more: the same NVRs, states and decimated system, bitwise.
TEST(IdimRecordsTest, IrwJointsOneAtATimeEqualAllTogether) {
  const int n = 3000;
  const Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(n, 0.0, (n - 1) * 0.001);
  const Record r = MakeRecord(t, 1e-4, 0.05);
  for (IdimDifferentiator differentiator : {IdimDifferentiator::kIrw1, IdimDifferentiator::kIrw2}) {
    IdimPreprocessingOptions options;
    options.differentiator = differentiator;
    options.sample_rate_hz = 1000.0;
    options.decimation_factor = 4;
    IdimSystem one, all;
    std::string error;
    options.num_threads = 1;
    ASSERT_TRUE(BuildIdimSystem(r.model, r.q_measured, r.tau_measured, options, &one, &error))
        << error;
    options.num_threads = 3;
    ASSERT_TRUE(BuildIdimSystem(r.model, r.q_measured, r.tau_measured, options, &all, &error))
        << error;
    const std::string name = IdimDifferentiatorName(differentiator);
    ASSERT_EQ(one.nvr_position.size(), 3u) << name;
    EXPECT_EQ(one.nvr_position, all.nvr_position) << name;
    EXPECT_EQ(one.nvr_velocity, all.nvr_velocity) << name;
    EXPECT_EQ(one.nvr_velocity.size(), differentiator == IdimDifferentiator::kIrw1 ? 3u : 0u)
        << name;
    // Distinct NVRs per joint: each joint was fitted on its own series.
    EXPECT_NE(one.nvr_position[0], one.nvr_position[2]) << name;
    for (const auto& [a, b] : {std::pair(&one.q, &all.q), std::pair(&one.qd, &all.qd),
                               std::pair(&one.qdd, &all.qdd), std::pair(&one.x, &all.x)}) {
      ASSERT_EQ(a->rows(), b->rows()) << name;
      ASSERT_GT(a->rows(), 0) << name;
      EXPECT_TRUE((a->array() == b->array()).all()) << name;
    }
    EXPECT_TRUE((one.y.array() == all.y.array()).all()) << name;
  }
}

TEST(IdimRecordsTest, RestVelocitySetsSlowVelocitiesToZero) {
  const Eigen::VectorXd t = JitteredTimes(600, 8);
  Record r = MakeRecord(t, 1e-4, 0.05);
  IdimPreprocessingOptions options = IrwOptions();
  IdimSystem plain, rest;
  std::string error;
  ASSERT_TRUE(
      BuildIdimSystemAtTimes(r.model, t, r.q_measured, r.tau_measured, options, &plain, &error))
      << error;
  options.rest_velocity = 0.2;
  ASSERT_TRUE(
      BuildIdimSystemAtTimes(r.model, t, r.q_measured, r.tau_measured, options, &rest, &error))
      << error;
  int zeroed = 0;
  for (Eigen::Index i = 0; i < plain.qd.size(); ++i) {
    if (std::abs(plain.qd(i)) < 0.2) {
      EXPECT_EQ(rest.qd(i), 0.0);
      ++zeroed;
    } else {
      EXPECT_EQ(rest.qd(i), plain.qd(i));
    }
  }
  EXPECT_GT(zeroed, 10);
  options.rest_velocity = -1.0;
  EXPECT_FALSE(options.IsValid(&error));
}

// The conventional system of `r` at 1 kHz, decimated by `factor`, with the rows of joint
// velocities below 0.3 rad/s left out (a selection with gaps).
bool BuildSelectedSystem(const Record& r, int factor, IdimSystem* system, std::string* error) {
  IdimPreprocessingOptions options;
  options.differentiator = IdimDifferentiator::kConventional;
  options.sample_rate_hz = 1000.0;
  options.decimation_factor = factor;
  options.select_samples = true;
  options.selection.velocity_threshold = Eigen::VectorXd::Constant(1, 0.3);
  return BuildIdimSystem(r.model, r.q_measured, r.tau_measured, options, system, error);
}

// The instruments' products and HAC rows formed piece by piece from exact states (sample chunks
// without decimation, rows of a selection with gaps; the decimated instruments with R = 4) equal
// those of the instruments formed whole by ProcessLikeSystem.
TEST(IdimRecordsTest, InstrumentProductsByPiecesMatchTheWholeInstruments) {
  const int n = 5000;  // more than two chunks of 2048 samples
  const Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(n, 0.0, (n - 1) * 0.001);
  Record r = MakeRecord(t, 1e-5, 0.05);
  for (int factor : {1, 4}) {
    IdimSystem system;
    std::string error;
    ASSERT_TRUE(BuildSelectedSystem(r, factor, &system, &error)) << error;
    ASSERT_LT(system.x.rows(), 3 * system.num_samples);  // the selection left gaps
    Eigen::MatrixXd z;
    ASSERT_TRUE(ProcessLikeSystem(r.model, system, r.q, r.qd, r.qdd, Eigen::MatrixXd(), &z, nullptr,
                                  &error))
        << error;
    const Eigen::MatrixXd whole = IdimIvProducts(z, system.x, system.y, system.blocks);
    Eigen::MatrixXd pieces;
    ASSERT_TRUE(ProcessLikeSystemProducts(r.model, system, r.q, r.qd, r.qdd, &pieces, &error))
        << error;
    ASSERT_EQ(pieces.rows(), whole.rows());
    ASSERT_EQ(pieces.cols(), whole.cols());
    EXPECT_LE((pieces - whole).cwiseAbs().maxCoeff(), 1e-12 * whole.cwiseAbs().maxCoeff())
        << "R = " << factor;
    const Eigen::Index b = system.x.cols();
    const LinearLeastSquaresSummary from_z =
        SolveIdimIvNormalProducts(z, system.x, system.y, system.blocks, 1.0);
    const LinearLeastSquaresSummary from_pieces =
        SolveIdimIvFromProducts(pieces, system.x, system.y, system.blocks, 1.0);
    ASSERT_TRUE(from_z.success && from_pieces.success) << from_pieces.message;
    EXPECT_LE((from_pieces.theta - from_z.theta).norm(), 1e-9 * from_z.theta.norm());
    EXPECT_LE((from_pieces.covariance - from_z.covariance).norm(), 1e-9 * from_z.covariance.norm());
    const HacCovariance hac_whole =
        ComputeHacCovariance(z, system.x, from_z.residual, system.blocks);
    const HacCovariance hac_pieces = ComputeHacCovarianceFromRows(
        [&](const HacRowConsumer& consume, std::string* why) {
          return ForEachInstrumentPiece(r.model, system, r.q, r.qd, r.qdd, consume, why);
        },
        pieces.leftCols(b), from_z.residual, system.blocks);
    ASSERT_TRUE(hac_whole.success && hac_pieces.success) << hac_pieces.message;
    EXPECT_EQ(hac_pieces.lags, hac_whole.lags);
    EXPECT_LE((hac_pieces.covariance - hac_whole.covariance).norm(),
              1e-9 * hac_whole.covariance.norm());
  }
  // A simulated record of another length is refused.
  IdimPreprocessingOptions options;
  options.sample_rate_hz = 1000.0;
  options.decimation_factor = 1;
  IdimSystem system;
  std::string error;
  ASSERT_TRUE(BuildIdimSystem(r.model, r.q_measured, r.tau_measured, options, &system, &error));
  Eigen::MatrixXd products;
  const Eigen::MatrixXd shorter = r.q.topRows(n - 1);
  EXPECT_FALSE(
      ProcessLikeSystemProducts(r.model, system, shorter, shorter, shorter, &products, &error));
  EXPECT_NE(error.find("does not decimate"), std::string::npos) << error;
}

// An empty qdd (the motion accelerations of qd, formed chunk by chunk) against
// MotionAccelerations(qd) held whole: the instruments of ProcessLikeSystem, their products and
// their pieces bitwise, undecimated and decimated (more than two chunks of 2048 samples, a
// selection with gaps).
TEST(IdimRecordsTest, MotionAccelerationsByChunksEqualTheHeldOnes) {
  const int n = 5000;
  const Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(n, 0.0, (n - 1) * 0.001);
  Record r = MakeRecord(t, 1e-5, 0.05);
  const Eigen::MatrixXd qdd = MotionAccelerations(r.qd, 1000.0);
  const Eigen::MatrixXd none;
  for (int factor : {1, 4}) {
    IdimSystem system;
    std::string error;
    ASSERT_TRUE(BuildSelectedSystem(r, factor, &system, &error)) << error;
    ASSERT_LT(system.x.rows(), 3 * system.num_samples);  // the selection left gaps
    Eigen::MatrixXd z_held, z_chunks, z_exact;
    ASSERT_TRUE(ProcessLikeSystem(r.model, system, r.q, r.qd, qdd, Eigen::MatrixXd(), &z_held,
                                  nullptr, &error))
        << error;
    ASSERT_TRUE(ProcessLikeSystem(r.model, system, r.q, r.qd, none, Eigen::MatrixXd(), &z_chunks,
                                  nullptr, &error))
        << error;
    ASSERT_EQ(z_chunks.rows(), z_held.rows());
    ASSERT_EQ(z_chunks.cols(), z_held.cols());
    EXPECT_TRUE((z_chunks.array() == z_held.array()).all()) << "R = " << factor;
    // Not the exact accelerations' instruments (the central differences differ from them).
    ASSERT_TRUE(ProcessLikeSystem(r.model, system, r.q, r.qd, r.qdd, Eigen::MatrixXd(), &z_exact,
                                  nullptr, &error));
    EXPECT_GT((z_exact - z_held).cwiseAbs().maxCoeff(), 0.0);
    Eigen::MatrixXd products_held, products_chunks;
    ASSERT_TRUE(ProcessLikeSystemProducts(r.model, system, r.q, r.qd, qdd, &products_held, &error));
    ASSERT_TRUE(
        ProcessLikeSystemProducts(r.model, system, r.q, r.qd, none, &products_chunks, &error));
    EXPECT_TRUE((products_chunks.array() == products_held.array()).all()) << "R = " << factor;
    std::vector<Eigen::MatrixXd> pieces_held, pieces_chunks;
    ASSERT_TRUE(ForEachInstrumentPiece(
        r.model, system, r.q, r.qd, qdd,
        [&](Eigen::Index, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
          pieces_held.push_back(piece);
        },
        &error));
    ASSERT_TRUE(ForEachInstrumentPiece(
        r.model, system, r.q, r.qd, none,
        [&](Eigen::Index, const Eigen::Ref<const Eigen::MatrixXd>& piece) {
          pieces_chunks.push_back(piece);
        },
        &error));
    ASSERT_EQ(pieces_chunks.size(), pieces_held.size());
    for (size_t i = 0; i < pieces_held.size(); ++i) {
      EXPECT_TRUE((pieces_chunks[i].array() == pieces_held[i].array()).all()) << "piece " << i;
    }
  }
}

// A streamed X (IdimPreprocessingOptions::stream_regressor) against the held one on the same
// record (undecimated, a selection with gaps, more rows than one tall-skinny QR block): the
// rows it forms, X θ, the instruments' products, and the LS estimate, covariance, residual and
// HAC covariance of RunIdim.
TEST(IdimRecordsTest, StreamedRegressorEqualsTheHeldOne) {
  const int n = 5000;
  const Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(n, 0.0, (n - 1) * 0.001);
  Record r = MakeRecord(t, 1e-5, 0.05);
  IdimPreprocessingOptions options;
  options.differentiator = IdimDifferentiator::kConventional;
  options.sample_rate_hz = 1000.0;
  options.decimation_factor = 1;
  options.select_samples = true;
  options.selection.velocity_threshold = Eigen::VectorXd::Constant(1, 0.3);
  IdimSystem held, streamed;
  std::string error;
  ASSERT_TRUE(BuildIdimSystem(r.model, r.q_measured, r.tau_measured, options, &held, &error))
      << error;
  options.stream_regressor = true;
  ASSERT_TRUE(BuildIdimSystem(r.model, r.q_measured, r.tau_measured, options, &streamed, &error))
      << error;
  ASSERT_FALSE(held.streamed);
  ASSERT_TRUE(streamed.streamed);
  EXPECT_EQ(streamed.x.rows(), 0);
  ASSERT_EQ(streamed.kept_rows, held.kept_rows);
  ASSERT_LT(held.x.rows(), 3 * held.num_samples);  // the selection left gaps
  ASSERT_GT(held.x.rows(), 8192);                  // the held LS reduces X blockwise too
  EXPECT_EQ(streamed.num_rows(), held.x.rows());
  EXPECT_EQ((streamed.y - held.y).cwiseAbs().maxCoeff(), 0.0);
  Eigen::MatrixXd formed;
  ASSERT_TRUE(FormSystemRegressor(r.model, streamed, &formed, &error)) << error;
  ASSERT_EQ(formed.rows(), held.x.rows());
  EXPECT_EQ((formed - held.x).cwiseAbs().maxCoeff(), 0.0);  // same regressor, same rows
  Eigen::VectorXd x_theta;
  ASSERT_TRUE(SystemTimes(r.model, streamed, r.truth, &x_theta, &error)) << error;
  EXPECT_LE((x_theta - held.x * r.truth).cwiseAbs().maxCoeff(),
            1e-12 * held.y.cwiseAbs().maxCoeff());

  // The instruments' products with X formed beside them.
  Eigen::MatrixXd products_held, products_streamed;
  ASSERT_TRUE(ProcessLikeSystemProducts(r.model, held, r.q, r.qd, r.qdd, &products_held, &error));
  ASSERT_TRUE(
      ProcessLikeSystemProducts(r.model, streamed, r.q, r.qd, r.qdd, &products_streamed, &error))
      << error;
  EXPECT_LE((products_streamed - products_held).cwiseAbs().maxCoeff(),
            1e-12 * products_held.cwiseAbs().maxCoeff());

  // LS (tall-skinny QR over the pieces) and its HAC covariance.
  IdimRunOptions run;
  run.estimator = IdimEstimator::kLeastSquares;
  IdimResult ls_held, ls_streamed;
  ASSERT_TRUE(RunIdim(r.model, held, run, Eigen::VectorXd(), nullptr, &ls_held, &error)) << error;
  ASSERT_TRUE(RunIdim(r.model, streamed, run, Eigen::VectorXd(), nullptr, &ls_streamed, &error))
      << error;
  EXPECT_EQ(ls_streamed.fit.num_rows, ls_held.fit.num_rows);
  EXPECT_EQ(ls_streamed.fit.rank, ls_held.fit.rank);
  EXPECT_LE((ls_streamed.fit.theta - ls_held.fit.theta).norm(), 1e-10 * ls_held.fit.theta.norm());
  EXPECT_LE((ls_streamed.fit.covariance - ls_held.fit.covariance).norm(),
            1e-9 * ls_held.fit.covariance.norm());
  EXPECT_LE((ls_streamed.fit.residual - ls_held.fit.residual).norm(),
            1e-9 * ls_held.fit.residual.norm());
  EXPECT_NEAR(ls_streamed.fit.relative_error, ls_held.fit.relative_error,
              1e-10 * ls_held.fit.relative_error);
  EXPECT_NEAR(ls_streamed.fit.condition_number, ls_held.fit.condition_number,
              1e-8 * ls_held.fit.condition_number);
  ASSERT_TRUE(ls_held.hac.success && ls_streamed.hac.success) << ls_streamed.hac.message;
  EXPECT_EQ(ls_streamed.hac.lags, ls_held.hac.lags);
  EXPECT_LE((ls_streamed.hac.covariance - ls_held.hac.covariance).norm(),
            1e-9 * ls_held.hac.covariance.norm());
  // WLS (per-joint and weighted tall-skinny QRs over the pieces) and its HAC covariance.
  run.estimator = IdimEstimator::kWeightedLeastSquares;
  IdimResult wls_held, wls_streamed;
  ASSERT_TRUE(RunIdim(r.model, held, run, Eigen::VectorXd(), nullptr, &wls_held, &error)) << error;
  ASSERT_TRUE(RunIdim(r.model, streamed, run, Eigen::VectorXd(), nullptr, &wls_streamed, &error))
      << error;
  EXPECT_EQ(wls_streamed.fit.rank, wls_held.fit.rank);
  EXPECT_LE((wls_streamed.fit.block_sigma - wls_held.fit.block_sigma).norm(),
            1e-12 * wls_held.fit.block_sigma.norm());
  EXPECT_LE((wls_streamed.fit.theta - wls_held.fit.theta).norm(),
            1e-12 * wls_held.fit.theta.norm());
  EXPECT_LE((wls_streamed.fit.covariance - wls_held.fit.covariance).norm(),
            1e-12 * wls_held.fit.covariance.norm());
  ASSERT_TRUE(wls_held.hac.success && wls_streamed.hac.success) << wls_streamed.hac.message;
  EXPECT_LE((wls_streamed.hac.covariance - wls_held.hac.covariance).norm(),
            1e-10 * wls_held.hac.covariance.norm());

  // Released states: the rows cannot be formed, and the runs say so.
  IdimSystem released = streamed;
  released.q.resize(0, 0);
  EXPECT_FALSE(SystemTimes(r.model, released, r.truth, &x_theta, &error));
  EXPECT_NE(error.find("states were released"), std::string::npos) << error;
}

}  // namespace
}  // namespace dynid::solvers
