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

# app KEY|- store|load: sets the key ("-": none), then stores or loads net.odlx (net_create's
# status is the exit status; a refused key gives 10 + its status).
KEY_APP = r"""
#include <stdio.h>
#include <string.h>
#include "net.h"

int main(int argc, char **argv) {
  net_instance *inst;
  int rc;
  if (argc != 3)
    return 2;
  if (strcmp(argv[1], "-") != 0 && (rc = net_set_executable_key(argv[1], strlen(argv[1]))) != 0)
    return 10 + rc;
  if (strcmp(argv[2], "store") == 0)
    return net_store(NET_EXECUTABLE_FILE);
  if ((rc = net_create(NET_EXECUTABLE_FILE, &inst)) != 0)
    return rc;
  net_destroy(inst);
  return 0;
}
"""


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

    def test_signed_executables(self):
        # net_set_executable_key: net_store signs, net_create refuses what the key did not sign.
        with tempfile.TemporaryDirectory() as work:
            out = os.path.join(work, "load")
            r = self.tc.compile(os.path.join(MODELS, "mlp", "model.onnx"), out, "--exec-mode=load")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "net.h")) as f:
                self.assertIn("int net_set_executable_key(const void *key, odla_size_t key_bytes);",
                              f.read())
            with open(os.path.join(out, "app.c"), "w") as f:
                f.write(KEY_APP)
            exe = os.path.join(out, "app")
            self.tc.build(out, exe)

            def app(key, what):
                return subprocess.run([exe, key, what], cwd=out, capture_output=True, text=True)

            key, other = "a secret of 24 bytes....", "another secret, 24 bytes"
            self.assertEqual(app(key, "store").returncode, 0)
            self.assertEqual(app(key, "load").returncode, 0)
            self.assertEqual(app("-", "load").returncode, 0)  # no key: loads as any file
            r = app(other, "load")
            self.assertEqual(r.returncode, 3, r.stderr)  # ODLA_INVALID_PARAM
            self.assertIn("the MAC does not match", r.stderr)
            self.assertEqual(app("-", "store").returncode, 0)
            r = app(key, "load")
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn("not signed, and a key is set", r.stderr)
            r = app("short", "load")
            self.assertEqual(r.returncode, 13, r.stderr)  # 10 + ODLA_INVALID_PARAM
            # The core ODLA 0.5 profile has no extensions: no key function.
            core = os.path.join(work, "core")
            r = self.tc.compile(os.path.join(MODELS, "mlp", "model.onnx"), core, "--exec-mode=load",
                                "--odla-profile=core")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(core, "net.h")) as f:
                self.assertNotIn("net_set_executable_key", f.read())

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
