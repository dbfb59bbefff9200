#!/usr/bin/python3
"""Ops and attributes of ONNX opsets 18 to 28 end to end: small models built here with
onnx.helper, with expected outputs computed by numpy following the ONNX spec (not by odlac),
written in the libonnx-testdata layout and run through the conformance runner (compile,
build the C against the backend, run, compare) with an empty expected-failure list.

Covered: BitwiseAnd/Or/Xor/Not (broadcasting, signed and unsigned); Mish, Swish, Gelu (erf and
tanh); every activation fused after a Conv (and a residual Add); GroupNormalization at opset 18 (per-group scale and bias) and 21 (per-channel);
RMSNormalization; Col2Im with strides, pads and dilations; CenterCropPad with axes, the shape a
constant and a graph input; Pad's wrap mode (pads beyond the extent, negative pads) and
Pad-18's axes known only at run time; LpPool with ceil_mode and dilations, AveragePool with dilations
and count_include_pad; SpaceToDepth's CRD mode (opset 28); Resize with axes, with
keep_aspect_ratio_policy, and with antialias.

Environment: ODLAC, ODLA_LIB, ODLA_INCLUDE (as for the other e2e tests), and optionally
ODLA_BACKEND (the backend's name: the runner's label and odlac's --backend, default reference)
and ODLA_LINK_EXTRA (extra link flags, e.g. "-ldnnl -lgomp -lstdc++ -lm")."""
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "conformance", "run_conformance.py")
RNG = np.random.default_rng(15)

NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
              np.float16: TensorProto.FLOAT16, np.bool_: TensorProto.BOOL,
              np.int8: TensorProto.INT8, np.int16: TensorProto.INT16,
              np.int32: TensorProto.INT32, np.int64: TensorProto.INT64,
              np.uint8: TensorProto.UINT8, np.uint16: TensorProto.UINT16,
              np.uint32: TensorProto.UINT32, np.uint64: TensorProto.UINT64}


def vi(name, array):
    return helper.make_tensor_value_info(name, NP_TO_ONNX[array.dtype.type], list(array.shape))


