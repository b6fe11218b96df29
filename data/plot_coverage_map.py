#!/usr/bin/env python3
"""Renders the coverage map of a Monte Carlo's coverage.csv (solvers/coverage.h) to PNG.

Usage: plot_coverage_map.py COVERAGE.csv OUT.png [TITLE]

One cell per parameter (rows, in the file's order of first appearance) and estimator (columns:
each scenario and estimator, in the file's order), coloured by the measured coverage of its 95 %
intervals: green shades when the row is `calibrated` (coverage in [0.85, 1] over >= 20 runs),
from red (0) to orange (just below 0.85) when it is not, grey without an interval or with
fewer than 20 runs that had one, blank where the estimator has no such parameter. Each cell carries its coverage to two decimals, and each column's label the count
of its calibrated intervals. So a Monte Carlo of many estimators (the TX40 study's 22 method ×
knowledge runs of 55 parameters) shows on one page which estimator is calibrated for which
parameter; coverage.png keeps the per-parameter detail (z-scores). Like plot_figure.py it reads
only numbers the program already wrote.
"""
import csv
import math
import sys

MIN_CALIBRATED = 0.85  # solvers/coverage.h: kMinCalibratedCoverage
MIN_RUNS = 20  # solvers/coverage.h: kMinCalibrationRuns


def read_rows(path):
    with open(path, newline="") as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines))


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return math.nan
    return value


def main():
    if len(sys.argv) not in (3, 4):
        sys.stderr.write("usage: plot_coverage_map.py COVERAGE.csv OUT.png [TITLE]\n")
        return 2
    csv_path, out_path = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) == 4 else "coverage of the 95 % intervals"
    rows = read_rows(csv_path)
    if not rows:
        raise ValueError("%s: no coverage rows" % csv_path)
    columns, parameters, cells = [], [], {}
    for row in rows:
        scenario = (row.get("scenario") or "").strip()
        column = (scenario + " " if scenario else "") + row["estimator"].strip()
        parameter = row["parameter"].strip()
        if column not in columns:
            columns.append(column)
        if parameter not in parameters:
            parameters.append(parameter)
        cells[(parameter, column)] = row

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import LinearSegmentedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    import numpy as np

    # Colours per cell as RGB: the meaning of a colour does not depend on the other cells.
    below = LinearSegmentedColormap.from_list("below", ["#b2182b", "#f4a582"])
    calibrated = LinearSegmentedColormap.from_list("calibrated", ["#a6dba0", "#1b7837"])
    image = np.ones((len(parameters), len(columns), 3))
    texts = []
    counts = {column: [0, 0] for column in columns}  # calibrated, with an interval
    for i, parameter in enumerate(parameters):
        for j, column in enumerate(columns):
            row = cells.get((parameter, column))
            if row is None:
                continue  # blank: the estimator has no such parameter
            coverage = number(row.get("coverage_95"))
            runs = number(row.get("with_interval", row.get("runs")))
            if not math.isfinite(coverage) or not runs > 0:
                image[i, j] = (0.8, 0.8, 0.8)
                continue
            counts[column][1] += 1
            if row.get("calibrated", "").strip() in ("1", "true"):
                counts[column][0] += 1
                share = (coverage - MIN_CALIBRATED) / (1.0 - MIN_CALIBRATED)
                image[i, j] = calibrated(min(max(share, 0.0), 1.0))[:3]
            elif runs < MIN_RUNS:
                image[i, j] = (0.8, 0.8, 0.8)
            else:
                image[i, j] = below(min(max(coverage / MIN_CALIBRATED, 0.0), 1.0))[:3]
            texts.append((j, i, "%.2f" % coverage))

    # About 0.16 in per parameter and 0.36 in per estimator, room for the names around.
    longest_parameter = max(len(p) for p in parameters)
    longest_column = max(len(c) for c in columns)
    width = 1.2 + 0.07 * longest_parameter + 0.36 * len(columns) + 0.4
    height = 1.6 + 0.16 * len(parameters) + 0.06 * (longest_column + 12)
    fig = Figure(figsize=(max(width, 5.0), max(height, 3.0)), dpi=110)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.imshow(image, aspect="auto", interpolation="nearest")
    for j, i, text in texts:
        ax.text(j, i, text, ha="center", va="center", fontsize=5.5)
    ax.set_xticks(range(len(columns)))
    ax.set_xticklabels(["%s (%d/%d)" % (c, counts[c][0], counts[c][1]) for c in columns],
                       rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(parameters)))
    ax.set_yticklabels(parameters, fontsize=7)
    ax.set_xticks([x - 0.5 for x in range(1, len(columns))], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, len(parameters))], minor=True)
    ax.grid(which="minor", color="white", linewidth=0.6)
    ax.tick_params(which="minor", length=0)
    ax.set_xlabel("estimator (calibrated / with an interval)", fontsize=8)
    ax.set_ylabel("parameter", fontsize=8)
    ax.set_title(title, fontsize=9)
    fig.legend(handles=[Patch(color="#1b7837", label="calibrated: coverage in [0.85, 1]"),
                        Patch(color="#d6604d", label="NOT calibrated: coverage below 0.85"),
                        Patch(color=(0.8, 0.8, 0.8), label="no interval or < 20 runs")],
               loc="lower left", ncol=2, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0.0, 0.05, 1.0, 1.0))
    canvas.print_png(out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
