"""bench/ort_run.py, which bench/bench.py and bench/int8.py run in the project venv: its timing
mode writes the output a direct ONNX Runtime session gives, and its --profile mode counts every
node of the graph ONNX Runtime runs (the optimized model it saves with the same options), each
op type once per node, and removes its trace. On the digits CNN (models/digits)."""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
import onnxruntime as ort

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MODEL = os.path.join(ROOT, "models", "digits", "model.onnx")
SCRIPT = os.path.join(ROOT, "bench", "ort_run.py")


class OrtRunTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        sess = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
        inp = sess.get_inputs()[0]
        shape = [d if isinstance(d, int) else 1 for d in inp.shape]
        self.x = np.random.default_rng(7).random(shape, dtype=np.float32)
        path = os.path.join(self.dir.name, "x.bin")
        self.x.tofile(path)
        self.inputs = os.path.join(self.dir.name, "inputs.json")
        with open(self.inputs, "w") as f:
            json.dump([{"name": inp.name, "dtype": "float32", "shape": shape, "file": path}], f)
        self.name = inp.name

    def run_script(self, *args):
        out = subprocess.run([sys.executable, SCRIPT] + list(args), check=True,
                             capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    def session(self, optimized=None):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if optimized:
            so.optimized_model_filepath = optimized
        return ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])

    def test_timing_writes_the_sessions_output(self):
        out = os.path.join(self.dir.name, "y.bin")
        r = self.run_script(MODEL, self.inputs, "1", "3", "1", out)
        self.assertEqual(r["runs"], 3)
        self.assertGreater(r["median_ms"], 0)
        self.assertLessEqual(r["min_ms"], r["median_ms"])
        want = self.session().run(None, {self.name: self.x})[0]
        got = np.fromfile(out, dtype=want.dtype).reshape(want.shape)
        np.testing.assert_array_equal(got, want)

    def test_profile_counts_every_node_of_the_graph_it_runs(self):
        optimized = os.path.join(self.dir.name, "optimized.onnx")
        self.session(optimized)
        want = collections.Counter(n.op_type for n in onnx.load(optimized).graph.node)
        prefix = os.path.join(self.dir.name, "trace")
        r = self.run_script("--profile", MODEL, self.inputs, "1", "4", "1", prefix)
        self.assertEqual(r["runs"], 4)
        self.assertEqual({op: o["nodes"] for op, o in r["ops"].items()}, dict(want))
        self.assertTrue(all(o["ns"] >= 0 for o in r["ops"].values()))
        self.assertEqual(r["total_ns"], sum(o["ns"] for o in r["ops"].values()))
        self.assertGreater(r["total_ns"], 0)
        self.assertEqual(glob.glob(prefix + "*"), [])  # the trace is removed


if __name__ == "__main__":
    unittest.main()