def single_node(name, opset, node, inputs, outputs, initializers=()):
    """A model of one node; `inputs` and `outputs` map names to arrays (the data set)."""
    init = [numpy_helper.from_array(v, k) for k, v in initializers]
    graph = helper.make_graph([node], name, [vi(k, v) for k, v in inputs],
                              [vi(k, v) for k, v in outputs], init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return name, model, [v for _, v in inputs], [v for _, v in outputs]


def write_folder(root, name, model, inputs, outputs):
    folder = os.path.join(root, "node", name)
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, v in enumerate(values):
            onnx.save_tensor(numpy_helper.from_array(v),
                             os.path.join(folder, "test_data_set_0", "%s_%d.pb" % (kind, i)))


def floats(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ---- Bitwise and activations -------------------------------------------------------------


def bitwise_cases():
    a = RNG.integers(-30000, 30000, (2, 3, 4), dtype=np.int16)
    b = RNG.integers(-30000, 30000, (3, 4), dtype=np.int16)
    u = RNG.integers(0, 255, (4, 2, 3), dtype=np.uint8)
    v = RNG.integers(0, 255, (3,), dtype=np.uint8)
    n32 = RNG.integers(-2**31, 2**31 - 1, (5,), dtype=np.int32)
    n64 = RNG.integers(0, 2**63, (2, 2), dtype=np.uint64)
    for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
                   ("BitwiseXor", np.bitwise_xor)):
        yield single_node("new_%s_i16" % op.lower(), 18, helper.make_node(op, ["a", "b"], ["y"]),
                          [("a", a), ("b", b)], [("y", fn(a, b))])
        yield single_node("new_%s_u8" % op.lower(), 18, helper.make_node(op, ["a", "b"], ["y"]),
                          [("a", u), ("b", v)], [("y", fn(u, v))])
    for x in (n32, n64):
        yield single_node("new_bitwisenot_%s" % x.dtype, 18,
                          helper.make_node("BitwiseNot", ["x"], ["y"]), [("x", x)],
                          [("y", np.invert(x))])


def activation_cases():
    x = floats(3, 7) * 4
    softplus = np.log1p(np.exp(-np.abs(x.astype(np.float64)))) + np.maximum(x, 0)
    yield single_node("new_mish", 18, helper.make_node("Mish", ["x"], ["y"]), [("x", x)],
                      [("y", (x * np.tanh(softplus)).astype(np.float32))])
    sig = 1 / (1 + np.exp(-0.5 * x.astype(np.float64)))
    yield single_node("new_swish_alpha", 24, helper.make_node("Swish", ["x"], ["y"], alpha=0.5),
                      [("x", x)], [("y", (x * sig).astype(np.float32))])
    erf, d = np.vectorize(math.erf), x.astype(np.float64)
    exact = 0.5 * d * (1 + erf(d / math.sqrt(2)))
    tanh = 0.5 * d * (1 + np.tanh(math.sqrt(2 / math.pi) * (d + 0.044715 * d ** 3)))
    yield single_node("new_gelu", 20, helper.make_node("Gelu", ["x"], ["y"]), [("x", x)],
                      [("y", exact.astype(np.float32))])
    yield single_node("new_gelu_tanh", 20,
                      helper.make_node("Gelu", ["x"], ["y"], approximate="tanh"), [("x", x)],
                      [("y", tanh.astype(np.float32))])


def fused_activation_cases():
    """A 1x1 Conv, optionally plus a residual, then each activation odlac fuses into the
    backend's epilogue (odla_ext_fused.h), against float64 numpy."""
    x, w, b, res = floats(1, 4, 5, 6) * 2, floats(3, 4, 1, 1), floats(3), floats(1, 3, 5, 6)
    conv = np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64),
                     x.astype(np.float64)) + b.astype(np.float64).reshape(1, 3, 1, 1)
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    erf = np.vectorize(math.erf)
    acts = [  # name, nodes from "s" to "y", reference
        ("relu", [helper.make_node("Relu", ["s"], ["y"])], lambda v: np.maximum(v, 0)),
        ("clip", [helper.make_node("Clip", ["s", "lo", "hi"], ["y"])],
         lambda v: np.clip(v, 0, 6)),
        ("sigmoid", [helper.make_node("Sigmoid", ["s"], ["y"])], sigmoid),
        ("tanh", [helper.make_node("Tanh", ["s"], ["y"])], np.tanh),
        ("leaky_relu", [helper.make_node("LeakyRelu", ["s"], ["y"], alpha=0.1)],
         lambda v: np.where(v >= 0, v, 0.1 * v)),
        ("hard_swish", [helper.make_node("HardSwish", ["s"], ["y"])],
         lambda v: v * np.clip(v / 6 + 0.5, 0, 1)),
        ("swish", [helper.make_node("Sigmoid", ["s"], ["g"]),
                   helper.make_node("Mul", ["s", "g"], ["y"])], lambda v: v * sigmoid(v)),
        ("gelu", [helper.make_node("Gelu", ["s"], ["y"])],
         lambda v: 0.5 * v * (1 + erf(v / math.sqrt(2)))),
    ]
    lo, hi = np.array(0, np.float32), np.array(6, np.float32)
    for name, nodes, ref in acts:
        for residual in (False, True):
            head = [helper.make_node("Conv", ["x", "w", "b"], ["c" if residual else "s"])]
            if residual:
                head.append(helper.make_node("Add", ["c", "r"], ["s"]))
            s = conv + (res.astype(np.float64) if residual else 0)
            y = ref(s).astype(np.float32)
            inputs = [("x", x)] + ([("r", res)] if residual else [])
            graph = helper.make_graph(
                head + nodes, "fused", [vi(k, v) for k, v in inputs], [vi("y", y)],
                [numpy_helper.from_array(v, k) for k, v in (("w", w), ("b", b), ("lo", lo),
                                                            ("hi", hi))])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
            yield ("new_fused_%s%s" % (name, "_residual" if residual else ""), model,
                   [v for _, v in inputs], [y])


# ---- Normalizations ---------------------------------------------------------------------


