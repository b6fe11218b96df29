#include "dynid/solvers/physically_consistent_fit.h"

#include <ceres/problem.h>
#include <ceres/solver.h>
#include <glog/logging.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "dynid/solvers/internal/ceres_progress.h"
#include "dynid/solvers/parameter_covariance.h"

namespace dynid::solvers {
namespace {

using models::ParameterKind;

// Eigen-analysis of a symmetric information matrix after Jacobi scaling (F_s = S F S,
// S = diag(1/sqrt(F_ii))), which makes the rank decision independent of the units of the unknowns.
struct ScaledSpectrum {
  Eigen::VectorXd scale;           // S
  Eigen::MatrixXd pseudo_inverse;  // S F_s⁺ S
  Eigen::MatrixXd null_basis;      // eigenvectors of F_s below the tolerance (scaled coordinates)
  int rank = 0;
};

ScaledSpectrum AnalyzeInformation(const Eigen::MatrixXd& information, double relative_tolerance) {
  const Eigen::Index n = information.rows();
  ScaledSpectrum s;
  s.scale.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double d = information(i, i);
    s.scale[i] = d > 0.0 ? 1.0 / std::sqrt(d) : 1.0;
  }
  const Eigen::MatrixXd scaled = s.scale.asDiagonal() * information * s.scale.asDiagonal();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(scaled);
  const Eigen::VectorXd& lambda = eigen.eigenvalues();
  const double threshold = relative_tolerance * std::max(lambda.maxCoeff(), 0.0);
  Eigen::MatrixXd inverse = Eigen::MatrixXd::Zero(n, n);
  std::vector<Eigen::Index> null;
  for (Eigen::Index k = 0; k < n; ++k) {
    if (lambda[k] > threshold && lambda[k] > 0.0) {
      inverse += eigen.eigenvectors().col(k) * eigen.eigenvectors().col(k).transpose() / lambda[k];
      ++s.rank;
    } else {
      null.push_back(k);
    }
  }
  s.pseudo_inverse = s.scale.asDiagonal() * inverse * s.scale.asDiagonal();
  s.null_basis.resize(n, static_cast<Eigen::Index>(null.size()));
  for (size_t k = 0; k < null.size(); ++k) s.null_basis.col(k) = eigen.eigenvectors().col(null[k]);
  return s;
}

// True for each row i of `map` (rows × n, the linearised map from scaled unknowns to a quantity)
// whose value moves along the null directions: the quantity is not determined.
std::vector<bool> Undetermined(const Eigen::MatrixXd& map, const Eigen::MatrixXd& null_basis) {
  std::vector<bool> out(map.rows(), false);
  if (null_basis.cols() == 0) return out;
  const Eigen::MatrixXd along = map * null_basis;
  for (Eigen::Index i = 0; i < map.rows(); ++i) {
    const double norm = map.row(i).norm();
    out[i] = norm > 0.0 && along.row(i).norm() > 1e-6 * norm;
  }
  return out;
}

// "1·zz3r − 0.48·ia3 + …": the terms of a direction, largest first, relative to the largest.
std::string DescribeDirection(const Eigen::VectorXd& direction,
                              const std::vector<std::string>& names) {
  const double largest = direction.cwiseAbs().maxCoeff();
  std::vector<int> order(direction.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return std::abs(direction[a]) > std::abs(direction[b]); });
  const double sign = direction[order[0]] < 0.0 ? -1.0 : 1.0;
  std::ostringstream out;
  out.precision(3);
  int shown = 0, hidden = 0;
  for (int i : order) {
    const double coefficient = sign * direction[i] / largest;
    if (std::abs(coefficient) < 0.01) break;
    if (shown == 6) {
      ++hidden;
      continue;
    }
    if (shown > 0)
      out << (coefficient < 0.0 ? " − " : " + ");
    else if (coefficient < 0.0)
      out << "−";
    out << std::abs(coefficient) << "·" << names[i];
    ++shown;
  }
  if (hidden > 0) out << " (+" << hidden << " smaller terms)";
  return out.str();
}

}  // namespace

