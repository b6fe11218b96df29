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

// One decimated sample of the torque figure: the measured and the estimated (X θ) torque of a
// kept row.
struct TorqueSample {
  int joint = 0, sample = 0;  // joint, decimated sample
  double measured = 0.0, estimated = 0.0;
};

struct Job {
  Method method;
  dynid::experiments::PriorKnowledge knowledge;
  int system = -1;  // index into the systems
  solvers::IdimResult result;
  bool ok = false;
  std::string error;
  // The kept rows at every TorqueStride(system)-th decimated sample, taken when the run ends so
  // that the outputs need not keep the system's matrices.
  std::vector<TorqueSample> torques;
};

// Every how many decimated samples the torque figure shows one (at most ~2500 per joint).
int TorqueStride(int num_samples);

struct SystemKey {
  solvers::IdimDifferentiator differentiator;
  dynid::experiments::PriorKnowledge knowledge;
};

// The jobs (knowledge level × method, in that order) and the systems they share.
struct Runs {
  std::vector<SystemKey> system_keys;
  std::vector<solvers::IdimSystem> systems;
  std::vector<Job> jobs;
  // Called by RunJobs on the worker thread as each job has finished (job and result final; its
  // system's matrices may be released), e.g. to write a knowledge level's outputs while the
  // other levels compute. May be empty.
  std::function<void(const Job& job)> job_done;
};

// Seconds since the program started (for the progress lines).
using Elapsed = std::function<double()>;

// The jobs and the keys of the systems they share (the systems are built by RunJobs).
void PlanJobs(const Settings& settings, Runs* runs);

// Runs every job (longest first) from θ^0 = CAD inertias, zero friction. A system is
// pre-processed when its first job starts, and its matrices (x, y) are released when its last
// job ends, except on the system of the first LS/WLS job (the essential-parameter selection of
// the outputs); a further run on a system is scheduled close to the other runs of that system.
// So an undecimated system (75 MB for the 7 s record, 2.6 GB for 10⁶ samples) or a decimated
// one's X lives only while its runs do, rather than all of them throughout. A job that fails keeps
// its error in the job; false with *error when a system cannot be built.
bool RunJobs(const Settings& settings, const models::SerialRobot& robot,
             const solvers::IdimModel& model, const Record& record, const Elapsed& elapsed,
             Runs* runs, std::string* error);

}  // namespace dynid::tx40_study

#endif  // DYNID_EXPERIMENTS_TX40_STUDY_TX40_RUNS_H_