def group_norm(x, groups, scale, bias, eps, per_channel):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1).astype(np.float64)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = [1, c] + [1] * (x.ndim - 2)
    if not per_channel:  # one scale per group: repeated over its channels
        scale, bias = np.repeat(scale, c // groups), np.repeat(bias, c // groups)
    return (y * scale.reshape(shape) + bias.reshape(shape)).astype(np.float32)


def normalization_cases():
    x = floats(2, 6, 3, 2)
    sg, bg = floats(3), floats(3)
    yield single_node("new_group_norm_18", 18,
                      helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                       num_groups=3, epsilon=1e-3),
                      [("x", x), ("s", sg), ("b", bg)],
                      [("y", group_norm(x, 3, sg, bg, 1e-3, False))])
    sc, bc = floats(6), floats(6)
    yield single_node("new_group_norm_21", 21,
                      helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                       num_groups=2),
                      [("x", x), ("s", sc), ("b", bc)],
                      [("y", group_norm(x, 2, sc, bc, 1e-5, True))])
    r = floats(2, 3, 4)
    scale = floats(3, 4)
    rms = np.sqrt((r.astype(np.float64) ** 2).mean(axis=(1, 2), keepdims=True) + 1e-5)
    yield single_node("new_rms_norm", 23,
                      helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=1),
                      [("x", r), ("s", scale)], [("y", (r / rms * scale).astype(np.float32))])


# ---- Col2Im, CenterCropPad ---------------------------------------------------------------


def col2im(cols, image, block, dil, pads, strides):
    """numpy Col2Im (2-D image): scatter-add every column back into the padded image."""
    n, ck, length = cols.shape
    c = ck // (block[0] * block[1])
    ph, pw = image[0] + pads[0] + pads[2], image[1] + pads[1] + pads[3]
    bh = (ph - dil[0] * (block[0] - 1) - 1) // strides[0] + 1
    bw = (pw - dil[1] * (block[1] - 1) - 1) // strides[1] + 1
    assert bh * bw == length
    out = np.zeros((n, c, ph, pw), np.float64)
    for ch in range(c):
        for ki in range(block[0]):
            for kj in range(block[1]):
                row = (ch * block[0] + ki) * block[1] + kj
                for l in range(length):
                    i = (l // bw) * strides[0] + ki * dil[0]
                    j = (l % bw) * strides[1] + kj * dil[1]
                    out[:, ch, i, j] += cols[:, row, l]
    return out[:, :, pads[0]:pads[0] + image[0], pads[1]:pads[1] + image[1]].astype(np.float32)


def layout_cases():
    image, block, dil, pads, strides = [5, 6], [2, 3], [1, 2], [1, 0, 0, 1], [2, 1]
    length = ((5 + 1 - 2) // 2 + 1) * ((6 + 1 - 2 * 2 - 1) // 1 + 1)
    cols = floats(1, 2 * 2 * 3, length)
    yield single_node("new_col2im", 18,
                      helper.make_node("Col2Im", ["x", "image", "block"], ["y"], dilations=dil,
                                       pads=pads, strides=strides),
                      [("x", cols), ("image", np.array(image, np.int64)),
                       ("block", np.array(block, np.int64))],
                      [("y", col2im(cols, image, block, dil, pads, strides))])
    x = floats(3, 9, 4)
    # axis 1: 9 -> 6 crops from (9 - 6) // 2 = 1; axis 2: 4 -> 7 pads 1 in front, 2 behind.
    want = np.zeros((3, 6, 7), np.float32)
    want[:, :, 1:5] = x[:, 1:7, :]
    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"], axes=[-2, 2])
    yield single_node("new_center_crop_pad", 18, node, [("x", x)], [("y", want)],
                      [("shape", np.array([6, 7], np.int64))])
    yield single_node("new_center_crop_pad_shape_input", 18, node,
                      [("x", x), ("shape", np.array([6, 7], np.int64))], [("y", want)])
    s2d = floats(1, 2, 4, 6)
    b = 2
    crd = s2d.reshape(1, 2, 2, b, 3, b).transpose(0, 1, 3, 5, 2, 4).reshape(1, 8, 2, 3)
    yield single_node("new_spacetodepth_crd", 28,
                      helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b, mode="CRD"),
                      [("x", s2d)], [("y", crd)])


def wrap_pad(x, begins, ends):
    """Pad-19's wrap mode: negative pads crop first, then np.pad repeats what is left."""
    crop = tuple(slice(max(-b, 0), n - max(-e, 0)) for b, e, n in zip(begins, ends, x.shape))
    return np.pad(x[crop], [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends)], mode="wrap")