bool PhysicallyConsistentOptions::IsValid(std::string* why) const {
  auto fail = [&](const std::string& message) {
    if (why != nullptr) *why = message;
    return false;
  };
  if (!problem.IsValid(why)) return false;
  if (max_iterations < 1 || finish_max_iterations < 1) {
    return fail("max_iterations and finish_max_iterations must be >= 1");
  }
  if (!(function_tolerance >= 0.0) || !(gradient_tolerance >= 0.0) ||
      !(parameter_tolerance >= 0.0)) {
    return fail("tolerances must be >= 0");
  }
  if (!(start_floor > 0.0 && start_floor < 1.0)) return fail("start_floor must be in (0, 1)");
  if (!(rank_tolerance > 0.0 && rank_tolerance < 1.0)) {
    return fail("rank_tolerance must be in (0, 1)");
  }
  if (!(bound_tolerance >= 0.0 && bound_tolerance < 1.0)) {
    return fail("bound_tolerance must be in [0, 1)");
  }
  if (hac_lags < 0) return fail("hac_lags must be >= 0");
  return progress.IsValid(why);
}

std::string PhysicallyConsistentSummary::Report() const {
  std::ostringstream out;
  out << "physically consistent fit: " << (success ? "" : "FAILED: ") << message << "\n";
  out << "  iterations " << solver.iterations << ", " << solver.time_s << " s"
      << (solver.converged ? "" : " (not converged)") << "; rows " << num_rows << ", rank " << rank
      << ", sigma² " << sigma2 << ", relative error " << relative_error << "\n";
  if (start_projected)
    out << "  the fit started from a shifted or projected point, not the given one\n";
  for (const std::string& bound : at_bound) out << "  at bound: " << bound << "\n";
  if (!undetermined.empty()) {
    out << "  " << undetermined.size() << " combination(s) not determined by the data:\n";
    for (const std::string& u : undetermined) out << "    " << u << "\n";
  }
  return out.str();
}

