#!/usr/bin/env python3
"""Draws docs/images/benchmarks.svg from the latency table of docs/benchmarks.md: per model and
thread count, each engine's median latency relative to ONNX Runtime's (the table's "vs ORT"),
as horizontal bars on a log scale with ONNX Runtime at 1. bench/bench.py calls it after it
writes the page; run it by hand to redraw the plot of an existing page:

    python3 bench/plot.py [docs/benchmarks.md] [docs/images/benchmarks.svg]"""
import math
import os
import sys
from xml.sax.saxutils import escape

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
COLORS = {"odlac+dnnl": "#4e79a7", "odlac+reference": "#76b7b2", "pytorch": "#e15759",
          "emx-onnx-cgen": "#f28e2b", "iree": "#59a14f", "tvm": "#b07aa1"}


def rows(page):
    """(model, engine, threads, ratio) of the first table with a "vs ORT" column (a failed
    engine's row has none, and no bar; a ratio past the scale's end is drawn at it, labelled)."""
    header, out = None, []
    for line in page.splitlines():
        if not line.startswith("|"):
            if header and out:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            if "vs ORT" in cells:
                header = cells
            continue
        if cells[0].startswith("-"):
            continue
        row = dict(zip(header, cells))
        if not row.get("vs ORT"):
            continue
        out.append((row["model"], row["engine"], int(row["threads"]),
                    float(row["vs ORT"].rstrip("x"))))
    return out


def svg(data):
    groups = []  # (model, threads): [(engine, ratio)]
    for model, engine, threads, ratio in data:
        if engine == "onnxruntime":
            continue
        if not groups or groups[-1][0] != (model, threads):
            groups.append(((model, threads), []))
        groups[-1][1].append((engine, ratio))
    lo, hi = 0.5, 16.0  # the scale's ends (log2)
    left, width, bar, gap, top = 200, 560, 10, 14, 50
    x = lambda r: left + width * (math.log2(min(max(r, lo), hi)) - math.log2(lo)) / (  # noqa: E731
        math.log2(hi) - math.log2(lo))
    height = top + sum(len(g) * bar + gap for _, g in groups) + 60
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" '
         f'height="{height}" font-family="Helvetica, sans-serif" font-size="11">',
         f'<text x="{left}" y="20" font-size="13">Median latency relative to ONNX Runtime '
         f'(lower is faster; log scale)</text>']
    for r in (0.5, 1, 2, 4, 8, 16):
        s.append(f'<line x1="{x(r):.1f}" y1="{top - 8}" x2="{x(r):.1f}" y2="{height - 50}" '
                 f'stroke="{"#333" if r == 1 else "#ddd"}"/>')
        s.append(f'<text x="{x(r):.1f}" y="{height - 36}" text-anchor="middle">{r:g}x</text>')
    y = top
    for (model, threads), bars in groups:
        s.append(f'<text x="{left - 8}" y="{y + len(bars) * bar / 2 + 4:.1f}" '
                 f'text-anchor="end">{escape(model)}, {threads} thread{"s" if threads > 1 else ""}'
                 f'</text>')
        for engine, ratio in bars:
            s.append(f'<rect x="{left}" y="{y}" width="{x(ratio) - left:.1f}" height="{bar - 2}" '
                     f'fill="{COLORS.get(engine, "#999")}"><title>{escape(engine)}: '
                     f'{ratio:.2f}x</title></rect>')
            s.append(f'<text x="{x(ratio) + 4:.1f}" y="{y + bar - 3}" font-size="9">'
                     f'{ratio:.2f}x</text>')
            y += bar
        y += gap
    lx = 10
    for engine, color in COLORS.items():
        s.append(f'<rect x="{lx}" y="{height - 22}" width="10" height="10" fill="{color}"/>')
        s.append(f'<text x="{lx + 14}" y="{height - 13}">{escape(engine)}</text>')
        lx += 110
    s.append(f'<text x="{lx}" y="{height - 13}">ONNX Runtime = 1x</text>')
    return "\n".join(s + ["</svg>", ""])


def main(argv):
    page = argv[0] if argv else os.path.join(ROOT, "docs", "benchmarks.md")
    out = argv[1] if len(argv) > 1 else os.path.join(ROOT, "docs", "images", "benchmarks.svg")
    with open(page, encoding="utf-8") as f:
        data = rows(f.read())
    if not data:
        print(f"plot: no table with a 'vs ORT' column in {page}", file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(svg(data))
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
