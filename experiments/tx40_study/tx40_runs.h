// experiments/tx40_study/tx40_runs — the method × knowledge runs: the IDIM methods (estimator ×
// differentiation path), the pre-processed systems (one per differentiator and knowledge level)
// and the estimation of every method at every level on the worker threads.
#ifndef DYNID_EXPERIMENTS_TX40_STUDY_TX40_RUNS_H_
#define DYNID_EXPERIMENTS_TX40_STUDY_TX40_RUNS_H_

#include <functional>
#include <string>
#include <vector>

#include "dynid/models/tx40.h"
#include "dynid/solvers/idim.h"
#include "experiments/tx40_study/prior_knowledge.h"

namespace dynid::tx40_study {

struct Settings;
struct Record;

struct Method {
  std::string key, label;
  solvers::IdimEstimator estimator;
  solvers::IdimDifferentiator differentiator;
};

// key: idim_{ls,wls,iv}_{conventional,irwsm1,irwsm2}.
bool ParseMethod(const std::string& key, Method* method, std::string* error);

struct Job {
  Method method;
  dynid::experiments::PriorKnowledge knowledge;
  int system = -1;  // index into the built systems
  solvers::IdimResult result;
  bool ok = false;
  std::string error;
};

struct SystemKey {
  solvers::IdimDifferentiator differentiator;
  dynid::experiments::PriorKnowledge knowledge;
};

// The jobs (knowledge level × method, in that order) and the systems they share.
struct Runs {
  std::vector<SystemKey> system_keys;
  std::vector<solvers::IdimSystem> systems;
  std::vector<Job> jobs;
};

// Seconds since the program started (for the progress lines).
using Elapsed = std::function<double()>;

// The jobs and their pre-processed systems; false with *error when a system cannot be built.
bool BuildSystems(const Settings& settings, const solvers::IdimModel& model, const Record& record,
                  const Elapsed& elapsed, Runs* runs, std::string* error);

// Runs every job (longest first) from θ^0 = CAD inertias, zero friction. A job that fails keeps
// its error in the job.
void RunJobs(const Settings& settings, const models::SerialRobot& robot,
             const solvers::IdimModel& model, const Record& record, const Elapsed& elapsed,
             Runs* runs);

}  // namespace dynid::tx40_study

#endif  // DYNID_EXPERIMENTS_TX40_STUDY_TX40_RUNS_H_
