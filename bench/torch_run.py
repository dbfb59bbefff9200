"""Times PyTorch on one model's TorchScript (models/export_zoo.py writes model.pt), for
bench/bench.py. Run with Debian's /usr/bin/python3.

usage: torch_run.py MODEL.pt INPUTS.json THREADS RUNS WARMUP OUT.bin
Same input and output conventions as ort_run.py; prints one JSON line."""
import json
import sys
import time

import numpy as np
import torch


def main():
    model_path, inputs_json, threads, runs, warmup, out_path = sys.argv[1:7]
    torch.set_num_threads(int(threads))
    with open(inputs_json) as f:
        spec = json.load(f)
    inputs = [torch.from_numpy(np.fromfile(t["file"], dtype=t["dtype"]).reshape(t["shape"]))
              for t in spec]
    model = torch.jit.load(model_path).eval()
    with torch.inference_mode():
        for _ in range(int(warmup)):
            out = model(*inputs)
        ms = []
        for _ in range(int(runs)):
            t0 = time.perf_counter()
            out = model(*inputs)
            ms.append((time.perf_counter() - t0) * 1e3)
    out.numpy().tofile(out_path)
    print(json.dumps({"median_ms": float(np.median(ms)), "min_ms": min(ms), "runs": len(ms),
                      "version": torch.__version__}))


if __name__ == "__main__":
    main()
