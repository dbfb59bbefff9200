#!/usr/bin/env python3
"""Checks the conformance runner itself (ctest conformance.runner): that it compares ONNX
1.23's element types the way ONNX's runner does, that a wrong result is a mismatch and a
refusal a rejection on both engines (odlac and ONNX Runtime), that sequence and optional
test data is flattened into tensors with odlac's flags derived from it, that the suite-set check
refuses folders from another onnx, and that gen_onnx_suite.py and gen_random_suite.py write the
same bytes twice (the latter keeping a current folder).

Run with the project venv's python (onnx 1.23, onnxruntime); ODLAC, ODLA_LIB, ODLA_INCLUDE
name odlac and the backend, ONNX123_SUITE the folder the fixture wrote.
"""

import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_conformance as rc  # noqa: E402


def write_folder(root, name, model, inputs, outputs):
    """A test folder in ONNX's layout: root/node/name/{model.onnx,test_data_set_0/*.pb}."""
    d = os.path.join(root, "node", name, "test_data_set_0")
    os.makedirs(d)
    onnx.save(model, os.path.join(root, "node", name, "model.onnx"))
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, v in enumerate(values):
            onnx.save_tensor(numpy_helper.from_array(v), os.path.join(d, "%s_%d.pb" % (kind, i)))


