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

Cost (a program's figures are drawn at its end, so this is time its user waits): the figures are
drawn without pyplot on matplotlib's Agg canvas; the panels are laid out once from the sizes of
their texts (layout(), in place of tight_layout, which measures every text of the figure again);
titles and axis labels get fixed positions, so that drawing does not measure the tick labels again
to place them; the grid is one line collection per axis (_add_grid); a figure with the grid of
the one before reuses its panels and their ticks (_KEPT_FIGURES); the PNG is deflated at zlib
level 1 without row filters (write_png); matplotlib's artist docstrings are not written at import.
"""
import csv
import importlib.util
import json
import math
import os
import signal
import socket
import struct
import sys
import zlib

MAX_POINTS = 10000

# Drawing is matplotlib's object-oriented API on its Agg canvas (pyplot is not needed), laid out
# by layout() below and written by write_png(); every figure's own text sizes and grid are these
# rcParams, applied while the figure is built and drawn.
STYLE = {
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "figure.titlesize": 10,
    "grid.linewidth": 0.3,  # drawn by _add_grid()
}
DPI = 110
PAD_PT = 10.8  # matplotlib's tight_layout padding (1.08 font sizes): figure edge and panels

_mpl = None


def load_matplotlib():
    """Imports what drawing needs (once): matplotlib and its Agg canvas."""
    global _mpl
    if _mpl is None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.artist

        # matplotlib writes the docstring of every artist class's set() (all its properties and
        # their valid values) as it creates the class: ~1/4 of its import. No docstring is read
        # here (kwdoc() is matplotlib's documented helper that writes them).
        matplotlib.artist.kwdoc = lambda artist: ""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        _mpl = (matplotlib, Figure, FigureCanvasAgg)
    return _mpl


def write_png(path, rgba, width, height):
    """Writes the opaque image `rgba` (height rows of width × 4 bytes) as an RGB PNG through a
    temporary file. Rows are stored unfiltered and deflated at zlib level 1: 4-5 times faster
    than matplotlib's (Pillow's) adaptive filters at level 6, for a file ~15 % larger."""
    import numpy as np

    rows = np.empty((height, 1 + 3 * width), dtype=np.uint8)
    rows[:, 0] = 0  # each row's filter: none
    # The RGB bytes of each pixel, its alpha dropped, in one strided copy (the image is opaque).
    pixels = np.frombuffer(rgba, dtype=np.uint8, count=4 * width * height)
    rgb = rows[:, 1:]
    rgb.shape = (height, width, 3)  # a view of rows (raises rather than copy)
    rgb[...] = pixels.reshape(height, width, 4)[:, :, :3]

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    per_metre = int(round(DPI / 0.0254))
    tmp = path + ".tmp.png"
    with open(tmp, "wb") as handle:
        handle.write(b"\x89PNG\r\n\x1a\n")
        handle.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        handle.write(chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)))
        handle.write(chunk(b"IDAT", zlib.compress(rows, 1)))
        handle.write(chunk(b"IEND", b""))
    os.replace(tmp, path)


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
            rows = series.get("rows")  # [first, count] (count < 0: to the end)
            if rows:
                first, count = int(rows[0]), int(rows[1])
                end = None if count < 0 else first + count
                cols = {name: values[first:end] for name, values in cols.items()}
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


def _is_math(text):
    return text.count("$") - text.count(r"\$") >= 2


class _TextSizes:
    """Width, height and descent in pixels of single texts, measured once each."""

    def __init__(self, renderer):
        from matplotlib.font_manager import FontProperties

        self._renderer = renderer
        self._fonts = {}
        self._sizes = {}
        self._properties = FontProperties

    def __call__(self, text, size):
        key = (text, size)
        if key not in self._sizes:
            if not text:
                self._sizes[key] = (0.0, 0.0, 0.0)
            else:
                if size not in self._fonts:
                    self._fonts[size] = self._properties(size=size)
                self._sizes[key] = self._renderer.get_text_width_height_descent(
                    text, self._fonts[size], ismath=_is_math(text))
        return self._sizes[key]


def _major_ticks(axis, with_labels=True):
    """The major ticks the axis will draw (those in its view) with their labels, and the offset
    text (e.g. "1e-5"), as matplotlib's Axis computes them for drawing."""
    locs = list(axis.get_majorticklocs())
    formatter = axis.get_major_formatter()
    labels = formatter.format_ticks(locs) if with_labels else [""] * len(locs)
    transform = axis.get_transform()
    low, high = sorted(transform.transform(list(axis.get_view_interval())))
    tolerance = 1e-10 * max(abs(low), abs(high), 1e-300)
    kept = []
    for loc, label in zip(locs, labels):
        try:
            position = float(transform.transform([loc])[0])
        except (ValueError, TypeError):
            continue
        if low - tolerance <= position <= high + tolerance:
            kept.append((loc, label))
    return kept, formatter.get_offset() if with_labels else ""


