"""Shared helpers for the hostile-input tests: run odlac on a crafted model in a scratch
folder and check that it fails cleanly (exit status, a precise message, nothing left behind)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import odlactest  # noqa: E402,F401  (re-exported for the test modules)

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402


class HostileCase(unittest.TestCase):
    """A scratch folder per test, and odlac run with a time limit: a hang is a failure."""
    tc = odlactest.Toolchain()
    timeout = 120

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="odlac-hostile-")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def save(self, model, name="m.onnx", check=False):
        """Writes a ModelProto as is (no checker: hostile models are invalid on purpose)."""
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(model.SerializeToString() if hasattr(model, "SerializeToString") else model)
        return p

    def odlac(self, *args, cwd=None):
        try:
            return subprocess.run([self.tc.odlac, *args], capture_output=True, text=True,
                                  errors="replace", timeout=self.timeout, cwd=cwd)
        except subprocess.TimeoutExpired:
            self.fail(f"odlac {' '.join(args)} did not finish within {self.timeout} s")

    def assertRefused(self, r, *fragments, status=1):
        """odlac exited with `status` (never a signal) and stderr holds every fragment."""
        self.assertGreaterEqual(r.returncode, 0, f"killed by signal {-r.returncode}:\n{r.stderr}")
        self.assertEqual(r.returncode, status, r.stderr)
        for f in fragments:
            self.assertIn(f, r.stderr)

    def assertNothingLeft(self, out):
        """No output folder and no staging folder beside it."""
        self.assertFalse(os.path.exists(out), f"{out} exists")
        parent = os.path.dirname(os.path.abspath(out))
        self.assertEqual([f for f in os.listdir(parent) if f.startswith(".odlac")], [])


    def refused(self, model, *fragments, flags=()):
        """odlac refuses `model` (exit 1, every fragment in stderr) and writes nothing."""
        out = self.path("out")
        r = self.odlac(self.save(model), "-o", out, *flags)
        self.assertRefused(r, *fragments)
        self.assertNothingLeft(out)
        return r

    def run_driver(self, exe, inputs, outputs=1):
        """Runs a generated driver on `inputs` (name -> array, in graph input order); returns
        (the CompletedProcess, its `outputs` results when it succeeded, else [])."""
        files = []
        for i, (name, value) in enumerate(inputs.items()):
            files.append(self.path(f"input_{i}.pb"))
            with open(files[-1], "wb") as f:
                f.write(numpy_helper.from_array(value, name).SerializeToString())
        res = self.path("res")
        try:
            r = subprocess.run([exe, *files, "-o", res], capture_output=True, text=True,
                               errors="replace", timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.fail(f"{exe} did not finish within {self.timeout} s")
        if r.returncode != 0:
            return r, []
        return r, [numpy_helper.to_array(onnx.load_tensor(os.path.join(res, f"output_{i}.pb")))
                   for i in range(outputs)]


def main():
    unittest.main(verbosity=2)
