"""Tests of the odlac command line: errors are precise and leave nothing behind, output is
byte-identical between runs, weights blobs are found and checked, and an installed odlac
with its headers and libodla_reference builds a model that matches PyTorch."""
import filecmp
import re
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import odlactest  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CNN = os.path.join(ROOT, "models", "cnn")


class CliTest(unittest.TestCase):
    tc = odlactest.Toolchain()

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="odlac-cli-")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def installed(self):
        """odlac installed from ODLAC_BUILD_DIR into a prefix in the work folder (the test is
        skipped without that build)."""
        build_dir = os.environ.get("ODLAC_BUILD_DIR")
        if not build_dir:
            self.skipTest("ODLAC_BUILD_DIR not set")
        prefix = os.path.join(self.work, "prefix")
        subprocess.run(["cmake", "--install", build_dir, "--prefix", prefix], check=True,
                       capture_output=True)
        return prefix

    def odlac(self, *args):
        return subprocess.run([self.tc.odlac, *args], capture_output=True, text=True)

    def test_three_unsupported_ops_are_all_reported_and_nothing_is_written(self):
        nodes = [helper.make_node(op, ["x"], [op.lower()], name=f"my_{op.lower()}",
                                  domain="ai.onnx.ml")
                 for op in ("Imputer", "Normalizer", "Scaler")]
        nodes.append(helper.make_node("Relu", ["x"], ["ok"], name="fine"))
        graph = helper.make_graph(
            nodes, "bad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4])
             for n in ("imputer", "normalizer", "scaler", "ok")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                        helper.make_opsetid("ai.onnx.ml", 3)])
        path = os.path.join(self.work, "bad.onnx")
        onnx.save(model, path)
        out = os.path.join(self.work, "out")
        r = self.odlac(path, "-o", out)
        self.assertEqual(r.returncode, 1)
        errors = [l for l in r.stderr.splitlines() if l.startswith("odlac: error:")]
        self.assertEqual(len(errors), 3, r.stderr)
        for op in ("Imputer", "Normalizer", "Scaler"):
            self.assertTrue(any(f"node 'my_{op.lower()}' (ai.onnx.ml.{op}, opset 3)" in e
                                for e in errors), r.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual([f for f in os.listdir(self.work) if f.startswith(".odlac")], [])

    def test_usage_errors(self):
        cases = [
            (["--no-such-flag", "m.onnx"], "unknown option '--no-such-flag'"),
            ([os.path.join(CNN, "model.onnx")], "no output folder given"),
            (["-o", self.work], "no model given"),
            (["--weights=yaml", "m.onnx", "-o", self.work], "--weights must be c, bin or obj"),
            (["--name", "1abc", "m.onnx", "-o", self.work], "is not a C identifier"),
            ([os.path.join(self.work, "missing.onnx"), "-o", self.work], "cannot open"),
            ([os.path.join(CNN, "model.onnx"), "-o", self.work, "--input-shape", "input"],
             "expected name:d0xd1x..."),
            ([os.path.join(CNN, "model.onnx"), "-o", self.work, "--input-shape", "nope:1x2"],
             "--input-shape names 'nope'"),
            (["--backend", "nope", "m.onnx", "-o", self.work], "unknown backend 'nope'"),
            (["--odla-profile=lite", "m.onnx", "-o", self.work], "must be full or core"),
            (["--custom-op-domain=ai.onnx", "m.onnx", "-o", self.work],
             "the default ONNX domain's ops are odlac's own"),
            (["--backend-manifest", os.path.join(self.work, "none.txt"), "m.onnx", "-o",
              self.work], "cannot read"),
            (["--dump-graph", "g.png", "m.onnx"], "name the file .dot or .svg"),
            (["--dump-memory-plan", "m.dot", "m.onnx"], "name the file .svg"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = self.odlac(*args)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(message, r.stderr)

    def test_pictures_of_the_graph_and_the_memory_plan(self):
        """--dump-graph draws every node with its op and name (a hostile name escaped: the DOT
        and the SVG that Graphviz draws from it parse), each value's type and arena offset;
        --dump-memory-plan draws a box per buffer of the plan --print-memory-plan prints."""
        nodes = [helper.make_node("Relu", ["x"], ["r"], name='evil"\\N\n<b>&amp;'),
                 helper.make_node("Sigmoid", ["r"], ["y"], name="plain")]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, [2, 8])], [helper.make_tensor_value_info(
                "y", TensorProto.FLOAT, [2, 8])])
        model = os.path.join(self.work, "m.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), model)
        dot, svg, plan = (os.path.join(self.work, f) for f in ("g.dot", "g.svg", "plan.svg"))
        for picture in (dot, svg):
            r = self.odlac(model, "-O0", "--dump-graph", picture, "--dump-memory-plan", plan)
            self.assertEqual(r.returncode, 0, r.stderr)
        with open(dot) as f:
            text = f.read()
        self.assertEqual(text.count('[label="Relu\\n'), 1, text)
        self.assertIn('evil\\"\\\\N\\\\x0a<b>&amp;', text)  # quote, backslash, \\x0a escaped
        self.assertEqual(text.count(" -> "), 3, text)  # x -> Relu -> Sigmoid -> y
        self.assertIn("f32[2,8]\\n@0 (64 B)", text)  # the intermediate value's arena place
        r = subprocess.run(["dot", "-Tsvg", dot], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        titles = [t.text for t in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}title")]
        self.assertIn("n0", titles)
        self.assertIn("n1", titles)
        printed = self.odlac(model, "-O0", "--print-memory-plan").stdout.splitlines()
        buffers = int(printed[0].split(" buffers")[0].split()[-1])
        boxes = list(ET.parse(plan).getroot().iter("{http://www.w3.org/2000/svg}rect"))
        self.assertEqual(len(boxes), 1 + buffers)  # the frame, then a box per buffer
        r = self.odlac(model, "--dump-graph", os.path.join(self.work, "no", "such", "g.dot"))
        self.assertEqual(r.returncode, 1)
        os.remove(svg)
        r = subprocess.run([self.tc.odlac, model, "--dump-graph", svg], capture_output=True,
                           text=True, env=dict(os.environ, PATH=self.work))  # no Graphviz
        self.assertEqual(r.returncode, 1)
        self.assertIn("Graphviz's dot is not installed (Debian: graphviz)", r.stderr)
        self.assertFalse(os.path.exists(svg))

    def test_progress_and_quiet(self):
        """--progress prints each phase with the time so far and the quarters of writing a
        file of 100 MiB or more; --quiet leaves stderr empty where a note would be."""
        out = os.path.join(self.work, "out")
        r = self.odlac(os.path.join(CNN, "model.onnx"), "--progress", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        phases = [l.split("] ", 1)[1] for l in r.stderr.splitlines()]
        self.assertEqual(phases, ["importing " + os.path.join(CNN, "model.onnx"),
                                  "optimizing (-O2)", "planning the activation arena",
                                  "generating C", "writing " + out])
        import numpy as np
        from onnx import numpy_helper
        w = numpy_helper.from_array(np.ones((5200, 5100), np.float32), "w")  # 101 MiB
        graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "big",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5200])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5100])],
                                  [w])
        big = os.path.join(self.work, "big.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), big)
        r = self.odlac(big, "--progress", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        quarters = [l.split("] ", 1)[1] for l in r.stderr.splitlines() if "net.weights.bin" in l]
        self.assertEqual(quarters, [f"writing net.weights.bin: {p}% of 101 MiB"
                                    for p in (25, 50, 75, 100)])
        args = [os.path.join(CNN, "model.onnx"), "--quantize=int8", f"--calibration={CNN}", "-o",
                out]
        self.assertIn("odlac: note: int8 against float32", self.odlac(*args).stderr)
        r = self.odlac(*args, "--quiet", "--progress")
        self.assertEqual((r.returncode, r.stderr), (0, ""))

    def test_no_heap_int8_structures(self):
        """--quantize=int8 --no-heap: the zero points that quantize-static writes per product
        merge (eliminate-common-subexpressions-after-quantize), and the code keeps the values'
        ids by pointer (ODLA_EXT_ITEM_STATIC_IDS): both less memory than without."""
        def build(*extra):
            out = os.path.join(self.work, "q%d" % len(extra))
            r = self.odlac(os.path.join(CNN, "model.onnx"), "--quantize=int8",
                           f"--calibration={CNN}", "--no-heap", "--report", *extra, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "net.c")) as f:
                code = f.read()
            memory = int(re.search(r"--no-heap memory per instance (\d+) bytes", r.stdout)[1])
            return code.count("odla_CreateConstant("), memory, code
        merged, memory, code = build()
        apart, more, _ = build("--disable-pass=eliminate-common-subexpressions-after-quantize")
        self.assertLess(merged, apart)
        self.assertLess(memory, more)
        self.assertIn("odla_SetComputationItem(inst->comp, ODLA_EXT_ITEM_STATIC_IDS", code)

    def test_list_ops(self):
        """--list-ops: docs/ops.md holds its table as it is; every ONNX op is listed; a backend
        with a list of ops gets its manifest's builders and limits, or their absence."""
        r = self.odlac("--list-ops")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(ROOT, "docs", "ops.md")) as f:
            doc = [l for l in f.read().splitlines() if l.startswith("|")]
        self.assertEqual(doc, r.stdout.splitlines(), "docs/ops.md is not odlac --list-ops's")
        listed = {l.split(" | ")[0][2:] for l in doc[2:]}
        for op in ("Conv", "LSTM", "Constant", "ai.onnx.ml.TreeEnsemble", "Bernoulli"):
            self.assertIn(op, listed)
        self.assertIn("| Bernoulli | 15+ | refused: it draws random numbers", r.stdout)
        r = self.odlac("--list-ops", "--backend", "halo-xnnpack")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| Relu | 6+ | imported as `Relu` | `odla_Relu`; input.rank=4 |", r.stdout)
        self.assertIn("| Tanh | 6+ | imported as `Tanh` | no `odla_Tanh`", r.stdout)
        self.assertIn("`odla_Gemm`; A.rank=2", r.stdout)

    def test_a_backend_lacking_an_op_is_reported_before_anything_is_written(self):
        # A manifest of a backend with Conv and Relu only, on float32, and no extensions.
        manifest = os.path.join(self.work, "tiny.txt")
        with open(manifest, "w") as f:
            f.write("backend tiny\nlibrary odla_tiny\nlayout channels_first\n"
                    "ops Conv:float32 Relu:float32 MaxPool Reshape\n")
        out = os.path.join(self.work, "out")
        r = self.odlac(os.path.join(CNN, "model.onnx"), "--backend-manifest", manifest,
                       "-o", out)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("backend 'tiny' lacks odla_Gemm, needed by", r.stderr)
        self.assertFalse(os.path.exists(out))
        with open(manifest, "a") as f:
            f.write("bogus line\n")
        r = self.odlac(os.path.join(CNN, "model.onnx"), "--backend-manifest", manifest,
                       "-o", out)
        self.assertEqual(r.returncode, 1)
        self.assertIn("tiny.txt:5: unknown key 'bogus'", r.stderr)

    def test_help_lists_every_flag_and_version_prints(self):
        r = self.odlac("--help")
        self.assertEqual(r.returncode, 0)
        for flag in ("-o DIR", "--name", "--input-shape", "--weights", "--emit-main",
                     "--print-ir", "--version"):
            self.assertIn(flag, r.stdout)
        r = self.odlac("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"^odlac \d+\.\d+\.\d+")
        # docs/cli.md's option table is --help-markdown's output: every flag --help lists.
        r = self.odlac("--help-markdown")
        self.assertEqual(r.returncode, 0)
        with open(os.path.join(ROOT, "docs", "cli.md")) as f:
            text = f.read()
        start = text.index("| option | meaning |")
        self.assertEqual(text[start:text.index("\n\n", start) + 1], r.stdout,
                         "docs/cli.md's table is not odlac --help-markdown's")
        flags = [l.split()[0] for l in self.odlac("--help").stdout.splitlines()
                 if l.startswith("  -")]
        rows = [l.split("`")[1].split()[0] for l in r.stdout.splitlines()[2:]]
        self.assertEqual(rows, flags)

    def test_output_is_byte_identical_between_runs(self):
        for mode in ("c", "bin"):
            dirs = []
            for i in range(2):
                d = os.path.join(self.work, f"{mode}{i}")
                r = self.odlac(os.path.join(CNN, "model.onnx"), f"--weights={mode}", "--emit-main",
                               "-o", d)
                self.assertEqual(r.returncode, 0, r.stderr)
                dirs.append(d)
            self.assertEqual(sorted(os.listdir(dirs[0])), sorted(os.listdir(dirs[1])))
            _, mismatch, errors = filecmp.cmpfiles(dirs[0], dirs[1], os.listdir(dirs[0]),
                                                   shallow=False)
            self.assertEqual((mismatch, errors), ([], []))

    def test_missing_parent_folders_are_created_and_removed_on_failure(self):
        out = os.path.join(self.work, "gen", "deep", "x")
        r = self.odlac(os.path.join(CNN, "model.onnx"), "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.isfile(os.path.join(out, "net.c")))
        # a compile that fails once the folders exist (a depfile cannot name a newline)
        bad = os.path.join(self.work, "other", "dir\nwith a newline", "x")
        r = self.odlac(os.path.join(CNN, "model.onnx"), "-MD", "-o", bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot name", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.work, "other")), r.stderr)

    def test_a_compile_removes_what_the_previous_one_wrote_and_nothing_else(self):
        out = os.path.join(self.work, "out")
        os.makedirs(out)
        mine = os.path.join(out, "notes.txt")
        with open(mine, "w") as f:
            f.write("the user's\n")
        model = os.path.join(CNN, "model.onnx")
        first = ["main.c", "net.c", "net.d", "net.h", "net.json", "net.weights.bin"]
        r = self.odlac(model, "--emit-main", "--weights=bin", "-MD", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(out)),
                         sorted(first + [".odlac-outputs-net", "notes.txt"]))
        with open(os.path.join(out, ".odlac-outputs-net")) as f:
            self.assertEqual(sorted(f.read().split()), first)
        # another model beside it stays; so does the main.c it rewrites
        r = self.odlac(model, "--weights=c", "--name", "cnn", "--emit-main", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.odlac(model, "--weights=c", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(out)),
                         [".odlac-outputs-cnn", ".odlac-outputs-net", "cnn.c", "cnn.h", "cnn.json",
                          "cnn_weights.c", "main.c", "net.c", "net.h", "net.json",
                          "net_weights.c", "notes.txt"])
        # a list naming paths outside the folder, or odlac's own files, removes none of them
        outside = os.path.join(self.work, "keep.c")
        with open(outside, "w") as f:
            f.write("int x;\n")
        with open(os.path.join(out, ".odlac-outputs-net"), "w") as f:
            f.write(f"../keep.c\n{outside}\n.odlac-outputs-cnn\n..\nnet.h\n")
        r = self.odlac(model, "--weights=c", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(outside))
        self.assertTrue(os.path.exists(os.path.join(out, ".odlac-outputs-cnn")))
        self.assertTrue(os.path.exists(os.path.join(out, "net.h")))
        self.assertTrue(os.path.exists(mine))

    def test_weights_blob_of_another_model_is_refused(self):
        out = os.path.join(self.work, "out")
        self.assertEqual(self.odlac(os.path.join(CNN, "model.onnx"), "--weights=bin",
                                    "--emit-main", "-o", out).returncode, 0)
        exe = os.path.join(out, "run")
        self.tc.build(out, exe)
        blob = os.path.join(out, "net.weights.bin")
        with open(blob, "rb") as f:
            data = bytearray(f.read())
        data[20] ^= 0xFF  # corrupt the fingerprint
        with open(blob, "wb") as f:
            f.write(data)
        r = subprocess.run([exe, os.path.join(CNN, "test_data_set_0", "input_0.pb")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("net_create failed with odla_status 3", r.stderr)
        data[20] ^= 0xFF
        with open(blob, "wb") as f:
            f.write(data[:100])  # the right header, truncated
        r = subprocess.run([exe, os.path.join(CNN, "test_data_set_0", "input_0.pb")],
                           capture_output=True, text=True)
        self.assertIn("odla_status 3", r.stderr)

    def test_run_compiles_builds_and_runs_from_a_cache(self):
        """odlac run (installed): the outputs PyTorch's test data expects, printed; the driver
        built once per model and options; its own arguments after the model."""
        prefix = self.installed()
        odlac = os.path.join(prefix, "bin", "odlac")
        env = dict(os.environ, ODLAC_CACHE_DIR=os.path.join(self.work, "cache"))
        ds = odlactest.data_sets(CNN)[0]
        model, x = os.path.join(CNN, "model.onnx"), os.path.join(ds, "input_0.pb")

        def run(*args):
            return subprocess.run([odlac, "run", *args], capture_output=True, text=True, env=env)

        r = run(model, x)
        self.assertEqual(r.returncode, 0, r.stderr)
        head, values = r.stdout.split(": ", 2)[1:]
        self.assertEqual(head, "ONNX type 1, shape [1,10]")
        got = [float(v) for v in values.split()]
        want = odlactest.load(os.path.join(ds, "output_0.pb")).ravel().tolist()
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertAlmostEqual(g, w, delta=1e-4 + 1e-4 * abs(w))
        folders = os.listdir(env["ODLAC_CACHE_DIR"])
        exe = os.path.join(env["ODLAC_CACHE_DIR"], folders[0], "run")
        built = os.stat(exe).st_mtime_ns
        r = run(model, x, "--repeat", "3", "-o", os.path.join(self.work, "res"), "--npy")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("latency_ms median=", r.stdout)
        self.assertTrue(os.path.exists(os.path.join(self.work, "res", "output_0.npy")))
        self.assertEqual(os.stat(exe).st_mtime_ns, built)  # the cached driver, not rebuilt
        self.assertEqual(run("-O1", model, x).returncode, 0)
        self.assertEqual(len(os.listdir(env["ODLAC_CACHE_DIR"])), 2)  # other options, other folder
        for args, message, status in (
                (["-o", "out", model, x], "'-o' is not an option of run", 1),
                ([], "odlac run: no model given", 1),
                ([os.path.join(self.work, "none.onnx")], "none.onnx: cannot open", 1),
                ([model], "the model takes 1 input file, 0 given", 2)):
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, status, r.stderr)
                self.assertIn(message, r.stderr)

    def test_verify_and_bisect(self):
        """odlac verify (installed): the CNN agrees with the reference backend on generated
        inputs and with ONNX Runtime on its test data; against a backend with one planted wrong
        kernel (Sigmoid computed as Tanh, in a copy of libodla_reference), the output differs
        and --bisect names the Sigmoid node."""
        prefix = self.installed()
        odlac = os.path.join(prefix, "bin", "odlac")
        env = dict(os.environ, ODLAC_CACHE_DIR=os.path.join(self.work, "cache"))

        def verify(*args):
            return subprocess.run([odlac, "verify", *args], capture_output=True, text=True,
                                  env=env)

        model = os.path.join(CNN, "model.onnx")
        r = verify("-O3", model)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("all 1 outputs agree", r.stdout)
        self.assertRegex(r.stdout, r"\| output \| f32\[1,10\] \| [0-9.e+-]+ \| [0-9.e+-]+ \| \d+ \| ok \|")
        python = os.environ.get("ODLAC_PYTHON", "")
        if os.path.exists(python):  # the venv's onnxruntime
            r = verify(model, "--against", "onnxruntime", "--inputs", CNN)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("against ONNX Runtime", r.stdout)
        # The planted bug: odla_Sigmoid weakened in a copy of the backend, a wrong one beside it.
        lib = os.path.join(prefix, "lib")
        broken = os.path.join(self.work, "broken.c")
        with open(broken, "w") as f:
            f.write("#include <ODLA/odla.h>\n"
                    "odla_value odla_Sigmoid(odla_value x, const odla_value_id id) {\n"
                    "  return odla_Tanh(x, id);\n}\n")
        weak = os.path.join(self.work, "libweak.a")
        subprocess.run(["objcopy", "--weaken-symbol=odla_Sigmoid",
                        os.path.join(lib, "libodla_reference.a"), weak], check=True)
        subprocess.run([self.tc.cc, "-shared", "-fPIC", "-I", os.path.join(prefix, "include"),
                        broken, "-Wl,--whole-archive", weak, "-Wl,--no-whole-archive", "-lm",
                        "-lpthread", "-o", os.path.join(lib, "libodla_broken.so")], check=True)
        manifest = os.path.join(self.work, "broken.txt")
        with open(os.path.join(ROOT, "runtime_stubs", "reference", "manifest.txt")) as f:
            text = f.read().replace("\nbackend reference\n", "\nbackend broken\n")
        with open(manifest, "w") as f:
            f.write(text.replace("\nlibrary odla_reference\n", "\nlibrary odla_broken\n"))
        nodes = [helper.make_node("Abs", ["x"], ["a"], name="abs"),
                 helper.make_node("Sigmoid", ["a"], ["s"], name="the_sigmoid"),
                 helper.make_node("Neg", ["s"], ["y"], name="neg")]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, [2, 8])], [helper.make_tensor_value_info(
                "y", TensorProto.FLOAT, [2, 8])])
        small = os.path.join(self.work, "sig.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), small)
        r = verify("--backend-manifest", manifest, small, "--bisect")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("| y | f32[2,8] |", r.stdout)
        self.assertIn("1 of 1 outputs differ", r.stdout)
        self.assertIn("bisect: the first value that differs from the reference backend's is 's'",
                      r.stdout)
        self.assertIn("bisect: computed by node 'the_sigmoid' (Sigmoid)", r.stdout)
        self.assertEqual(verify(small, "--bisect").returncode, 0)  # the reference itself agrees
        for args, message in ((["--against", "tf"], "--against must be reference or onnxruntime"),
                              (["--bogus"], "unknown argument '--bogus'"),
                              (["--atol", "x"], "'x' is not a number for --atol"),
                              (["--bisect", "--against", "onnxruntime"], "drop --against")):
            with self.subTest(args=args):
                r = verify(small, *args)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(message, r.stderr)

    def test_installed_package_builds_the_cnn_with_the_readmes_lines(self):
        """The three lines of the README's "Using odlac", as written (P the install prefix),
        for each --weights choice: no LD_LIBRARY_PATH, the weights found where they are."""
        prefix = self.installed()
        for f in ("bin/odlac", "include/ODLA/odla.h", "include/ODLA/odla_ext.h",
                  "include/ODLA/ops/odla_ops_nn.h", "lib/libodla_reference.a",
                  "lib/libodla_reference.so"):
            self.assertTrue(os.path.exists(os.path.join(prefix, f)), f)
        with open(os.path.join(ROOT, "README.md")) as f:
            block = f.read().split("## Using odlac", 1)[1].split("```sh\n", 1)[1].split("```")[0]
        compile_line, build_line, run_line = [l.split("#")[0].strip() for l in block.splitlines()]
        self.assertTrue(build_line.startswith("cc "), build_line)
        ds = odlactest.data_sets(CNN)[0]
        for weights in ("c", "bin", "obj"):
            with self.subTest(weights=weights):
                work = os.path.join(self.work, weights)
                os.makedirs(work)
                shutil.copy(os.path.join(ds, "input_0.pb"), work)
                shutil.copy(os.path.join(CNN, "model.onnx"), work)
                for line in (compile_line.replace("odlac", os.path.join(prefix, "bin", "odlac"), 1)
                             + f" --weights={weights}",
                             # (cc: the build's compiler, the sanitize build's wrapper there)
                             self.tc.cc + build_line.replace("P/", prefix + "/")[len("cc"):],
                             run_line):
                    r = subprocess.run(["sh", "-c", line], cwd=work, capture_output=True,
                                       text=True)
                    self.assertEqual(r.returncode, 0, f"{line}\n{r.stderr}")
                got = [odlactest.load(os.path.join(work, "results", "output_0.pb"))]
                want = [odlactest.load(os.path.join(ds, "output_0.pb"))]
                self.assertIsNone(odlactest.max_error(got, want, 1e-4, 1e-6))


if __name__ == "__main__":
    unittest.main(verbosity=2)
