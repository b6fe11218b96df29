#!/usr/bin/python3
"""Reference vectors for tests/data/signal_test.cc, generated ONCE with Debian's scipy.

Command (from the repository root):
    /usr/bin/python3 tests/data/reference/make_signal_reference.py
Generated with python3-scipy 1.10.1 / numpy 1.24.2 (Debian bookworm). The inputs are
deterministic formulas (no random generator), so the files are reproducible bit for bit on
the same scipy version. Every file starts with '#' comment lines naming the scipy call.
"""
import os

import numpy as np
import scipy
from scipy import signal

OUT = os.path.dirname(os.path.abspath(__file__))


def write(name, header, columns, comment):
    columns = [np.asarray(c, dtype=float) for c in columns]
    n = len(columns[0])
    assert all(len(c) == n for c in columns), name
    with open(os.path.join(OUT, name), "w") as f:
        f.write("# %s\n# scipy %s, numpy %s; made by make_signal_reference.py\n"
                % (comment, scipy.__version__, np.__version__))
        f.write(",".join(header) + "\n")
        for i in range(n):
            f.write(",".join("%.17g" % c[i] for c in columns) + "\n")


def write_sos(name, sos, comment):
    write(name, ["b0", "b1", "b2", "a0", "a1", "a2"], [sos[:, i] for i in range(6)], comment)


def test_signal(n, fs):
    """A multi-tone signal with a ramp and a deterministic pseudo-noise, like a joint angle."""
    t = np.arange(n) / fs
    noise = np.sin(12345.678 * np.arange(n) ** 1.5)  # deterministic, broadband
    return (0.3 * t + np.sin(2 * np.pi * 3.0 * t) + 0.2 * np.cos(2 * np.pi * 41.0 * t)
            + 0.05 * noise + 1.0)


# 1. Butterworth order 4, 50 Hz at 5 kHz (Brunot et al. (2018) good knowledge, omega_q) +
# sosfiltfilt.
fs = 5000.0
x = test_signal(1500, fs)
sos = signal.butter(4, 50.0, fs=fs, output="sos")
write_sos("butter4_50hz_5khz_sos.csv", sos, "signal.butter(4, 50, fs=5000, output='sos')")
write("butter4_50hz_5khz_filtfilt.csv", ["x", "y"], [x, signal.sosfiltfilt(sos, x)],
      "y = signal.sosfiltfilt(butter(4, 50, fs=5000, output='sos'), x)")
zi = signal.sosfilt_zi(sos)
write("butter4_50hz_5khz_zi.csv", ["zi0", "zi1"], [zi[:, 0], zi[:, 1]],
      "signal.sosfilt_zi(butter(4, 50, fs=5000, output='sos'))")
write("butter4_50hz_5khz_sosfilt.csv", ["x", "y"], [x, signal.sosfilt(sos, x)],
      "y = signal.sosfilt(butter(4, 50, fs=5000, output='sos'), x) (zero initial state)")

# 2. Odd orders (a first-order section and a padded zero): Butterworth 5 at 180 Hz,
#    Butterworth 3 at 0.3 of Nyquist on a short signal.
sos = signal.butter(5, 180.0, fs=fs, output="sos")
write_sos("butter5_180hz_5khz_sos.csv", sos, "signal.butter(5, 180, fs=5000, output='sos')")
write("butter5_180hz_5khz_filtfilt.csv", ["x", "y"], [x, signal.sosfiltfilt(sos, x)],
      "y = signal.sosfiltfilt(butter(5, 180, fs=5000, output='sos'), x)")
xs = test_signal(40, 100.0)
sos = signal.butter(3, 0.3, output="sos")
write_sos("butter3_0p3_sos.csv", sos, "signal.butter(3, 0.3, output='sos')")
write("butter3_0p3_filtfilt.csv", ["x", "y"], [xs, signal.sosfiltfilt(sos, xs)],
      "y = signal.sosfiltfilt(butter(3, 0.3, output='sos'), x); 40 samples, pad length 21")

# 3. Chebyshev type I designs: the decimation filter for R = 25 and an odd-order one.
write_sos("cheby1_8_0p05_0p032_sos.csv", signal.cheby1(8, 0.05, 0.8 / 25, output="sos"),
          "signal.cheby1(8, 0.05, 0.8/25, output='sos') (decimate's filter for q = 25)")
write_sos("cheby1_5_1_0p4_sos.csv", signal.cheby1(5, 1.0, 0.4, output="sos"),
          "signal.cheby1(5, 1.0, 0.4, output='sos')")

# 4. decimate (iir, n = 8, zero_phase) for R = 25 on a length that is not a multiple of 25,
#    R = 4, R = 1, and the shortest admissible input (28 samples; pad length 27).
x = test_signal(2013, fs)
write("decimate_input_2013.csv", ["x"], [x], "x = test_signal(2013, 5000)")
for r in (25, 4, 1):
    y = signal.decimate(x, r, n=8, ftype="iir", zero_phase=True)
    write("decimate_r%d.csv" % r, ["y"], [y],
          "y = signal.decimate(x, %d, n=8, ftype='iir', zero_phase=True), x from "
          "decimate_input_2013.csv" % r)
x28 = test_signal(28, 500.0)
write("decimate_short28_r3.csv", ["x"], [x28], "x = test_signal(28, 500)")
write("decimate_short28_r3_out.csv", ["y"], [signal.decimate(x28, 3)],
      "y = signal.decimate(x, 3) for x in decimate_short28_r3.csv (28 samples: the minimum)")
