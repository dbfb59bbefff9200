"""Zero-size dims end to end (issue 15 item 6): models built with onnx.helper whose tensors
have a dim of 0 where the ONNX spec allows it compile, build and run at -O0, -O2 and -O3,
and their outputs match numpy (or, for reductions over an empty set, the identity value the
spec names). What the spec leaves without a result is refused at compile time with the dim
and the reason. A TransformerEncoder-like block built here runs at batch 0 and 2 against
numpy; PyTorch's own TransformerEncoder export is refused cleanly at batch 0 (ONNX Runtime
refuses it too: its Reshape targets copy the batch dim with ONNX's 0), and matches PyTorch at
batch 2.

Environment: ODLAC, ODLA_LIB, ODLA_INCLUDE (as for the other e2e tests)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from math import erf

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import odlactest  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
# -O3 adds layout changes, which the reference backend's channels-first manifest does not ask
# for: the op cases run at -O0 and -O2, the transformer block at all three.
LEVELS = ("-O0", "-O2")
F = np.float32


def elem(a):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]


def model(nodes, inputs, consts, outputs, opset=13):
    """`inputs` and `consts`: name -> array (graph inputs with their shapes, initializers);
    `outputs`: name -> expected array (its type and shape declare the output)."""
    g = h.make_graph(nodes, "zero_size",
                     [h.make_tensor_value_info(n, elem(a), list(a.shape)) for n, a in inputs.items()],
                     [h.make_tensor_value_info(n, elem(a), list(a.shape)) for n, a in outputs.items()],
                     [nh.from_array(a, n) for n, a in consts.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def one(op, inputs, consts, want, opset=13, **attrs):
    """A model of one node whose operands are the inputs then the initializers, in order."""
    names = list(inputs) + list(consts)
    outs = [f"y{i}" for i in range(len(want))]
    return model([h.make_node(op, names, outs, **attrs)], inputs, consts,
                 dict(zip(outs, want)), opset)


def z(*shape):
    return np.zeros(shape, F)


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(F)


def i64(v):
    return np.array(v, np.int64)


def full(shape, value):
    return np.full(shape, value, F)


def cases():
    """name -> (model, inputs in order, expected outputs)."""
    c = {}

    def add(name, op, inputs, consts, want, **kw):
        c[name] = (one(op, inputs, consts, want, **kw), list(inputs.values()), want)

    a, b = rand(2, 3), rand(3)
    add("relu", "Relu", {"x": z(0, 3)}, {}, [z(0, 3)])
    add("erf", "Erf", {"x": z(2, 0)}, {}, [z(2, 0)])
    add("add_broadcast", "Add", {"x": z(0, 3)}, {"b": b}, [z(0, 3)])
    add("mul_broadcast_to_empty", "Mul", {"x": z(0, 1)}, {"b": rand(1, 4)}, [z(0, 4)])
    add("where", "Where", {"c": np.zeros((0, 3), bool), "x": z(0, 3)}, {"b": b}, [z(0, 3)])
    add("concat_with_an_empty_operand", "Concat", {"x": z(0, 3), "y": a}, {}, [a], axis=0)
    add("concat_along_an_empty_axis", "Concat", {"x": z(2, 0), "y": a}, {}, [a], axis=1)
    add("reshape_infers_from_empty", "Reshape", {"x": z(0, 12, 64)}, {"s": i64([-1, 64])},
        [z(0, 64)])
    add("transpose", "Transpose", {"x": z(0, 3, 2)}, {}, [z(2, 0, 3)], perm=[2, 0, 1])
    x4 = rand(4, 3)
    add("slice_producing_empty", "Slice", {"x": x4}, {"s": i64([2]), "e": i64([2])},
        [x4[2:2]])
    add("slice_of_empty", "Slice", {"x": z(0, 3)}, {"s": i64([0]), "e": i64([2]), "a": i64([1])},
        [z(0, 2)])
    # Reductions over an empty set give the identity the spec names (ReduceMean: numpy's NaN).
    e = z(2, 0)
    for op, value in [("ReduceSum", 0.0), ("ReduceProd", 1.0), ("ReduceMax", -np.inf),
                      ("ReduceMin", np.inf), ("ReduceL1", 0.0), ("ReduceL2", 0.0),
                      ("ReduceSumSquare", 0.0), ("ReduceLogSumExp", -np.inf),
                      ("ReduceMean", np.nan)]:
        add(f"{op}_over_an_empty_axis", op, {"x": e}, {}, [full((2,), value)], opset=11,
            axes=[1], keepdims=0)
    add("reduce_keeping_an_empty_axis", "ReduceSum", {"x": z(0, 3)}, {"a": i64([1])}, [z(0, 1)])
    bk = z(0, 3)
    add("matmul_k0_gives_zeros", "MatMul", {"x": z(2, 0)}, {"b": bk}, [z(2, 3)])
    add("matmul_m0", "MatMul", {"x": z(0, 4)}, {"b": rand(4, 3)}, [z(0, 3)])
    add("matmul_batch0", "MatMul", {"x": z(0, 2, 4)}, {"b": rand(4, 3)}, [z(0, 2, 3)])
    cg = rand(3)
    add("gemm_k0_gives_c", "Gemm", {"x": z(2, 0)}, {"b": bk, "c": cg},
        [np.broadcast_to(cg, (2, 3)).copy()])
    add("softmax_empty_rows", "Softmax", {"x": z(0, 5)}, {}, [z(0, 5)])
    add("softmax_along_an_empty_axis", "Softmax", {"x": z(3, 0)}, {}, [z(3, 0)])
    add("gather_empty_indices", "Gather", {"x": x4}, {"i": np.zeros((0,), np.int64)}, [z(0, 3)])
    add("top_k_0", "TopK", {"x": x4}, {"k": i64([0])}, [z(4, 0), np.zeros((4, 0), np.int64)],
        opset=11)
    add("pad_empty_with_a_constant", "Pad", {"x": z(0, 3)},
        {"p": i64([1, 0, 1, 0]), "v": np.array(5, F)}, [full((2, 3), 5)])
    add("split_with_an_empty_part", "Split", {"x": x4}, {"s": i64([0, 4])}, [z(0, 3), x4])
    add("cum_sum", "CumSum", {"x": z(0, 3)}, {"a": np.array(1, np.int64)}, [z(0, 3)])
    add("layer_norm_of_empty_rows", "LayerNormalization", {"x": z(0, 12, 64)},
        {"g": rand(64), "b": rand(64)}, [z(0, 12, 64)], opset=17)
    w = rand(2, 1, 3, 3)
    add("conv_batch0", "Conv", {"x": z(0, 1, 4, 4)}, {"w": w}, [z(0, 2, 2, 2)])
    bias = rand(2)
    add("conv_of_no_channels_gives_the_bias", "Conv", {"x": z(1, 0, 4, 4)},
        {"w": z(2, 0, 3, 3), "b": bias}, [np.broadcast_to(bias[None, :, None, None],
                                                           (1, 2, 2, 2)).copy()])
    add("conv_to_no_channels", "Conv", {"x": rand(1, 2, 4, 4)}, {"w": z(0, 2, 3, 3)},
        [z(1, 0, 2, 2)])
    add("max_pool_batch0", "MaxPool", {"x": z(0, 1, 4, 4)}, {}, [z(0, 1, 3, 3)],
        kernel_shape=[2, 2])
    add("max_unpool_batch0", "MaxUnpool", {"x": z(0, 1, 2, 2), "i": np.zeros((0, 1, 2, 2),
                                                                               np.int64)},
        {}, [z(0, 1, 4, 4)], opset=11, kernel_shape=[2, 2], strides=[2, 2])
    add("rnn_of_no_steps_keeps_the_initial_state", "RNN", {"x": z(0, 2, 3)},
        {"w": rand(1, 4, 3), "r": rand(1, 4, 4)}, [z(0, 1, 2, 4), z(1, 2, 4)], hidden_size=4)
    add("gru_of_an_empty_batch", "GRU", {"x": z(5, 0, 3)},
        {"w": rand(1, 12, 3), "r": rand(1, 12, 4)}, [z(5, 1, 0, 4), z(1, 0, 4)], hidden_size=4)

    # Passes on empty products: MatMul + Add fuses into Gemm (rows of A with K = 0), Conv +
    # BatchNormalization folds (no output channels).
    c["matmul_k0_plus_bias"] = (
        model([h.make_node("MatMul", ["x", "b"], ["t"]), h.make_node("Add", ["t", "c"], ["y"])],
              {"x": z(2, 0)}, {"b": bk, "c": cg}, {"y": np.broadcast_to(cg, (2, 3)).copy()}),
        [z(2, 0)], [np.broadcast_to(cg, (2, 3)).copy()])
    c["conv_to_no_channels_then_batch_norm"] = (
        model([h.make_node("Conv", ["x", "w"], ["t"]),
               h.make_node("BatchNormalization", ["t", "s", "bb", "m", "v"], ["y"])],
              {"x": rand(1, 2, 4, 4)},
              {"w": z(0, 2, 3, 3), "s": z(0), "bb": z(0), "m": z(0), "v": z(0)},
              {"y": z(1, 0, 2, 2)}),
        [rand(1, 2, 4, 4)], [z(1, 0, 2, 2)])
    return c


# Refused at compile time: (op, inputs, consts, attrs, opset, results, message).
REFUSED = {
    "arg_max_over_an_empty_axis": (
        "ArgMax", {"x": z(3, 0)}, {}, {"axis": 1}, 13, 1,
        "ArgMax: axis 1 of [3,0] has extent 0: there is no element to pick"),
    "global_average_pool_over_an_empty_axis": (
        "GlobalAveragePool", {"x": z(1, 2, 0, 4)}, {}, {}, 13, 1,
        "input f32[1,2,0,4] has an empty spatial axis (dim 2 is 0): a global pool has no "
        "element to reduce there"),
    "conv_over_an_empty_axis": (
        "Conv", {"x": z(1, 1, 0, 4)}, {"w": rand(2, 1, 1, 1)}, {}, 13, 1,
        "Conv: spatial axis 0: window of 1 (dilation 1) does not fit input extent 0"),
    "dynamic_quantize_of_empty": (
        "DynamicQuantizeLinear", {"x": z(0, 3)}, {}, {}, 11, 3,
        "input f32[0,3] is empty; its range is undefined"),
}


class Runner(unittest.TestCase):
    """A scratch folder per test; compile, build and run a model there."""
    tc = odlactest.Toolchain()

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="odlac-zero-")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def run_model(self, m, inputs, *flags, tag="m"):
        """Compiles, builds and runs `m` on `inputs`; returns the outputs."""
        d = os.path.join(self.work, tag)
        os.makedirs(d)
        path = os.path.join(d, "model.onnx")
        onnx.save(m, path)
        out = os.path.join(d, "out")
        r = self.tc.compile(path, out, "--emit-main", *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = os.path.join(out, "run")
        self.tc.build(out, exe, *[os.path.join(out, f) for f in os.listdir(out)
                                  if f.endswith(".o")])
        ins = []
        for i, a in enumerate(inputs):
            p = os.path.join(d, f"input_{i}.pb")
            with open(p, "wb") as f:
                f.write(nh.from_array(a).SerializeToString())
            ins.append(p)
        res = os.path.join(d, "res")
        os.makedirs(res)
        run = subprocess.run([exe, *ins, "-o", res], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        return [odlactest.load(os.path.join(res, f"output_{i}.pb"))
                for i in range(len(m.graph.output))]

    def assertOutputs(self, got, want):
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertEqual((g.dtype, g.shape), (w.dtype, w.shape))
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)


class ZeroSizeTest(Runner):
    def test_ops_on_empty_tensors_match_numpy(self):
        for name, (m, inputs, want) in cases().items():
            for level in LEVELS:
                with self.subTest(case=name, level=level):
                    self.assertOutputs(self.run_model(m, inputs, level, tag=name + level), want)

    def test_other_exec_modes_and_weights(self):
        all_cases = cases()
        for name in ("conv_of_no_channels_gives_the_bias", "concat_with_an_empty_operand",
                     "matmul_k0_gives_zeros"):
            m, inputs, want = all_cases[name]
            for flags in (("--exec-mode=interpret",), ("--weights=bin",), ("--weights=obj",)):
                with self.subTest(case=name, flags=flags):
                    tag = name + flags[0].replace("=", "_")
                    self.assertOutputs(self.run_model(m, inputs, *flags, tag=tag), want)

    def test_what_the_spec_leaves_undefined_is_refused(self):
        for name, (op, inputs, consts, attrs, opset, results, message) in REFUSED.items():
            with self.subTest(case=name):
                m = one(op, inputs, consts, [z(0)] * results, opset, **attrs)
                for o in m.graph.output:  # no declared dims: the refusal is odlac's own
                    del o.type.tensor_type.shape.dim[:]
                path = os.path.join(self.work, name + ".onnx")
                onnx.save(m, path)
                out = os.path.join(self.work, name + "_out")
                r = self.tc.compile(path, out)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertFalse(os.path.exists(out))


# ---- a TransformerEncoder-like block ---------------------------------------------------------

D, HEADS, S, FF = 64, 4, 12, 128


def encoder():
    """One encoder layer as PyTorch computes it (post-norm, erf GELU) with every reshape
    keeping the batch through ONNX's 0, so that it holds for any batch; layer norms spelled
    out in ReduceMean arithmetic (recognize-layer-norm fuses them at -O2). Returns the model
    and its parameters."""
    rng = np.random.default_rng(7)
    P = {n: (rng.standard_normal(s) * 0.1).astype(F) for n, s in [
        ("wq", (D, D)), ("wk", (D, D)), ("wv", (D, D)), ("wo", (D, D)), ("bq", (D,)),
        ("bk", (D,)), ("bv", (D,)), ("bo", (D,)), ("w1", (D, FF)), ("b1", (FF,)),
        ("w2", (FF, D)), ("b2", (D,)), ("g1", (D,)), ("be1", (D,)), ("g2", (D,)), ("be2", (D,))]}
    P["g1"] += 1
    P["g2"] += 1
    C = dict(P, heads=i64([0, S, HEADS, D // HEADS]), merge=i64([0, S, D]),
             scale=np.array(1 / np.sqrt(D // HEADS), F), half=np.array(0.5, F),
             one=np.array(1.0, F), rsqrt2=np.array(1 / np.sqrt(2), F), eps=np.array(1e-5, F),
             two=np.array(2.0, F))
    n = []

    def layer_norm(x, g, b, out):
        n.extend([h.make_node("ReduceMean", [x], [out + "_m"], axes=[-1]),
                  h.make_node("Sub", [x, out + "_m"], [out + "_d"]),
                  h.make_node("Pow", [out + "_d", "two"], [out + "_d2"]),
                  h.make_node("ReduceMean", [out + "_d2"], [out + "_v"], axes=[-1]),
                  h.make_node("Add", [out + "_v", "eps"], [out + "_ve"]),
                  h.make_node("Sqrt", [out + "_ve"], [out + "_s"]),
                  h.make_node("Div", [out + "_d", out + "_s"], [out + "_n"]),
                  h.make_node("Mul", [out + "_n", g], [out + "_g"]),
                  h.make_node("Add", [out + "_g", b], [out])])

    for t in "qkv":
        n += [h.make_node("MatMul", ["x", "w" + t], [t + "0"]),
              h.make_node("Add", [t + "0", "b" + t], [t + "1"]),
              h.make_node("Reshape", [t + "1", "heads"], [t + "2"]),
              h.make_node("Transpose", [t + "2"], [t],
                          perm=[0, 2, 3, 1] if t == "k" else [0, 2, 1, 3])]
    n += [h.make_node("MatMul", ["q", "k"], ["s0"]), h.make_node("Mul", ["s0", "scale"], ["s1"]),
          h.make_node("Softmax", ["s1"], ["p"], axis=-1), h.make_node("MatMul", ["p", "v"], ["a0"]),
          h.make_node("Transpose", ["a0"], ["a1"], perm=[0, 2, 1, 3]),
          h.make_node("Reshape", ["a1", "merge"], ["a2"]),
          h.make_node("MatMul", ["a2", "wo"], ["o0"]), h.make_node("Add", ["o0", "bo"], ["o1"]),
          h.make_node("Add", ["x", "o1"], ["r1"])]
    layer_norm("r1", "g1", "be1", "n1")
    n += [h.make_node("MatMul", ["n1", "w1"], ["f0"]), h.make_node("Add", ["f0", "b1"], ["f1"]),
          h.make_node("Mul", ["f1", "rsqrt2"], ["f2"]), h.make_node("Erf", ["f2"], ["f3"]),
          h.make_node("Add", ["f3", "one"], ["f4"]), h.make_node("Mul", ["f1", "f4"], ["f5"]),
          h.make_node("Mul", ["f5", "half"], ["f6"]), h.make_node("MatMul", ["f6", "w2"], ["f7"]),
          h.make_node("Add", ["f7", "b2"], ["f8"]), h.make_node("Add", ["n1", "f8"], ["r2"])]
    layer_norm("r2", "g2", "be2", "y")
    g = h.make_graph(n, "encoder", [h.make_tensor_value_info("x", T.FLOAT, ["batch", S, D])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", S, D])],
                     [nh.from_array(v, k) for k, v in C.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 7
    return m, P


def encoder_reference(x, P):
    B = x.shape[0]

    def norm(v, g, b):
        d = v - v.mean(-1, keepdims=True)
        return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * g + b

    def heads(v):
        return v.reshape(B, S, HEADS, D // HEADS).transpose(0, 2, 1, 3)

    q, k, v = (heads(x @ P["w" + t] + P["b" + t]) for t in "qkv")
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D // HEADS)
    p = np.exp(s - s.max(-1, keepdims=True, initial=-np.inf))
    p /= p.sum(-1, keepdims=True)
    a = (p @ v).transpose(0, 2, 1, 3).reshape(B, S, D)
    n1 = norm(x + a @ P["wo"] + P["bo"], P["g1"], P["be1"])
    f = n1 @ P["w1"] + P["b1"]
    f = f * 0.5 * (1 + np.vectorize(erf, otypes=[np.float64])(f / np.sqrt(2)))
    return norm(n1 + f @ P["w2"] + P["b2"], P["g2"], P["be2"]).astype(F)


class TransformerTest(Runner):
    def test_encoder_block_at_batch_0_and_2(self):
        m, P = encoder()
        for batch in (0, 2):
            x = np.random.default_rng(batch).standard_normal((batch, S, D)).astype(F)
            for level in LEVELS + ("-O3",):
                with self.subTest(batch=batch, level=level):
                    got = self.run_model(m, [x], "--input-shape", f"x:{batch}x{S}x{D}", level,
                                         tag=f"enc{batch}{level}")
                    self.assertOutputs(got, [encoder_reference(x, P)])

    def test_torch_transformer_encoder(self):
        import torch
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(d_model=D, nhead=HEADS, dim_feedforward=FF,
                                                 dropout=0.0, batch_first=True)
        enc = torch.nn.TransformerEncoder(layer, num_layers=1).eval()
        path = os.path.join(self.work, "torch_encoder.onnx")
        torch.onnx.export(enc, torch.randn(2, S, D), path, input_names=["src"],
                          output_names=["out"], dynamic_axes={"src": {0: "batch"}},
                          opset_version=14)
        # Batch 0: the export reshapes with a shape whose batch entry is 0, which ONNX reads
        # as "copy the input's dim": the block cannot hold an empty batch, and odlac says so.
        out = os.path.join(self.work, "out0")
        r = self.tc.compile(path, out, "--input-shape", f"src:0x{S}x{D}")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("Reshape: cannot reshape [12,0,16] (0 elements) to [12,64] "
                      "(768 elements)", r.stderr)
        self.assertFalse(os.path.exists(out))
        # Batch 2 runs and matches PyTorch.
        x = np.random.default_rng(3).standard_normal((2, S, D)).astype(F)
        with torch.no_grad():
            want = enc(torch.from_numpy(x)).numpy()
        got = self.run_model(onnx.load(path), [x], "--input-shape", f"src:2x{S}x{D}", "-O2",
                             tag="torch2")
        self.assertOutputs(got, [want])


if __name__ == "__main__":
    unittest.main(verbosity=2)
