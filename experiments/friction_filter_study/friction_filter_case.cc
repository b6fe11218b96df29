// experiments/friction_filter_study/friction_filter_case — one case's errors or levels, time
// series and summary (see friction_filter_case.h).
#include "experiments/friction_filter_study/friction_filter_case.h"

#include <Eigen/Core>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "experiments/friction_filter_study/friction_filter_flags.h"
#include "experiments/friction_filter_study/friction_filter_measures.h"

namespace dynid::friction_filter_study {

CaseResult EvaluateCase(const Record& record, const CaseRecord& case_record,
                        const FilterRuns& runs) {
  const bool measured = record.measured;
  const int num = record.num;
  const int first_after = record.first_after;
  const Eigen::VectorXd& times = record.times;
  const dynid::models::Trajectory& truth = case_record.truth;
  const Eigen::VectorXd& friction = case_record.friction;
  const Eigen::MatrixXd& measurements = case_record.measurements;
  const solvers::SlidingSurfaceFilterResult& sliding = runs.sliding;
  const solvers::SlidingSurfaceFilterResult& sliding_sigma = runs.sliding_sigma;
  const solvers::SlidingSurfaceFilterSummary& sliding_summary = runs.sliding_summary;
  const solvers::SlidingSurfaceFilterSummary& sliding_sigma_summary = runs.sliding_sigma_summary;
  const solvers::LinearOptimalFilterResult& optimal = runs.optimal;
  const double optimal_time_s = runs.optimal_time_s;
  CaseResult result;
  result.true_mass = case_record.true_mass;
  result.file = case_record.file;
  const Eigen::VectorXd sliding_e = sliding.states.row(2).transpose();
  const Eigen::VectorXd optimal_e = optimal.states.row(2).transpose();
  Eigen::VectorXd inertia_error, absorbed;  // (m − m_f) a and w + (m − m_f) a (simulated)
  if (measured) {
    for (const auto& [name, estimate] :
         {std::pair<std::string, const Eigen::VectorXd&>{"sliding_surface", sliding_e},
          {"linear_optimal", optimal_e}}) {
      const Eigen::VectorXd after = estimate.tail(num - first_after);
      result.levels.push_back({name, estimate(num - 1), after.mean(), after.cwiseAbs().mean()});
    }
  } else {
    const Eigen::VectorXd accelerations = truth.accelerations.col(0);
    inertia_error = (case_record.true_mass - FLAGS_filter_mass) * accelerations;
    absorbed = friction + inertia_error;
    auto errors = [&](const std::string& name, const Eigen::VectorXd& estimate,
                      const Eigen::VectorXd& velocity) {
      ErrorRow row;
      row.true_mass = case_record.true_mass;
      row.filter = name;
      const Eigen::VectorXd e = estimate - friction;
      row.rms_all = Rms(e);
      row.rms_after = Rms(e.tail(num - first_after));
      row.max_after = e.tail(num - first_after).cwiseAbs().maxCoeff();
      row.rms_absorbed_after = Rms((estimate - absorbed).tail(num - first_after));
      row.rms_velocity_after = Rms((velocity - truth.velocities.col(0)).tail(num - first_after));
      row.jumps = MeasureJumps(times, friction, truth.velocities.col(0), estimate,
                               FLAGS_jump_threshold_n, FLAGS_jump_window_s, first_after);
      row.jump_summary = SummarizeJumps(row.jumps);
      std::vector<bool> in_window(static_cast<size_t>(num), false);
      for (const JumpMeasure& m : row.jumps) {
        for (int j = m.sample; j < num && times(j) < m.time_s + FLAGS_jump_window_s; ++j) {
          in_window[static_cast<size_t>(j)] = true;
        }
      }
      double sum_squares = 0.0;
      int count = 0;
      for (int j = first_after; j < num; ++j) {
        if (in_window[static_cast<size_t>(j)]) continue;
        sum_squares += e(j) * e(j);
        ++count;
      }
      row.rms_between_jumps = count > 0 ? std::sqrt(sum_squares / count) : NAN;
      return row;
    };
    result.rows.push_back(errors("sliding_surface", sliding_e, sliding.states.row(1).transpose()));
    result.rows.push_back(errors("linear_optimal", optimal_e, optimal.states.row(1).transpose()));
  }

  // The time series, column by column (the true system's only for a simulation).
  std::vector<Eigen::VectorXd> columns;
  auto add = [&](const std::string& name, const Eigen::VectorXd& values) {
    result.header.push_back(name);
    columns.push_back(values);
  };
  add("t", times);
  if (!measured) {
    add("s", truth.positions.col(0));
    add("v", truth.velocities.col(0));
    add("a", truth.accelerations.col(0));
    add("f", truth.inputs.col(0));
    add("w", friction);
    add("w_plus_inertia_error", absorbed);
  }
  add("z_s", measurements.col(0));
  add("z_a", measurements.col(1));
  add("z_f", measurements.col(2));
  const char* const state_names[] = {"s", "v", "e"};
  for (int i = 0; i < 3; ++i) {
    add(std::string("sl_") + state_names[i], sliding.states.row(i).transpose());
  }
  add("sl_a", sliding.inputs.row(0).transpose());
  add("sl_f", sliding.inputs.row(1).transpose());
  add("sl_sigma_v", sliding_sigma.states.row(1).transpose());
  const char* const equation_names[] = {"eom", "s", "a", "f"};
  for (int i = 0; i < 4; ++i) {
    add(std::string("sl_zeta_") + equation_names[i], sliding.residuals.row(i).transpose());
  }
  for (int i = 0; i < 4; ++i) {
    add(std::string("sl_ss_") + equation_names[i], sliding.sliding.row(i).transpose());
  }
  for (int i = 0; i < 3; ++i) {
    add(std::string("of_") + state_names[i], optimal.states.row(i).transpose());
  }
  add("of_a", optimal.inputs.row(0).transpose());
  add("of_f", optimal.inputs.row(1).transpose());
  result.table.resize(num, static_cast<Eigen::Index>(columns.size()));
  for (size_t col = 0; col < columns.size(); ++col) result.table.col(col) = columns[col];
  auto sliding_json = [](const solvers::SlidingSurfaceFilterSummary& s) {
    return nlohmann::json{{"converged", s.converged},
                          {"iterations", s.iterations},
                          {"cost", s.cost},
                          {"time_s", s.time_s},
                          {"reaching_time_s", std::vector<double>(s.reaching_time_s.data(),
                                                                  s.reaching_time_s.data() +
                                                                      s.reaching_time_s.size())},
                          {"message", s.message}};
  };
  const int last = num - 1;
  result.summary = {
      {"sliding_surface", sliding_json(sliding_summary)},
      {"sliding_surface_sigma_demo", sliding_json(sliding_sigma_summary)},
      {"linear_optimal", {{"time_s", optimal_time_s}, {"message", "forward sweep completed"}}}};
  if (measured) {
    result.summary["measurements_csv"] = FLAGS_measurements_csv;
    result.summary["samples"] = num;
    // With sigma ≠ 0 the velocity settles sigma / Lambda off the sigma = 0 estimate.
    result.summary["sliding_surface_velocity_difference_at_end_sigma_demo_vs_sigma0"] =
        sliding_sigma.states(1, last) - sliding.states(1, last);
  } else {
    result.summary["true_mass_kg"] = case_record.true_mass;
    result.summary["sliding_surface_velocity_offset_at_end_sigma0"] =
        sliding.states(1, last) - truth.velocities(last, 0);
    result.summary["sliding_surface_velocity_offset_at_end_sigma_demo"] =
        sliding_sigma.states(1, last) - truth.velocities(last, 0);
    result.summary["rms_inertia_error_after_transient_n"] =
        Rms(inertia_error.tail(num - first_after));
  }
  return result;
}

}  // namespace dynid::friction_filter_study
