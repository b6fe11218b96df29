// experiments/benchmarks/tx40_bench_record — the simulated TX40 experiment the IDIM benchmarks
// time on (tx40_study's default set-up, Brunot et al. (2018) §4): the experiment, its joint-side
// positions and torques, and the IDIM model of its 55 base parameters.
#ifndef DYNID_EXPERIMENTS_BENCHMARKS_TX40_BENCH_RECORD_H_
#define DYNID_EXPERIMENTS_BENCHMARKS_TX40_BENCH_RECORD_H_

#include <string>

#include <Eigen/Core>
#include <glog/logging.h>

#include "dynid/models/serial_robot.h"
#include "dynid/models/tx40.h"
#include "dynid/solvers/idim.h"
#include "experiments/tx40_study/prior_knowledge.h"
#include "experiments/tx40_study/tx40_experiment.h"

namespace dynid::benchmarks {

struct Tx40BenchRecord {
  tx40_study::Tx40Experiment experiment;
  models::SerialRobot robot = models::MakeTx40();
  solvers::IdimModel model;   // the experiment's closed-form base parameters
  Eigen::MatrixXd q, tau;     // joint side, Ns × 6 (rad, N m)
};

// Simulates `duration_s` seconds of the experiment (5 kHz) and prepares it; a failure is a
// programming error of the benchmark (CHECK).
inline Tx40BenchRecord MakeTx40BenchRecord(double duration_s) {
  Tx40BenchRecord record;
  std::string error;
  tx40_study::Tx40ExperimentOptions options;
  options.duration_s = duration_s;
  CHECK(tx40_study::SimulateTx40Experiment(options, &record.experiment, &error)) << error;
  CHECK(solvers::IdimModel::Create(record.robot, record.experiment.base, {}, &record.model,
                                   &error))
      << error;
  models::Tx40MotorToJoint(record.experiment.simulation.q_motor,
                           record.experiment.simulation.tau_motor, &record.q, &record.tau);
  return record;
}

// Conventional pre-processing with good knowledge (Brunot et al. (2018) §4.2) and rows at rest
// (|q'| < 0.05 rad/s) dropped: the decimated system the benchmarks solve.
inline solvers::IdimPreprocessingOptions GoodKnowledgeWithSelection() {
  solvers::IdimPreprocessingOptions good = experiments::KnowledgePreprocessing(
      experiments::PriorKnowledge::kGood, solvers::IdimDifferentiator::kConventional, 5000.0);
  good.select_samples = true;
  good.selection.velocity_threshold = Eigen::VectorXd::Constant(1, 0.05);
  return good;
}

}  // namespace dynid::benchmarks

#endif  // DYNID_EXPERIMENTS_BENCHMARKS_TX40_BENCH_RECORD_H_
