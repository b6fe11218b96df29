#!/usr/bin/env python3
"""Renders heat maps of a grid table (the weight_sweep program's summary.csv) to PNG.

Usage: plot_heatmap.py SPEC.json OUT.png

SPEC: {"title": str, "csv": file name relative to the spec's folder, "x": column, "y": column,
       "xlabel": str, "ylabel": str, "columns": panels per row,
       "panels": [{"z": column, "title": str, "absolute": bool}]}
x and y take a few distinct values each (a full grid); the axes are log10 of them. Colours are
log10 of z (of |z| when "absolute"); cells that are zero, negative or missing stay blank.
figure.h's line figures cannot draw a grid, hence this separate script; like plot_figure.py it
only reads numbers the program already wrote to CSV.
"""
import csv
import json
import math
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: plot_heatmap.py SPEC.json OUT.png\n")
        return 2
    spec_path, out_path = sys.argv[1], sys.argv[2]
    with open(spec_path) as f:
        spec = json.load(f)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    with open(os.path.join(os.path.dirname(os.path.abspath(spec_path)), spec["csv"])) as f:
        rows = list(csv.DictReader(f))
    xs = sorted({float(r[spec["x"]]) for r in rows})
    ys = sorted({float(r[spec["y"]]) for r in rows})
    panels = spec["panels"]
    columns = max(1, int(spec.get("columns", 2)))
    nrows = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(nrows, columns, figsize=(5.0 * columns, 4.0 * nrows), squeeze=False)
    lx = [math.log10(x) for x in xs]
    ly = [math.log10(y) for y in ys]

    def edges(values):
        if len(values) == 1:
            return [values[0] - 0.5, values[0] + 0.5]
        mids = [(a + b) / 2 for a, b in zip(values[:-1], values[1:])]
        return [2 * values[0] - mids[0]] + mids + [2 * values[-1] - mids[-1]]

    for i, panel in enumerate(panels):
        ax = axes[i // columns][i % columns]
        grid = np.full((len(ys), len(xs)), np.nan)
        for r in rows:
            z = float(r[panel["z"]])
            if panel.get("absolute", False):
                z = abs(z)
            if z > 0 and math.isfinite(z):
                grid[ys.index(float(r[spec["y"]])), xs.index(float(r[spec["x"]]))] = math.log10(z)
        mesh = ax.pcolormesh(edges(lx), edges(ly), np.ma.masked_invalid(grid), shading="flat",
                             cmap="viridis")
        fig.colorbar(mesh, ax=ax, label="log10 " + ("|%s|" if panel.get("absolute") else "%s") %
                     panel["z"])
        ax.set_title(panel.get("title", panel["z"]), fontsize=9)
        ax.set_xlabel("log10 " + spec.get("xlabel", spec["x"]))
        ax.set_ylabel("log10 " + spec.get("ylabel", spec["y"]))
    for j in range(len(panels), nrows * columns):
        axes[j // columns][j % columns].axis("off")
    fig.suptitle(spec.get("title", ""))
    fig.tight_layout()
    fig.savefig(out_path, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
