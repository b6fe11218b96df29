// A user's identification program written against the installed dynid only:
//  1. a three-joint serial robot (revolute, revolute, prismatic) from its modified-DH table,
//     with link inertias, viscous and Coulomb friction;
//  2. a closed-loop simulation of it following a Fourier-series excitation, with encoder
//     quantisation and torque noise, written to a CSV file;
//  3. the CSV read back by header name, the positions smoothed and differentiated by the IRW
//     smoother (NVR fitted by maximum likelihood);
//  4. the base parameters computed numerically and identified by least squares from the smoothed
//     kinematics and the measured torques.
// Exits 0 when the identified base parameters agree with the simulated ones (torque prediction
// within the noise, the well-determined parameters within a few of their standard deviations).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <dynid/data/csv.h>
#include <dynid/data/robot_simulator.h>
#include <dynid/data/trajectory.h>
#include <dynid/models/base_parameters.h>
#include <dynid/models/serial_robot.h>
#include <dynid/solvers/irw_smoother.h>
#include <dynid/solvers/linear_least_squares.h>
#include <dynid/solvers/nvr_fit.h>

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "consumer: %s\n", message.c_str());
  return 1;
}

dynid::models::SerialRobot MakeRobot() {
  using dynid::models::JointGeometry;
  using dynid::models::JointType;
  // Modified DH: alpha_j, d_j, theta_j (offset), r_j (offset).
  std::vector<JointGeometry> joints(3);
  joints[0] = {JointType::kRevolute, 0.0, 0.0, 0.0, 0.0};
  joints[1] = {JointType::kRevolute, -M_PI / 2, 0.1, 0.0, 0.0};
  joints[2] = {JointType::kPrismatic, M_PI / 2, 0.3, 0.0, 0.0};
  dynid::models::SerialRobot robot("user_rrp", joints);
  const double masses[3] = {4.0, 3.0, 1.5};
  for (int j = 0; j < 3; ++j) {
    const Eigen::Vector3d com(0.05 * (j + 1), -0.02, 0.1);
    const Eigen::Matrix3d inertia =
        Eigen::Vector3d(0.02 + 0.01 * j, 0.03, 0.015 + 0.005 * j).asDiagonal();
    robot.SetLinkInertia(j, dynid::models::LinkInertia::FromCenterOfMass(masses[j], com, inertia));
    dynid::models::JointDrive drive;
    drive.ia = 0.05;
    drive.fv = 0.8 + 0.2 * j;
    drive.fc = 1.0 + 0.5 * j;
    robot.SetJointDrive(j, drive);
  }
  return robot;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string csv_path = argc > 1 ? argv[1] : "consumer_record.csv";
  std::string error;
  const dynid::models::SerialRobot robot = MakeRobot();
  const int n = robot.num_joints();

  // 2. Simulate and write the record.
  Eigen::VectorXd lower(n), upper(n), vmax(n);
  lower << -2.0, -1.5, -0.2;
  upper << 2.0, 1.5, 0.2;
  vmax << 2.0, 2.0, 0.5;
  dynid::data::FourierOptions fourier;
  fourier.base_frequency_hz = 0.2;
  fourier.num_periods = 2.0;
  fourier.seed = 3;
  dynid::data::FourierTrajectory reference;
  if (!dynid::data::FourierTrajectory::Create(lower, upper, vmax, fourier, &reference, &error)) {
    return Fail(error);
  }
  dynid::data::RobotSimulatorOptions options;
  options.control_rate_hz = 1000.0;
  options.gains = dynid::data::TunePidGains(robot, Eigen::VectorXd::Zero(n), 8.0);
  options.encoder_resolution_rad = Eigen::VectorXd::Constant(n, 1e-5);
  options.torque_noise_std = Eigen::VectorXd::Constant(n, 0.05);
  options.seed = 11;
  dynid::data::RobotSimulation simulation;
  if (!dynid::data::SimulateClosedLoop(robot, reference, options, &simulation, &error)) {
    return Fail(error);
  }
  const int samples = static_cast<int>(simulation.time.size());
  std::vector<std::string> header = {"t"};
  Eigen::MatrixXd table(samples, 1 + 2 * n);
  table.col(0) = simulation.time;
  for (int j = 0; j < n; ++j) {
    header.push_back("tau" + std::to_string(j + 1));  // torques first: read back by name
    table.col(1 + j) = simulation.tau_measured.col(j);
  }
  for (int j = 0; j < n; ++j) {
    header.push_back("q" + std::to_string(j + 1));
    table.col(1 + n + j) = simulation.q_measured.col(j);
  }
  if (!dynid::data::WriteCsv(csv_path, header, table, &error)) return Fail(error);

  // 3. Read back by name, smooth and differentiate.
  std::vector<std::string> columns;
  for (int j = 0; j < n; ++j) columns.push_back("q" + std::to_string(j + 1));
  for (int j = 0; j < n; ++j) columns.push_back("tau" + std::to_string(j + 1));
  dynid::data::TimeSeries record;
  if (!dynid::data::ReadTimeSeriesCsv(csv_path, "t", 0.0, columns, &record, &error)) {
    return Fail(error);
  }
  const double dt = 1.0 / options.control_rate_hz;
  const Eigen::MatrixXd positions = record.values.leftCols(n);
  const Eigen::MatrixXd torques = record.values.rightCols(n);
  std::vector<dynid::solvers::IrwSmootherOptions> smoothing(n);
  for (int j = 0; j < n; ++j) {
    dynid::solvers::NvrFitSummary fit;
    if (!dynid::solvers::FitNvrMaximumLikelihood(positions.col(j), dynid::solvers::IrwModel::kIrw2,
                                                 &fit, &error)) {
      return Fail(error);
    }
    smoothing[j].model = dynid::solvers::IrwModel::kIrw2;
    smoothing[j].nvr = fit.nvr;
    smoothing[j].compute_standard_deviations = false;
  }
  std::vector<dynid::solvers::IrwSmootherResult> smoothed;
  if (!dynid::solvers::SmoothIrwColumns(positions, dt, smoothing, &smoothed, &error)) {
    return Fail(error);
  }

  // 4. Base parameters and least squares on every 5th sample away from the record's ends.
  dynid::models::BaseParameterSet base;
  if (!dynid::models::ComputeNumericalBaseParameters(robot, dynid::models::NumericalBaseOptions(),
                                                     &base, &error)) {
    return Fail(error);
  }
  const int margin = 200, step = 5;
  const int rows = (samples - 2 * margin) / step;
  Eigen::MatrixXd q(rows, n), qd(rows, n), qdd(rows, n);
  Eigen::VectorXd y(n * rows);
  for (int k = 0; k < rows; ++k) {
    const int i = margin + k * step;
    for (int j = 0; j < n; ++j) {
      q(k, j) = smoothed[j].position(i);
      qd(k, j) = smoothed[j].velocity(i);
      qdd(k, j) = smoothed[j].acceleration(i);
      y(j * rows + k) = torques(i, j);
    }
  }
  Eigen::MatrixXd x, x_base;
  robot.StackedRegressor(q, qd, qdd, &x);
  base.SelectColumns(x, &x_base);
  dynid::solvers::LinearLeastSquaresOptions ls_options;
  ls_options.column_names = base.names;
  const dynid::solvers::LinearLeastSquaresSummary ls =
      dynid::solvers::SolveLeastSquares(x_base, y, ls_options);
  if (!ls.success) return Fail("least squares: " + ls.message);

  const Eigen::VectorXd truth = base.Reduce(robot.standard_parameters());
  std::printf("%d samples, %d base parameters, relative error %.4f, cond %.1f\n", samples,
              base.size(), ls.relative_error, ls.condition_number);
  int well_determined = 0, outside = 0;
  for (int i = 0; i < base.size(); ++i) {
    if (!(ls.relative_std_percent(i) < 5.0)) continue;
    ++well_determined;
    const double z = (ls.theta(i) - truth(i)) / ls.standard_deviation(i);
    const double relative = std::abs(ls.theta(i) - truth(i)) / std::abs(truth(i));
    std::printf("  %-8s true %10.5f  estimate %10.5f  (%.2f %%, z %.1f)\n", base.names[i].c_str(),
                truth(i), ls.theta(i), 100.0 * relative, z);
    if (relative > 0.05 && std::abs(z) > 6.0) ++outside;
  }
  // The torque noise sets the floor: the fit must explain the torques down to a few times it.
  const double noise_fraction = 0.05 / std::sqrt(y.squaredNorm() / y.size());
  if (!(ls.relative_error < 5.0 * noise_fraction + 0.01)) {
    return Fail("relative error " + std::to_string(ls.relative_error) + " too large");
  }
  if (well_determined < base.size() / 2) return Fail("too few well-determined base parameters");
  if (outside > 0) return Fail(std::to_string(outside) + " base parameters away from the truth");
  std::printf("consumer: identified %d well-determined base parameters of %d\n", well_determined,
              base.size());
  return 0;
}
