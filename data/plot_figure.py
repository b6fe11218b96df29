#!/usr/bin/env python3
"""Render dynid figure descriptions (JSON) to PNG with matplotlib.

usage: plot_figure.py SPEC.json [OUT.png]
       plot_figure.py --serve FD

The first form renders one figure, reading the CSV files the spec names (paths relative to the
spec's folder); a series longer than MAX_POINTS is reduced to a min/max envelope (below).

The second form is the renderer of dynid's programs (data/figure.cc): one process per run renders
every figure of the run. It reads requests from the socket FD and answers each with one line,
"ok" or "error <what>". A request is one line of JSON, then `bytes` bytes of native float64
arrays:
  {"kind": "figure", "out": PNG, "spec": SPEC, "arrays": [{"count": n} | {"text": [...]}, ...],
   "bytes": total}: SPEC as in the first form, with "data" (array indices: x, y, optional
   bands [{"lo", "hi", "alpha"}], optional yerr [lo, hi]) in each series instead of CSV columns;
   the program has already reduced long series to their envelope;
  {"kind": "script", "script": NAME, "args": [...]}: runs main() of the runtime script NAME
   (e.g. plot_heatmap.py, in this folder) with sys.argv = [NAME] + args; 0 or None = success.

Envelope of a long series: its samples are cut into MAX_POINTS / 2 consecutive buckets and each
bucket keeps its smallest and its largest value (in sample order), so spikes stay visible; a band
keeps per bucket the smallest lower and the largest upper bound.
"""
import csv
import importlib.util
import json
import math
import os
import signal
import socket
import sys

MAX_POINTS = 10000

_pyplot = None
_SUPTITLE_IN_TIGHT_LAYOUT = False


def pyplot():
    global _pyplot, _SUPTITLE_IN_TIGHT_LAYOUT
    if _pyplot is None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        _pyplot = plt
        # Since matplotlib 3.3, tight_layout leaves room for the figure's suptitle.
        version = tuple(int(part) for part in matplotlib.__version__.split(".")[:2]
                        if part.isdigit())
        _SUPTITLE_IN_TIGHT_LAYOUT = version >= (3, 3)
    return _pyplot


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


