// The study's simulated xy-table (experiments/xy_table_study/xy_table_simulator.h) against the
// library's models: the closed loop with the model's structure satisfies the flexible model, and
// the clamped modes are the spindle and belt modes.
#include "experiments/xy_table_study/xy_table_simulator.h"

#include <cmath>

#include <gtest/gtest.h>

#include "dynid/models/xy_table.h"

namespace dynid::models {
namespace {

XyTableParameters TestParameters() {
  XyTableParameters p;
  p.friction_smoothing_rad_per_s = 0.5;  // moderate, so central differences are accurate
  return p;
}

// The closed-loop simulator with the model's structure produces states that satisfy the
// flexible model's equations and measurements equal to the model's (independent code paths).
TEST(XyTableSimulatorTest, ModelStructureSystemSatisfiesTheFlexibleModel) {
  const XyTableParameters p = TestParameters();
  const XyTableFlexible model(p);
  const Eigen::Matrix<double, 5, 1> theta = model.NominalParameters();
  const xy_table_study::XyTableTrueSystem system =
      xy_table_study::XyTableModelStructureSystem(p, theta);
  xy_table_study::XyTableExperimentOptions options;
  options.duration_s = 1.0;
  options.position_noise_m = options.acceleration_noise_m_per_s2 = options.current_noise_a = 0.0;
  options.encoder_resolution_rad = 0.0;
  const xy_table_study::XyTableRecord record = xy_table_study::SimulateXyTable(system, options);
  ASSERT_EQ(record.positions.cols(), 3);
  double worst_equation = 0.0, worst_measurement = 0.0;
  for (int k = 0; k < record.time.size(); k += 7) {
    const Eigen::Vector3d s = record.positions.row(k).transpose();
    const Eigen::Vector3d v = record.velocities.row(k).transpose();
    const Eigen::Vector3d a = record.accelerations.row(k).transpose();
    const Eigen::Vector2d u = record.clean_measurements.row(k).tail<2>().transpose();
    Eigen::Vector3d r;
    Eigen::Matrix<double, 8, 1> z;
    model.EquationsOfMotion(s.data(), v.data(), a.data(), u.data(), theta.data(), 0.0, r.data());
    model.Measurements(s.data(), v.data(), a.data(), u.data(), theta.data(), 0.0, z.data());
    worst_equation = std::max(worst_equation, r.cwiseAbs().maxCoeff());
    const Eigen::Matrix<double, 8, 1> measured = record.clean_measurements.row(k).transpose();
    worst_measurement = std::max(worst_measurement, (z - measured).cwiseAbs().maxCoeff());
  }
  EXPECT_LT(worst_equation, 1e-10);
  EXPECT_LT(worst_measurement, 1e-10);
  // The path is tracked: end-effector within 3 cm of the reference (the spindle twists by
  // ~2 cm at the lowest stiffness).
  const Eigen::MatrixXd error =
      record.clean_measurements.leftCols(2) - record.reference.leftCols(2);
  EXPECT_LT(error.cwiseAbs().maxCoeff(), 0.03);
  EXPECT_GT(record.reference.col(0).maxCoeff() - record.reference.col(0).minCoeff(), 0.3);
}

TEST(XyTableSimulatorTest, ClampedModesAreSpindleAndBeltModes) {
  xy_table_study::XyTableTrueSystem system;
  Eigen::VectorXd q(5);
  q << 50.0, 60.0, 50.0, 0.0, 0.0;
  const Eigen::VectorXd hz = xy_table_study::XyTableClampedFrequencies(system, q);
  ASSERT_EQ(hz.size(), 3);
  EXPECT_GT(hz(0), 2.0);
  EXPECT_LT(hz(0), 6.0);   // spindle mode, ~4 Hz
  EXPECT_NEAR(hz(1), 11.0, 1.5);  // belt pre-stress mode(s), ~11 Hz
}

// The drawn true system: every drawn quantity within ±spread of the thesis-centred value and
// away from it, the known constants kept, the same system for the same seed and another for
// another seed; its belt mode moves with the drawn belt stiffness and masses.
TEST(XyTableSimulatorTest, DrawnTruthDiffersFromThesisAndIsDeterministicPerSeed) {
  const xy_table_study::XyTableTrueSystem centre;
  const double spread = 0.2;
  const auto a = xy_table_study::DrawXyTableTrueSystem(centre, 1, spread);
  const auto again = xy_table_study::DrawXyTableTrueSystem(centre, 1, spread);
  const auto b = xy_table_study::DrawXyTableTrueSystem(centre, 2, spread);
  auto drawn = [](const xy_table_study::XyTableTrueSystem& s) {
    Eigen::VectorXd v(9);
    v << s.table.inertia1_kg_m2, s.table.inertia2_kg_m2, s.table.friction1_nm, s.table.friction2_nm,
        s.spindle_stiffness_nm_per_rad, s.spindle_damping_nms_per_rad, s.belt_stiffness_n_per_m,
        s.belt_damping_ns_per_m, s.spindle_end_inertia_kg_m2;
    return v;
  };
  const Eigen::VectorXd ratio = drawn(a).cwiseQuotient(drawn(centre));
  for (int i = 0; i < 9; ++i) {
    EXPECT_LE(std::abs(ratio(i) - 1.0), spread) << "quantity " << i;
    EXPECT_GT(std::abs(ratio(i) - 1.0), 1e-4) << "quantity " << i << " not drawn";
  }
  EXPECT_EQ(drawn(a), drawn(again));  // bit for bit
  EXPECT_GT((drawn(a) - drawn(b)).cwiseQuotient(drawn(centre)).cwiseAbs().minCoeff(), 1e-4);
  // The models' known constants and the smoothing are kept.
  EXPECT_EQ(a.table.transverse_mass_kg, centre.table.transverse_mass_kg);
  EXPECT_EQ(a.table.torque_constant1_nm_per_a, centre.table.torque_constant1_nm_per_a);
  EXPECT_EQ(a.friction_smoothing_rad_per_s, centre.friction_smoothing_rad_per_s);
  EXPECT_TRUE(a.IsValid(nullptr));
  // Spread 0 is the centre itself.
  EXPECT_EQ(drawn(xy_table_study::DrawXyTableTrueSystem(centre, 7, 0.0)), drawn(centre));
  // The belt mode follows the drawn values.
  Eigen::VectorXd q(5);
  q << 50.0, 60.0, 50.0, 0.0, 0.0;
  const double centre_hz = xy_table_study::XyTableClampedFrequencies(centre, q)(1);
  const double drawn_hz = xy_table_study::XyTableClampedFrequencies(a, q)(1);
  EXPECT_GT(std::abs(drawn_hz - centre_hz), 1e-3 * centre_hz);
}

}  // namespace
}  // namespace dynid::models
