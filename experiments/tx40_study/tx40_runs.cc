// experiments/tx40_study/tx40_runs — the IDIM methods, the pre-processed systems and the method
// × knowledge runs (see tx40_runs.h).
#include "experiments/tx40_study/tx40_runs.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
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

int TorqueStride(int num_samples) { return std::max(1, num_samples / 2500); }

void PlanJobs(const Settings& settings, Runs* runs) {
  std::vector<SystemKey>& system_keys = runs->system_keys;
  std::vector<Job>& jobs = runs->jobs;
  for (dynid::experiments::PriorKnowledge level : settings.levels) {
    for (const Method& method : settings.methods) {
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
  runs->systems.assign(system_keys.size(), solvers::IdimSystem());
}

namespace {

solvers::IdimPreprocessingOptions SystemOptions(const Settings& settings, const SystemKey& key,
                                                double fs) {
  solvers::IdimPreprocessingOptions options =
      dynid::experiments::KnowledgePreprocessing(key.knowledge, key.differentiator, fs);
  options.select_samples = settings.select_samples;
  options.selection.velocity_threshold = Eigen::VectorXd::Constant(1, settings.velocity_threshold);
  options.selection_guard_rows = settings.guard_rows;
  options.selection_guard_s = settings.guard_s;
  return options;
}

}  // namespace

bool RunJobs(const Settings& settings, const models::SerialRobot& robot,
             const solvers::IdimModel& model, const Record& record, const Elapsed& elapsed,
             Runs* runs, std::string* error) {
  const std::unique_ptr<data::JointTrajectory>& reference = record.reference;
  const data::RobotSimulatorOptions& controller = record.controller;
  const int threads = settings.threads;
  const std::vector<SystemKey>& system_keys = runs->system_keys;
  std::vector<solvers::IdimSystem>& systems = runs->systems;
  std::vector<Job>& jobs = runs->jobs;
  const int num_systems = static_cast<int>(system_keys.size());
  std::mutex print_mutex;
  // θ^0 of IDIM-IV (Brunot et al. (2018) eq. 6 step 1): CAD inertial values, zero friction.
  Eigen::VectorXd theta0 = model.FromStandard(robot.standard_parameters());
  for (int i = 0; i < model.num_parameters(); ++i) {
    if (model.IsFrictionOrOffset(i)) theta0[i] = 0.0;
  }
  std::unique_ptr<solvers::ClosedLoopAuxiliaryModel> auxiliary;
  if (reference) {
    // One cached simulation: the θ^0 run every IV job starts from (each later θ is a job's own,
    // never asked for twice; a cached simulation of a long record holds hundreds of MB). The
    // simulations keep only the series the runs use.
    auxiliary = std::make_unique<solvers::ClosedLoopAuxiliaryModel>(
        reference.get(), controller, /*cache_capacity=*/1, /*motion_only=*/true);
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
  // A further run on a system starts as soon as the runs started with its first one have been
  // handed out, rather than last by its cost, so that the system is released early: an
  // undecimated one (2.2 GB for 10⁶ samples), and a decimated one's X (0.18 GB at R = 13), whose
  // IDIM-LS otherwise comes last.
  const int workers = data::ParallelForThreads(threads, static_cast<int>(jobs.size()));
  for (size_t position = 1; position < order.size(); ++position) {
    const int s = jobs[order[position]].system;
    size_t first = 0;
    while (first < position && jobs[order[first]].system != s) ++first;
    const size_t target = first + static_cast<size_t>(workers);
    if (first < position && target < position) {
      std::rotate(order.begin() + target, order.begin() + position, order.begin() + position + 1);
    }
  }

  // Per system: built once, on its first job; its matrices released after its last job, except
  // for the system of the first LS/WLS job (the outputs' essential-parameter selection).
  std::deque<std::once_flag> built(num_systems);
  std::vector<std::string> system_errors(num_systems);
  std::vector<int> remaining(num_systems, 0);
  for (const Job& job : jobs) ++remaining[job.system];
  int kept_for_outputs = -1;
  for (const Job& job : jobs) {
    if (job.method.estimator != solvers::IdimEstimator::kInstrumentalVariables) {
      kept_for_outputs = job.system;
      break;
    }
  }
  auto build = [&](int s) {
    solvers::IdimPreprocessingOptions options = SystemOptions(settings, system_keys[s], record.fs);
    // An undecimated ("no knowledge") system holds its states instead of X when X would exceed
    // 256 MB (≈ 100 000 samples, 20 s at 5 kHz): forming X's rows again costs a regressor
    // evaluation per IV iteration (measured on the 7 s record: IDIM-IV conv., 17 iterations,
    // +0.4–1.5 s of 11–14 s CPU), which a short record's X does not need to save.
    constexpr int64_t kHeldRegressorBytes = int64_t{256} << 20;
    options.stream_regressor =
        int64_t{8} * model.num_joints() * model.num_parameters() * record.q_measured.rows() >
        kHeldRegressorBytes;
    std::string why;
    const bool ok = solvers::BuildIdimSystem(model, record.q_measured, record.tau_measured, options,
                                             &systems[s], &why);
    // The differentiated states at the input rate (3 × Ns × n) are used only to form a streamed
    // X: otherwise released, 5 MB per system for the 7 s record.
    if (!systems[s].streamed) {
      systems[s].q.resize(0, 0);
      systems[s].qd.resize(0, 0);
      systems[s].qdd.resize(0, 0);
    }
    std::lock_guard<std::mutex> lock(print_mutex);
    if (!ok) system_errors[s] = why;
    if (settings.quiet) return;
    std::printf("  [%5.1f s] pre-processed %-12s %-4s knowledge: %s\n", elapsed(),
                solvers::IdimDifferentiatorName(system_keys[s].differentiator),
                dynid::experiments::PriorKnowledgeName(system_keys[s].knowledge),
                ok ? (std::to_string(systems[s].num_rows()) + " rows").c_str()
                   : ("FAILED: " + why).c_str());
    std::fflush(stdout);
  };

  std::atomic<int> done{0};
  std::optional<cli::Stage> stage;
  if (!settings.quiet) stage.emplace("estimation runs", static_cast<int64_t>(jobs.size()));
  data::ParallelFor(0, static_cast<int>(jobs.size()), threads, [&](int position) {
    Job& job = jobs[order[position]];
    const int s = job.system;
    std::call_once(built[s], build, s);
    const solvers::IdimSystem& system = systems[s];
    if (!system_errors[s].empty()) {
      job.ok = false;
      job.error = "pre-processing failed: " + system_errors[s];
    } else {
      solvers::IdimRunOptions options;
      options.estimator = job.method.estimator;
      options.iv.max_iterations = settings.max_iterations;
      options.iv.torque_tolerance = settings.iv_tolerance;
      options.iv.parameter_tolerance = settings.iv_tolerance;
      options.iv.stall_iterations = settings.iv_stall_iterations;
      job.ok = solvers::RunIdim(model, system, options, theta0, auxiliary.get(), &job.result,
                                &job.error);
    }
    Eigen::VectorXd estimated;
    if (job.ok &&
        !solvers::SystemTimes(model, system, job.result.fit.theta, &estimated, &job.error)) {
      job.ok = false;
    }
    if (job.ok) {
      const int stride = TorqueStride(system.num_samples);
      for (Eigen::Index r = 0; r < estimated.size(); ++r) {
        const int sample = system.blocks.sample_of_row[r];
        if (sample % stride != 0) continue;
        job.torques.push_back(
            {system.blocks.BlockOf(static_cast<int>(r)), sample, system.y[r], estimated[r]});
      }
    }
    // No output reads the residual itself (its whiteness and norms are in the result), and it
    // has a row per kept row: 43 MB per run of an undecimated 10⁶-sample system, held by the
    // 8 such runs until the outputs otherwise.
    job.result.fit.residual = Eigen::VectorXd();
    std::lock_guard<std::mutex> lock(print_mutex);
    if (--remaining[s] == 0 && s != kept_for_outputs) {
      systems[s].x.resize(0, 0);
      systems[s].y.resize(0);
      systems[s].q.resize(0, 0);
      systems[s].qd.resize(0, 0);
      systems[s].qdd.resize(0, 0);
      // The per-row maps too (3 ints per row: 65 MB for an undecimated 10⁶-sample system); the
      // outputs read only the system's options, sizes and selection report.
      systems[s].kept_rows = std::vector<int>();
      systems[s].blocks.block_of_row = std::vector<int>();
      systems[s].blocks.sample_of_row = std::vector<int>();
      malloc_trim(0);  // freed blocks below glibc's mmap threshold go back too
    }
    ++done;
    if (runs->job_done) runs->job_done(job);
    if (settings.quiet) return;
    std::printf("  [%5.1f s] %2d/%zu %-20s %-4s: %s\n", elapsed(), done.load(), jobs.size(),
                job.method.label.c_str(), dynid::experiments::PriorKnowledgeName(job.knowledge),
                job.ok ? ("relative error " + Number(100 * job.result.fit.relative_error, 3) +
                          " %, " + job.result.message)
                             .c_str()
                       : ("FAILED: " + job.error).c_str());
    std::fflush(stdout);
    stage->Set(done.load());
  });
  if (stage) stage->End();
  for (int s = 0; s < num_systems; ++s) {
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

}  // namespace dynid::tx40_study
