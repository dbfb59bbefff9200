#!/usr/bin/python3
"""Hostile models against what odlac once left to Debian's libonnx 1.12 (its checker, shape
inference and version converter): models that crashed or hung odlac inside libonnx, models the
checker stopped at its first complaint, models newer than libonnx, versions newer than any
ONNX release, and graph inputs that are also initializers. odlac validates every model itself
and runs libonnx only as advice, in a child process with a time limit."""
import os
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import hostile

F = TensorProto.FLOAT


def info(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=13, ir=8):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def weights(name, shape):
    return numpy_helper.from_array(np.ones(shape, np.float32), name)


def conv(stride_axis1, opset=13, ir=8):
    """Conv with strides [1, s]: s = 0 made libonnx's convPoolShapeInference divide by zero."""
    inits = [weights("w", (2, 1, 3, 3))]
    inputs = [info("x", [1, 1, 8, 8])] + ([info("w", [2, 1, 3, 3])] if ir < 4 else [])
    return model([helper.make_node("Conv", ["x", "w"], ["y"], name="c",
                                   strides=[1, stride_axis1])],
                 inputs, [info("y", ["n", "c", "h", "w"])], inits, opset=opset, ir=ir)


def pool(op):
    return model([helper.make_node(op, ["x"], ["y"], name="p", kernel_shape=[2, 2],
                                   strides=[0, 1])],
                 [info("x", [1, 1, 8, 8])], [info("y", ["n", "c", "h", "w"])])


