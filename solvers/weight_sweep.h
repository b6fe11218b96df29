// solvers:: weighting-matrix sweeps of the weighted-residual smoother (van de Molengraft (1990);
// solvers/README.md, "Pitfalls"; "weighted-residual estimation is not maximum likelihood for
// theta").
//
// The estimates of the weighted-residual smoother depend on the weights W (kinematic couplings),
// V (equations of motion and measurements) and R0 (initial guess). A sweep sets chosen diagonal
// entries of these matrices on a log-spaced grid (the Cartesian product of one axis per entry),
// and at every grid point estimates theta on several Monte Carlo noise realisations of the same
// simulated experiment, recording estimates, covariance, residual norms, cost, convergence and
// time. Bias and spread are then summarised per grid point, separately (§8).
//
// The pieces:
//  - WeightEntry / ListWeightEntries / ParseWeightEntry: names for every diagonal entry of W, V,
//    R0 of a model ("W.v.s", "V.eom.force_balance", "V.z.a_measured", "R0.theta.mass", or by
//    index "V[2]").
//  - SweepAxis / ParseSweepGrid: "NAME:LOW:HIGH:COUNT[,NAME:LOW:HIGH:COUNT...]".
//  - SweepCase: a model plus its simulated data, noise levels and base weights, type-erased so
//    that the sweep driver and the programs need no model templates (weight_sweep_cases.h).
//  - PointResult and its journal line: a finished (grid point, seed) is appended as one line with
//    a checksum and flushed, so a killed sweep resumes where it stopped and never records a point
//    twice or half (SweepJournal).
//  - RunSweepTasks: a std::thread pool over the pending tasks with a progress callback.
//  - SummarizeSweep: per grid point bias, spread and RMS error of every parameter.
#ifndef DYNID_SOLVERS_WEIGHT_SWEEP_H_
#define DYNID_SOLVERS_WEIGHT_SWEEP_H_

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dynid/models/mechanical_model.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/observability.h"

namespace dynid::solvers {

enum class WeightMatrix { kKinematic, kResidual, kInitial };  // W, V, R0

// One diagonal entry of W (2n), V (n + l) or R0 (2n + p).
struct WeightEntry {
  WeightMatrix matrix = WeightMatrix::kResidual;
  int index = 0;
  std::string name;  // canonical name, e.g. "V.z.a_measured"
};

// All diagonal entries for a model, in the order W, V, R0:
//   W.s.<position>, W.v.<position>                    (xi_s, xi_v)
//   V.eom.<equation>, V.z.<measurement>               (zeta)
//   R0.s.<position>, R0.v.<position>, R0.theta.<parameter>
std::vector<WeightEntry> ListWeightEntries(const models::ModelInfo& info);

// Accepts a canonical name or an index form "W[i]", "V[i]", "R0[i]" (0-based). False with a
// message listing the valid names otherwise.
bool ParseWeightEntry(const std::string& text, const models::ModelInfo& info, WeightEntry* entry,
                      std::string* error);

// One axis of the grid: `count` log-spaced values from `low` to `high` (count 1: low only).
struct SweepAxis {
  WeightEntry entry;
  double low = 1.0;
  double high = 1.0;
  int count = 1;
  std::vector<double> Values() const;
};

// Parses "NAME:LOW:HIGH:COUNT[,...]" (LOW, HIGH > 0, 1 <= COUNT <= 10000, no entry twice).
// `what` names the flag in messages.
bool ParseSweepGrid(const std::string& text, const models::ModelInfo& info, const std::string& what,
                    std::vector<SweepAxis>* axes, std::string* error);

// Number of grid points (product of the counts) and the values of point `index` (the first axis
// varies slowest).
int NumGridPoints(const std::vector<SweepAxis>& axes);
std::vector<double> GridPointValues(const std::vector<SweepAxis>& axes, int index);

// Applies the values of one grid point to `weights`: each entry is set to the value (absolute)
// or multiplied by it (relative). An R0 entry on empty R0 first creates R0 = 0 of the right size
// (the caller sets q0). False when a relative value meets a zero base entry.
bool ApplyGridPoint(const std::vector<SweepAxis>& axes, const std::vector<double>& values,
                    bool relative, int num_parameters, problems::WeightedResidualWeights* weights,
                    std::string* error);

// Solver settings shared by all points of a sweep.
struct SweepSolverSettings {
  int max_iterations = 50;
  double function_tolerance = 1e-10;
  double theta_start_factor = 1.2;  // theta starts at factor × truth
  double noise_scale = 1.0;         // multiplies the case's noise standard deviations
  problems::Transcription transcription = problems::Transcription::kShooting;

