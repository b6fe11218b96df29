#include "dynid/models/inertia_parameterization.h"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>
#include <random>
#include <string>

namespace dynid::models {
namespace {

// A random consistent link: mass, centre of mass, rotated principal moments obeying the triangle
// inequalities.
Vector10d RandomConsistentLink(std::mt19937* rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0), pos(0.0, 1.0);
  const double mass = 0.2 + 5.0 * pos(*rng);
  const Eigen::Vector3d com(0.3 * unit(*rng), 0.3 * unit(*rng), 0.3 * unit(*rng));
  Eigen::Vector3d principal(0.01 + 0.1 * pos(*rng), 0.01 + 0.1 * pos(*rng), 0.0);
  const double low = std::abs(principal[0] - principal[1]);
  principal[2] = low + (0.1 + 0.8 * pos(*rng)) * (principal[0] + principal[1] - low);
  const Eigen::Matrix3d r = Eigen::Quaterniond(unit(*rng), unit(*rng), unit(*rng), unit(*rng))
                                .normalized()
                                .toRotationMatrix();
  return LinkInertiaVector(
      LinkInertia::FromCenterOfMass(mass, com, r * principal.asDiagonal() * r.transpose()));
}

TEST(InertiaParameterizationTest, PseudoInertiaVectorRoundTrip) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    Vector10d v;
    for (int k = 0; k < 10; ++k) v[k] = unit(rng);
    EXPECT_LT((VectorOfPseudoInertia(PseudoInertiaOfVector(v)) - v).norm(), 1e-14);
    EXPECT_LT((PseudoInertiaOfVector(v) - LinkInertiaFromVector(v).PseudoInertia()).norm(), 1e-15);
    EXPECT_TRUE(LinkInertiaVector(LinkInertiaFromVector(v)) == v);
  }
}

TEST(InertiaParameterizationTest, LogCholeskyRoundTripsConsistentLinks) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    const Vector10d v = RandomConsistentLink(&rng);
    Vector10d eta;
    std::string error;
    ASSERT_TRUE(LogCholeskyFromLinkInertia(v, &eta, &error)) << error;
    EXPECT_LT((LinkInertiaFromLogCholesky(eta) - v).norm(), 1e-12 * v.norm());
    // U is the factor of J: J = U Uᵀ, and m = e^{2α}, c = t.
    const Eigen::Matrix4d u = LogCholeskyFactor(eta);
    EXPECT_LT((u * u.transpose() - PseudoInertiaOfVector(v)).norm(), 1e-12 * v.norm());
    EXPECT_NEAR(std::exp(2.0 * eta[0]), v[9], 1e-12 * v[9]);
    EXPECT_LT((eta.tail<3>() - v.segment<3>(6) / v[9]).norm(), 1e-12);
  }
}

TEST(InertiaParameterizationTest, EveryLogCholeskyVectorIsConsistent) {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0.0, 1.5);
  for (int trial = 0; trial < 200; ++trial) {
    Vector10d eta;
    for (int k = 0; k < 10; ++k) eta[k] = normal(rng);
    const LinkConsistency c = CheckLinkConsistency(LinkInertiaFromLogCholesky(eta));
    EXPECT_TRUE(c.consistent) << c.Describe();
    EXPECT_GT(c.mass_kg, 0.0);
    // Triangle inequality of the inertia about the centre of mass (relative to its size).
    EXPECT_GT(c.triangle_margin, -1e-12 * c.principal_moments[2]);
    EXPECT_GT(c.principal_moments[0], -1e-12 * c.principal_moments[2]);
    // Back to the same η: the parametrisation is a bijection.
    Vector10d back;
    std::string error;
    ASSERT_TRUE(LogCholeskyFromLinkInertia(LinkInertiaFromLogCholesky(eta), &back, &error));
    EXPECT_LT((back - eta).cwiseAbs().maxCoeff(), 1e-6) << eta.transpose();
  }
}

TEST(InertiaParameterizationTest, JacobianMatchesCentralDifferences) {
  std::mt19937 rng(8);
  std::normal_distribution<double> normal(0.0, 0.8);
  for (int trial = 0; trial < 10; ++trial) {
    Vector10d eta;
    for (int k = 0; k < 10; ++k) eta[k] = normal(rng);
    Matrix10d jacobian;
    LinkInertiaFromLogCholesky(eta, &jacobian);
    for (int k = 0; k < 10; ++k) {
      const double h = 1e-6;
      Vector10d plus = eta, minus = eta;
      plus[k] += h;
      minus[k] -= h;
      const Vector10d numeric =
          (LinkInertiaFromLogCholesky(plus) - LinkInertiaFromLogCholesky(minus)) / (2.0 * h);
      EXPECT_LT((numeric - jacobian.col(k)).norm(), 1e-7 * (1.0 + jacobian.col(k).norm()))
          << "column " << k << " (" << LogCholeskyNames()[k] << ")";
    }
  }
}