def pad_cases():
    x = RNG.integers(-100, 100, (2, 3, 4), dtype=np.int32)
    begins, ends = [0, 4, -1], [1, -1, 7]  # pads beyond the extent repeat it; -1 crops
    pads = np.array(begins + ends, np.int64)
    node = helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")
    yield single_node("new_pad_wrap", 19, node, [("x", x)], [("y", wrap_pad(x, begins, ends))],
                      [("pads", pads)])
    yield single_node("new_pad_wrap_runtime_pads", 19, node, [("x", x), ("pads", pads)],
                      [("y", wrap_pad(x, begins, ends))])
    # Pad-18's axes known only at run time (int32, one negative), and constant axes out of
    # order with run-time pads: odlac spreads the pads over all axes when the graph runs.
    f = floats(2, 3, 4, 5)
    value = np.array(1.5, np.float32)
    want = np.pad(f, [(0, 0), (0, 2), (0, 0), (1, 3)], constant_values=1.5)
    node = helper.make_node("Pad", ["x", "pads", "value", "axes"], ["y"])
    yield single_node("new_pad_runtime_axes", 19, node,
                      [("x", f), ("pads", np.array([1, 0, 3, 2], np.int64)), ("value", value),
                       ("axes", np.array([-1, 1], np.int32))], [("y", want)])
    yield single_node("new_pad_constant_axes_runtime_pads", 19, node,
                      [("x", f), ("pads", np.array([1, 0, 3, 2], np.int64)), ("value", value)],
                      [("y", want)], [("axes", np.array([3, 1], np.int64))])
    edge = helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], mode="edge")
    yield single_node("new_pad_edge_runtime_axes", 19, edge,
                      [("x", f), ("pads", np.array([2, 1, 0, 1], np.int64)),
                       ("axes", np.array([0, -2], np.int64))],
                      [("y", np.pad(f, [(2, 0), (0, 0), (1, 1), (0, 0)], mode="edge"))])


# ---- Pooling ----------------------------------------------------------------------------


def pool2d(x, kernel, strides, dil, pads, out_hw, reduce):
    """Applies `reduce(taps inside the input, taps inside the padded input)` per window."""
    n, c, h, w = x.shape
    y = np.zeros((n, c) + tuple(out_hw), np.float64)
    for oh in range(out_hw[0]):
        for ow in range(out_hw[1]):
            inside, padded = [], 0
            for kh in range(kernel[0]):
                for kw in range(kernel[1]):
                    i = oh * strides[0] - pads[0] + kh * dil[0]
                    j = ow * strides[1] - pads[1] + kw * dil[1]
                    if -pads[0] <= i < h + pads[2] and -pads[1] <= j < w + pads[3]:
                        padded += 1
                    if 0 <= i < h and 0 <= j < w:
                        inside.append(x[:, :, i, j].astype(np.float64))
            y[:, :, oh, ow] = reduce(np.stack(inside), padded)
    return y.astype(np.float32)


def pooling_cases():
    x = floats(2, 3, 5, 5)
    # ceil_mode: 5 with kernel 2, stride 2 gives 3 windows, the last one partly outside.
    lp = pool2d(x, [2, 2], [2, 2], [1, 1], [0, 0, 0, 0], [3, 3],
                lambda t, _: np.sqrt((t ** 2).sum(axis=0)))
    yield single_node("new_lppool_ceil", 18,
                      helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2],
                                       strides=[2, 2], ceil_mode=1),
                      [("x", x)], [("y", lp)])
    lpd = pool2d(x, [2, 2], [1, 1], [2, 2], [0, 0, 0, 0], [3, 3],
                 lambda t, _: np.abs(t).sum(axis=0))
    yield single_node("new_lppool_dilations", 18,
                      helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=1,
                                       dilations=[2, 2]),
                      [("x", x)], [("y", lpd)])
    avg = pool2d(x, [3, 2], [2, 1], [2, 3], [1, 2, 1, 2], [2, 6],
                 lambda t, padded: t.sum(axis=0) / padded)
    yield single_node("new_averagepool_dilations_pad", 19,
                      helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 2],
                                       strides=[2, 1], dilations=[2, 3], pads=[1, 2, 1, 2],
                                       count_include_pad=1),
                      [("x", x)], [("y", avg)])