bool FitPhysicallyConsistent(const models::SerialRobot& robot,
                             const problems::PhysicallyConsistentData& data,
                             const Eigen::VectorXd& theta_start,
                             const PhysicallyConsistentOptions& options,
                             const std::vector<std::string>& column_names,
                             PhysicallyConsistentSummary* summary, std::string* error) {
  CHECK(summary != nullptr);
  const auto start_time = std::chrono::steady_clock::now();
  *summary = PhysicallyConsistentSummary();
  std::string why;
  if (!options.IsValid(&why)) {
    if (error != nullptr) *error = "physically consistent options: " + why;
    return false;
  }
  const problems::PhysicalParameterization parameterization(robot);
  const int p = parameterization.size();
  CHECK_EQ(theta_start.size(), p) << "theta_start for " << robot.name();
  if (!theta_start.allFinite()) {
    if (error != nullptr) *error = "physically consistent fit: the starting point is not finite";
    return false;
  }
  if (!problems::ValidatePhysicallyConsistentData(parameterization, data, error)) return false;
  if (options.hac && !options.hac_blocks.IsValid(static_cast<int>(data.x.rows()), &why)) {
    if (error != nullptr) *error = "physically consistent fit: hac_blocks: " + why;
    return false;
  }
  const Eigen::Index c = data.x.cols();
  std::vector<std::string> names = column_names;
  if (names.empty()) {
    if (data.column_map.size() == 0) {
      names = robot.parameter_names();
    } else {
      for (Eigen::Index i = 0; i < c; ++i) names.push_back("column " + std::to_string(i + 1));
    }
  }
  CHECK_EQ(static_cast<Eigen::Index>(names.size()), c) << "column_names";

  Eigen::VectorXd shifted = theta_start;
  if (options.warm_start_from_least_squares) {
    // Δβ: least squares of the weighted rows with the minimum (Jacobi-scaled) norm, so that what
    // the data do not determine stays at the caller's values; Δθ = A⁺ Δβ.
    Eigen::MatrixXd x = data.x;
    Eigen::VectorXd y = data.y;
    if (data.row_weights.size() != 0) {
      x = data.row_weights.asDiagonal() * x;
      y = data.row_weights.asDiagonal() * y;
    }
    const bool identity = data.column_map.size() == 0;
    const Eigen::VectorXd beta0 =
        identity ? theta_start : Eigen::VectorXd(data.column_map * theta_start);
    Eigen::VectorXd scale = x.colwise().norm().transpose();
    for (Eigen::Index i = 0; i < scale.size(); ++i)
      scale[i] = scale[i] > 0.0 ? 1.0 / scale[i] : 1.0;
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(x * scale.asDiagonal());
    cod.setThreshold(1e-10);
    const Eigen::VectorXd delta_beta = scale.asDiagonal() * cod.solve(y - x * beta0);
    shifted +=
        identity
            ? delta_beta
            : Eigen::VectorXd(data.column_map.completeOrthogonalDecomposition().solve(delta_beta));
  }
  // Candidate starts: the LS-shifted one first (when enabled), then the caller's. Each is
  // projected into the consistent set (a start on or near the boundary would begin where D is
  // nearly singular) and solved; the lower data + prior cost wins. Both solves are cheap on the
  // compressed rows, and either can stall on the boundary where the other does not.
  std::vector<Eigen::VectorXd> candidates;
  if (options.warm_start_from_least_squares) candidates.push_back(shifted);
  candidates.push_back(theta_start);
  problems::PhysicallyConsistentRows rows;
  SolverSummary& s = summary->solver;
  double best_cost = std::numeric_limits<double>::infinity();
  int total_iterations = 0;
  // One Levenberg–Marquardt solve from *phi in the coordinates of `coordinates`; its data +
  // prior cost, or false when Ceres failed (or the problem could not be built: *built false).
  auto solve = [&](const problems::PhysicalParameterization& coordinates, Eigen::VectorXd* phi,
                   ceres::Solver::Summary* ceres_summary, double* cost, bool* built) {
    ceres::Problem problem;
    *built = problems::BuildPhysicallyConsistentProblem(&coordinates, data, options.problem, phi,
                                                        &problem, error, &rows);
    if (!*built) return false;
    const bool finish = coordinates.coordinates() == problems::PhysicalCoordinates::kCholesky;
    ceres::Solver::Options solver_options;
    // The compressed problem is small (c + 1 rows, plus the prior and the regulariser) and the
    // Levenberg–Marquardt damping keeps its normal equations well posed: Cholesky of JᵀJ costs
    // half of a QR of J per iteration.
    solver_options.linear_solver_type = ceres::DENSE_NORMAL_CHOLESKY;
    if (finish) {
      // Near a boundary optimum the Gauss–Newton model misses the curvature that holds the
      // solution there (Σ r_i ∇²r_i: θ is quadratic in the Cholesky factor), so a trust-region
      // Gauss–Newton step keeps overshooting; BFGS learns that curvature from the gradients.
      solver_options.minimizer_type = ceres::LINE_SEARCH;
      solver_options.line_search_direction_type = ceres::BFGS;
    }
    solver_options.max_num_iterations =
        finish ? options.finish_max_iterations : options.max_iterations;
    solver_options.function_tolerance = options.function_tolerance;
    solver_options.gradient_tolerance = options.gradient_tolerance;
    solver_options.parameter_tolerance = options.parameter_tolerance;
    solver_options.logging_type = ceres::SILENT;
    internal::CeresProgress callback("physically consistent fit", options.progress, start_time);
    callback.set_iteration_offset(total_iterations);
    solver_options.callbacks.push_back(&callback);
    ceres::Solve(solver_options, &problem, ceres_summary);
    total_iterations += std::max(0, static_cast<int>(ceres_summary->iterations.size()) - 1);
    Eigen::VectorXd theta;
    coordinates.ToStandard(*phi, &theta);
    *cost = 0.5 * (rows.data_matrix * theta - rows.data_target).squaredNorm();
    if (rows.prior_matrix.rows() > 0) {
      *cost += 0.5 * (rows.prior_matrix * theta - rows.prior_target).squaredNorm();
    }
    return ceres_summary->termination_type != ceres::FAILURE &&
           ceres_summary->termination_type != ceres::USER_FAILURE;
  };
  auto accept = [&](const ceres::Solver::Summary& ceres_summary, const std::string& from) {
    s.initial_cost = ceres_summary.initial_cost;
    s.final_cost = ceres_summary.final_cost;
    s.linear_solver_time_s = ceres_summary.linear_solver_time_in_seconds;
    s.jacobian_time_s = ceres_summary.jacobian_evaluation_time_in_seconds;
    s.converged = ceres_summary.termination_type == ceres::CONVERGENCE;
    s.message = ceres_summary.message;
    summary->success = true;
    const int iterations = std::max(0, static_cast<int>(ceres_summary.iterations.size()) - 1);
    summary->message = std::string(s.converged ? "converged after " : "stopped after ") +
                       std::to_string(iterations) + " iterations " + from + ": " +
                       ceres_summary.message;
  };
  for (const Eigen::VectorXd& candidate : candidates) {
    const Eigen::VectorXd start =
        parameterization.ProjectToConsistent(candidate, options.start_floor);
    Eigen::VectorXd phi;
    CHECK(parameterization.FromStandard(start, &phi, &why)) << why;
    ceres::Solver::Summary ceres_summary;
    double cost = 0.0;
    bool built = false;
    const bool ok = solve(parameterization, &phi, &ceres_summary, &cost, &built);
    if (!built) return false;
    if (!ok || !(cost < best_cost)) continue;
    best_cost = cost;
    summary->start_theta = start;
    summary->phi = phi;
    accept(ceres_summary,
           std::string("from the ") +
               (&candidate == &candidates.back() ? "given" : "least-squares-shifted") + " start");
  }
  // The finish in Cholesky coordinates, from the best log-Cholesky point (strictly inside the
  // consistent set). Where that point is the optimum it ends at once; where the optimum lies on
  // the boundary it reaches it, since the boundary lies at finite coordinates there.
  const problems::PhysicalParameterization cholesky(robot,
                                                    problems::PhysicalCoordinates::kCholesky);
  const problems::PhysicalParameterization* final_coordinates = &parameterization;
  if (summary->success && options.finish_in_cholesky_coordinates) {
    Eigen::VectorXd theta_best, u;
    parameterization.ToStandard(summary->phi, &theta_best);
    // A point that stalled next to the boundary can be singular to round-off: lift its
    // eigenvalues to 1e-12 of the largest so that the Cholesky factor exists (a change far below
    // any σ), then let the solve move it back.
    if (cholesky.FromStandard(parameterization.ProjectToConsistent(theta_best, 1e-12), &u, &why)) {
      ceres::Solver::Summary ceres_summary;
      double cost = 0.0;
      bool built = false;
      const bool ok = solve(cholesky, &u, &ceres_summary, &cost, &built);
      if (!built) return false;
      if (ok && cost <= best_cost) {
        best_cost = cost;
        summary->phi = u;
        final_coordinates = &cholesky;
        accept(
            ceres_summary,
            "in Cholesky coordinates after " +
                std::to_string(total_iterations -
                               std::max(0, static_cast<int>(ceres_summary.iterations.size()) - 1)) +
                " log-Cholesky iterations");
      }
    }
  }
  s.iterations = total_iterations;
  summary->coordinates = final_coordinates->coordinates();
  summary->start_projected =
      (summary->start_theta - theta_start).norm() > 1e-12 * std::max(theta_start.norm(), 1e-300);
  if (!summary->success) {
    summary->message = "Ceres failed from every start";
    s.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
    return true;
  }
  const Eigen::VectorXd phi = summary->phi;

  // Estimate, residuals and the delta-method covariance at the solution.
  Eigen::MatrixXd d;
  final_coordinates->ToStandard(phi, &summary->theta, &d);
  const Eigen::VectorXd& theta = summary->theta;
  summary->data_cost = 0.5 * (rows.data_matrix * theta - rows.data_target).squaredNorm();
  summary->prior_cost = rows.prior_matrix.rows() > 0
                            ? 0.5 * (rows.prior_matrix * theta - rows.prior_target).squaredNorm()
                            : 0.0;
  summary->num_rows = problems::CountWeightedRows(data);
  const ScaledSpectrum columns_spectrum =
      AnalyzeInformation(rows.column_information, options.rank_tolerance);
  summary->rank = columns_spectrum.rank;
  summary->sigma2 = ResidualVarianceFactor(summary->data_cost, summary->num_rows, summary->rank);

  const Eigen::MatrixXd jacobian_data = rows.data_matrix * d;
  Eigen::MatrixXd information = jacobian_data.transpose() * jacobian_data;
  if (rows.prior_matrix.rows() > 0) {
    const Eigen::MatrixXd jacobian_prior = rows.prior_matrix * d;
    information += jacobian_prior.transpose() * jacobian_prior;
  }
  const ScaledSpectrum spectrum = AnalyzeInformation(information, options.rank_tolerance);
  summary->covariance = summary->sigma2 * d * spectrum.pseudo_inverse * d.transpose();
  const double inf = std::numeric_limits<double>::infinity();
  const Eigen::MatrixXd scaled_d = d * spectrum.scale.asDiagonal();
  const std::vector<bool> theta_free = Undetermined(scaled_d, spectrum.null_basis);
  summary->standard_deviation = summary->covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  for (int i = 0; i < p; ++i) {
    if (theta_free[i]) summary->standard_deviation[i] = inf;
  }
  const bool identity_map = data.column_map.size() == 0;
  summary->columns = identity_map ? theta : Eigen::VectorXd(data.column_map * theta);
  summary->column_covariance =
      identity_map
          ? summary->covariance
          : Eigen::MatrixXd(data.column_map * summary->covariance * data.column_map.transpose());
  const std::vector<bool> column_free = Undetermined(
      identity_map ? scaled_d : Eigen::MatrixXd(data.column_map * scaled_d), spectrum.null_basis);
  summary->column_standard_deviation =
      summary->column_covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  for (Eigen::Index i = 0; i < c; ++i) {
    if (column_free[i]) summary->column_standard_deviation[i] = inf;
  }
  if (options.hac) {
    // Scores of the weighted data rows in column space, g_t = (w_t x_t)ᵀ (w_t e_t), formed in
    // pieces; Ω_φ = (A D)ᵀ Ω (A D) and cov(φ) = H⁺ Ω_φ H⁺ (header comment).
    const bool weighted = data.row_weights.size() != 0;
    Eigen::VectorXd residual = data.y - data.x * summary->columns;
    if (weighted) residual = residual.cwiseProduct(data.row_weights);
    const HacRowSource rows_of_z = [&](const HacRowConsumer& consume, std::string*) {
      constexpr Eigen::Index kPiece = 4096;
      for (Eigen::Index first = 0; first < data.x.rows(); first += kPiece) {
        const Eigen::Index n = std::min(kPiece, data.x.rows() - first);
        if (weighted) {
          consume(first,
                  data.row_weights.segment(first, n).asDiagonal() * data.x.middleRows(first, n));
        } else {
          consume(first, data.x.middleRows(first, n));
        }
      }
      return true;
    };
    HacCovariance& hac = summary->column_hac;
    static_cast<HacScoreCovariance&>(hac) = ComputeHacScoreCovariance(
        rows_of_z, c, residual, options.hac_blocks, options.hac_lags, options.hac_bandwidth);
    if (hac.success) {
      const Eigen::MatrixXd ad = identity_map ? d : Eigen::MatrixXd(data.column_map * d);
      const Eigen::MatrixXd sandwich =
          spectrum.pseudo_inverse * (ad.transpose() * hac.omega * ad) * spectrum.pseudo_inverse;
      hac.covariance = ad * sandwich * ad.transpose();
      hac.covariance = 0.5 * (hac.covariance + hac.covariance.transpose()).eval();
      hac.standard_deviation = hac.covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
      for (Eigen::Index i = 0; i < c; ++i) {
        if (column_free[i]) hac.standard_deviation[i] = inf;
      }
    }
  }
  const Eigen::MatrixXd& null = columns_spectrum.null_basis;
  summary->undetermined_directions.resize(c, null.cols());
  for (Eigen::Index k = 0; k < null.cols(); ++k) {
    const Eigen::VectorXd direction =
        (columns_spectrum.scale.asDiagonal() * null.col(k)).normalized();
    summary->undetermined_directions.col(k) = direction;
    summary->undetermined.push_back(DescribeDirection(direction, names));
  }
  const double y_norm = data.y.norm();
  summary->relative_error =
      y_norm > 0.0 ? (data.y - data.x * summary->columns).norm() / y_norm : 0.0;

  // Consistency of the estimate and what sits at a bound.
  const Eigen::VectorXd physical = parameterization.PhysicalValues(theta);
  for (int j = 0; j < parameterization.num_links(); ++j) {
    const models::LinkConsistency link =
        models::CheckLinkConsistency(physical.segment<10>(parameterization.LinkIndex(j)));
    summary->links.push_back(link);
    if (link.pseudo_inertia_min_eigenvalue <=
        options.bound_tolerance * link.pseudo_inertia_max_eigenvalue) {
      std::ostringstream out;
      out << "link " << j + 1 << ": pseudo-inertia on the boundary (eigenvalues "
          << link.pseudo_inertia_min_eigenvalue << " to " << link.pseudo_inertia_max_eigenvalue
          << " kg m²)";
      summary->at_bound.push_back(out.str());
    }
  }
  std::vector<int> kind(p, -1);
  double largest[3] = {0.0, 0.0, 0.0};
  for (int i = 0; i < p; ++i) {
    if (!parameterization.IsNonNegative(i)) continue;
    const ParameterKind k = robot.parameter_info()[i].kind;
    kind[i] = (k == ParameterKind::kIa || k == ParameterKind::kCoupledIa)   ? 0
              : (k == ParameterKind::kFv || k == ParameterKind::kCoupledFv) ? 1
                                                                            : 2;
    largest[kind[i]] = std::max(largest[kind[i]], physical[i]);
  }
  for (int i = 0; i < p; ++i) {
    if (kind[i] < 0 || physical[i] > options.bound_tolerance * largest[kind[i]]) continue;
    std::ostringstream out;
    out << robot.parameter_names()[i] << " at its bound 0 (physical value " << physical[i] << ")";
    summary->at_bound.push_back(out.str());
  }
  s.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  return true;
}

