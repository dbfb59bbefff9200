"""End-to-end tests: compile each model in models/ with odlac, build the C against the
backend, run every data set, and compare with PyTorch's outputs (relative 1e-4)."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import odlactest  # noqa: E402

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models")
RTOL, ATOL = 1e-4, 1e-6


class ModelTest(unittest.TestCase):
    tc = odlactest.Toolchain()

    def check_model(self, name, *flags, data_sets=None, input_shape=None):
        model_dir = os.path.join(MODELS, name)
        for ds in data_sets or odlactest.data_sets(model_dir):
            with self.subTest(model=name, data_set=os.path.basename(ds), flags=flags), \
                    tempfile.TemporaryDirectory() as work:
                extra = list(flags)
                if input_shape:
                    extra += ["--input-shape", input_shape(ds)]
                out = os.path.join(work, "out")
                r = self.tc.compile(os.path.join(model_dir, "model.onnx"), out, "--emit-main",
                                    *extra)
                self.assertEqual(r.returncode, 0, r.stderr)
                exe = os.path.join(out, "run")  # beside a weights blob, where the driver looks
                self.tc.build(out, exe)
                got, want = odlactest.run_data_set(exe, ds, os.path.join(work, "res"))
                self.assertIsNone(odlactest.max_error(got, want, RTOL, ATOL))

    def test_mlp(self):
        self.check_model("mlp")

    def test_cnn(self):
        self.check_model("cnn")

    def test_cnn_with_weights_blob(self):
        self.check_model("cnn", "--weights=bin")

    def test_cnn_core_profile(self):
        # Core ODLA 0.5 only: the fused Conv+Relu is decomposed, odla_ext.h never included.
        self.check_model("cnn", "--odla-profile=core")
        with tempfile.TemporaryDirectory() as work:
            out = os.path.join(work, "out")
            self.tc.compile(os.path.join(MODELS, "cnn", "model.onnx"), out, "--odla-profile=core")
            for f in os.listdir(out):
                with open(os.path.join(out, f), errors="replace") as text:
                    self.assertNotIn("odla_Ext", text.read(), f)

    def test_least_memory_without_heap(self):
        # Direct convolutions over several input channels (--memory=least) and the instance in
        # caller memory (--no-heap), against PyTorch as every other build.
        self.check_model("cnn", "--memory=least", "--no-heap")
        self.check_model("digits", "--memory=least", "--no-heap",
                         input_shape=lambda ds: "input:%dx1x8x8" % odlactest.load(
                             os.path.join(ds, "input_0.pb")).shape[0])

    def test_digits_with_pinned_batch(self):
        def shape(ds):
            batch = odlactest.load(os.path.join(ds, "input_0.pb")).shape[0]
            return f"input:{batch}x1x8x8"
        self.check_model("digits", input_shape=shape)


if __name__ == "__main__":
    unittest.main(verbosity=2)