def _tick_labels(axis):
    """The non-empty labels of the major ticks in view, and the offset text."""
    ticks, offset = _major_ticks(axis)
    return [(loc, label) for loc, label in ticks if label], offset


def _add_grid(ax):
    """The panel's grid at its major ticks, as matplotlib's (rcParams "grid.*", drawn with the
    axes, clipped to the panel) but one line collection per axis instead of a line per tick,
    which costs drawing ~1/6 of its time. Call once the panel's position and limits are final."""
    from matplotlib.collections import LineCollection

    rc = load_matplotlib()[0].rcParams
    for axis, transform, vertical in ((ax.xaxis, ax.get_xaxis_transform("grid"), True),
                                      (ax.yaxis, ax.get_yaxis_transform("grid"), False)):
        ticks, _ = _major_ticks(axis, with_labels=False)
        if not ticks:
            continue
        segments = [[(loc, 0.0), (loc, 1.0)] if vertical else [(0.0, loc), (1.0, loc)]
                    for loc, _ in ticks]
        # Offsets at the display's origin, outside the panel: no weight in a legend's "best".
        ax.add_collection(LineCollection(
            segments, colors=rc["grid.color"], linewidths=rc["grid.linewidth"],
            linestyles=rc["grid.linestyle"], alpha=rc["grid.alpha"], capstyle="projecting",
            transform=transform, zorder=axis.get_zorder()), autolim=False)


def suptitle_y(height_pt):
    """The suptitle's top in figure coordinates: matplotlib's 0.98 (2 % of the height below the
    top), but at most 18 points below it, so that a tall figure has no wide empty band above."""
    return 1.0 - min(0.02, 18.0 / height_pt)