StandardConsistencyReport CheckStandardConsistency(const models::SerialRobot& robot,
                                                   const Eigen::VectorXd& theta_standard) {
  CHECK_EQ(theta_standard.size(), robot.num_parameters()) << "theta for " << robot.name();
  const problems::PhysicalParameterization parameterization(robot);
  StandardConsistencyReport report;
  report.physical_values = parameterization.PhysicalValues(theta_standard);
  for (int j = 0; j < parameterization.num_links(); ++j) {
    const models::LinkConsistency link = models::CheckLinkConsistency(
        report.physical_values.segment<10>(parameterization.LinkIndex(j)));
    report.links.push_back(link);
    // Semidefinite to round-off counts as consistent (a fit on the boundary); a mass that is not
    // positive or a clearly negative eigenvalue does not.
    const double round_off = 1e-12 * std::max(std::abs(link.pseudo_inertia_max_eigenvalue),
                                              std::abs(link.pseudo_inertia_min_eigenvalue));
    if (!(link.mass_kg > 0.0) || link.pseudo_inertia_min_eigenvalue < -round_off) {
      report.consistent = false;
      report.violations.push_back("link " + std::to_string(j + 1) + ": " + link.Describe());
    }
  }
  for (int i = 0; i < parameterization.size(); ++i) {
    if (!parameterization.IsNonNegative(i) || report.physical_values[i] >= 0.0) continue;
    report.consistent = false;
    report.negative_drive_terms.push_back(i);
    std::ostringstream out;
    out << robot.parameter_names()[i] << " = " << report.physical_values[i] << " < 0";
    report.violations.push_back(out.str());
  }
  return report;
}

