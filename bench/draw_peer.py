"""matplotlib peer of bench/draw-latency.mjs: seconds to draw kinds x layers x heads attention maps
as one figure of imshow subplots (Agg, viridis, ~96 px a map like the panel's thumbnails), saved
to a PNG in a temporary folder. The maps are built as the node side builds them: a diagonal band
plus noise, rows normalised to sum to 1. Needs python3-matplotlib (Debian 12: 3.6) and numpy.
The last stdout line is JSON for the node side."""
import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
import numpy as np  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--tokens", default="128,512")
p.add_argument("--layers", type=int, default=6)
p.add_argument("--heads", type=int, default=8)
p.add_argument("--kinds", type=int, default=3)
p.add_argument("--reps", type=int, default=3)
p.add_argument("--warmup", type=int, default=1)
p.add_argument("--thumb", type=int, default=96, help="pixels a side of each map")
args = p.parse_args()


def maps_for(n, rng):
    """kinds x layers x heads maps of n x n: a diagonal band plus noise, rows summing to 1."""
    maps = np.empty((args.kinds, args.layers * args.heads, n, n), dtype=np.float32)
    r = np.arange(n)[:, None]
    c = np.arange(n)[None, :]
    for m in range(args.layers * args.heads):
        d = c - r - (m % 5) + 2
        band = np.exp(-(d * d) / (2 + (m % 3) * 4))
        for k in range(args.kinds):
            w = band + 0.02 * rng.random((n, n))
            maps[k, m] = w / w.sum(axis=1, keepdims=True)
    return maps


def draw(maps, path):
    """One figure: (kinds x layers) rows x heads columns of imshow subplots, each map from 0 to its max."""
    rows, cols, dpi = args.kinds * args.layers, args.heads, 100
    fig, axes = plt.subplots(rows, cols, figsize=(cols * args.thumb / dpi, rows * args.thumb / dpi), dpi=dpi, squeeze=False)
    for k in range(args.kinds):
        for m in range(args.layers * args.heads):
            ax = axes[k * args.layers + m // args.heads][m % args.heads]
            ax.imshow(maps[k, m], cmap="viridis", vmin=0, vmax=float(maps[k, m].max()), aspect="auto")
            ax.set_axis_off()
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1, wspace=0.04, hspace=0.04)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


rng = np.random.default_rng(1)
results = []
with tempfile.TemporaryDirectory(prefix="draw-peer-") as tmp:
    for n in map(int, args.tokens.split(",")):
        maps = maps_for(n, rng)
        times = []
        for i in range(args.warmup + args.reps):
            path = os.path.join(tmp, f"grid-{n}-{i}.png")
            t0 = time.perf_counter()
            draw(maps, path)
            if i >= args.warmup:
                times.append(time.perf_counter() - t0)
        s = sorted(times)
        med = s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2
        results.append({"tokens": n, "seconds": times, "median_s": med, "png_bytes": os.path.getsize(path)})
        print(f"{n} tokens: {len(maps) * len(maps[0])} maps in one figure, median {med:.3f} s per grid ({os.path.getsize(path)} B PNG)")

print(json.dumps({
    "python": platform.python_version(), "matplotlib": matplotlib.__version__, "numpy": np.__version__,
    "backend": matplotlib.get_backend(), "results": results,
    "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
sys.stdout.flush()
