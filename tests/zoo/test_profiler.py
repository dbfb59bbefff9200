"""The profiler interposer's acceptance test (label zoo): libodla_profiler, wrapped around the
reference and oneDNN backends, writes a per-op JSON trace for ResNet-50.

ResNet-50 (exported by models/export_zoo.py into the model cache) is compiled with odlac at
-O3, its generated C linked against libodla_profiler instead of a backend (the link line is the
only change), and run on the exported input with each backend twice:
- times (ODLA_PROFILER_RANGES unset): every op result of the generated C is a node result of
  the trace, every node ran once with a positive time, the node times add up to no more than
  the execution, and the Conv/Gemm FLOPs add up to odlac's own estimate (its report, NAME.json);
- ranges (ODLA_PROFILER_RANGES=1): the outputs still match PyTorch, the argument's range is the
  input's min/max, the output's the real output's min/max, every op result has a finite range,
  and results of a ReLU-fused op are never negative.

Environment (from CMake): ODLAC, ODLA_INCLUDE, ODLA_LIB (libodla_profiler.so: the library the
generated C links), ODLA_PROFILER_BACKENDS ("name=path,...", the backends it loads). Run under Debian's /usr/bin/python3."""
import json
import os
import re
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
sys.path.insert(0, os.path.dirname(__file__))
import odlactest  # noqa: E402
from test_zoo import TORCH_ATOL, TORCH_RTOL, ensure_exported  # noqa: E402

# The code is generated for the reference manifest (channels-first, odlac's own fusions) and
# run on libodla_dnnl through the interposer: on an AVX-512 CPU oneDNN's channels-first
# convolutions accumulate in another order than on AVX2, 1.45e-4 off PyTorch's ResNet-50
# logits on a 2-core Xeon (1e-4 passes on an AVX2 EPYC). The reference backend keeps
# PyTorch's tolerance.
DNNL_ATOL = 5e-4


def tolerance(backend):
    return TORCH_RTOL, DNNL_ATOL if backend == "dnnl" else TORCH_ATOL

# A call `odla_X(..., (const odla_value_id)"id")` in the generated C, one per statement (a
# long call continues on lines indented below it, after its '(' or a ',').
CALL = re.compile(r'odla_(\w+)\(.*\(const odla_value_id\)\s*"((?:[^"\\]|\\.)*)"\)')
CONTINUATION = re.compile(r'([(,])\n\s+')


def results_of_generated_c(folder):
    """(op, value id) of every op call in the generated C (not constants and arguments)."""
    found = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".c") and name != "main.c":
            with open(os.path.join(folder, name), errors="replace") as f:
                text = CONTINUATION.sub(lambda m: m.group(1) + ("" if m.group(1) == "(" else " "),
                                        f.read())
                for line in text.splitlines():
                    m = CALL.search(line)
                    if m and not m.group(1).startswith(("Create", "BindTo", "SetValue")):
                        found.append((m.group(1), m.group(2), "RELU" in line))
    return found


