#!/usr/bin/env python3
"""Render a dynid figure description (JSON) to PNG with matplotlib.

usage: plot_figure.py SPEC.json [OUT.png]
CSV paths inside the spec are relative to the spec's folder.
"""
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_columns(path):
    with open(path, newline="") as handle:
        rows = [row for row in csv.reader(handle) if row and not row[0].startswith("#")]
    header = [name.strip() for name in rows[0]]
    columns = {name: [] for name in header}
    for row in rows[1:]:
        for name, cell in zip(header, row):
            cell = cell.strip()
            try:
                columns[name].append(float(cell))
            except ValueError:
                columns[name].append(cell)
    return columns


def main():
    spec_path = sys.argv[1]
    out_path = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(spec_path)[0] + ".png"
    if out_path.endswith(".figure.png"):
        out_path = out_path[: -len(".figure.png")] + ".png"
    with open(spec_path) as handle:
        spec = json.load(handle)
    base = os.path.dirname(os.path.abspath(spec_path))
    panels = spec["panels"]
    ncols = max(1, int(spec.get("columns", 1)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig, axes = plt.subplots(
        nrows, ncols, squeeze=False,
        figsize=(spec.get("width_in", 8.0), spec.get("panel_height_in", 2.6) * nrows))
    cache = {}
    for index, panel in enumerate(panels):
        ax = axes[index // ncols][index % ncols]
        for series in panel["series"]:
            path = os.path.join(base, series["csv"])
            if path not in cache:
                cache[path] = read_columns(path)
            cols = cache[path]
            x = cols[series["x"]]
            y = cols[series["y"]]
            label = series.get("label") or None
            style = series.get("style", "line")
            lower, upper = series.get("lower"), series.get("upper")
            if style == "errorbar":
                err = [cols[lower], cols[upper]] if lower and upper else None
                ax.errorbar(x, y, yerr=err, fmt="o", ms=3, capsize=2, label=label)
                continue
            if style == "points":
                ax.plot(x, y, ".", ms=2, label=label)
            else:
                ax.plot(x, y, "-", lw=0.9, label=label)
            if lower and upper:
                ax.fill_between(x, cols[lower], cols[upper], alpha=0.25, lw=0)
            if series.get("error"):
                scale = float(series.get("error_scale", 2.0))
                err = cols[series["error"]]
                ax.fill_between(x, [a - scale * e for a, e in zip(y, err)],
                                [a + scale * e for a, e in zip(y, err)], alpha=0.3, lw=0)
        for level in panel.get("hlines", []):
            ax.axhline(level, color="k", ls="--", lw=0.7)
        if panel.get("log_y"):
            ax.set_yscale("log")
        if panel.get("log_x"):
            ax.set_xscale("log")
        ax.set_title(panel.get("title", ""), fontsize=9)
        ax.set_xlabel(panel.get("xlabel", ""), fontsize=8)
        ax.set_ylabel(panel.get("ylabel", ""), fontsize=8)
        ax.tick_params(labelsize=7)
        rotation = float(panel.get("x_tick_rotation_deg", 0.0))
        if rotation:
            # Long category names (e.g. "estimator parameter") slant instead of overlapping.
            ax.tick_params(axis="x", labelrotation=rotation)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right")
        ax.grid(True, lw=0.3)
        if any(s.get("label") for s in panel["series"]):
            ax.legend(fontsize=7)
    for index in range(len(panels), nrows * ncols):
        axes[index // ncols][index % ncols].axis("off")
    top = 1.0
    if spec.get("title"):
        fig.suptitle(spec["title"], fontsize=10)
        # tight_layout ignores the suptitle: keep ~0.25 in above the panels for it.
        top = 1.0 - 0.25 / fig.get_figheight()
    fig.tight_layout(rect=(0.0, 0.0, 1.0, top))
    tmp = out_path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
