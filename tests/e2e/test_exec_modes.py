"""End-to-end tests of odlac --exec-mode: each model compiled in compile, interpret and load
mode (C-array and blob weights), built against the backend and run on every data set. The
three modes must give bit-identical outputs that match PyTorch's (relative 1e-4); a load-mode
program must refuse a truncated or foreign executable with an error, not crash."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import odlactest  # noqa: E402

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models")
RTOL, ATOL = 1e-4, 1e-6
MODES = ("compile", "interpret", "load")


class ExecModesTest(unittest.TestCase):
    tc = odlactest.Toolchain()

    def build_mode(self, work, model, mode, *flags):
        out = os.path.join(work, mode)
        r = self.tc.compile(os.path.join(MODELS, model, "model.onnx"), out, "--emit-main",
                            f"--exec-mode={mode}", *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = os.path.join(out, "run")
        self.tc.build(out, exe)
        if mode == "load":  # writes net.odlx beside the program, then runs it
            ds = odlactest.data_sets(os.path.join(MODELS, model))[0]
            inputs = sorted(f for f in os.listdir(ds) if f.startswith("input_"))
            r = subprocess.run([exe, "--store", *(os.path.join(ds, f) for f in inputs)],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
        return exe

    def check_model(self, model, *flags):
        with tempfile.TemporaryDirectory() as work:
            exes = {mode: self.build_mode(work, model, mode, *flags) for mode in MODES}
            for ds in odlactest.data_sets(os.path.join(MODELS, model)):
                with self.subTest(model=model, data_set=os.path.basename(ds), flags=flags):
                    got = {}
                    for mode, exe in exes.items():
                        got[mode], want = odlactest.run_data_set(
                            exe, ds, os.path.join(work, mode + "_" + os.path.basename(ds)))
                        self.assertIsNone(odlactest.max_error(got[mode], want, RTOL, ATOL), mode)
                    for mode in MODES[1:]:
                        for a, b in zip(got["compile"], got[mode]):
                            self.assertEqual(a.tobytes(), b.tobytes(), f"{mode} differs")
            return work, exes

    def test_mlp(self):
        self.check_model("mlp")

    def test_cnn(self):
        self.check_model("cnn")

    def test_cnn_weights_blob(self):
        self.check_model("cnn", "--weights=bin")

    def test_load_refuses_bad_executables(self):
        with tempfile.TemporaryDirectory() as work:
            exe = self.build_mode(work, "mlp", "load")
            stored = os.path.join(os.path.dirname(exe), "net.odlx")
            with open(stored, "rb") as f:
                image = f.read()
            ds = odlactest.data_sets(os.path.join(MODELS, "mlp"))[0]
            for what, data in (("truncated", image[:len(image) // 2]),
                               ("foreign", b"\x7fELF" + bytes(len(image))),
                               ("empty", b"")):
                with self.subTest(what=what):
                    with open(stored, "wb") as f:
                        f.write(data)
                    r = subprocess.run([exe, os.path.join(ds, "input_0.pb")],
                                       capture_output=True, text=True)
                    self.assertEqual(r.returncode, 1, r.stderr)
                    self.assertIn("net_create failed with odla_status 3", r.stderr)  # INVALID_PARAM
            os.remove(stored)
            r = subprocess.run([exe, os.path.join(ds, "input_0.pb")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("net_create failed with odla_status 2", r.stderr)  # FILE_NOT_EXIST

    def test_mode_missing_from_manifest(self):
        with tempfile.TemporaryDirectory() as work:
            manifest = os.path.join(work, "m.txt")
            with open(manifest, "w") as f:
                f.write("backend tiny\nlibrary odla_tiny\nmodes compile\nops *\n")
            r = self.tc.compile(os.path.join(MODELS, "mlp", "model.onnx"), os.path.join(work, "o"),
                                "--exec-mode=load", f"--backend-manifest={manifest}")
            self.assertEqual(r.returncode, 1)
            self.assertIn("does not support --exec-mode=load", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