# ---- Resize -----------------------------------------------------------------------------


def resize_weights(in_size, out_size, scale, antialias):
    """The [out, in] interpolation matrix of one axis: linear, half_pixel, edge samples
    repeated; with antialias and scale < 1 the tent filter is stretched by 1 / scale and its
    taps normalized (ONNX Resize-18)."""
    m = np.zeros((out_size, in_size))
    support = 1 / scale if antialias and scale < 1 else 1.0
    for o in range(out_size):
        x = (o + 0.5) / scale - 0.5
        lo, hi = math.floor(x - support) + 1, math.ceil(x + support)
        taps = [(i, max(0.0, 1 - abs(i - x) / support)) for i in range(lo, hi)]
        total = sum(t for _, t in taps)
        for i, t in taps:
            m[o, min(max(i, 0), in_size - 1)] += t / total
    return m


def resize_cases():
    x = floats(1, 2, 8, 6)
    # Antialiased linear downsampling of axes 2 and 3 by 0.5 and 0.75 (axes attribute).
    scales = [0.5, 0.75]
    hy, wy = resize_weights(8, 4, 0.5, True), resize_weights(6, 4, 0.75, True)
    want = np.einsum("ah,bw,nchw->ncab", hy, wy, x.astype(np.float64)).astype(np.float32)
    yield single_node("new_resize_antialias_axes", 19,
                      helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear",
                                       antialias=1, axes=[2, 3]),
                      [("x", x)], [("y", want)],
                      [("scales", np.array(scales, np.float32))])
    # keep_aspect_ratio_policy not_larger with sizes [5, 5]: scale min(5 / 8, 5 / 6) = 0.625,
    # result extents round(8 * 0.625) = 5 and round(6 * 0.625 + 0.5 - 0.5) = 4, nearest with
    # half_pixel and round_prefer_floor.
    scale = 0.625

    def nearest(n_in, n_out):
        idx = []
        for o in range(n_out):
            c = (o + 0.5) / scale - 0.5
            f = math.floor(c)
            idx.append(min(max(f if c - f <= 0.5 else f + 1, 0), n_in - 1))
        return idx
    want = x[:, :, nearest(8, 5)][:, :, :, nearest(6, 4)]
    yield single_node("new_resize_not_larger", 19,
                      helper.make_node("Resize", ["x", "", "", "sizes"], ["y"],
                                       keep_aspect_ratio_policy="not_larger", axes=[2, 3]),
                      [("x", x), ("sizes", np.array([5, 5], np.int64))], [("y", want)])


def run_cases(case_fns, what):
    """Writes the cases of `case_fns` as test folders and runs them through the conformance
    runner with an empty expected-failure list (exits on failure). Shared with
    test_low_precision.py."""
    env = {k: os.environ.get(k) for k in ("ODLAC", "ODLA_LIB", "ODLA_INCLUDE")}
    missing = [k for k, v in env.items() if not v]
    if missing:
        sys.exit("set " + ", ".join(missing))
    with tempfile.TemporaryDirectory(prefix="odlac-%s-" % what.replace(" ", "-")) as root:
        for cases in case_fns:
            for name, model, inputs, outputs in cases():
                write_folder(root, name, model, inputs, outputs)
        xfail = os.path.join(root, "xfail_none.txt")
        open(xfail, "w").close()
        backend = os.environ.get("ODLA_BACKEND", "reference")
        cmd = [sys.executable, RUNNER, "--odlac", env["ODLAC"], "--backend", backend,
               "--odlac-flag=--backend=" + backend,
               "--backend-lib", env["ODLA_LIB"], "--include", env["ODLA_INCLUDE"],
               "--link-extra=" + os.environ.get("ODLA_LINK_EXTRA", "-lm"),
               "--data", root, "--suites", "node", "--xfail", xfail, "--jobs", "2", "-v"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(r.stdout)
        if r.returncode != 0:
            sys.exit("%s models failed (runner exit %d)" % (what, r.returncode))


def main():
    run_cases((bitwise_cases, activation_cases, fused_activation_cases, normalization_cases,
               layout_cases, pad_cases, pooling_cases, resize_cases), "new-op")


if __name__ == "__main__":
    main()
