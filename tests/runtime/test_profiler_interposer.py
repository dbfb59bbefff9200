"""libodla_profiler (runtime_stubs/profiler) around one backend, on profiled_graph.c's graph.

Usage: test_profiler_interposer.py PROGRAM BACKEND_SO SCRATCH_DIR

PROGRAM is profiled_graph linked against libodla_profiler (instead of a backend). Checks:
- times: the report says the backend's device profiler timed it; every node ran 3 times
  with positive times adding up to no more than the 3 executions; Conv and Gemm carry their
  FLOPs (2*4*6*6*27 and 2*144*10); on oneDNN, its nodes are named "Conv(dnnl)" and the
  layout conversion it inserts "Reorder(dnnl)";
- ranges (ODLA_PROFILER_RANGES=1): min/max of x, y, r, flat and out equal numpy's,
  recomputed here from the program's data, and out's equal the printed output;
- a backend that cannot be loaded: a clear message and a non-zero exit.
Run under Debian's /usr/bin/python3 (numpy)."""
import json
import os
import subprocess
import sys

import numpy as np


def expected():
    """x, y, r, flat, out of profiled_graph.c, in float64."""
    x = (np.arange(3 * 8 * 8) % 7 - 3.0).reshape(1, 3, 8, 8)
    w = ((np.arange(4 * 3 * 3 * 3) % 5) * 0.25 - 0.5).reshape(4, 3, 3, 3)
    b = (np.arange(144 * 10) % 3 - 1.0).reshape(144, 10)
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    y = np.einsum("nchwij,ocij->nohw", win, w)
    r = np.maximum(y, 0)
    flat = r.reshape(1, 144)
    return {"x": x, "y": y, "r": r, "flat": flat, "out": flat @ b}


def run(program, backend, output, ranges):
    env = dict(os.environ, ODLA_PROFILER_BACKEND=backend, ODLA_PROFILER_OUTPUT=output)
    env.pop("ODLA_PROFILER_RANGES", None)
    if ranges:
        env["ODLA_PROFILER_RANGES"] = "1"
    return subprocess.run([program, "3"], env=env, capture_output=True, text=True, timeout=120)


def main():
    program, backend, scratch = sys.argv[1:4]
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    want = expected()
    # Times.
    out = os.path.join(scratch, "times.json")
    r = run(program, backend, out, False)
    check(r.returncode == 0, f"times run: {r.returncode} {r.stderr}")
    with open(out) as f:
        report = json.load(f)
    check(report["timing"] == "device_profiler" and report["ranges"] is False, "timing")
    (comp,) = report["computations"]
    check(comp["executions"] == 3, f"executions {comp['executions']}")
    nodes = comp["nodes"]
    by_result = {res: n for n in nodes for res in n["results"]}
    for vid in ("y", "r", "flat", "out"):
        check(vid in by_result, f"no node for {vid}: {nodes}")
    for n in nodes:
        check(n["calls"] == 3 and n["total_ns"] > 0 and 0 < n["min_ns"] * 3 <= n["total_ns"],
              f"node {n}")
    check(sum(n["total_ns"] for n in nodes) <= comp["execution_ns"], "node times exceed total")
    check(by_result.get("y", {}).get("flops") == 2 * 4 * 6 * 6 * 27, "Conv FLOPs")
    check(by_result.get("out", {}).get("flops") == 2 * 144 * 10, "Gemm FLOPs")
    check(by_result.get("r", {}).get("op", "").startswith("Relu"), "Relu op name")
    if "dnnl" in os.path.basename(backend):  # oneDNN's nodes name their engine
        check(by_result.get("y", {}).get("op") == "Conv(dnnl)", "Conv(dnnl)")
        check(by_result.get("out", {}).get("op") == "Gemm(dnnl)", "Gemm(dnnl)")
        check(any(n["op"] == "Reorder(dnnl)" for n in nodes), f"no Reorder(dnnl): {nodes}")
    else:
        check(by_result.get("y", {}).get("op") == "Conv", "Conv")
    # Ranges.
    out = os.path.join(scratch, "ranges.json")
    r = run(program, backend, out, True)
    check(r.returncode == 0, f"ranges run: {r.returncode} {r.stderr}")
    printed = np.array([float(v) for v in r.stdout.split()])
    np.testing.assert_allclose(printed, want["out"].ravel(), rtol=1e-5)
    with open(out) as f:
        report = json.load(f)
    (comp,) = report["computations"]
    values = {v["id"]: v for v in comp["values"]}
    kinds = {"x": "argument", "y": "result", "r": "result", "flat": "result", "out": "output"}
    for vid, kind in kinds.items():
        v = values.get(vid)
        check(v is not None and v["kind"] == kind and v["executions"] == 3, f"{vid}: {v}")
        if v:
            got = [v["min"], v["max"]]
            ref = [want[vid].min(), want[vid].max()]
            check(np.allclose(got, ref, rtol=1e-6), f"{vid} range {got}, want {ref}")
    check([values["out"]["min"], values["out"]["max"]] ==
          [float(np.float32(printed.min())), float(np.float32(printed.max()))]
          if "out" in values else False, "out range against the printed output")
    # No backend.
    r = run(program, os.path.join(scratch, "no-such-backend.so"), os.path.join(scratch, "x.json"),
            False)
    check(r.returncode != 0 and "cannot load the backend" in r.stderr,
          f"a missing backend: {r.returncode} {r.stderr}")
    for f in failures:
        print("FAIL", f)
    print(f"{'failed' if failures else 'passed'}: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