class LibOnnx(hostile.HostileCase):
    def compile_and_run(self, m, inputs, flags=()):
        """Compiles m with the test driver, runs it on `inputs` (name -> array) in graph input
        order; returns (stderr of odlac, outputs)."""
        out = self.path("out")
        r = self.odlac(self.save(m), "-o", out, "--emit-main", "--name", "net", *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = os.path.join(out, "net")
        self.tc.build(out, exe)
        p, outs = self.run_driver(exe, inputs, len(m.graph.output))
        self.assertEqual(p.returncode, 0, p.stderr)
        return r.stderr, outs

    # ---- crashes inside libonnx: odlac's own validation names the attribute ----

    def test_zero_stride_conv(self):
        self.refused(conv(0), "node 'c' (Conv, opset 13): attribute strides[1] is 0; "
                              "strides must be positive")

    def test_zero_stride_pools(self):
        for op in ("MaxPool", "AveragePool"):
            with self.subTest(op=op):
                self.refused(pool(op), f"node 'p' ({op}, opset 13): attribute strides[0] "
                                       "is 0; strides must be positive")

    def test_conv_transpose_rank1_weight(self):
        m = model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ct")],
                  [info("x", [1, 1, 8, 8])], [info("y", ["n", "c", "h", "w"])],
                  [weights("w", (4,))])
        self.refused(m, "node 'ct' (ConvTranspose, opset 13): ", "weights f32[4] must have the "
                                                                 "same rank")

    def test_old_opset_output_without_producer(self):
        """libonnx's version converter dereferenced the missing producer (opset < 7)."""
        m = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [info("x", [1, 4])],
                  [info("y", [1, 4]), info("z", [1, 4])], opset=6, ir=3)
        self.refused(m, "odlac: error: graph output 'z' is not produced by any node")

    def test_old_opset_zero_stride(self):
        """The converter's shape inference dies by SIGFPE: odlac imports the model at its own
        opset and names the attribute, and says why the converter did not help."""
        r = self.refused(conv(0, opset=6, ir=3),
                         "node 'c' (Conv, opset 6): attribute strides[1] is 0")
        self.assertIn("odlac: warning: libonnx 1.12.0's version converter did not upgrade the "
                      "model from opset 6 to 7 (died with signal 8", r.stderr)

    def test_transformer_encoder_with_empty_batch(self):
        """A PyTorch TransformerEncoder export pinned to batch 0 crashed libonnx's shape
        inference (SIGSEGV); now odlac reports, and the same model at batch 2 matches torch."""
        import torch
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                                 batch_first=True)
        enc = torch.nn.TransformerEncoder(layer, num_layers=2).eval()
        path = self.path("te.onnx")
        x = torch.randn(2, 12, 64)
        torch.onnx.export(enc, x, path, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
        out = self.path("out0")
        r = self.odlac(path, "-o", out, "--input-shape", "x:0x12x64")
        self.assertGreaterEqual(r.returncode, 0, f"killed by signal {-r.returncode}:\n{r.stderr}")
        if r.returncode:
            self.assertRefused(r, "odlac: error: ")
            self.assertNothingLeft(out)
        m = onnx.load(path)
        _, (got,) = self.compile_and_run(m, {"x": x.numpy()}, ("--input-shape", "x:2x12x64"))
        with torch.no_grad():
            want = enc(x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

    # ---- the checker is advice: every problem is listed, newer opsets compile ----

    def unknown_ops(self, opset):
        """Three ops libonnx 1.12 does not know (ONNX 1.23 has them from opset 20); at opset 20
        odlac refuses StringSplit for its undeclared width and compiles RegexFullMatch."""
        nodes = [helper.make_node("ImageDecoder", ["img"], ["pixels"], name="decode"),
                 helper.make_node("StringSplit", ["s"], ["parts", "counts"], name="split"),
                 helper.make_node("RegexFullMatch", ["s"], ["match"], name="match",
                                  pattern="a+"),
                 helper.make_node("Relu", ["x"], ["y"], name="relu")]
        inputs = [info("img", [16], TensorProto.UINT8), info("s", [2], TensorProto.STRING),
                  info("x", [4])]
        outputs = [info("pixels", ["h", "w", "c"], TensorProto.UINT8),
                   info("parts", [2, "k"], TensorProto.STRING),
                   info("counts", [2], TensorProto.INT64), info("match", [2], TensorProto.BOOL),
                   info("y", [4])]
        return model(nodes, inputs, outputs, opset=opset)

    def test_every_unknown_op_is_named(self):
        for opset in (17, 20):
            with self.subTest(opset=opset):
                r = self.refused(self.unknown_ops(opset),
                                 f"node 'decode' (ImageDecoder, opset {opset}): unsupported",
                                 f"node 'split' (StringSplit, opset {opset}): " +
                                 ("unsupported" if opset < 20 else "the most substrings one "
                                  "element splits into is known only at run time"))
                # libonnx knows opset 17, and its checker's complaint comes with odlac's errors.
                complaint = "odlac: warning: libonnx 1.12.0's ONNX checker rejects the model"
                self.assertEqual(r.stderr.count(complaint), 1 if opset == 17 else 0, r.stderr)

    def test_newer_opset_compiles_and_runs(self):
        """Opset 18 (ReduceMean's axes an input, Split's num_outputs): libonnx 1.12 cannot check
        it, odlac compiles it, and the numbers match numpy."""
        nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["m"], keepdims=1),
                 helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
                 helper.make_node("Sub", ["a", "m"], ["d"]),
                 helper.make_node("Mul", ["d", "b"], ["e"]),
                 helper.make_node("Add", ["e", "c"], ["y"])]
        m = model(nodes, [info("x", [2, 6, 4])], [info("y", [2, 2, 4])],
                  [numpy_helper.from_array(np.array([1], np.int64), "axes")], opset=18)
        x = np.random.default_rng(3).standard_normal((2, 6, 4)).astype(np.float32)
        stderr, (got,) = self.compile_and_run(m, {"x": x})
        self.assertNotIn("odlac: warning", stderr)
        a, b, c = np.split(x, 3, axis=1)
        want = (a - x.mean(axis=1, keepdims=True)) * b + c
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    def test_checker_complaint_is_a_warning(self):
        """A graph output without a shape: libonnx's checker requires one, odlac does not."""
        m = model([helper.make_node("Relu", ["x"], ["y"])], [info("x", [3])], [info("y", None)])
        x = np.array([-1, 0, 2], np.float32)
        stderr, (got,) = self.compile_and_run(m, {"x": x})
        self.assertIn("odlac: warning: libonnx 1.12.0's ONNX checker rejects the model: Field "
                      "'shape' of 'type' is required but missing", stderr)
        np.testing.assert_array_equal(got, np.maximum(x, 0))

    def test_structure_is_checked_by_odlac(self):
        """What the checker used to catch, now odlac's own errors, all of them in one run."""
        relu = lambda i, o, n: helper.make_node("Relu", [i], [o], name=n)  # noqa: E731
        cases = {
            "ssa": (model([relu("x", "t", "a"), relu("x", "t", "b")], [info("x", [2])],
                          [info("t", [2])]),
                    "node 'b' (Relu, opset 13): output 't' is already defined"),
            "order": (model([relu("t", "y", "late"), relu("x", "t", "early")],
                            [info("x", [2])], [info("y", [2])]),
                      "node 'late' (Relu, opset 13): input 't' is produced by node 'early' "
                      "(Relu, opset 13); nodes must be in topological order"),
            "undefined": (model([relu("nowhere", "y", "r")], [info("x", [2])], [info("y", [2])]),
                          "node 'r' (Relu, opset 13): input 'nowhere' is not produced by any "
                          "earlier node, initializer or graph input"),
            "input twice": (model([relu("x", "y", "r")], [info("x", [2]), info("x", [2])],
                                  [info("y", [2])]),
                            "graph input 'x' is listed more than once"),
        }
        for name, (m, message) in cases.items():
            with self.subTest(name):
                self.refused(m, "odlac: error: " + message)

    def test_nodes_are_checked_against_onnx_schemas(self):
        nodes = [helper.make_node("Conv", ["x"], ["a"], name="one_input"),
                 helper.make_node("Cast", ["x"], ["b"], name="no_to"),
                 helper.make_node("Relu", ["x"], ["c"], name="typed", alpha=1.0),
                 helper.make_node("Conv", ["x", "w"], ["d"], name="float_strides",
                                  strides=[1.0, 1.0]),
                 helper.make_node("Add", ["x", ""], ["e"], name="empty"),
                 helper.make_node("Concat", [""], ["g"], name="empty_variadic", axis=0)]
        bad_type = helper.make_attribute("axis", 1)
        bad_type.type = onnx.AttributeProto.FLOAT
        nodes.append(helper.make_node("Concat", ["x", "x"], ["f"], name="lying"))
        nodes[-1].attribute.append(bad_type)
        m = model(nodes, [info("x", [1, 1, 4, 4])],
                  [info(o, None) for o in "abcdefg"], [weights("w", (1, 1, 1, 1))])
        self.refused(m,
                     "node 'one_input' (Conv, opset 13): has 1 input; Conv-11 takes 2 to 3",
                     "node 'no_to' (Cast, opset 13): required attribute 'to' (INT) of Cast-13 "
                     "is missing",
                     "node 'typed' (Relu, opset 13): attribute 'alpha' is not an attribute of "
                     "Relu-13 (it has none)",
                     "node 'float_strides' (Conv, opset 13): attribute 'strides' is FLOATS; "
                     "Conv-11 takes INTS",
                     "node 'empty' (Add, opset 13): input 1 is required by Add-13 but its name "
                     "is empty",
                     "node 'empty_variadic' (Concat, opset 13): input 0 is required by Concat-13 "
                     "(one of its variadic operands) but its name is empty",
                     "node 'lying' (Concat, opset 13): attribute 'axis' declares type FLOAT but "
                     "holds a value of type INT")

    # ---- versions ----

    def test_opset_and_ir_version_newer_than_onnx(self):
        m = model([helper.make_node("Relu", ["x"], ["y"])], [info("x", [2])], [info("y", [2])],
                  opset=99, ir=99)
        self.refused(m, "odlac: error: the model imports opset 99 of the default ONNX domain, "
                        "newer than 28, the newest odlac knows (ONNX 1.23.0)",
                     "odlac: error: the model's IR version 99 is newer than 14, the newest odlac "
                     "knows (ONNX 1.23.0)")
        m.opset_import[0].version = 28
        m.ir_version = 14
        m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 6))
        self.refused(m, "the model imports opset 6 of domain 'ai.onnx.ml', newer than 5")

    # ---- graph inputs with an initializer of the same name ----

    def defaulted(self, declared, elem=F, ir=8):
        m = model([helper.make_node("Add", ["x", "w"], ["y"])],
                  [info("x", [2, 3]), info("w", declared, elem)], [info("y", [2, 3])],
                  [numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")],
                  ir=ir)
        return m

    def test_input_initializer_mismatch(self):
        self.refused(self.defaulted([3, 2]), "odlac: error: graph input 'w' is declared "
                                             "f32[3,2], but the initializer of the same name is "
                                             "f32[2,3]")
        self.refused(self.defaulted([2, 3], TensorProto.INT64),
                     "graph input 'w' is declared i64[2,3], but the initializer of the same name "
                     "is f32[2,3]")

    def test_input_with_initializer_is_a_constant(self):
        x = np.ones((2, 3), np.float32)
        want = x + np.arange(6, dtype=np.float32).reshape(2, 3)
        stderr, (got,) = self.compile_and_run(self.defaulted([2, "n"]), {"x": x})
        self.assertIn("odlac: warning: graph input 'w' has an initializer of the same name, in "
                      "ONNX a default value that the caller may override; odlac compiles it as "
                      "a constant, not an input of the generated code", stderr)
        np.testing.assert_array_equal(got, want)
        with open(self.path("out", "net.h")) as f:
            header = f.read()
        self.assertIn("#define NET_NUM_INPUTS 1", header)
        self.assertNotIn('"w"', header)
        r = self.odlac(self.save(self.defaulted([2, 3])), "-o", self.path("o2"),
                       "--input-shape", "w:2x3")
        self.assertRefused(r, "--input-shape names 'w', which has an initializer of the same "
                              "name: odlac compiles it as a constant, not an input")
        # IR version 3 lists every initializer as an input: a note, not a warning.
        stderr, (got,) = self.compile_and_run(self.defaulted([2, 3], ir=3), {"x": x})
        self.assertIn("odlac: note: the model (IR version 3) lists its initializer among its "
                      "graph inputs, as IR versions before 4 must; odlac compiles it as a "
                      "constant", stderr)
        np.testing.assert_array_equal(got, want)

    # ---- a model that hangs libonnx ----

    def test_version_converter_time_limit(self):
        """libonnx's version converter is quadratic in the node count (20000 nodes: about 30 s
        here); odlac stops it at --libonnx-timeout. Running out of time depends on the load,
        so it is an error (outputs must not depend on it); --libonnx-timeout 0 imports the
        model at its own opset with odlac's rules."""
        n = 20000
        nodes = [helper.make_node("Relu", ["x" if i == 0 else f"t{i - 1}"], [f"t{i}"])
                 for i in range(n)]
        m = model(nodes, [info("x", [4])], [info(f"t{n - 1}", [4])], opset=6, ir=3)
        start = time.monotonic()
        self.refused(m, "odlac: error: libonnx 1.12.0's version converter did not upgrade the "
                        "model from opset 6 to 7 within --libonnx-timeout 2 s; give it more "
                        "time, or 0 to import the model at opset 6 with odlac's own rules",
                     flags=("--libonnx-timeout", "2"))
        self.assertLess(time.monotonic() - start, 20)
        r = self.odlac(self.path("m.onnx"), "-o", self.path("o0"), "--libonnx-timeout", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("odlac: warning: libonnx 1.12.0's version converter did not upgrade the "
                      "model from opset 6 to 7 (--libonnx-timeout is 0); odlac imports it at "
                      "opset 6 with its own rules", r.stderr)
        self.assertTrue(os.path.exists(self.path("o0", "net.c")))


if __name__ == "__main__":
    hostile.main()