def layout(fig, axes, panels, spec, sizes):
    """Places the panels like matplotlib's tight_layout (panel decorations PAD_PT apart and from
    the figure's edge), but from the sizes of the texts each panel will draw instead of laying the
    whole figure out: the titles, axis labels and tick labels (tick labels as the axes' locators
    and formatters give them). Returns, per used panel, whether its y axis has an offset text;
    None when the figure is too small for its texts (its panels then keep their positions)."""
    rc = load_matplotlib()[0].rcParams
    nrows, ncols = len(axes), len(axes[0])
    used = [[r * ncols + c < len(panels) for c in range(ncols)] for r in range(nrows)]
    width_pt = fig.get_figwidth() * 72.0
    height_pt = fig.get_figheight() * 72.0
    px = DPI / 72.0  # pixels per point

    def text_pt(text, size):
        """Width and height in points of a one-line text as matplotlib lays it out (at least
        the height of "lp")."""
        w, h, d = sizes(text, size)
        return w / px, max(h, sizes("lp", size)[1]) / px

    tick_out = rc["xtick.major.size"] + rc["xtick.major.pad"]
    ytick_out = rc["ytick.major.size"] + rc["ytick.major.pad"]
    label_pad = rc["axes.labelpad"]
    title_pad = rc["axes.titlepad"]
    tick_size = STYLE["xtick.labelsize"]
    line_h = text_pt("0", tick_size)[1]
    top = [[0.0] * ncols for _ in range(nrows)]
    bottom = [[0.0] * ncols for _ in range(nrows)]
    left = [[0.0] * ncols for _ in range(nrows)]
    right = [[0.0] * ncols for _ in range(nrows)]
    offsets = {}
    label_at = {}  # (row, column): points from the panel to the x label's top, the y label

    def x_decorations(ax, r, c):
        """Below and beside the panel: x tick labels (maybe rotated), x label, x offset text."""
        labels, offset = _tick_labels(ax.xaxis)
        rotation = math.radians(abs(float(panels[r * ncols + c].get("x_tick_rotation_deg", 0.0))))
        below = 0.0
        x0, x1 = ax.get_xlim()
        width = ax.get_position().width * width_pt
        span = (ax.xaxis.get_transform().transform([x0, x1]))
        right_ha = rotation > 0.0
        for loc, label in labels:
            w, h = text_pt(label, tick_size)
            below = max(below, w * math.sin(rotation) + h * math.cos(rotation))
            fraction = (float(ax.xaxis.get_transform().transform([loc])[0]) - span[0]) / (
                (span[1] - span[0]) or 1.0)
            at = fraction * width  # tick position from the panel's left edge, points
            if right_ha:
                extent_left = w * math.cos(rotation) + h * math.sin(rotation) - at
                left[r][c] = max(left[r][c], extent_left)
            else:
                left[r][c] = max(left[r][c], w / 2.0 - at)
                right[r][c] = max(right[r][c], w / 2.0 - (width - at))
        if labels:
            below += tick_out
        xlabel = ax.get_xlabel()
        extra = 0.0
        if xlabel:
            extra = label_pad + text_pt(xlabel, STYLE["axes.labelsize"])[1]
        if offset:
            extra = max(extra, label_pad + text_pt(offset, tick_size)[1])
        bottom[r][c] = below + extra
        label_at[(r, c)] = [below, label_at.get((r, c), [0.0, 0.0])[1]]

    def y_decorations(ax, r, c):
        labels, offset = _tick_labels(ax.yaxis)
        widest = max((text_pt(label, tick_size)[0] for _, label in labels), default=0.0)
        label_at[(r, c)] = [label_at.get((r, c), [0.0, 0.0])[0],
                            widest + (ytick_out if labels else 0.0)]
        left[r][c] = max(left[r][c], widest + (ytick_out if labels else 0.0) + (
            label_pad + text_pt(ax.get_ylabel(), STYLE["axes.labelsize"])[1]
            if ax.get_ylabel() else 0.0))
        offsets[(r, c)] = bool(offset)
        title = ax.get_title()
        above = title_pad + text_pt(title, STYLE["axes.titlesize"])[1] if title else 0.0
        if offset:
            # The offset text sits above the panel's top left corner; a title it would touch is
            # raised above it by matplotlib (see render()).
            above = max(above, line_h + ytick_out) + (
                text_pt(title, STYLE["axes.titlesize"])[1] if title else 0.0)
        top[r][c] = above

    def apply(lm, rm, bm, tm, wgap, hgap):
        cell_w = (width_pt - lm - rm - (ncols - 1) * wgap) / ncols
        cell_h = (height_pt - bm - tm - (nrows - 1) * hgap) / nrows
        if cell_w <= 0 or cell_h <= 0:
            return False
        fig.subplots_adjust(left=lm / width_pt, right=1.0 - rm / width_pt,
                            bottom=bm / height_pt, top=1.0 - tm / height_pt,
                            wspace=wgap / cell_w, hspace=hgap / cell_h)
        return True

    suptitle = spec.get("title") or ""
    title_top = 0.0
    if suptitle:
        # The suptitle's top is suptitle_y() below the figure's top.
        title_top = (1.0 - suptitle_y(height_pt)) * height_pt + text_pt(
            suptitle, STYLE["figure.titlesize"])[1]

    def margins():
        lm = PAD_PT + max(left[r][0] for r in range(nrows))
        rm = PAD_PT + max(right[r][ncols - 1] for r in range(nrows))
        bm = PAD_PT + max(bottom[nrows - 1][c] for c in range(ncols))
        tm = max(top[0][c] for c in range(ncols)) + (
            title_top + PAD_PT / 2.0 if suptitle else PAD_PT)
        wgap = PAD_PT + max((right[r][c] + left[r][c + 1] for r in range(nrows)
                             for c in range(ncols - 1)), default=0.0)
        hgap = PAD_PT + max((bottom[r][c] + top[r + 1][c] for r in range(nrows - 1)
                             for c in range(ncols)), default=0.0)
        return lm, rm, bm, tm, wgap, hgap

    # First pass at matplotlib's default positions: the x decorations (their heights do not
    # depend on the panels' widths); then the heights are final, so are the y axes' ticks; the
    # x ticks are looked at again at the final widths.
    for r in range(nrows):
        for c in range(ncols):
            if used[r][c]:
                x_decorations(axes[r][c], r, c)
                top[r][c] = title_pad + line_h
                left[r][c] = max(left[r][c], 30.0)
    if not apply(*margins()):
        return None
    for r in range(nrows):
        for c in range(ncols):
            if used[r][c]:
                left[r][c] = right[r][c] = 0.0
                y_decorations(axes[r][c], r, c)
    if not apply(*margins()):
        return None
    for r in range(nrows):
        for c in range(ncols):
            if used[r][c]:
                keep_left = left[r][c]
                x_decorations(axes[r][c], r, c)
                left[r][c] = max(left[r][c], keep_left)
    if not apply(*margins()):
        return None
    # The axis labels beside the tick labels, where matplotlib would put them after measuring
    # every tick label again at each draw.
    for (r, c), (below, beside) in label_at.items():
        ax = axes[r][c]
        box = ax.get_position()
        ax.xaxis.set_label_coords(0.5, -(below + label_pad) / (box.height * height_pt))
        ax.yaxis.set_label_coords(-(beside + label_pad) / (box.width * width_pt), 0.5)
    return offsets