EstimateDistance CompareEstimates(const Eigen::VectorXd& reference,
                                  const Eigen::MatrixXd& reference_covariance,
                                  const Eigen::VectorXd& other) {
  const Eigen::Index c = reference.size();
  CHECK_EQ(other.size(), c);
  CHECK(reference_covariance.rows() == c && reference_covariance.cols() == c);
  EstimateDistance distance;
  distance.z = Eigen::VectorXd::Constant(c, std::numeric_limits<double>::quiet_NaN());
  std::vector<Eigen::Index> valid;
  for (Eigen::Index i = 0; i < c; ++i) {
    const double variance = reference_covariance(i, i);
    if (!(variance > 0.0) || !std::isfinite(variance)) continue;
    valid.push_back(i);
    distance.z[i] = (other[i] - reference[i]) / std::sqrt(variance);
    if (std::abs(distance.z[i]) > distance.max_abs_z) {
      distance.max_abs_z = std::abs(distance.z[i]);
      distance.worst = static_cast<int>(i);
    }
  }
  const Eigen::Index v = static_cast<Eigen::Index>(valid.size());
  distance.num_compared = static_cast<int>(v);
  if (v == 0) return distance;
  // z_vᵀ R⁺ z_v with R the correlation matrix of the compared columns.
  Eigen::VectorXd z(v);
  Eigen::MatrixXd correlation(v, v);
  for (Eigen::Index a = 0; a < v; ++a) {
    z[a] = distance.z[valid[a]];
    for (Eigen::Index b = 0; b < v; ++b) {
      correlation(a, b) = reference_covariance(valid[a], valid[b]) /
                          std::sqrt(reference_covariance(valid[a], valid[a]) *
                                    reference_covariance(valid[b], valid[b]));
    }
  }
  const ScaledSpectrum spectrum = AnalyzeInformation(correlation, 1e-12);
  distance.mahalanobis = std::sqrt(std::max(0.0, z.dot(spectrum.pseudo_inverse * z)));
  return distance;
}

}  // namespace dynid::solvers
