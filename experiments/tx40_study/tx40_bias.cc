// tx40_bias — where does the bias of the TX40 IDIM estimates come from? (diagnostic for
// tx40_study; experiments/tx40_study/README.md)
//
// Question: on the simulated TX40 experiment, which part of the data generation (torque noise,
// encoder quantisation, Coulomb friction in the truth) or of the pipeline (differentiation,
// decimation, sample selection, IV iteration) moves the estimates of the 28 essential
// parameters by more than their standard deviations? Method: switch the data-generation
// sources on and off and run the methods of tx40_study; for every run print the normalised
// errors (θ̂ − θ)/σ of the essential parameters (σ from the estimator's covariance) and the
// parameters beyond 3σ, with eq. 8 / σ²(XᵀX)^{-1} and with the HAC σ.
//
//   tx40_bias [--duration_s=7] [--seed=2018] [--noise=0.3] [--quantise=true]
//             [--coulomb_scale=1] [--knowledge=good] [--methods=idim_ls_conventional,...]
//             [--guard=5] [--guard_s=0.04] [--select=true] [--velocity_threshold=0.05]
//             [--margin=0]    extra exclusion around excluded rows, applied after the build
//             [--profile]     residual RMS at the true θ by distance to an excluded row
//             [--errors]      ||X_measured − X_exact|| per column (exact = simulated states)
//             [--gains]       in-band gain of the estimated accelerations vs the recorded ones
//             [--oracle]      LS on the exact states / with the exact applied torque
//             [--verbose]     every essential parameter's normalised error
//             [--dump=F]      raw doubles of q, q', q'', τ, q_meas, τ_meas (Ns × 6 each)
// Exit status: 2 for a bad flag value (named in the message), 1 when a step of the pipeline fails.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "dynid/data/csv.h"
#include "dynid/models/tx40.h"
#include "dynid/solvers/idim.h"
#include "experiments/common/progress.h"
#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_experiment.h"

DEFINE_double(duration_s, 7.0, "simulated experiment length (s)");
DEFINE_double(noise, 0.3, "joint torque noise std (N m)");
DEFINE_bool(quantise, true, "encoder quantisation");
DEFINE_double(coulomb_scale, 1.0, "scale of the simulated Coulomb friction");
DEFINE_int32(seed, 2018, "simulation seed");
DEFINE_string(knowledge, "good", "good, poor or none");
DEFINE_string(methods, "idim_ls_conventional,idim_iv_conventional,idim_iv_irwsm1,idim_iv_irwsm2",
              "methods");
DEFINE_double(velocity_threshold, 0.05, "sample selection threshold (rad/s)");
DEFINE_bool(select, true, "sample selection");
DEFINE_bool(oracle, false, "also LS on the exact states with the measured torques");
DEFINE_bool(verbose, false, "print every essential parameter's normalised error");
DEFINE_int32(max_iterations, 20, "IV cap");
DEFINE_string(dump, "",
              "write q, qd, qdd, tau, q_measured, tau_measured (raw doubles, column-major Ns x 6 "
              "each) to this file");
DEFINE_int32(guard, 5, "selection guard rows");
DEFINE_double(guard_s, 0.04, "selection guard time (s)");
DEFINE_int32(margin, 0, "also drop kept rows within this many decimated rows of an excluded row");
DEFINE_bool(profile, false, "residual (θ true) RMS by distance to the nearest excluded row");
DEFINE_bool(gains, false, "in-band gain of the estimated accelerations");
DEFINE_bool(errors, false, "print the regressor-column errors of the measured system");

