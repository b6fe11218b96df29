#include "experiments/weight_sweep/grid_journal.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace dynid::experiments {

namespace {

std::vector<double> Flatten(const solvers::GridPointResult& r) {
  std::vector<double> v = {static_cast<double>(r.seed),
                           r.converged ? 1.0 : 0.0,
                           static_cast<double>(r.iterations),
                           r.initial_cost,
                           r.final_cost,
                           r.time_s,
                           r.identifiable ? 1.0 : 0.0,
                           r.condition_number};
  for (const Eigen::VectorXd* x :
       {&r.theta, &r.standard_deviation, &r.scaled_standard_deviation, &r.zeta_rms, &r.xi_rms,
        &r.sandwich_standard_deviation, &r.hac_standard_deviation}) {
    v.insert(v.end(), x->data(), x->data() + x->size());
  }
  v.push_back(r.hac_critical_value_95);
  return v;
}

constexpr int kScalarFields = 8;

}  // namespace

std::string FormatJournalBody(const solvers::GridPointResult& result) {
  const std::vector<double> values = Flatten(result);
  std::ostringstream out;
  out << "P " << result.point << " " << result.seed_index << " " << values.size();
  char buffer[40];
  for (double x : values) {
    std::snprintf(buffer, sizeof(buffer), " %.17g", x);
    out << buffer;
  }
  return out.str();
}

bool ParseJournalBody(const std::string& body, int p, int num_zeta, int num_xi,
                      solvers::GridPointResult* result) {
  if (body.size() < 2 || body[0] != 'P') return false;
  std::istringstream in(body.substr(1));
  int point = -1, seed_index = -1, count = -1;
  if (!(in >> point >> seed_index >> count)) return false;
  const int expected = kScalarFields + 5 * p + num_zeta + num_xi + 1;
  if (count != expected || point < 0 || seed_index < 0) return false;
  std::vector<double> values(count);
  for (double& x : values) {
    std::string token;
    if (!(in >> token)) return false;
    char* end = nullptr;
    x = std::strtod(token.c_str(), &end);
    if (*end != '\0') return false;
  }
  std::string extra;
  if (in >> extra) return false;
  solvers::GridPointResult r;
  r.point = point;
  r.seed_index = seed_index;
  r.seed = static_cast<int>(values[0]);
  r.converged = values[1] != 0.0;
  r.iterations = static_cast<int>(values[2]);
  r.initial_cost = values[3];
  r.final_cost = values[4];
  r.time_s = values[5];
  r.identifiable = values[6] != 0.0;
  r.condition_number = values[7];
  int offset = kScalarFields;
  auto take = [&](int size, Eigen::VectorXd* x) {
    *x = Eigen::Map<const Eigen::VectorXd>(values.data() + offset, size);
    offset += size;
  };
  take(p, &r.theta);
  take(p, &r.standard_deviation);
  take(p, &r.scaled_standard_deviation);
  take(num_zeta, &r.zeta_rms);
  take(num_xi, &r.xi_rms);
  take(p, &r.sandwich_standard_deviation);
  take(p, &r.hac_standard_deviation);
  r.hac_critical_value_95 = values[offset];
  *result = r;
  return true;
}

bool GridJournal::Load(const std::string& directory, const std::string& signature, int p,
                       int num_zeta, int num_xi, std::string* error) {
  loaded_.clear();
  return journal_.Load(
      directory, signature,
      [&](const std::string& body) {
        solvers::GridPointResult r;
        if (!ParseJournalBody(body, p, num_zeta, num_xi, &r)) return false;
        loaded_.emplace(std::make_pair(r.point, r.seed_index), r);  // the first record wins
        return true;
      },
      error);
}

bool GridJournal::Append(const solvers::GridPointResult& result, std::string* error) {
  return journal_.Append(FormatJournalBody(result), error);
}

}  // namespace dynid::experiments
