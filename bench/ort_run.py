"""Times ONNX Runtime (the project venv's onnxruntime, CPU, all graph optimizations) on one
model, for bench/bench.py and bench/int8.py. Run with the venv's python
(scripts/install-deps.sh venv-path).

usage: ort_run.py MODEL.onnx INPUTS.json THREADS RUNS WARMUP OUT.bin
INPUTS.json: [{"name", "dtype" ("float32", "int64", ...), "shape", "file"}], each file the
tensor's raw little-endian bytes (torch_run.py takes the same). Writes the first output's raw
bytes to OUT.bin and prints one JSON line: {"median_ms", "min_ms", "runs", "version"}."""
import json
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    model, inputs_json, threads, runs, warmup, out_path = sys.argv[1:7]
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    with open(inputs_json) as f:
        feed = {t["name"]: np.fromfile(t["file"], dtype=t["dtype"]).reshape(t["shape"])
                for t in json.load(f)}
    out = None
    for _ in range(int(warmup)):
        out = sess.run(None, feed)[0]
    ms = []
    for _ in range(int(runs)):
        t0 = time.perf_counter()
        out = sess.run(None, feed)[0]
        ms.append((time.perf_counter() - t0) * 1e3)
    np.ascontiguousarray(out).tofile(out_path)
    print(json.dumps({"median_ms": float(np.median(ms)), "min_ms": min(ms), "runs": len(ms),
                      "version": ort.__version__}))


if __name__ == "__main__":
    main()
