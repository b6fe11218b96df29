// bench_physically_consistent — speed of the physically consistent identification
// (solvers/physically_consistent_fit.h) on the simulated TX40 experiment: 81 standard parameters
// reached through their log-Cholesky / log parametrisation, fitted to the decimated IDIM system
// of its 55 base parameters (solvers/idim.h, conventional pre-processing, good knowledge, sample
// selection), one thread.
//
// Measures: (1) the consistent fit (problem build with row compression, Levenberg–Marquardt from
// the CAD values, delta-method covariances, consistency report) — the target is < 1 s; (2) the
// same fit without row compression; (3) IDIM-LS on the same system for reference; and prints how
// far the LS estimate is from the nearest consistent one (σ units) and what sits at a bound.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "dynid/models/tx40.h"
#include "dynid/solvers/idim.h"
#include "dynid/solvers/physically_consistent_fit.h"
#include "experiments/benchmarks/bench_timing.h"
#include "experiments/benchmarks/tx40_bench_record.h"
#include "experiments/common/cli.h"

DEFINE_double(duration_s, 7.0, "simulated experiment length (s); 7 s = 35 000 samples");
DEFINE_int32(repeats, 3, "timed repetitions (best reported)");

using dynid::benchmarks::BestSeconds;

int main(int argc, char** argv) {
  dynid::cli::ParseFlags(&argc, &argv,
                         "speed of the physically consistent fit on the simulated TX40 experiment");
  namespace solvers = dynid::solvers;
  if (!(FLAGS_duration_s > 0.0) || FLAGS_repeats < 1) {
    return dynid::cli::Fail(2, "--duration_s and --repeats must be positive");
  }
  std::string error;
  dynid::benchmarks::Tx40BenchRecord record =
      dynid::benchmarks::MakeTx40BenchRecord(FLAGS_duration_s);
  const dynid::models::SerialRobot& robot = record.robot;
  solvers::IdimModel& model = record.model;
  solvers::IdimPreprocessingOptions good = dynid::benchmarks::GoodKnowledgeWithSelection();
  solvers::IdimSystem system;
  CHECK(solvers::BuildIdimSystem(model, record.q, record.tau, good, &system, &error)) << error;

  // The identified columns are the base parameters in the model's order: A = K restricted to them.
  const dynid::models::BaseParameterSet& base = model.base();
  dynid::problems::PhysicallyConsistentData data;
  data.x = system.x;
  data.y = system.y;
  data.column_map.resize(model.num_parameters(), robot.num_parameters());
  for (int i = 0; i < model.num_parameters(); ++i) {
    data.column_map.row(i) = base.grouping.row(base.Index(model.names()[i]));
  }
  std::printf(
      "bench_physically_consistent: TX40, %lld rows × %d base columns, %d standard "
      "parameters, 1 thread, best of %d\n",
      static_cast<long long>(system.x.rows()), model.num_parameters(), robot.num_parameters(),
      FLAGS_repeats);

  const solvers::StandardConsistencyReport cad =
      solvers::CheckStandardConsistency(robot, robot.standard_parameters());
  std::printf("CAD values: %s\n", cad.consistent ? "consistent" : "inconsistent");
  for (const std::string& v : cad.violations) std::printf("  %s\n", v.c_str());

  solvers::PhysicallyConsistentOptions pc_options;
  solvers::PhysicallyConsistentSummary fit;
  const double compressed = BestSeconds(
      [&] {
        CHECK(solvers::FitPhysicallyConsistent(robot, data, robot.standard_parameters(), pc_options,
                                               model.names(), &fit, &error))
            << error;
      },
      FLAGS_repeats);
  std::printf(
      "consistent fit, compressed rows (%d + 1)        %8.4f s  (%d iterations, %s, "
      "relative error %.4g %%)\n",
      model.num_parameters(), compressed, fit.solver.iterations,
      fit.solver.converged ? "converged" : "NOT converged", 100 * fit.relative_error);
  std::printf("%s", fit.Report().c_str());

  solvers::PhysicallyConsistentOptions raw_options = pc_options;
  raw_options.problem.compress_rows = false;
  solvers::PhysicallyConsistentSummary raw;
  const double uncompressed = BestSeconds(
      [&] {
        CHECK(solvers::FitPhysicallyConsistent(robot, data, robot.standard_parameters(),
                                               raw_options, model.names(), &raw, &error))
            << error;
      },
      1);
  std::printf(
      "consistent fit, all %lld rows                  %8.4f s  (%d iterations, max "
      "|Δβ|/σ vs compressed %.2g)\n",
      static_cast<long long>(system.x.rows()), uncompressed, raw.solver.iterations,
      (raw.columns - fit.columns)
          .cwiseQuotient(fit.column_standard_deviation)
          .cwiseAbs()
          .maxCoeff());

  solvers::IdimRunOptions ls_options;
  ls_options.hac = false;
  solvers::IdimResult ls;
  const double ls_time = BestSeconds(
      [&] {
        CHECK(solvers::RunIdim(model, system, ls_options, Eigen::VectorXd(), nullptr, &ls, &error))
            << error;
      },
      FLAGS_repeats);
  const solvers::EstimateDistance distance =
      solvers::CompareEstimates(ls.fit.theta, ls.fit.covariance, fit.columns);
  std::printf("IDIM-LS on the same rows                       %8.4f s  (relative error %.4g %%)\n",
              ls_time, 100 * ls.fit.relative_error);
  std::printf("LS → nearest consistent: Mahalanobis %.3g, max |z| %.3g (%s)\n",
              distance.mahalanobis, distance.max_abs_z,
              distance.worst >= 0 ? model.names()[distance.worst].c_str() : "-");
  return 0;
}
