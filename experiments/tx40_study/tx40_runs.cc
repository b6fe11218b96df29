// experiments/tx40_study/tx40_runs — the IDIM methods, the pre-processed systems and the method
// × knowledge runs (see tx40_runs.h).
#include "experiments/tx40_study/tx40_runs.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dynid/data/parallel_for.h"
#include "experiments/common/progress.h"
#include "experiments/tx40_study/tx40_flags.h"
#include "experiments/tx40_study/tx40_record.h"

namespace dynid::tx40_study {

bool ParseMethod(const std::string& key, Method* method, std::string* error) {
  using solvers::IdimDifferentiator;
  using solvers::IdimEstimator;
  const std::vector<std::pair<std::string, IdimEstimator>> estimators = {
      {"ls", IdimEstimator::kLeastSquares},
      {"wls", IdimEstimator::kWeightedLeastSquares},
      {"iv", IdimEstimator::kInstrumentalVariables}};
  const std::vector<std::pair<std::string, IdimDifferentiator>> paths = {
      {"conventional", IdimDifferentiator::kConventional},
      {"irwsm1", IdimDifferentiator::kIrw1},
      {"irwsm2", IdimDifferentiator::kIrw2}};
  for (const auto& [e_name, e] : estimators) {
    for (const auto& [p_name, p] : paths) {
      if (key == "idim_" + e_name + "_" + p_name) {
        std::string upper = e_name;
        for (char& c : upper) c = static_cast<char>(std::toupper(c));
        method->key = key;
        method->label = "IDIM-" + upper + " " +
                        (p == IdimDifferentiator::kConventional ? std::string("conv.")
                         : p == IdimDifferentiator::kIrw1       ? std::string("IRWSM1")
                                                                : std::string("IRWSM2"));
        method->estimator = e;
        method->differentiator = p;
        return true;
      }
    }
  }
  *error = "unknown method '" + key + "'";
  return false;
}

bool BuildSystems(const Settings& settings, const solvers::IdimModel& model, const Record& record,
                  const Elapsed& elapsed, Runs* runs, std::string* error) {
  const std::vector<dynid::experiments::PriorKnowledge>& levels = settings.levels;
  const std::vector<Method>& methods = settings.methods;
  const int threads = settings.threads;
  const bool select_samples = settings.select_samples;
  const double fs = record.fs;
  const Eigen::MatrixXd& q_measured = record.q_measured;
  const Eigen::MatrixXd& tau_measured = record.tau_measured;
  std::vector<SystemKey>& system_keys = runs->system_keys;
  std::vector<Job>& jobs = runs->jobs;
  for (dynid::experiments::PriorKnowledge level : levels) {
    for (const Method& method : methods) {
      int index = -1;
      for (size_t s = 0; s < system_keys.size(); ++s) {
        if (system_keys[s].differentiator == method.differentiator &&
            system_keys[s].knowledge == level) {
          index = static_cast<int>(s);
        }
      }
      if (index < 0) {
        index = static_cast<int>(system_keys.size());
        system_keys.push_back({method.differentiator, level});
      }
      Job job;
      job.method = method;
      job.knowledge = level;
      job.system = index;
      jobs.push_back(job);
    }
  }
  std::vector<solvers::IdimSystem>& systems = runs->systems;
  systems.resize(system_keys.size());
  std::vector<std::string> system_errors(system_keys.size());
  std::mutex print_mutex;
  cli::Stage stage("pre-processing, systems", static_cast<int64_t>(system_keys.size()));
  data::ParallelFor(0, static_cast<int>(system_keys.size()), threads, [&](int s) {
    solvers::IdimPreprocessingOptions options = dynid::experiments::KnowledgePreprocessing(
        system_keys[s].knowledge, system_keys[s].differentiator, fs);
    options.select_samples = select_samples;
    options.selection.velocity_threshold =
        Eigen::VectorXd::Constant(1, settings.velocity_threshold);
    options.selection_guard_rows = settings.guard_rows;
    options.selection_guard_s = settings.guard_s;
    std::string why;
    const bool ok =
        solvers::BuildIdimSystem(model, q_measured, tau_measured, options, &systems[s], &why);
    // The differentiated states at the input rate (3 × Ns × n) are not used by the runs or the
    // outputs: released, 5 MB per system for the 7 s record.
    systems[s].q.resize(0, 0);
    systems[s].qd.resize(0, 0);
    systems[s].qdd.resize(0, 0);
    std::lock_guard<std::mutex> lock(print_mutex);
    if (!ok) system_errors[s] = why;
    std::printf(
        "  [%5.1f s] pre-processed %-12s %-4s knowledge: %s\n", elapsed(),
        solvers::IdimDifferentiatorName(system_keys[s].differentiator),
        dynid::experiments::PriorKnowledgeName(system_keys[s].knowledge),
        ok ? (std::to_string(systems[s].x.rows()) + " rows").c_str() : ("FAILED: " + why).c_str());
    std::fflush(stdout);
    stage.Add();
  });
  stage.End();
  for (size_t s = 0; s < system_keys.size(); ++s) {
    if (!system_errors[s].empty()) {
      *error = std::string("pre-processing (") +
               solvers::IdimDifferentiatorName(system_keys[s].differentiator) + ", " +
               dynid::experiments::PriorKnowledgeName(system_keys[s].knowledge) +
               " knowledge): " + system_errors[s];
      return false;
    }
  }
  return true;
}

void RunJobs(const Settings& settings, const models::SerialRobot& robot,
             const solvers::IdimModel& model, const Record& record, const Elapsed& elapsed,
             Runs* runs) {
  const std::unique_ptr<data::JointTrajectory>& reference = record.reference;
  const data::RobotSimulatorOptions& controller = record.controller;
  const int threads = settings.threads;
  const std::vector<solvers::IdimSystem>& systems = runs->systems;
  std::vector<Job>& jobs = runs->jobs;
  std::mutex print_mutex;
  // θ^0 of IDIM-IV (Brunot et al. (2018) eq. 6 step 1): CAD inertial values, zero friction.
  Eigen::VectorXd theta0 = model.FromStandard(robot.standard_parameters());
  for (int i = 0; i < model.num_parameters(); ++i) {
    if (model.IsFrictionOrOffset(i)) theta0[i] = 0.0;
  }
  std::unique_ptr<solvers::ClosedLoopAuxiliaryModel> auxiliary;
  if (reference) {
    // One cached simulation: the θ^0 run every IV job starts from (each later θ is a job's own,
    // never asked for twice; a cached simulation of a long record holds hundreds of MB).
    auxiliary = std::make_unique<solvers::ClosedLoopAuxiliaryModel>(reference.get(), controller,
                                                                     /*cache_capacity=*/1);
  }

  // Longest runs first (IDIM-IV without decimation iterates on ~200 000 rows), so that the
  // workers finish together.
  std::vector<int> order(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) order[i] = static_cast<int>(i);
  auto cost = [&](int i) {
    const bool iv = jobs[i].method.estimator == solvers::IdimEstimator::kInstrumentalVariables;
    return (iv ? 10 : 0) +
           (jobs[i].knowledge == dynid::experiments::PriorKnowledge::kNone ? 5 : 0) +
           (jobs[i].method.differentiator == solvers::IdimDifferentiator::kConventional ? 1 : 0);
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost(a) > cost(b); });
  std::atomic<int> done{0};
  cli::Stage stage("estimation runs", static_cast<int64_t>(jobs.size()));
  data::ParallelFor(0, static_cast<int>(jobs.size()), threads, [&](int position) {
    Job& job = jobs[order[position]];
    solvers::IdimRunOptions options;
    options.estimator = job.method.estimator;
    options.iv.max_iterations = settings.max_iterations;
    options.iv.torque_tolerance = settings.iv_tolerance;
    options.iv.parameter_tolerance = settings.iv_tolerance;
    job.ok = solvers::RunIdim(model, systems[job.system], options, theta0, auxiliary.get(),
                              &job.result, &job.error);
    std::lock_guard<std::mutex> lock(print_mutex);
    ++done;
    std::printf("  [%5.1f s] %2d/%zu %-20s %-4s: %s\n", elapsed(), done.load(), jobs.size(),
                job.method.label.c_str(), dynid::experiments::PriorKnowledgeName(job.knowledge),
                job.ok ? ("relative error " + Number(100 * job.result.fit.relative_error, 3) +
                          " %, " + job.result.message)
                             .c_str()
                       : ("FAILED: " + job.error).c_str());
    std::fflush(stdout);
    stage.Set(done.load());
  });
  stage.End();
}

}  // namespace dynid::tx40_study
