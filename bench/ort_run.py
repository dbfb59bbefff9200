"""Times ONNX Runtime (the project venv's onnxruntime, CPU) on one model, for bench/int8.py.

usage: ort_run.py MODEL.onnx THREADS RUNS WARMUP OUT.pb INPUT_0.pb [INPUT_1.pb ...]
The inputs are ONNX TensorProto files in graph-input order; writes the first output to OUT.pb
and prints one JSON line: {"median_ms", "min_ms", "runs"}."""
import json
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def main():
    model, threads, runs, warmup, out_path = sys.argv[1:6]
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feed = {i.name: numpy_helper.to_array(onnx.load_tensor(p))
            for i, p in zip(sess.get_inputs(), sys.argv[6:])}
    for _ in range(int(warmup)):
        out = sess.run(None, feed)[0]
    ms = []
    for _ in range(int(runs)):
        t0 = time.perf_counter()
        out = sess.run(None, feed)[0]
        ms.append((time.perf_counter() - t0) * 1e3)
    with open(out_path, "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(out)).SerializeToString())
    print(json.dumps({"median_ms": float(np.median(ms)), "min_ms": min(ms), "runs": len(ms)}))


if __name__ == "__main__":
    main()