#include "dynid/data/sample_selection.h"
#include "dynid/data/signal.h"
#include "experiments/common/cli.h"
namespace {

using dynid::cli::Fail;

namespace data = dynid::data;
namespace models = dynid::models;
namespace solvers = dynid::solvers;
namespace tx40_study = dynid::tx40_study;

// True for idim_{ls,wls,iv}_{conventional,irwsm1,irwsm2}, the methods of tx40_study.
bool IsMethod(const std::string& key) {
  for (const char* estimator : {"ls", "wls", "iv"}) {
    for (const char* differentiator : {"conventional", "irwsm1", "irwsm2"}) {
      if (key == std::string("idim_") + estimator + "_" + differentiator) return true;
    }
  }
  return false;
}

// Distance (decimated rows, same joint) of every kept row to the nearest excluded row.
std::vector<int> Distances(const solvers::IdimSystem& system) {
  const int ns = system.num_samples;
  std::vector<char> kept(6 * ns, 0);
  for (int r : system.kept_rows) kept[r] = 1;
  std::vector<int> distance;
  for (int r : system.kept_rows) {
    const int j = r / ns, k = r % ns;
    int d = 1000000;
    for (int m = 0; m < ns; ++m) {
      if (!kept[j * ns + m]) d = std::min(d, std::abs(m - k));
    }
    distance.push_back(d);
  }
  return distance;
}

void Dilate(solvers::IdimSystem* system, int margin) {
  const std::vector<int> distance = Distances(*system);
  std::vector<int> positions, rows;
  for (size_t i = 0; i < distance.size(); ++i) {
    if (distance[i] > margin) {
      positions.push_back(static_cast<int>(i));
      rows.push_back(system->kept_rows[i]);
    }
  }
  system->x = data::KeepRows(system->x, positions);
  system->y = data::KeepRows(system->y, positions);
  system->blocks = system->blocks.Subset(positions);
  system->kept_rows = rows;
}

void Print(const std::string& label, const solvers::IdimModel& model,
           const solvers::LinearLeastSquaresSummary& fit, const Eigen::VectorXd& truth,
           const std::string& extra) {
  std::string beyond;
  double worst = 0.0;
  int count = 0;
  std::string all;
  for (int i = 0; i < 28; ++i) {
    const double z = (fit.theta[i] - truth[i]) / fit.standard_deviation[i];
    worst = std::max(worst, std::abs(z));
    char text[64];
    std::snprintf(text, sizeof(text), "%s(%+.1f) ", model.names()[i].c_str(), z);
    all += text;
    if (std::abs(z) > 3.0) {
      ++count;
      beyond += text;
    }
  }
  std::printf("%-22s rel.err %.3f %% %s | >3σ: %d, max %.1fσ: %s\n", label.c_str(),
              100 * fit.relative_error, extra.c_str(), count, worst, beyond.c_str());
  if (FLAGS_verbose) std::printf("    %s\n", all.c_str());
}
}  // namespace

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv,
                         "tx40_bias [--duration_s=7] [--seed=2018] [--noise=0.3] "
                         "[--knowledge=good|poor|none] [--methods=idim_ls_conventional,...]");
  std::string error;
  // Every flag value is checked before the simulation starts.
  dynid::experiments::PriorKnowledge knowledge;
  if (!dynid::experiments::ParsePriorKnowledge(FLAGS_knowledge, &knowledge, &error)) {
    return Fail(2, "--knowledge: " + error);
  }
  const std::vector<std::string> methods = data::SplitList(FLAGS_methods);
  if (methods.empty()) return Fail(2, "--methods: give at least one method");
  for (const std::string& key : methods) {
    if (!IsMethod(key)) {
      return Fail(2, "--methods: unknown method '" + key +
                         "' (idim_{ls,wls,iv}_{conventional,irwsm1,irwsm2})");
    }
  }
  if (!(FLAGS_duration_s >= 1.0 && FLAGS_duration_s <= 60.0)) {
    return Fail(2, "--duration_s must be in [1, 60]");
  }
  if (!(FLAGS_noise >= 0.0 && std::isfinite(FLAGS_noise))) return Fail(2, "--noise must be >= 0");
  if (!(FLAGS_coulomb_scale >= 0.0 && std::isfinite(FLAGS_coulomb_scale))) {
    return Fail(2, "--coulomb_scale must be >= 0");
  }
  if (!(FLAGS_velocity_threshold >= 0.0 && std::isfinite(FLAGS_velocity_threshold))) {
    return Fail(2, "--velocity_threshold must be >= 0");
  }
  if (FLAGS_max_iterations < 1) return Fail(2, "--max_iterations must be >= 1");
  if (FLAGS_guard < 0) return Fail(2, "--guard must be >= 0");
  if (!(FLAGS_guard_s >= 0.0 && std::isfinite(FLAGS_guard_s))) {
    return Fail(2, "--guard_s must be >= 0");
  }
  if (FLAGS_margin < 0) return Fail(2, "--margin must be >= 0");
  tx40_study::Tx40ExperimentOptions options;
  options.duration_s = FLAGS_duration_s;
  options.torque_noise_std_nm = FLAGS_noise;
  options.quantise_encoders = FLAGS_quantise;
  options.coulomb_scale = FLAGS_coulomb_scale;
  options.seed = static_cast<std::uint32_t>(FLAGS_seed);
  tx40_study::Tx40Experiment experiment;
  if (!tx40_study::SimulateTx40Experiment(options, &experiment, &error)) return Fail(1, error);
  const models::SerialRobot robot = models::MakeTx40();
  std::vector<std::string> names = models::Tx40EssentialNames();
  for (const std::string& name : experiment.base.names) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  solvers::IdimModel model;
  if (!solvers::IdimModel::Create(robot, experiment.base, names, &model, &error)) {
    return Fail(1, error);
  }
  const data::RobotSimulation& sim = experiment.simulation;
  Eigen::MatrixXd q_measured, tau_measured;
  models::Tx40MotorToJoint(sim.q_motor, sim.tau_motor, &q_measured, &tau_measured);
  if (!FLAGS_dump.empty()) {
    FILE* f = std::fopen(FLAGS_dump.c_str(), "wb");
    if (f == nullptr) return Fail(2, "--dump: cannot open '" + FLAGS_dump + "' for writing");
    for (const Eigen::MatrixXd* m : std::vector<const Eigen::MatrixXd*>{
             &sim.q, &sim.qd, &sim.qdd, &sim.tau, &q_measured, &tau_measured}) {
      std::fwrite(m->data(), sizeof(double), m->size(), f);
    }
    std::fclose(f);
  }
  const Eigen::VectorXd truth = model.FromStandard(experiment.theta_standard);
  Eigen::VectorXd theta0 = model.FromStandard(robot.standard_parameters());
  for (int i = 0; i < model.num_parameters(); ++i) {
    if (model.IsFrictionOrOffset(i)) theta0[i] = 0.0;
  }
  solvers::SampledTrajectory reference(sim.q_reference, sim.qd_reference, sim.qdd_reference,
                                       5000.0);
  data::RobotSimulatorOptions controller;
  controller.gains = experiment.simulator_options.gains;
  controller.duration_s = options.duration_s;
  solvers::ClosedLoopAuxiliaryModel auxiliary(&reference, controller);
  std::printf("noise %.3g N m, quantise %d, coulomb x%.2g, %s knowledge, %.1f s\n", FLAGS_noise,
              FLAGS_quantise, FLAGS_coulomb_scale, FLAGS_knowledge.c_str(), FLAGS_duration_s);
  dynid::cli::Stage stage("methods", static_cast<int64_t>(methods.size()));
  for (const std::string& key : methods) {
    stage.Next(key);
    solvers::IdimDifferentiator differentiator = solvers::IdimDifferentiator::kConventional;
    if (key.find("irwsm1") != std::string::npos)
      differentiator = solvers::IdimDifferentiator::kIrw1;
    if (key.find("irwsm2") != std::string::npos)
      differentiator = solvers::IdimDifferentiator::kIrw2;
    solvers::IdimPreprocessingOptions pre =
        dynid::experiments::KnowledgePreprocessing(knowledge, differentiator, 5000.0);
    pre.select_samples = FLAGS_select;
    pre.selection_guard_rows = FLAGS_guard;
    pre.selection_guard_s = FLAGS_guard_s;
    pre.selection.velocity_threshold = Eigen::VectorXd::Constant(1, FLAGS_velocity_threshold);
    solvers::IdimSystem system;
    if (!solvers::BuildIdimSystem(model, q_measured, tau_measured, pre, &system, &error))
      return Fail(1, error);
    if (FLAGS_oracle && key == "idim_ls_conventional") {
      Eigen::MatrixXd x;
      Eigen::VectorXd y;
      if (!solvers::ProcessLikeSystem(model, system, sim.q, sim.qd, sim.qdd, tau_measured, &x, &y,
                                      &error))
        return Fail(1, error);
      solvers::LinearLeastSquaresOptions ls;
      ls.row_blocks = system.blocks;
      Print("LS exact states", model, solvers::SolveLeastSquares(x, y, ls), truth, "");
      // Measured states, exact applied torque.
      Eigen::MatrixXd unused;
      Eigen::VectorXd y_exact;
      if (!solvers::ProcessLikeSystem(model, system, sim.q, sim.qd, sim.qdd, sim.tau, &unused,
                                      &y_exact, &error))
        return Fail(1, error);
      Print("LS meas. X, exact tau", model, solvers::SolveLeastSquares(system.x, y_exact, ls),
            truth, "");
    }
    if (FLAGS_margin > 0) Dilate(&system, FLAGS_margin);
    if (FLAGS_profile) {
      const std::vector<int> distance = Distances(system);
      const Eigen::VectorXd r = system.y - system.x * truth;
      std::printf("%s residual RMS (θ true) by distance to an excluded row:", key.c_str());
      for (int d = 1; d <= 12; ++d) {
        double sum = 0;
        int count = 0;
        for (size_t i = 0; i < distance.size(); ++i) {
          if (distance[i] == d || (d == 12 && distance[i] >= 12)) {
            sum += r[i] * r[i];
            ++count;
          }
        }
        std::printf(" %d%s:%.3g(%d)", d, d == 12 ? "+" : "", std::sqrt(sum / std::max(1, count)),
                    count);
      }
      std::printf("\n");
    }
    if (FLAGS_gains) {
      Eigen::MatrixXd a_hat, a, v_hat, v;
      if (!data::DecimateColumns(system.qdd, pre.decimation_factor, 1, &a_hat, &error))
        return Fail(1, error);
      if (!data::DecimateColumns(sim.qdd, pre.decimation_factor, 1, &a, &error))
        return Fail(1, error);
      if (!data::DecimateColumns(system.qd, pre.decimation_factor, 1, &v_hat, &error))
        return Fail(1, error);
      if (!data::DecimateColumns(sim.qd, pre.decimation_factor, 1, &v, &error))
        return Fail(1, error);
      std::printf("%s in-band gain of q̂'' (q̂'), kept rows:", key.c_str());
      for (int j = 0; j < 6; ++j) {
        double aa = 0, ah = 0, vv = 0, vh = 0;
        for (int r : system.kept_rows) {
          if (r / system.num_samples != j) continue;
          const int k = r % system.num_samples;
          aa += a(k, j) * a(k, j);
          ah += a_hat(k, j) * a(k, j);
          vv += v(k, j) * v(k, j);
          vh += v_hat(k, j) * v(k, j);
        }
        std::printf(" %d: %.5f (%.6f)", j + 1, ah / aa, vh / vv);
      }
      std::printf("\n");
    }
    if (FLAGS_errors) {
      Eigen::MatrixXd x;
      Eigen::VectorXd y;
      if (!solvers::ProcessLikeSystem(model, system, sim.q, sim.qd, sim.qdd, sim.tau, &x, &y,
                                      &error))
        return Fail(1, error);
      const Eigen::MatrixXd e = system.x - x;
      std::printf("%s: ||E_c||/||X_c|| %%, E_c·θ_c / ||y||, per joint: \n", key.c_str());
      const Eigen::VectorXd et = e * truth;
      for (int j = 0; j < 6; ++j) {
        double num = 0, den = 0;
        for (int r = 0; r < et.size(); ++r) {
          if (system.blocks.BlockOf(r) == j) {
            num += et[r] * et[r];
            den += y[r] * y[r];
          }
        }
        std::printf("  joint %d: ||Eθ||/||y|| %.3f %%\n", j + 1, 100 * std::sqrt(num / den));
      }
      for (int i = 0; i < 28; ++i) {
        std::printf("  %s %.3f%%", model.names()[i].c_str(),
                    100 * e.col(i).norm() / x.col(i).norm());
      }
      std::printf("\n");
    }
    solvers::IdimRunOptions run;
    run.estimator =
        key.find("_iv_") != std::string::npos    ? solvers::IdimEstimator::kInstrumentalVariables
        : key.find("_wls_") != std::string::npos ? solvers::IdimEstimator::kWeightedLeastSquares
                                                 : solvers::IdimEstimator::kLeastSquares;
    run.iv.max_iterations = FLAGS_max_iterations;
    solvers::IdimResult result;
    if (!solvers::RunIdim(model, system, run, theta0, &auxiliary, &result, &error))
      return Fail(1, error);
    char extra[128];
    std::snprintf(extra, sizeof(extra), "rows %d it %d%s", static_cast<int>(system.x.rows()),
                  result.iterations, result.converged ? "" : " NOCONV");
    Print(key, model, result.fit, truth, extra);
    if (result.hac.success) {
      solvers::LinearLeastSquaresSummary hac = result.fit;
      hac.standard_deviation = result.hac.standard_deviation;
      std::snprintf(extra, sizeof(extra), "HAC L=%d rho=%.2f", result.hac.lags, result.hac.rho);
      Print("  same, HAC σ", model, hac, truth, extra);
    }
  }
  stage.End();
  return 0;
}
