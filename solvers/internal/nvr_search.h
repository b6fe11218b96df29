// solvers/internal/nvr_search — what the NVR fits on uniform (nvr_fit.h) and irregular
// (irw_irregular.h) time stamps share: the one-dimensional search over log10 NVR, and the
// "fit every column, then smooth all columns in parallel" loop of their column calls.
#ifndef DYNID_SOLVERS_INTERNAL_NVR_SEARCH_H_
#define DYNID_SOLVERS_INTERNAL_NVR_SEARCH_H_

#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

#include "dynid/solvers/irw_smoother.h"
#include "dynid/solvers/nvr_fit.h"

namespace dynid::solvers::internal {

// Minimises cost(log10 NVR) over [options.log10_nvr_min, options.log10_nvr_max]: a coarse grid
// (spacing at most options.grid_step_log10), then Brent's method (golden section + parabolic
// steps, to options.tolerance_log10) in the bracket of the grid's two neighbours of its best
// point; the grid point is kept when Brent does not improve on it. Every evaluation is reported
// to options.progress. Resets `summary` and sets its nvr, log10_nvr, evaluations, at_bound and
// message; returns the minimal cost (the caller turns it into criterion_value and
// log_likelihood). `options` must be valid.
double MinimizeOverLog10Nvr(const std::function<double(double log10_nvr)>& cost,
                            const NvrFitOptions& options, NvrFitSummary* summary);

// Calls smooth(c, &results[c], &error_c) for every c in [0, channels) in parallel over
// `num_threads` threads (0 = hardware concurrency); on failure the first failing column's
// message, prefixed "column <c>: " (1-based).
bool SmoothEachColumn(int channels, int num_threads,
                      const std::function<bool(int c, IrwSmootherResult*, std::string*)>& smooth,
                      std::vector<IrwSmootherResult>* results, std::string* error);

// The column calls SmoothColumnsWithFittedNvr (`times` null: uniform samples every
// `sample_period_s`) and SmoothColumnsAtTimesWithFittedNvr (`times` the N time stamps;
// sample_period_s unused): every column's NVR fitted one after the other (FitNvr or
// FitNvrAtTimes; a failure is reported as "NVR fit of <name>: ...", the name from `names` or
// "column <c>", 1-based), then all columns smoothed in parallel (SmoothEachColumn with SmoothIrw
// or SmoothIrwAtTimes) with the model of `fit_options`, the fitted NVR and
// `compute_standard_deviations`.
bool FitThenSmoothColumns(const Eigen::MatrixXd& columns, const Eigen::VectorXd* times,
                          double sample_period_s, const NvrFitOptions& fit_options,
                          bool compute_standard_deviations, const std::vector<std::string>& names,
                          std::vector<NvrFitSummary>* fits, std::vector<IrwSmootherResult>* results,
                          std::string* error, int num_threads);

}  // namespace dynid::solvers::internal

#endif  // DYNID_SOLVERS_INTERNAL_NVR_SEARCH_H_
