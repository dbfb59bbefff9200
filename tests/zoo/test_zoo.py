"""The optimizer's acceptance test on models exported from PyTorch (label zoo; issue 4).

For each model: export it with models/export_zoo.py into the model cache (reused when
present), compile it at -O0 and -O3, build both against the reference backend, run both on
the exported input, and check that -O3 equals -O0 within 1e-4 relative and that both equal
PyTorch's output; then check the -O3 IR (odlac --print-ir) for the rewrites the model must
get. One test method per model; the helpers below do the work.

Cache: $ODLAC_MODEL_CACHE or ~/.cache/odlac/models (export_zoo.py's default).
Run under Debian's /usr/bin/python3 (torch, onnx, numpy)."""
import collections
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import odlactest  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CACHE = os.environ.get("ODLAC_MODEL_CACHE",
                       os.path.join(os.path.expanduser("~"), ".cache", "odlac", "models"))
# -O3 against -O0: the rewrites reassociate float arithmetic, nothing more.
OPT_RTOL, OPT_ATOL = 1e-4, 1e-5
# Either against PyTorch: other summation orders over thousands of products.
TORCH_RTOL, TORCH_ATOL = 1e-4, 1e-4

# "%name = Op(" or "%"a/b" = Op(" in odlac's text IR.
IR_NODE = re.compile(r'^\s*(%(?:"(?:[^"\\]|\\.)*"|\S+)) = (\w+)\((.*)\)')


def ensure_exported(name):
    """The model's folder in the cache, exporting it first when it is missing."""
    folder = os.path.join(CACHE, name)
    if not os.path.exists(os.path.join(folder, "model.onnx")):
        subprocess.run([sys.executable, os.path.join(ROOT, "models", "export_zoo.py"),
                        "--out", CACHE, "--only", name], check=True, capture_output=True)
    return folder


def ir_nodes(text):
    """(result, op, operand text) for every node of a printed graph."""
    return [m.groups() for m in map(IR_NODE.match, text.splitlines()) if m]


