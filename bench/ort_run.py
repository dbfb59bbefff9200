"""Times ONNX Runtime (the project venv's onnxruntime, CPU, all graph optimizations) on one
model, for bench/bench.py and bench/int8.py. Run with the venv's python
(scripts/install-deps.sh venv-path).

usage: ort_run.py MODEL.onnx INPUTS.json THREADS RUNS WARMUP OUT.bin
       ort_run.py --profile MODEL.onnx INPUTS.json THREADS RUNS WARMUP PREFIX
INPUTS.json: [{"name", "dtype" ("float32", "int64", ...), "shape", "file"}], each file the
tensor's raw little-endian bytes (torch_run.py takes the same). Writes the first output's raw
bytes to OUT.bin and prints one JSON line: {"median_ms", "min_ms", "runs", "version"}.
With --profile every run goes through ONNX Runtime's own profiler (its trace written at
PREFIX*.json, then removed) and the line holds each op type's steady-state kernel time
instead, the way bench/bench.py profiles odlac: every node's fastest run, summed by op type:
{"ops": {op_type: {"ns", "nodes"}}, "total_ns", "runs", "version"}."""
import collections
import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    profile = sys.argv[1] == "--profile"
    model, inputs_json, threads, runs, warmup, out_path = sys.argv[1 + profile:7 + profile]
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile:  # (the warm-up runs are profiled too; each node's fastest run counts)
        so.enable_profiling = True
        so.profile_file_prefix = out_path
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    with open(inputs_json) as f:
        feed = {t["name"]: np.fromfile(t["file"], dtype=t["dtype"]).reshape(t["shape"])
                for t in json.load(f)}
    out = None
    for _ in range(int(warmup)):
        out = sess.run(None, feed)[0]
    if profile:
        print(json.dumps(profile_runs(sess, feed, int(runs))))
        return
    ms = []
    for _ in range(int(runs)):
        t0 = time.perf_counter()
        out = sess.run(None, feed)[0]
        ms.append((time.perf_counter() - t0) * 1e3)
    np.ascontiguousarray(out).tofile(out_path)
    print(json.dumps({"median_ms": float(np.median(ms)), "min_ms": min(ms), "runs": len(ms),
                      "version": ort.__version__}))


def profile_runs(sess, feed, runs):
    """Each op type's kernel time over `runs` profiled runs (every node's fastest)."""
    for _ in range(runs):
        sess.run(None, feed)
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    fastest, op_of = {}, {}
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            name = e["name"]
            fastest[name] = min(fastest.get(name, e["dur"]), e["dur"])
            op_of[name] = e.get("args", {}).get("op_name", "?")
    ops = collections.defaultdict(lambda: {"ns": 0, "nodes": 0})
    for name, us in fastest.items():
        ops[op_of[name]]["ns"] += us * 1000
        ops[op_of[name]]["nodes"] += 1
    if not ops:
        raise SystemExit("ONNX Runtime's profile holds no node times")
    return {"ops": ops, "total_ns": sum(o["ns"] for o in ops.values()), "runs": runs,
            "version": ort.__version__}


if __name__ == "__main__":
    main()