class ProfilerTest(unittest.TestCase):
    def setUp(self):
        self.backends = dict(b.split("=", 1) for b in
                             os.environ["ODLA_PROFILER_BACKENDS"].split(",") if b)

    def build(self, work):
        """Compiles ResNet-50 and links it to the interposer; returns (folder, exe, report)."""
        folder = ensure_exported("resnet50")
        out = os.path.join(work, "net")
        tc = odlactest.Toolchain()  # its library is the interposer: the only change
        r = tc.compile(os.path.join(folder, "model.onnx"), out, "-O3", "--emit-main")
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = os.path.join(out, "run")
        tc.build(out, exe, "-Wl,-rpath," + os.path.dirname(tc.lib))
        with open(os.path.join(out, "net.json")) as f:
            report = json.load(f)
        return folder, out, exe, report

    def run_profiled(self, exe, folder, work, backend, tag, ranges):
        output = os.path.join(work, f"{tag}.json")
        env = {"ODLA_PROFILER_BACKEND": backend, "ODLA_PROFILER_OUTPUT": output}
        if ranges:
            env["ODLA_PROFILER_RANGES"] = "1"
        saved = dict(os.environ)
        os.environ.update(env)
        try:
            got, want = odlactest.run_data_set(exe, os.path.join(folder, "test_data_set_0"),
                                               os.path.join(work, f"res_{tag}"))
        finally:
            os.environ.clear()
            os.environ.update(saved)
        with open(output) as f:
            return json.load(f), got, want

    def check_times(self, name, trace, calls, report):
        self.assertEqual(trace["timing"], "device_profiler", name)
        self.assertFalse(trace["ranges"])
        (comp,) = trace["computations"]
        self.assertEqual(comp["executions"], 1)
        nodes = comp["nodes"]
        results = {r for n in nodes for r in n["results"]}
        missing = [vid for _, vid, _ in calls if vid not in results]
        self.assertEqual(missing, [], f"{name}: op results without a node")
        for n in nodes:
            self.assertEqual(n["calls"], 1, n)
            self.assertGreater(n["total_ns"], 0, n)
        total = sum(n["total_ns"] for n in nodes)
        self.assertLessEqual(total, comp["execution_ns"], name)
        flops = sum(n["flops"] for n in nodes)
        self.assertAlmostEqual(flops / report["flops"], 1.0, delta=0.02,
                               msg=f"{name}: trace FLOPs {flops}, odlac's {report['flops']}")
        by_op = {}
        for n in nodes:
            by_op[n["op"]] = by_op.get(n["op"], 0) + n["total_ns"]
        top = sorted(by_op.items(), key=lambda kv: -kv[1])[:4]
        print(f"{name}: {len(nodes)} nodes, {comp['execution_ns'] / 1e6:.1f} ms, node time "
              f"{total / comp['execution_ns']:.0%} of it, {flops / 1e9:.2f} GFLOP; top ops: " +
              ", ".join(f"{op} {ns / 1e6:.1f} ms" for op, ns in top))
        return by_op

    def check_ranges(self, name, trace, calls, inputs, got):
        self.assertTrue(trace["ranges"])
        (comp,) = trace["computations"]
        values = {v["id"]: v for v in comp["values"]}
        (arg,) = [v for v in values.values() if v["kind"] == "argument"]
        self.assertEqual((arg["min"], arg["max"]), (float(inputs[0].min()), float(inputs[0].max())))
        (out,) = [v for v in values.values() if v["kind"] == "output"]
        np.testing.assert_allclose([out["min"], out["max"]], [got[0].min(), got[0].max()],
                                   rtol=1e-6, err_msg=name)
        for op, vid, relu in calls:
            v = values.get(vid)
            self.assertIsNotNone(v, f"{name}: no range for {op} {vid}")
            self.assertGreaterEqual(v["executions"], 1, v)
            self.assertLessEqual(v["min"], v["max"], v)
            if relu:
                self.assertGreaterEqual(v["min"], 0.0, f"{name}: ReLU-fused {vid}")

    def test_resnet50(self):
        self.assertIn("reference", self.backends)
        with tempfile.TemporaryDirectory() as work:
            folder, out, exe, report = self.build(work)
            calls = results_of_generated_c(out)
            self.assertGreater(len(calls), 50)
            inputs = [odlactest.load(os.path.join(folder, "test_data_set_0", "input_0.pb"))]
            for name, backend in sorted(self.backends.items()):
                with self.subTest(backend=name):
                    trace, got, want = self.run_profiled(exe, folder, work, backend,
                                                         f"{name}_times", False)
                    self.assertIsNone(odlactest.max_error(got, want, *tolerance(name)))
                    by_op = self.check_times(name, trace, calls, report)
                    if name == "dnnl":
                        self.assertIn("ExtConv(dnnl)", by_op)
                        self.assertIn("Reorder(dnnl)", by_op)
                    trace, got, want = self.run_profiled(exe, folder, work, backend,
                                                         f"{name}_ranges", True)
                    self.assertIsNone(odlactest.max_error(got, want, *tolerance(name)))
                    self.check_ranges(name, trace, calls, inputs, got)


if __name__ == "__main__":
    unittest.main()
