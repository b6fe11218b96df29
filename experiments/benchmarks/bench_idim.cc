// bench_idim — throughput of the IDIM pipeline of solvers/idim.h on the simulated TX40
// experiment (6 joints × 35 000 samples at 5 kHz by default), one thread.
//
// Measures: (1) IDIM-LS conventional end to end (Butterworth + central differences, observation
// matrix, parallel decimation by 100, sample selection, QR LS; target 0.5 s); (2) its parts;
// (3) LS on the undecimated 210 000-row system ("no knowledge"); (4) one IDIM-IV auxiliary-model
// step (closed-loop simulation + instruments) and the IV solve by the fast normal-products path
// vs the common pivoted-QR path; (5) the common QR path vs the Ceres path (design rule) on the
// decimated system, with the largest relative difference of θ.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "dynid/models/tx40.h"
#include "dynid/solvers/idim.h"
#include "experiments/benchmarks/bench_timing.h"
#include "experiments/benchmarks/tx40_bench_record.h"
#include "experiments/common/cli.h"
#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_experiment.h"

DEFINE_double(duration_s, 7.0, "simulated experiment length (s); 7 s = 35 000 samples");
DEFINE_int32(repeats, 3, "timed repetitions (best reported)");

using dynid::benchmarks::BestSeconds;

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv,
                         "throughput of the IDIM pipeline on the simulated TX40 experiment");
  namespace solvers = dynid::solvers;
  if (!(FLAGS_duration_s > 0.0) || FLAGS_repeats < 1) {
    return dynid::cli::Fail(2, "--duration_s and --repeats must be positive");
  }
  std::string error;
  dynid::benchmarks::Tx40BenchRecord record =
      dynid::benchmarks::MakeTx40BenchRecord(FLAGS_duration_s);
  const dynid::tx40_study::Tx40Experiment& experiment = record.experiment;
  const dynid::models::SerialRobot& robot = record.robot;
  solvers::IdimModel& model = record.model;
  const Eigen::MatrixXd& q = record.q;
  const Eigen::MatrixXd& tau = record.tau;
  std::printf("bench_idim: TX40, %d joints × %lld samples, %d base parameters, 1 thread, best "
              "of %d\n",
              6, static_cast<long long>(q.rows()), model.num_parameters(), FLAGS_repeats);

  solvers::IdimPreprocessingOptions good = dynid::benchmarks::GoodKnowledgeWithSelection();
  solvers::IdimSystem system;
  solvers::IdimResult result;
  solvers::IdimRunOptions ls;
  const double end_to_end = BestSeconds([&] {
    CHECK(solvers::BuildIdimSystem(model, q, tau, good, &system, &error)) << error;
    CHECK(solvers::RunIdim(model, system, ls, Eigen::VectorXd(), nullptr, &result, &error))
        << error;
  }, FLAGS_repeats);
  std::printf("IDIM-LS conventional, good knowledge, end to end   %8.4f s  (%zu rows × %d, "
              "relative error %.3g %%)\n",
              end_to_end, static_cast<size_t>(system.x.rows()), model.num_parameters(),
              100 * result.fit.relative_error);
  Eigen::MatrixXd x_full;
  const double regressor = BestSeconds([&] { model.Regressor(system.q, system.qd, system.qdd, &x_full); },
                                FLAGS_repeats);
  std::printf("  observation matrix at 5 kHz (%lld × %d)            %8.4f s\n",
              static_cast<long long>(x_full.rows()), model.num_parameters(), regressor);
  const double solve = BestSeconds([&] {
    CHECK(solvers::RunIdim(model, system, ls, Eigen::VectorXd(), nullptr, &result, &error));
  }, FLAGS_repeats);
  std::printf("  LS solve + covariance + whiteness                  %8.4f s\n", solve);

  solvers::IdimPreprocessingOptions none = dynid::experiments::KnowledgePreprocessing(
      dynid::experiments::PriorKnowledge::kNone, solvers::IdimDifferentiator::kConventional, 5000.0);
  solvers::IdimSystem system_none;
  const double none_time = BestSeconds([&] {
    CHECK(solvers::BuildIdimSystem(model, q, tau, none, &system_none, &error)) << error;
    CHECK(solvers::RunIdim(model, system_none, ls, Eigen::VectorXd(), nullptr, &result, &error));
  }, 1);
  std::printf("IDIM-LS, no knowledge (no filters, %lld rows)       %8.4f s\n",
              static_cast<long long>(system_none.x.rows()), none_time);

  // IDIM-IV: one auxiliary-model step and the two IV solves.
  solvers::IdimPreprocessingOptions irw = dynid::experiments::KnowledgePreprocessing(
      dynid::experiments::PriorKnowledge::kGood, solvers::IdimDifferentiator::kIrw1, 5000.0);
  irw.select_samples = true;
  irw.selection.velocity_threshold = Eigen::VectorXd::Constant(1, 0.05);
  solvers::IdimSystem system_irw;
  const double irw_time = BestSeconds([&] {
    CHECK(solvers::BuildIdimSystem(model, q, tau, irw, &system_irw, &error)) << error;
  }, 1);
  std::printf("IRWSM1 pre-processing (ML NVR ×12, smoothing, X)   %8.4f s\n", irw_time);
  dynid::data::RobotSimulatorOptions controller;
  controller.gains = dynid::data::TunePidGains(
      robot, 0.5 * (dynid::models::Tx40JointLowerLimitRad() +
                    dynid::models::Tx40JointUpperLimitRad()),
      dynid::tx40_study::Tx40ExperimentOptions().pid_bandwidth_hz);
  controller.duration_s = FLAGS_duration_s;
  const dynid::data::RobotSimulation& sim = experiment.simulation;
  solvers::SampledTrajectory reference(sim.q_reference, sim.qd_reference, sim.qdd_reference,
                                       5000.0);
  const Eigen::VectorXd theta = model.FromStandard(robot.standard_parameters());
  Eigen::MatrixXd z;
  Eigen::VectorXd tau_s;
  const double step = BestSeconds([&] {
    solvers::ClosedLoopAuxiliaryModel auxiliary(&reference, controller);
    std::shared_ptr<const dynid::data::RobotSimulation> simulated;
    CHECK(auxiliary.Simulate(model, theta, &simulated, &error)) << error;
    CHECK(solvers::ProcessLikeSystem(model, system_irw, simulated->q, simulated->qd,
                                     simulated->qdd, simulated->tau, &z, &tau_s, &error));
  }, FLAGS_repeats);
  std::printf("IDIM-IV auxiliary step (simulation + instruments)  %8.4f s\n", step);
  solvers::LinearLeastSquaresOptions ls_options;
  ls_options.row_blocks = system_irw.blocks;
  solvers::LinearLeastSquaresSummary common, fast;
  const double common_time = BestSeconds([&] {
    common = solvers::SolveInstrumentalVariables(z, system_irw.x, system_irw.y, ls_options);
  }, FLAGS_repeats);
  const double fast_time = BestSeconds([&] {
    fast = solvers::SolveIdimIvNormalProducts(z, system_irw.x, system_irw.y, system_irw.blocks,
                                              common.condition_number);
  }, FLAGS_repeats);
  std::printf("IV solve, common pivoted QR / fast normal products %8.4f s / %.4f s  "
              "(max |Δθ|/|θ| %.2g)\n",
              common_time, fast_time,
              (fast.theta - common.theta).cwiseAbs().maxCoeff() / common.theta.norm());
  // The same IV solve on the undecimated system (no knowledge), where the difference matters.
  Eigen::MatrixXd z_none;
  {
    solvers::ClosedLoopAuxiliaryModel auxiliary(&reference, controller);
    std::shared_ptr<const dynid::data::RobotSimulation> simulated;
    CHECK(auxiliary.Simulate(model, theta, &simulated, &error)) << error;
    CHECK(solvers::ProcessLikeSystem(model, system_none, simulated->q, simulated->qd,
                                     simulated->qdd, simulated->tau, &z_none, nullptr, &error));
  }
  ls_options.row_blocks = system_none.blocks;
  const double common_none = BestSeconds([&] {
    common = solvers::SolveInstrumentalVariables(z_none, system_none.x, system_none.y, ls_options);
  }, 1);
  const double fast_none = BestSeconds([&] {
    fast = solvers::SolveIdimIvNormalProducts(z_none, system_none.x, system_none.y,
                                              system_none.blocks, common.condition_number);
  }, 1);
  std::printf("IV solve, %lld rows: common / fast               %8.4f s / %.4f s  (max |Δθ|/|θ| "
              "%.2g)\n",
              static_cast<long long>(system_none.x.rows()), common_none, fast_none,
              (fast.theta - common.theta).cwiseAbs().maxCoeff() / common.theta.norm());
  // Design rule: the Ceres path on the decimated LS system agrees with the QR path.
  solvers::LinearLeastSquaresOptions ceres_options;
  ceres_options.row_blocks = system.blocks;
  solvers::LinearLeastSquaresSummary qr_fit, ceres_fit;
  const double qr_time =
      BestSeconds([&] { qr_fit = solvers::SolveLeastSquares(system.x, system.y, ceres_options); }, 1);
  const double ceres_time = BestSeconds(
      [&] { ceres_fit = solvers::SolveLeastSquaresCeres(system.x, system.y, ceres_options); }, 1);
  std::printf("LS: QR %.4f s, Ceres %.4f s; max |Δθ|/|θ| %.2g, max |Δσ|/σ %.2g\n", qr_time,
              ceres_time,
              (qr_fit.theta - ceres_fit.theta).cwiseAbs().maxCoeff() / qr_fit.theta.norm(),
              ((qr_fit.standard_deviation - ceres_fit.standard_deviation).cwiseAbs().array() /
               qr_fit.standard_deviation.array())
                  .maxCoeff());
  return 0;
}
