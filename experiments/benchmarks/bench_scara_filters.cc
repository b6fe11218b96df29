// bench_scara_filters — throughput (samples per second) of the recursive joint state and
// parameter estimators on the SCARA (10 augmented states, 6 measurements).
//
// Record: --samples samples at 100 Hz of models::Scara3Model under smooth open-loop torques,
// simulated with the adapter's RK4 (10 substeps) and measured with Gaussian noise. Timed, best
// of --repeat runs each: discrete EKF (forward Euler and RK4 transition with exact Jacobians),
// continuous–discrete EKF (RK4 moment equations), square-root UKF (21 sigma points, RK4), the
// RTS pass over the EKF and the UKF records, and the Hopfield network on the regressor.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "dynid/models/scara3.h"
#include "dynid/models/scara3_model.h"
#include "dynid/solvers/continuous_discrete_ekf.h"
#include "dynid/solvers/extended_kalman_filter.h"
#include "dynid/solvers/hopfield_estimator.h"
#include "dynid/solvers/kalman_smoother.h"
#include "dynid/solvers/mechanical_state_space.h"
#include "dynid/solvers/unscented_kalman_filter.h"
#include "experiments/common/cli.h"

DEFINE_int32(samples, 3000, "samples of the record (100 Hz)");
DEFINE_int32(repeat, 3, "runs per estimator; the best time is printed");

namespace {

namespace models = dynid::models;
namespace solvers = dynid::solvers;
using System = solvers::AugmentedMechanicalSystem<models::Scara3Model>;

double BestOf(int repeat, const std::function<bool()>& run) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    CHECK(run()) << "estimator failed";
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv,
                         "throughput of the recursive SCARA state and parameter estimators");
  FLAGS_logtostderr = true;
  if (FLAGS_samples < 10 || FLAGS_repeat < 1) {
    return dynid::cli::Fail(2, "--samples must be >= 10 and --repeat >= 1");
  }
  const int num = FLAGS_samples;
  const double dt = 0.01;
  const models::Scara3Model model;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num, 0.0, dt * (num - 1));
  Eigen::MatrixXd inputs(num, 3);
  for (int k = 0; k < num; ++k) {
    const double t = times(k);
    inputs.row(k) << 8.0 * std::sin(2.1 * t) + 3.0 * std::sin(5.3 * t),
        2.0 * std::sin(3.1 * t + 0.4) + std::cos(6.7 * t), -2.0 * 9.81 + 4.0 * std::sin(4.0 * t);
  }
  const System fine(model, times, inputs, solvers::Discretization::kRk4, 10);
  Eigen::VectorXd x(10);
  x << 0.0, 0.5, 0.1, 0.0, 0.0, 0.0, model.NominalParameters();
  Eigen::MatrixXd y(num, 6), phi(3 * num, 4);
  Eigen::VectorXd tau(3 * num);
  std::mt19937 rng(11);
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::Matrix<double, 6, 1> sd;
  sd << 0.01, 0.02, 0.01, 0.02, 0.002, 0.004;
  for (int k = 0; k < num; ++k) {
    if (k > 0) {
      Eigen::VectorXd xn;
      fine.Transition(k - 1, x, &xn, nullptr);
      x = xn;
    }
    Eigen::VectorXd z;
    fine.Measure(k, x, &z, nullptr);
    for (int i = 0; i < 6; ++i) y(k, i) = z(i) + sd(i) * g(rng);
    const Eigen::Vector3d u = inputs.row(k).transpose();
    const Eigen::Vector3d a =
        fine.Accelerations(x.data(), x.data() + 3, u.data(), x.data() + 6, times(k));
    phi.middleRows(3 * k, 3) = models::Scara3ClosedFormRegressor(x.head(3), x.segment(3, 3), a);
    tau.segment(3 * k, 3) = inputs.row(k).transpose();
  }
  solvers::KalmanFilterOptions o;
  o.measurement_covariance = sd.array().square().matrix().asDiagonal();
  o.process_noise = Eigen::MatrixXd::Identity(10, 10) * 1e-10;
  o.initial_state.resize(10);
  o.initial_state << 0.0, 0.5, 0.1, 0.0, 0.0, 0.0, 4.0, 0.8, 1.0, 1.8;
  Eigen::VectorXd p0(10);
  p0 << 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1.0, 0.25, 0.25, 0.25;
  o.initial_covariance = p0.asDiagonal();

  const System euler(model, times, inputs, solvers::Discretization::kForwardEuler, 1);
  const System rk4(model, times, inputs, solvers::Discretization::kRk4, 1);
  std::string error;
  solvers::KalmanFilterRecord ekf_record;
  solvers::UkfResult ukf;
  solvers::RtsSmootherResult rts;
  std::printf("bench_scara_filters: %d samples, 10 states, 6 measurements, best of %d\n", num,
              FLAGS_repeat);
  auto report = [&](const char* name, double seconds) {
    std::printf("  %-34s %9.4f s  %12.0f samples/s\n", name, seconds, num / seconds);
  };
  report("EKF (forward Euler)", BestOf(FLAGS_repeat, [&] {
           return solvers::RunExtendedKalmanFilter(euler.Discrete(), y, solvers::EkfOptions{o},
                                                   &ekf_record, &error);
         }));
  report("EKF (RK4)", BestOf(FLAGS_repeat, [&] {
           return solvers::RunExtendedKalmanFilter(rk4.Discrete(), y, solvers::EkfOptions{o},
                                                   &ekf_record, &error);
         }));
  report("RTS smoother over EKF", BestOf(FLAGS_repeat, [&] {
           return solvers::RunRtsSmoother(ekf_record, &rts, &error);
         }));
  solvers::ContinuousDiscreteEkfOptions co;
  co.process_noise_intensity = o.process_noise / dt;
  co.measurement_covariance = o.measurement_covariance;
  co.initial_state = o.initial_state;
  co.initial_covariance = o.initial_covariance;
  solvers::ContinuousDiscreteEkfResult cd;
  report("continuous-discrete EKF (RK4)", BestOf(FLAGS_repeat, [&] {
           return solvers::RunContinuousDiscreteEkf(rk4.ContinuousDiscrete(), times, y, co, &cd,
                                                    &error);
         }));
  solvers::UkfOptions uo;
  uo.filter = o;
  report("square-root UKF (RK4, 21 points)", BestOf(FLAGS_repeat, [&] {
           return solvers::RunSquareRootUkf(rk4.Discrete(), y, uo, &ukf, &error);
         }));
  report("unscented RTS smoother", BestOf(FLAGS_repeat, [&] {
           return solvers::RunRtsSmoother(ukf.record, &rts, &error);
         }));
  solvers::HopfieldOptions ho;
  ho.gain = 2.0;
  ho.initial_parameters = Eigen::Vector4d(5.0, 0.5, 1.0, 1.5);
  solvers::HopfieldResult hnn;
  report("Hopfield network (linear)", BestOf(FLAGS_repeat, [&] {
           return solvers::RunHopfieldEstimator(times, phi, tau, ho, &hnn, &error);
         }));
  return 0;
}
