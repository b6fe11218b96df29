#include "dynid/solvers/essential_parameters.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "dynid/solvers/residual_analysis.h"

namespace dynid::solvers {
namespace {

std::string NameOf(const std::vector<std::string>& names, int column) {
  if (column < static_cast<int>(names.size()) && !names[column].empty()) return names[column];
  return "column " + std::to_string(column);
}

LinearLeastSquaresSummary Fit(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                              const std::vector<int>& columns,
                              const std::vector<std::string>& names,
                              const EssentialParametersOptions& options) {
  Eigen::MatrixXd X_subset(X.rows(), columns.size());
  LinearLeastSquaresOptions fit_options = options.least_squares;
  fit_options.column_names.clear();
  for (size_t c = 0; c < columns.size(); ++c) {
    X_subset.col(c) = X.col(columns[c]);
    fit_options.column_names.push_back(NameOf(names, columns[c]));
  }
  return options.weighted ? SolveWeightedLeastSquares(X_subset, y, fit_options)
                          : SolveLeastSquares(X_subset, y, fit_options);
}

}  // namespace

bool EssentialParametersOptions::IsValid(std::string* why) const {
  auto fail = [&](const std::string& message) {
    if (why != nullptr) *why = message;
    return false;
  };
  if (!(max_relative_error_increase >= 0.0)) {
    return fail("max_relative_error_increase must be >= 0");
  }
  if (!(target_max_relative_std_percent >= 0.0)) {
    return fail("target_max_relative_std_percent must be >= 0");
  }
  if (min_parameters < 1) return fail("min_parameters must be >= 1");
  return least_squares.IsValid(why);
}

EssentialParametersSummary SelectEssentialParameters(const Eigen::MatrixXd& X,
                                                     const Eigen::VectorXd& y,
                                                     const std::vector<std::string>& column_names,
                                                     const EssentialParametersOptions& options) {
  CHECK(column_names.empty() || static_cast<Eigen::Index>(column_names.size()) == X.cols())
      << "column_names: expected " << X.cols() << " names, got " << column_names.size();
  EssentialParametersSummary summary;
  std::string why;
  if (!options.IsValid(&why)) {
    summary.message = "invalid options: " + why;
    return summary;
  }
  std::vector<int> current;
  for (Eigen::Index c = 0; c < X.cols(); ++c) current.push_back(static_cast<int>(c));
  LinearLeastSquaresSummary fit = Fit(X, y, current, column_names, options);
  if (!fit.success) {
    summary.message = "the full model cannot be fitted: " + fit.message;
    summary.final_fit = fit;
    return summary;
  }
  summary.full_relative_error = fit.relative_error;
  const double rss_full = fit.residual_norm * fit.residual_norm;
  const int b_full = static_cast<int>(X.cols());
  const double rows = static_cast<double>(X.rows());
  std::ostringstream stop;
  while (true) {
    if (static_cast<int>(current.size()) <= options.min_parameters) {
      stop << "stopped at min_parameters = " << options.min_parameters;
      break;
    }
    Eigen::Index worst = 0;
    const double largest = fit.relative_std_percent.maxCoeff(&worst);
    if (options.target_max_relative_std_percent > 0.0 &&
        largest <= options.target_max_relative_std_percent) {
      stop << "every relative standard deviation is <= " << options.target_max_relative_std_percent
           << " %";
      break;
    }
    std::vector<int> candidate = current;
    candidate.erase(candidate.begin() + worst);
    const LinearLeastSquaresSummary candidate_fit = Fit(X, y, candidate, column_names, options);
    EliminationStep step;
    step.column = current[worst];
    step.name = NameOf(column_names, step.column);
    step.relative_std_percent = largest;
    step.num_parameters_after = static_cast<int>(candidate.size());
    step.relative_error_after = candidate_fit.relative_error;
    const double rss = candidate_fit.residual_norm * candidate_fit.residual_norm;
    step.f_statistic =
        ((rss - rss_full) / (b_full - step.num_parameters_after)) / (rss_full / (rows - b_full));
    step.f_p_value =
        FisherSurvival(std::max(step.f_statistic, 0.0), b_full - step.num_parameters_after,
                       static_cast<int>(rows) - b_full);
    if (!candidate_fit.success || candidate_fit.relative_error - summary.full_relative_error >
                                      options.max_relative_error_increase) {
      summary.rejected = step;
      stop << "removing " << step.name << " (" << std::setprecision(3) << largest
           << " % std) would raise the relative error from " << 100.0 * summary.full_relative_error
           << " % to " << 100.0 * step.relative_error_after << " % (allowed increase "
           << 100.0 * options.max_relative_error_increase << " points)";
      break;
    }
    summary.path.push_back(step);
    current = std::move(candidate);
    fit = candidate_fit;
  }
  summary.essential_columns = current;
  for (int c : current) summary.essential_names.push_back(NameOf(column_names, c));
  summary.final_fit = fit;
  summary.success = true;
  summary.message = stop.str();
  return summary;
}

std::string EssentialParametersSummary::Report() const {
  std::ostringstream text;
  if (!success) return "essential parameters: " + message + "\n";
  text << "essential parameters: " << essential_columns.size() << " kept, " << path.size()
       << " removed; full-model relative error " << std::setprecision(4)
       << 100.0 * full_relative_error << " %\n";
  for (const EliminationStep& step : path) {
    text << "  removed " << std::left << std::setw(10) << step.name << std::right << " (%std "
         << std::setprecision(4) << step.relative_std_percent << ") → " << step.num_parameters_after
         << " parameters, relative error " << 100.0 * step.relative_error_after
         << " %, F = " << step.f_statistic << " (p = " << step.f_p_value << ")\n";
  }
  text << "  " << message << "\n  kept:";
  for (const std::string& name : essential_names) text << " " << name;
  text << "\n";
  return text.str();
}

}  // namespace dynid::solvers