# Figures kept for the next one of the same grid (the renderer draws many alike): building a
# panel and its ticks costs about as much as drawing it. Only figures whose panels are "plain"
# (numbers on linear axes, no rotated tick labels) are kept, and a kept panel is emptied of its
# data artists and legend, its colour cycle and data limits reset, before it is drawn again.
_KEPT_FIGURES = {}
_MAX_KEPT_FIGURES = 4


def _numeric(values):
    return values is None or hasattr(values, "dtype") or not any(
        isinstance(v, str) for v in values)


def _plain(panel, drawn):
    if (panel.get("log_x") or panel.get("log_y") or panel.get("symlog_threshold")
            or panel.get("x_tick_rotation_deg") or panel.get("invert_y")):
        return False
    return all(_numeric(data["x"]) and _numeric(data["y"]) for data in drawn)


def _emptied(fig, axes, panels):
    """The kept figure `fig` ready for new panels: no data, legends or colour-cycle state."""
    for index in range(len(panels)):
        ax = axes[index // len(axes[0])][index % len(axes[0])]
        for artist in list(ax.lines) + list(ax.collections) + list(ax.patches) + list(ax.texts):
            artist.remove()
        del ax.containers[:]  # error bars' groups of the artists just removed
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        ax.set_prop_cycle(None)
        ax.relim()
        ax.set_autoscale_on(True)
    fig.suptitle("")
    return fig


def render(spec, drawn_panels, out_path):
    matplotlib, Figure, FigureCanvasAgg = load_matplotlib()
    panels = spec["panels"]
    ncols = max(1, int(spec.get("columns", 1)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    size = (float(spec.get("width_in", 8.0)), float(spec.get("panel_height_in", 2.6)) * nrows)
    key = (nrows, ncols, len(panels), size)
    plain = all(_plain(panel, drawn) for panel, drawn in zip(panels, drawn_panels))
    # Taken out while in use: a figure whose drawing failed is not used again.
    kept = _KEPT_FIGURES.pop(key, None) if plain else None
    with matplotlib.rc_context(STYLE):
        if kept is not None:
            fig, canvas, axes = kept
            _emptied(fig, axes, panels)
        else:
            fig = Figure(figsize=size, dpi=DPI)
            canvas = FigureCanvasAgg(fig)
            axes = fig.subplots(nrows, ncols, squeeze=False)
            for index in range(len(panels), nrows * ncols):
                axes[index // ncols][index % ncols].axis("off")
        legends = []
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
            for lo, hi in panel.get("vspans", []):
                ax.axvspan(lo, hi, color="tab:green", alpha=0.15, lw=0)
            for level in panel.get("vlines", []):
                ax.axvline(level, color="k", ls="--", lw=0.7)
            if panel.get("invert_y"):
                # Categories top-down in the order of the rows (matplotlib counts up from 0).
                ax.invert_yaxis()
            if panel.get("log_y"):
                ax.set_yscale("log")
            if panel.get("symlog_threshold"):
                ax.set_yscale("symlog", linthresh=float(panel["symlog_threshold"]))
            if panel.get("log_x"):
                ax.set_xscale("log")
            ax.set_title(panel.get("title", ""))
            ax.set_xlabel(panel.get("xlabel", ""))
            ax.set_ylabel(panel.get("ylabel", ""))
            rotation = float(panel.get("x_tick_rotation_deg", 0.0))
            if rotation:
                # Long category names (e.g. "estimator parameter") slant instead of overlapping.
                ax.tick_params(axis="x", labelrotation=rotation)
                for label in ax.get_xticklabels():
                    label.set_horizontalalignment("right")
            if any(s.get("label") for s in panel["series"]):
                legends.append(ax)
        if spec.get("title"):
            fig.suptitle(spec["title"], y=suptitle_y(fig.get_figheight() * 72.0))
        offsets = layout(fig, axes, panels, spec, _TextSizes(canvas.get_renderer()))
        if offsets is None:  # too small: drawn as it is, not kept
            offsets, plain = {}, False
        for index in range(len(panels)):
            _add_grid(axes[index // ncols][index % ncols])
        for index, panel in enumerate(panels):
            ax = axes[index // ncols][index % ncols]
            # A fixed title position spares matplotlib looking for decorations above the panel
            # at every draw; it still raises a title that would touch the y offset text.
            y = None if offsets.get((index // ncols, index % ncols)) else 1.0
            ax.set_title(panel.get("title", ""), y=y)
        for ax in legends:
            ax.legend()
        canvas.draw()
        write_png(out_path, canvas.buffer_rgba(), *canvas.get_width_height())
    if plain:
        while len(_KEPT_FIGURES) >= _MAX_KEPT_FIGURES:
            del _KEPT_FIGURES[next(iter(_KEPT_FIGURES))]
        _KEPT_FIGURES[key] = (fig, canvas, axes)


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
        if "matplotlib.pyplot" in sys.modules:  # a script may have drawn with pyplot
            sys.modules["matplotlib.pyplot"].close("all")
    if status not in (None, 0):
        raise RuntimeError("%s exited with status %s" % (name, status))


def serve(fd):
    # Import matplotlib now, while the program computes; without it every request fails.
    startup_error = None
    try:
        import numpy as np

        load_matplotlib()
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