def envelope(x, y, bands):
    """The min/max envelope of a long numeric series (see the module's doc); bands: [(lo, hi)]."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    n = len(y)
    buckets = MAX_POINTS // 2
    if n <= MAX_POINTS or any(isinstance(v, str) for v in x):
        return x, y, bands
    x = np.asarray(x, dtype=float)
    edges = (np.arange(buckets + 1) * n) // buckets
    keep_x, keep_y, keep_bands = [], [], [([], []) for _ in bands]
    for b in range(buckets):
        lo, hi = edges[b], edges[b + 1]
        part = y[lo:hi]
        if np.all(np.isnan(part)):
            picks = [lo]
        else:
            picks = sorted({lo + int(np.nanargmin(part)), lo + int(np.nanargmax(part))})
        for k in picks:
            keep_x.append(x[k])
            keep_y.append(y[k])
            for (band_lo, band_hi), (out_lo, out_hi) in zip(bands, keep_bands):
                out_lo.append(np.nanmin(np.asarray(band_lo[lo:hi], dtype=float)))
                out_hi.append(np.nanmax(np.asarray(band_hi[lo:hi], dtype=float)))
    return keep_x, keep_y, keep_bands


def series_from_csv(spec, base):
    """Per panel, per series: the arrays to draw, from the CSV files the spec names."""
    cache = {}
    panels = []
    for panel in spec["panels"]:
        drawn = []
        for series in panel["series"]:
            path = os.path.join(base, series["csv"])
            if path not in cache:
                cache[path] = read_columns(path)
            cols = cache[path]
            x, y = cols[series["x"]], cols[series["y"]]
            lower, upper = series.get("lower"), series.get("upper")
            if series.get("style") == "errorbar":
                yerr = [cols[lower], cols[upper]] if lower and upper else None
                drawn.append({"x": x, "y": y, "bands": [], "alphas": [], "yerr": yerr})
                continue
            bands, alphas = [], []
            if lower and upper:
                bands.append((cols[lower], cols[upper]))
                alphas.append(0.25)
            if series.get("error"):
                scale = float(series.get("error_scale", 2.0))
                err = cols[series["error"]]
                bands.append(([a - scale * e for a, e in zip(y, err)],
                              [a + scale * e for a, e in zip(y, err)]))
                alphas.append(0.3)
            x, y, bands = envelope(x, y, bands)
            drawn.append({"x": x, "y": y, "bands": bands, "alphas": alphas, "yerr": None})
        panels.append(drawn)
    return panels


def series_from_arrays(spec, arrays):
    """Per panel, per series: the arrays to draw, as sent by the program."""
    panels = []
    for panel in spec["panels"]:
        drawn = []
        for series in panel["series"]:
            data = series["data"]
            yerr = data.get("yerr")
            drawn.append({
                "x": arrays[data["x"]],
                "y": arrays[data["y"]],
                "bands": [(arrays[b["lo"]], arrays[b["hi"]]) for b in data.get("bands", [])],
                "alphas": [b["alpha"] for b in data.get("bands", [])],
                "yerr": [arrays[yerr[0]], arrays[yerr[1]]] if yerr else None,
            })
        panels.append(drawn)
    return panels


def render(spec, drawn_panels, out_path):
    plt = pyplot()
    panels = spec["panels"]
    ncols = max(1, int(spec.get("columns", 1)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig, axes = plt.subplots(
        nrows, ncols, squeeze=False,
        figsize=(spec.get("width_in", 8.0), spec.get("panel_height_in", 2.6) * nrows))
    try:
        for index, (panel, drawn) in enumerate(zip(panels, drawn_panels)):
            ax = axes[index // ncols][index % ncols]
            for series, data in zip(panel["series"], drawn):
                label = series.get("label") or None
                style = series.get("style", "line")
                x, y = data["x"], data["y"]
                if style == "errorbar":
                    ax.errorbar(x, y, yerr=data["yerr"], fmt="o", ms=3, capsize=2, label=label)
                    continue
                if style == "points":
                    ax.plot(x, y, ".", ms=2, label=label)
                else:
                    ax.plot(x, y, "-", lw=0.9, label=label)
                for (lo, hi), alpha in zip(data["bands"], data["alphas"]):
                    ax.fill_between(x, lo, hi, alpha=alpha, lw=0)
            for level in panel.get("hlines", []):
                ax.axhline(level, color="k", ls="--", lw=0.7)
            if panel.get("log_y"):
                ax.set_yscale("log")
            if panel.get("symlog_threshold"):
                ax.set_yscale("symlog", linthresh=float(panel["symlog_threshold"]))
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
        if spec.get("title"):
            fig.suptitle(spec["title"], fontsize=10)
        if _SUPTITLE_IN_TIGHT_LAYOUT:
            fig.tight_layout()  # one layout pass, room for the suptitle included
        else:
            # Older tight_layout ignores the suptitle: keep ~0.25 in above the panels for it (a
            # second layout pass).
            top = 1.0 - 0.25 / fig.get_figheight() if spec.get("title") else 1.0
            fig.tight_layout(rect=(0.0, 0.0, 1.0, top))
        tmp = out_path + ".tmp.png"
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, out_path)
    finally:
        plt.close(fig)


def run_script(name, args):
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "dynid_" + os.path.splitext(name)[0], os.path.join(here, name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    saved = sys.argv
    sys.argv = [name] + list(args)
    try:
        status = module.main()
    except SystemExit as ended:
        status = ended.code
    finally:
        sys.argv = saved
        if _pyplot is not None:
            _pyplot.close("all")
    if status not in (None, 0):
        raise RuntimeError("%s exited with status %s" % (name, status))


def serve(fd):
    # Import matplotlib now, while the program computes; without it every request fails.
    startup_error = None
    try:
        import numpy as np

        pyplot()
    except Exception as failure:
        startup_error = " ".join(str(failure).split()) or type(failure).__name__
    connection = socket.socket(fileno=fd)
    stream = connection.makefile("rb")
    while True:
        line = stream.readline()
        if not line:
            return 0
        reply = "ok"
        try:
            request = json.loads(line)
            payload = stream.read(int(request.get("bytes", 0)))
            if startup_error:
                raise RuntimeError(startup_error)
            if request["kind"] == "figure":
                arrays, offset = [], 0
                for entry in request["arrays"]:
                    if "text" in entry:
                        arrays.append(entry["text"])
                        continue
                    count = int(entry["count"])
                    arrays.append(np.frombuffer(payload, dtype=np.float64, count=count,
                                                offset=offset))
                    offset += 8 * count
                spec = request["spec"]
                render(spec, series_from_arrays(spec, arrays), request["out"])
            elif request["kind"] == "script":
                run_script(request["script"], request["args"])
            else:
                raise ValueError("unknown request kind %r" % request["kind"])
        except Exception as failure:  # reported to the program, which fails the run
            reply = "error " + (" ".join(str(failure).split()) or type(failure).__name__)
        connection.sendall((reply + "\n").encode())


def main():
    # Interrupted by Ctrl-C, end by the signal (as the program does), not by a traceback.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        return serve(int(sys.argv[2]))
    spec_path = sys.argv[1]
    out_path = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(spec_path)[0] + ".png"
    if out_path.endswith(".figure.png"):
        out_path = out_path[: -len(".figure.png")] + ".png"
    with open(spec_path) as handle:
        spec = json.load(handle)
    base = os.path.dirname(os.path.abspath(spec_path))
    render(spec, series_from_csv(spec, base), out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