class ZooTest(unittest.TestCase):
    tc = odlactest.Toolchain()

    def compile_and_run(self, folder, work, level, flags):
        """Compiles at -O<level>, builds, runs test_data_set_0; returns (outputs, expected)."""
        out = os.path.join(work, f"O{level}")
        r = self.tc.compile(os.path.join(folder, "model.onnx"), out, f"-O{level}", "--emit-main",
                            *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = os.path.join(out, "run")  # beside a weights blob, where the driver looks
        self.tc.build(out, exe)
        return odlactest.run_data_set(exe, os.path.join(folder, "test_data_set_0"),
                                      os.path.join(work, f"res{level}"))

    def check_model(self, name, flags=()):
        """Runs the model at -O0 and -O3 and compares; returns the -O3 IR's nodes."""
        folder = ensure_exported(name)
        with tempfile.TemporaryDirectory() as work:
            o0, want = self.compile_and_run(folder, work, 0, flags)
            o3, _ = self.compile_and_run(folder, work, 3, flags)
        for level, got in (("-O0", o0), ("-O3", o3)):
            err = odlactest.max_error(got, want, TORCH_RTOL, TORCH_ATOL)
            self.assertIsNone(err, f"{name} {level} against PyTorch")
        err = odlactest.max_error(o3, o0, OPT_RTOL, OPT_ATOL)
        self.assertIsNone(err, f"{name}: -O3 against -O0")
        for i, (a, b, w) in enumerate(zip(o0, o3, want)):
            rel = np.abs(b.astype(np.float64) - a) / np.maximum(np.abs(a), OPT_ATOL / OPT_RTOL)
            print(f"{name} output {i}: max |O3-O0|/|O0| {rel.max():.2e}, "
                  f"max |O3-torch| {np.abs(b.astype(np.float64) - w).max():.2e}")
        r = subprocess.run([self.tc.odlac, os.path.join(folder, "model.onnx"), "-O3",
                            "--print-ir", *flags], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.ir_text = r.stdout
        return ir_nodes(r.stdout)

    def assert_no_ops(self, nodes, ops):
        found = sorted({op for _, op, _ in nodes if op in ops})
        self.assertEqual(found, [], "ops that -O3 must have removed")

    def test_bert_encoder(self):
        """BERT-style encoder (2 layers, hidden 256, 4 heads, sequence 64), symbolic batch and
        sequence dims pinned: the head reshapes are Shape->Gather->Unsqueeze->Concat chains."""
        layers = 2
        flags = ["--input-shape", "input_ids:1x64", "--input-shape", "attention_mask:1x64"]
        nodes = self.check_model("bert_encoder_small", flags)
        count = collections.Counter(op for _, op, _ in nodes)
        # Shape arithmetic is folded; what decomposed LayerNorm, GELU and attention leave
        # behind is gone.
        self.assert_no_ops(nodes, {"Identity", "Shape", "Unsqueeze", "Concat", "Range",
                                   "ReshapeDynamic", "Pow", "Sqrt", "Erf", "ReduceMean",
                                   "Softmax"})
        # The only Gather left is the token embedding lookup, indexed by the input.
        gathers = [operands for _, op, operands in nodes if op == "Gather"]
        self.assertEqual(len(gathers), 1, gathers)
        self.assertIn("%input_ids", gathers[0])
        # Embedding LayerNorm plus two per layer; one GELU and one attention per layer.
        self.assertEqual(count["LayerNorm"], 1 + 2 * layers)
        # GELU is recognized, then fused into the producing Gemm (through the Reshape that
        # restores the batch dims) as its epilogue.
        fused_gelus = self.ir_text.count('activation = "gelu"')
        self.assertEqual(count["Gelu"] + fused_gelus, layers)
        self.assertEqual(fused_gelus, layers, "GELU not fused into its Gemm")
        self.assertEqual(count["Attention"], layers)

    def test_bert_encoder_core_profile(self):
        """The same model for a backend with core ODLA 0.5 only: LayerNorm and Attention run
        as their decompositions, which must give PyTorch's numbers too."""
        folder = ensure_exported("bert_encoder_small")
        flags = ["--input-shape", "input_ids:1x64", "--input-shape", "attention_mask:1x64",
                 "--odla-profile=core"]
        with tempfile.TemporaryDirectory() as work:
            got, want = self.compile_and_run(folder, work, 3, flags)
            for f in os.listdir(os.path.join(work, "O3")):
                if f.endswith((".c", ".h")):
                    with open(os.path.join(work, "O3", f), errors="replace") as text:
                        self.assertNotIn("odla_Ext", text.read(), f)
        self.assertIsNone(odlactest.max_error(got, want, TORCH_RTOL, TORCH_ATOL))

    # --- CNNs (ResNet-50, MobileNetV2): BatchNorm folding, activation and residual fusion,
    # and layout assignment for a backend that prefers channels-last data.

    def check_cnn(self, name):
        nodes = self.check_model(name)
        self.check_cnn_ir(nodes)
        # The same -O3 for a manifest that prefers channels-last: the reference backend's own,
        # with that one line changed. Its numbers must be PyTorch's too.
        folder = ensure_exported(name)
        with tempfile.TemporaryDirectory() as work:
            manifest = os.path.join(work, "channels_last.txt")
            with open(os.path.join(ROOT, "runtime_stubs", "reference", "manifest.txt")) as f:
                text = re.sub(r"(?m)^layout\s+\S+", "layout channels_last", f.read())
            with open(manifest, "w") as f:
                f.write(text)
            flags = ["--backend-manifest", manifest]
            got, want = self.compile_and_run(folder, work, 3, flags)
            err = odlactest.max_error(got, want, TORCH_RTOL, TORCH_ATOL)
            self.assertIsNone(err, f"{name} -O3 channels-last against PyTorch")
            print(f"{name} channels-last: max |O3-torch| "
                  f"{np.abs(got[0].astype(np.float64) - want[0]).max():.2e} "
                  f"(outputs up to {np.abs(want[0]).max():.2e})")
            r = subprocess.run([self.tc.odlac, os.path.join(folder, "model.onnx"), "-O3",
                                "--print-ir", *flags], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
        self.check_cnn_ir(ir_nodes(r.stdout), channels_last_ir=r.stdout)

    def check_cnn_ir(self, nodes, channels_last_ir=None):
        count = collections.Counter(op for _, op, _ in nodes)
        self.assert_no_ops(nodes, {"BatchNormalization", "Identity", "Dropout", "Shape",
                                   "Gather"})
        self.assertGreater(count["FusedConv"], 10, "convolutions were not fused")
        producer = {result: op for result, op, _ in nodes}
        for _, op, operands in nodes:
            if op in ("Relu", "Clip"):
                first = operands.split(",")[0].strip()
                self.assertNotIn(producer.get(first), ("Conv", "FusedConv"),
                                 f"a standalone {op} after a convolution")
        if channels_last_ir is None:
            self.assertEqual(count["Transpose"], 0)
            return
        # Channels-last: every spatial op switched; the input's transpose is the only one
        # left (the global pool's [N,1,1,C] result moves only size-1 axes and merged into the
        # flattening Reshape).
        spatial = re.findall(r"= (?:Conv|FusedConv|MaxPool|AveragePool)\(.*",
                             channels_last_ir)
        self.assertEqual(len(spatial), sum(count[op] for op in ("Conv", "FusedConv", "MaxPool",
                                                                "AveragePool")))
        for line in spatial:
            self.assertIn('layout = "channels_last"', line)
        self.assertEqual(count["Transpose"], 1)

    def test_resnet50(self):
        self.check_cnn("resnet50")

    def test_mobilenet_v2(self):
        self.check_cnn("mobilenet_v2")

    def test_squeezenet1_1(self):
        """Fire modules: two expand convolutions concatenated over channels (libodla_dnnl
        writes both in place into the Concat's halves, running no Concat node)."""
        self.check_cnn_ir(self.check_model("squeezenet1_1"))

    def test_efficientnet_b0(self):
        """Squeeze-excite blocks: GlobalAveragePool, two 1x1 convolutions, Sigmoid and the
        broadcast `scale * x` Mul (on libodla_dnnl a binary primitive in the blocked layout)."""
        self.check_cnn_ir(self.check_model("efficientnet_b0"))

if __name__ == "__main__":
    unittest.main()