  bool IsValid(std::string* why) const;
};

// The record of one (grid point, seed). Everything numeric, so it round-trips exactly through
// the journal (%.17g).
struct PointResult {
  int point = 0;       // grid point index
  int seed_index = 0;  // 0 .. num_seeds − 1
  int seed = 0;        // noise seed
  bool converged = false;
  int iterations = 0;
  double initial_cost = 0.0;
  double final_cost = 0.0;
  double time_s = 0.0;
  bool identifiable = false;
  double condition_number = 0.0;              // of the relative information of theta
  Eigen::VectorXd theta;                      // p, estimate
  Eigen::VectorXd standard_deviation;         // p, sqrt(diag(S⁻¹)) in the metric of the weights
  Eigen::VectorXd scaled_standard_deviation;  // p, × sqrt(ResidualVarianceFactor)
  Eigen::VectorXd zeta_rms;                   // n + l, RMS over nodes of each zeta component
  Eigen::VectorXd xi_rms;                     // 2n, RMS over intervals of xi_s, xi_v
};

// A model with simulated data: everything a sweep needs, behind a type-erased interface.
// Implementations are immutable after construction, so Run may be called from many threads.
class SweepCase {
 public:
  virtual ~SweepCase() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual const models::ModelInfo& info() const = 0;
  virtual const Eigen::VectorXd& true_parameters() const = 0;
  virtual const Eigen::VectorXd& noise_standard_deviation() const = 0;  // l, before noise_scale
  virtual const problems::WeightedResidualWeights& base_weights() const = 0;
  virtual int num_nodes() const = 0;
  // Estimates theta with `weights` on the data with noise seed `seed`. Fills everything but
  // point/seed_index. False (with a message) only for invalid inputs; a solver that fails to
  // converge is a valid result (converged = false).
  virtual bool Run(const problems::WeightedResidualWeights& weights, int seed,
                   const SweepSolverSettings& settings, PointResult* result,
                   std::string* error) const = 0;
  // The rank tests of the model along the noise-free trajectory and the identifiability of theta
  // from the Jacobian of the weighted-residual problem with `weights` at the truth.
  virtual bool Observability(const problems::WeightedResidualWeights& weights,
                             ObservabilityReport* report, std::string* error) const = 0;
};

// Journal lines. A line is "P <point> <seed_index> <count> <count values> <checksum>".
std::string FormatJournalLine(const PointResult& result);
// False when the line is incomplete, has the wrong sizes for (p, n + l, 2n) or a bad checksum.
bool ParseJournalLine(const std::string& line, int p, int num_zeta, int num_xi,
                      PointResult* result);

// Append-only per-process journal files in a folder. Every file starts with a signature line of
// the sweep configuration; loading refuses files of another configuration.
class SweepJournal {
 public:
  // Loads every "journal-*.txt" in `directory` (which need not exist) with the given signature.
  // Invalid lines (a point cut short by a kill) are skipped and counted; the first record of a
  // (point, seed) wins.
  bool Load(const std::string& directory, const std::string& signature, int p, int num_zeta,
            int num_xi, std::string* error);
  // Opens "journal-<rank>.txt" in `directory` (created if needed) for appending.
  bool OpenForAppend(const std::string& directory, const std::string& signature, int rank,
                     std::string* error);
  // Appends one line and flushes it to the file system (thread-safe).
  bool Append(const PointResult& result, std::string* error);
  void Close();
  ~SweepJournal() { Close(); }

  const std::map<std::pair<int, int>, PointResult>& loaded() const { return loaded_; }
  int skipped_lines() const { return skipped_lines_; }

 private:
  std::map<std::pair<int, int>, PointResult> loaded_;
  int skipped_lines_ = 0;
  std::FILE* file_ = nullptr;
  std::string path_;
};

// A 64-bit FNV-1a hash in hex, for journal signatures.
std::string HashHex(const std::string& text);

// Runs `run(task)` for every task in `tasks` on `num_threads` threads (tasks are taken in order);
// `done(task, ok)` is called after each task under a lock (progress, journal). Returns false if
// any call of run returned false (the remaining tasks are skipped).
bool RunSweepTasks(const std::vector<int>& tasks, int num_threads,
                   const std::function<bool(int task, std::string* error)>& run,
                   const std::function<void(int task)>& done, std::string* error);

// Text progress bar "[#####.....] 45/100 points, 12 s, ETA 15 s" of width 30.
std::string ProgressBar(int done, int total, double elapsed_s);

// Per grid point: number of converged seeds, and per parameter the mean relative error (bias),
// its standard deviation over seeds (spread), the RMS relative error and the mean predicted
// relative standard deviation (scaled). `results` must hold every (point, seed) once.
struct PointSummary {
  int point = 0;
  int num_seeds = 0;
  int num_converged = 0;
  double mean_final_cost = 0.0;
  double mean_time_s = 0.0;
  Eigen::VectorXd bias;           // p, mean (theta − truth)/|truth|
  Eigen::VectorXd spread;         // p, standard deviation over seeds of the relative error
  Eigen::VectorXd rms_error;      // p, sqrt(mean relative error²)
  Eigen::VectorXd predicted_rsd;  // p, mean scaled_standard_deviation / |truth|
};
std::vector<PointSummary> SummarizeSweep(const std::vector<PointResult>& results, int num_points,
                                         const Eigen::VectorXd& truth);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_WEIGHT_SWEEP_H_