TEST(InertiaParameterizationTest, CholeskyCoordinatesRoundTripAndHaveExactJacobians) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 20; ++trial) {
    const Vector10d v = RandomConsistentLink(&rng);
    Vector10d u;
    std::string error;
    ASSERT_TRUE(CholeskyFromLinkInertia(v, &u, &error)) << error;
    EXPECT_LT((LinkInertiaFromCholesky(u) - v).norm(), 1e-12 * v.norm());
    EXPECT_NEAR(u[0] * u[0], v[9], 1e-12 * v[9]);  // u44² = m
    // The same factor as the log-Cholesky one.
    Vector10d eta;
    ASSERT_TRUE(LogCholeskyFromLinkInertia(v, &eta, &error)) << error;
    const Eigen::Matrix4d factor = LogCholeskyFactor(eta);
    EXPECT_NEAR(u[1], factor(0, 0), 1e-12 * factor.norm());
    EXPECT_NEAR(u[9], factor(2, 3), 1e-12 * factor.norm());
    Matrix10d jacobian;
    LinkInertiaFromCholesky(u, &jacobian);
    for (int k = 0; k < 10; ++k) {
      const double h = 1e-6;
      Vector10d plus = u, minus = u;
      plus[k] += h;
      minus[k] -= h;
      const Vector10d numeric =
          (LinkInertiaFromCholesky(plus) - LinkInertiaFromCholesky(minus)) / (2.0 * h);
      EXPECT_LT((numeric - jacobian.col(k)).norm(), 1e-7 * (1.0 + jacobian.col(k).norm()))
          << "column " << k << " (" << CholeskyNames()[k] << ")";
    }
  }
  // A zero diagonal entry is a flat link: semidefinite, on the boundary.
  Vector10d flat;
  flat << 1.0, 0.3, 0.2, 0.0, 0.01, 0.02, 0.0, 0.1, 0.0, 0.05;
  const LinkConsistency c = CheckLinkConsistency(LinkInertiaFromCholesky(flat));
  EXPECT_FALSE(c.consistent);
  EXPECT_NEAR(c.pseudo_inertia_min_eigenvalue, 0.0, 1e-15);
}

TEST(InertiaParameterizationTest, ReportsNegativeMassAndTriangleViolation) {
  // Principal moments (1, 1, 3) at the centre of mass: positive definite but 1 + 1 < 3.
  const Vector10d flat = LinkInertiaVector(LinkInertia::FromCenterOfMass(
      2.0, Eigen::Vector3d(0.1, 0.0, 0.2), Eigen::Vector3d(1.0, 1.0, 3.0).asDiagonal()));
  const LinkConsistency c = CheckLinkConsistency(flat);
  EXPECT_FALSE(c.consistent);
  EXPECT_NEAR(c.triangle_margin, -1.0, 1e-12);
  EXPECT_NEAR(c.principal_moments[0], 1.0, 1e-12);
  EXPECT_LT(c.pseudo_inertia_min_eigenvalue, 0.0);
  EXPECT_NE(c.Describe().find("triangle"), std::string::npos) << c.Describe();
  // Σ at the centre of mass has the eigenvalue ½(1 + 1 − 3) = −0.5: that is J's along z.
  const LinkConsistency at_origin =
      CheckLinkConsistency(LinkInertiaVector(LinkInertia::FromCenterOfMass(
          2.0, Eigen::Vector3d::Zero(), Eigen::Vector3d(1.0, 1.0, 3.0).asDiagonal())));
  EXPECT_NEAR(at_origin.pseudo_inertia_min_eigenvalue, -0.5, 1e-12);

  Vector10d negative = flat;
  negative[9] = -1.0;
  const LinkConsistency m = CheckLinkConsistency(negative);
  EXPECT_FALSE(m.consistent);
  EXPECT_TRUE(std::isnan(m.triangle_margin));
  EXPECT_NE(m.Describe().find("mass -1 kg <= 0"), std::string::npos) << m.Describe();
  Vector10d eta;
  std::string error;
  EXPECT_FALSE(LogCholeskyFromLinkInertia(negative, &eta, &error));
  EXPECT_NE(error.find("not positive definite"), std::string::npos) << error;
}

TEST(InertiaParameterizationTest, PositiveDefinitePseudoInertiaIffMassAndTriangle) {
  // Independent check of the equivalence on random (mostly inconsistent) perturbations.
  std::mt19937 rng(21);
  std::normal_distribution<double> normal(0.0, 1.0);
  int consistent = 0;
  for (int trial = 0; trial < 500; ++trial) {
    Vector10d v = RandomConsistentLink(&rng);
    for (int k = 0; k < 6; ++k) v[k] += 0.05 * normal(rng);
    v[9] += 0.5 * normal(rng);
    const LinkConsistency c = CheckLinkConsistency(v);
    const bool physical =
        c.mass_kg > 0.0 && c.triangle_margin > 0.0 && c.principal_moments[0] > 0.0;
    EXPECT_EQ(c.consistent, physical) << v.transpose();
    consistent += c.consistent;
  }
  // Both outcomes occur.
  EXPECT_GT(consistent, 10);
  EXPECT_LT(consistent, 490);
}

TEST(InertiaParameterizationTest, ProjectionReachesTheConsistentSet) {
  std::mt19937 rng(2);
  const Vector10d good = RandomConsistentLink(&rng);
  Vector10d bad = good;
  bad[5] = -0.5;  // zz < 0
  EXPECT_FALSE(CheckLinkConsistency(bad).consistent);
  const Vector10d projected = ProjectToConsistent(bad, 1e-3);
  const LinkConsistency c = CheckLinkConsistency(projected, 1e-3 * 0.999);
  EXPECT_TRUE(c.consistent) << c.Describe();
  // A link well inside the set is left (numerically) unchanged.
  const LinkConsistency g = CheckLinkConsistency(good);
  ASSERT_GT(g.pseudo_inertia_min_eigenvalue, 1e-6 * g.pseudo_inertia_max_eigenvalue);
  EXPECT_LT((ProjectToConsistent(good, 1e-6) - good).norm(), 1e-12 * good.norm());
}

}  // namespace
}  // namespace dynid::models