def add_model(op="Add"):
    f = TensorProto.FLOAT
    g = helper.make_graph([helper.make_node(op, ["a", "b"], ["y"])], "g",
                          [helper.make_tensor_value_info("a", f, [3]),
                           helper.make_tensor_value_info("b", f, [3])],
                          [helper.make_tensor_value_info("y", f, [3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


class Compare(unittest.TestCase):
    def check(self, got, want, rtol=rc.RTOL, atol=rc.ATOL):
        return rc.compare(got, want, rtol, atol)[:2]

    def test_bfloat16_gets_onnx_123_floor(self):
        # 1.0 vs 1.0078125 (one bfloat16 ulp): off by 0.78% > rtol 1e-3, within 2**-6.
        want = numpy_helper.from_array(np.array([1.0, 2.0], dtype=ml_dtypes.bfloat16))
        got = numpy_helper.from_array(np.array([1.0078125, 2.0], dtype=ml_dtypes.bfloat16))
        cfg = {"tolerances": {}, "bfloat16_rtol": 2.0 ** -6}
        rtol, atol = rc.tolerance(cfg, "node", "t", TensorProto.BFLOAT16)
        self.assertEqual(rtol, 2.0 ** -6)
        self.assertTrue(self.check(got, want, rtol, atol)[0])
        self.assertFalse(self.check(got, want)[0])  # Debian's rule: rtol 1e-3 for every type
        cfg["bfloat16_rtol"] = None
        self.assertEqual(rc.tolerance(cfg, "node", "t", TensorProto.BFLOAT16)[0], rc.RTOL)

    def test_per_test_tolerance(self):
        cfg = {"tolerances": {"real/test_densenet121": {"rtol": 2e-3, "atol": 1e-7}},
               "bfloat16_rtol": 2.0 ** -6}
        self.assertEqual(rc.tolerance(cfg, "real", "test_densenet121", TensorProto.FLOAT),
                         (2e-3, 1e-7))
        self.assertEqual(rc.tolerance(cfg, "node", "test_abs", TensorProto.FLOAT),
                         (rc.RTOL, rc.ATOL))

    def test_int4_is_exact(self):
        want = numpy_helper.from_array(np.array([-8, 7, 1], dtype=ml_dtypes.int4))
        got = numpy_helper.from_array(np.array([-8, 7, 2], dtype=ml_dtypes.int4))
        ok, why = self.check(got, want)
        self.assertFalse(ok)
        self.assertIn("1/3 elements differ, max abs err 1 (exact match required)", why)
        self.assertTrue(self.check(want, want)[0])

    def test_float8_compared_as_numbers(self):
        want = numpy_helper.from_array(np.array([1.0, -448.0], dtype=ml_dtypes.float8_e4m3fn))
        got = numpy_helper.from_array(np.array([1.125, -448.0], dtype=ml_dtypes.float8_e4m3fn))
        ok, why = self.check(got, want)
        self.assertFalse(ok)
        self.assertIn("1/2 elements off, max abs err 0.125", why)
        self.assertTrue(self.check(got, want, rtol=0.2)[0])

    def test_dtype_shape_nan(self):
        f32 = numpy_helper.from_array(np.array([1.0, np.nan], dtype=np.float32))
        f64 = numpy_helper.from_array(np.array([1.0, np.nan], dtype=np.float64))
        self.assertIn("dtype double, expected float", self.check(f64, f32)[1])
        self.assertTrue(self.check(f32, f32)[0])
        other = numpy_helper.from_array(np.array([np.nan, 1.0], dtype=np.float32))
        self.assertIn("NaN pattern differs at 2/2", self.check(other, f32)[1])
        longer = numpy_helper.from_array(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        self.assertIn("shape [3], expected [2]", self.check(longer, f32)[1])


class Engines(unittest.TestCase):
    """The same three folders through odlac on the backend and through ONNX Runtime."""

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="odlac-runner-")
        a = np.array([1, 2, 3], dtype=np.float32)
        b = np.array([0.5, -1, 4], dtype=np.float32)
        write_folder(cls.root, "test_good", add_model(), [a, b], [a + b])
        write_folder(cls.root, "test_wrong", add_model(), [a, b], [a - b])
        bad = add_model("NoSuchOp")
        write_folder(cls.root, "test_unknown_op", bad, [a, b], [a + b])
        with open(os.path.join(cls.root, "suite.json"), "w") as f:
            json.dump({"onnx": onnx.__version__}, f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def run_engine(self, *args):
        xfail = os.path.join(self.root, "xfail.txt")
        with open(xfail, "w") as f:
            f.write("node/test_unknown_op: unknown op\nnode/test_wrong: wrong data\n")
        results = os.path.join(self.root, "results.json")
        r = subprocess.run([sys.executable, os.path.join(HERE, "run_conformance.py"),
                            "--suite-set", "onnx-1.23", "--data", self.root, "--suites", "node",
                            "--xfail", xfail, "--results", results, "-j", "2", *args],
                           capture_output=True, text=True, timeout=300)
        with open(results) as f:
            return r, {t["name"]: t for t in json.load(f)["tests"]}

    def check_statuses(self, tests, rejected_fragment):
        self.assertEqual(tests["test_good"]["status"], "pass")
        self.assertEqual(tests["test_wrong"]["status"], "mismatch")
        self.assertIn("3/3 elements off, max abs err 8", tests["test_wrong"]["reason"])
        self.assertEqual(tests["test_unknown_op"]["status"], "rejected")
        self.assertIn(rejected_fragment, tests["test_unknown_op"]["reason"])

    def test_odlac(self):
        r, tests = self.run_engine("--odlac", os.environ["ODLAC"], "--backend-lib",
                                   os.environ["ODLA_LIB"], "--include",
                                   os.environ["ODLA_INCLUDE"], "--odlac-flag=-O3")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)  # both failures are listed
        self.check_statuses(tests, "NoSuchOp")

    def test_ort(self):
        r, tests = self.run_engine("--engine", "ort")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.check_statuses(tests, "NoSuchOp")

    def test_other_onnx_refused(self):
        other = tempfile.mkdtemp(prefix="odlac-runner-")
        try:
            with open(os.path.join(other, "suite.json"), "w") as f:
                json.dump({"onnx": "1.22.0"}, f)
            r = subprocess.run([sys.executable, os.path.join(HERE, "run_conformance.py"),
                                "--suite-set", "onnx-1.23", "--data", other, "--engine", "ort"],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2)
            self.assertIn("the folders come from onnx 1.22.0, the suite set is onnx 1.23",
                          r.stderr)
        finally:
            shutil.rmtree(other)


class SequencesAndOptionals(unittest.TestCase):
    """The runner flattens sequence and optional test data into the tensors odlac's driver
    reads and writes, and derives odlac's flags from test_data_set_0."""

    def test_flags_and_flattening(self):
        root = tempfile.mkdtemp(prefix="odlac-runner-")
        try:
            elem = helper.make_tensor_type_proto(TensorProto.FLOAT, ["N"])
            inputs = [helper.make_value_info("xs", helper.make_sequence_type_proto(elem)),
                      helper.make_value_info("o", helper.make_optional_type_proto(elem)),
                      helper.make_tensor_value_info("t", TensorProto.FLOAT, ["M", 2]),
                      helper.make_tensor_value_info("u", TensorProto.FLOAT, [2])]
            graph = helper.make_graph([helper.make_node("Identity", ["xs"], ["ys"])], "g",
                                      inputs, [helper.make_value_info(
                                          "ys", helper.make_sequence_type_proto(elem))])
            model = helper.make_model(graph)
            d = os.path.join(root, "test_data_set_0")
            os.makedirs(d)
            xs = onnx.SequenceProto(name="xs", elem_type=onnx.SequenceProto.TENSOR)
            xs.tensor_values.extend([numpy_helper.from_array(np.zeros(k, np.float32))
                                     for k in (3, 1)])
            absent = onnx.OptionalProto(name="o")
            values = [xs, absent, numpy_helper.from_array(np.zeros((5, 2), np.float32)),
                      numpy_helper.from_array(np.zeros(2, np.float32))]
            for i, v in enumerate(values):
                with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
                    f.write(v.SerializeToString())
            kinds = rc.check_value_kinds(model)
            self.assertEqual(kinds, (["sequence", "optional", "tensor", "tensor"], ["sequence"]))
            self.assertEqual(rc.data_flags(model, root, kinds[0]),
                             ["--sequence-length=xs=2", "--input-shape=xs.0:3",
                              "--input-shape=xs.1:1", "--optional-absent=o",
                              "--input-shape=t:5x2"])
            self.assertEqual([list(t.dims) for t in rc.flatten_value(xs)], [[3], [1]])
            self.assertEqual(rc.flatten_value(absent), [])
            with self.assertRaises(rc.BadTest):  # ONNX Runtime's side takes tensors only
                rc.check_value_kinds(model, structured=False)
        finally:
            shutil.rmtree(root)


def tree_diffs(left, right):
    """The paths that differ between two folder trees (missing on a side or other bytes)."""
    diffs = []

    def walk(c, prefix=""):
        diffs.extend(prefix + n for n in c.left_only + c.right_only + c.diff_files
                     + c.funny_files)
        for name, sub in c.subdirs.items():
            walk(sub, prefix + name + "/")

    walk(filecmp.dircmp(left, right))
    return diffs


class Generator(unittest.TestCase):
    def test_same_bytes_twice(self):
        suite = os.environ["ONNX123_SUITE"]
        out = tempfile.mkdtemp(prefix="odlac-suite-")
        try:
            subprocess.run([sys.executable, os.path.join(HERE, "gen_onnx_suite.py"),
                            os.path.join(out, "s")], check=True, capture_output=True,
                           timeout=600)
            self.assertEqual(tree_diffs(suite, os.path.join(out, "s")), [])
            with open(os.path.join(suite, "suite.json")) as f:
                info = json.load(f)
            self.assertEqual(len(info["suites"]["real"]), 9)
            self.assertEqual(info["tolerances"]["real/test_densenet121"]["rtol"], 2e-3)
        finally:
            shutil.rmtree(out, ignore_errors=True)

    def test_random_suite_same_bytes_and_kept(self):
        # gen_random_suite.py: the same seed writes the same folders; a second run with the
        # same parameters keeps them; another count writes them again.
        out = tempfile.mkdtemp(prefix="odlac-random-")
        gen = os.path.join(HERE, "gen_random_suite.py")
        try:
            for d, count in (("a", 40), ("b", 40), ("b", 40), ("c", 30)):
                r = subprocess.run([sys.executable, gen, os.path.join(out, d), "--seed", "3",
                                    "--count", str(count)], check=True, capture_output=True,
                                   text=True, timeout=600)
            self.assertIn("is current", subprocess.run(
                [sys.executable, gen, os.path.join(out, "b"), "--seed", "3", "--count", "40"],
                check=True, capture_output=True, text=True, timeout=600).stdout)
            self.assertIn("30 cases", r.stdout)
            self.assertEqual(tree_diffs(os.path.join(out, "a"), os.path.join(out, "b")), [])
            with open(os.path.join(out, "a", "suite.json")) as f:
                info = json.load(f)
            self.assertEqual(len(info["suites"]["node"]), 40)
            self.assertFalse(os.path.exists(os.path.join(out, "a.tmp")))
        finally:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
