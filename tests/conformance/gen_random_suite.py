#!/usr/bin/env python3
"""Writes random single-op ONNX models with random attributes, shapes and data as test folders
that run_conformance.py reads (`--suite-set random`): DIR/node/<test>/model.onnx,
test_data_set_0/{input,output}_<i>.pb and case.txt (the op, its attributes and its constant
inputs, for reading a failure), plus DIR/suite.json.

Each family below draws a case the ONNX spec allows: Conv and ConvTranspose with groups,
strides, dilations, pads or auto_pad; the pools with ceil_mode and dilations; Resize in every
mode and coordinate transformation, with scales, sizes, axes, roi and antialias; Pad, Slice
(negative steps, out-of-range starts and ends), the reductions (axes, keepdims,
noop_with_empty_axes), Gather*, Scatter* with reductions, GridSample, Einsum, the RNNs, the
quantized ops, the detection and signal ops, Attention, RotaryEmbedding, ops at the older
opsets whose signatures differ (`old`) and more. Run with the project venv's python (onnx
1.23, onnxruntime).

The expected outputs are ONNX Runtime's (CPU, graph optimizations off). A case is kept only
when ONNX's own reference implementation (onnx.reference) runs it and agrees within the
tolerance, shape and type included: two independent implementations agree on each expected
value. The exceptions are checked against ONNX Runtime alone (Case.ort_only): the RNNs, where
ONNX's reference RNN, GRU and LSTM differ from ONNX Runtime on most cases and odlac agrees with
ONNX Runtime (checked on 150 such cases); Softmax, LogSoftmax and Hardmax at opset 11, which
the reference computes as opset 13's; Upsample-7 and Resize-11's tf_half_pixel_for_nn, which
it lacks. Cases the two disagree on are skipped and listed in
DIR/disagreements.txt; so are cases ONNX Runtime refuses or computes in a shape other than
ONNX's shape inference, which declares each output (an output whose extent depends on the
data gets ONNX Runtime's). ONNX's spec is the arbiter where they differ: for example ONNX
Runtime's AveragePool with auto_pad and dilations, and its bicubic GridSample with border
padding, differ from the reference, and odlac follows the reference.

numpy's generator is seeded: with the pinned onnx, onnxruntime and numpy the folders are the
same from run to run. DIR is rebuilt only when suite.json names another seed, count, onnx,
onnxruntime, numpy or version of this script (or of the folder writer it uses, tests/tools/
odlactest.py); it is written beside DIR and renamed into place.

Usage: gen_random_suite.py DIR [--seed S] [--count N] [--families conv,resize,...]
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import odlactest  # noqa: E402  (the test folder layout)

F = np.float32
R = np.random.default_rng(0)  # reseeded by main()
RTOL, ATOL = 1e-3, 1e-4  # each case's tolerance in suite.json (inputs are of order 1)


def ri(a, b):
    return int(R.integers(a, b + 1))


def ch(xs):
    return xs[int(R.integers(0, len(xs)))]


def arr(shape, lo=-1, hi=1):
    return R.uniform(lo, hi, size=shape).astype(F)


class Case:
    def __init__(self, op, inputs, attrs, opset, consts=None, nout=1, ort_only=False):
        self.op, self.inputs, self.attrs, self.opset = op, inputs, attrs, opset
        self.consts = consts or {}  # the inputs that are initializers
        self.nout = nout
        self.ort_only = ort_only  # checked against ONNX Runtime alone (see the docstring)


def g_conv():
    nd = ch([1, 2, 2, 3])
    g = ch([1, 1, 2, 3])
    cin = g * ri(1, 3)
    cout = g * ri(1, 3)
    if R.random() < 0.2:
        g = cin; cout = cin * ri(1, 2)
    k = [ri(1, 3) for _ in range(nd)]
    d = [ri(1, 2) for _ in range(nd)]
    s = [ri(1, 3) for _ in range(nd)]
    sp = [ri(max(3, (k[i] - 1) * d[i] + 1), 9) for i in range(nd)]
    attrs = {"group": g, "strides": s, "dilations": d}
    ap = ch(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
    if ap == "NOTSET":
        attrs["pads"] = [ri(0, 2) for _ in range(2 * nd)]
    else:
        attrs["auto_pad"] = ap
    if R.random() < 0.5:
        attrs["kernel_shape"] = k
    ins = [("X", arr([ri(1, 2), cin] + sp)), ("W", arr([cout, cin // g] + k))]
    consts = {"W": ins[1][1]}
    if R.random() < 0.6:
        ins.append(("B", arr([cout]))); consts["B"] = ins[2][1]
    return Case("Conv", ins, attrs, ch([11, 22]), consts)


def g_convt():
    nd = ch([1, 2, 2])
    g = ch([1, 1, 2])
    cin = g * ri(1, 3)
    cout_g = ri(1, 3)
    k = [ri(1, 4) for _ in range(nd)]
    d = [ri(1, 2) for _ in range(nd)]
    s = [ri(1, 3) for _ in range(nd)]
    sp = [ri(2, 6) for _ in range(nd)]
    attrs = {"group": g, "strides": s, "dilations": d}
    mode = ch(["pads", "pads", "auto", "output_shape"])
    if mode == "pads":
        attrs["pads"] = [ri(0, (k[i // 1 % nd] - 1) * d[i % nd]) for i in range(2 * nd)]
        if R.random() < 0.5:
            attrs["output_padding"] = [ri(0, max(s[i], d[i]) - 1) for i in range(nd)]
    elif mode == "auto":
        attrs["auto_pad"] = ch(["SAME_UPPER", "SAME_LOWER", "VALID"])
    else:
        base = [s[i] * (sp[i] - 1) + (k[i] - 1) * d[i] + 1 for i in range(nd)]
        attrs["output_shape"] = [b + ri(-1, min(1, s[i] - 1)) for i, b in enumerate(base)]
    if R.random() < 0.5:
        attrs["kernel_shape"] = k
    ins = [("X", arr([1, cin] + sp)), ("W", arr([cin, cout_g] + k))]
    consts = {"W": ins[1][1]}
    if R.random() < 0.5:
        ins.append(("B", arr([cout_g * g]))); consts["B"] = ins[2][1]
    return Case("ConvTranspose", ins, attrs, ch([11, 22]), consts)


def g_pool():
    op = ch(["MaxPool", "AveragePool", "LpPool"])
    nd = ch([1, 2, 2, 3])
    k = [ri(1, 4) for _ in range(nd)]
    s = [ri(1, 3) for _ in range(nd)]
    d = [ri(1, 2) for _ in range(nd)]
    sp = [ri((k[i] - 1) * d[i] + 1 + 1, 10) for i in range(nd)]
    attrs = {"kernel_shape": k, "strides": s}
    opset = ch([19, 22]) if op != "LpPool" else ch([18, 22])
    if R.random() < 0.6 or op == "MaxPool":
        attrs["dilations"] = d
    ap = ch(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
    if ap == "NOTSET":
        attrs["pads"] = [ri(0, k[i % nd] - 1) for i in range(2 * nd)]
    else:
        attrs["auto_pad"] = ap
    if op != "LpPool" or opset >= 18:
        if R.random() < 0.5:
            attrs["ceil_mode"] = 1
    if op == "AveragePool" and R.random() < 0.5:
        attrs["count_include_pad"] = 1
    if op == "LpPool":
        attrs["p"] = ch([1, 2, 3])
    nout = 1
    if op == "MaxPool" and R.random() < 0.3:
        nout = 2
        if R.random() < 0.5:
            attrs["storage_order"] = 1 if nd == 2 else 0
    return Case(op, [("X", arr([ri(1, 2), ri(1, 3)] + sp))], attrs, opset, nout=nout)


def g_resize():
    rank = ch([3, 4, 4])
    shape = [ri(1, 2), ri(1, 3)] + [ri(2, 6) for _ in range(rank - 2)]
    mode = ch(["nearest", "linear", "cubic"])
    ctm = ch(["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
              "half_pixel_symmetric", "tf_crop_and_resize"])
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
    if mode == "nearest":
        attrs["nearest_mode"] = ch(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
    if mode == "cubic":
        attrs["cubic_coeff_a"] = float(ch([-0.75, -0.5]))
        if R.random() < 0.4:
            attrs["exclude_outside"] = 1
    if mode != "nearest" and R.random() < 0.3:
        attrs["antialias"] = 1
    opset = 19
    axes = None
    if R.random() < 0.3:
        axes = sorted(R.choice(range(2, rank), size=ri(1, rank - 2), replace=False).tolist())
        attrs["axes"] = axes
    n = len(axes) if axes else rank
    dims = axes if axes else list(range(rank))
    consts = {}
    ins = [("X", arr(shape))]
    if ctm == "tf_crop_and_resize":
        roi = []
        lo = [round(float(R.uniform(0, 0.4)), 2) for _ in range(n)]
        hi = [round(float(R.uniform(0.6, 1)), 2) for _ in range(n)]
        roi = np.array(lo + hi, F)
        if not axes:
            roi = np.array([0, 0] + lo[2:] + [1, 1] + hi[2:], F)
        attrs["extrapolation_value"] = 0.5
        ins.append(("roi", roi)); consts["roi"] = roi
    else:
        ins.append(("", None))
    if R.random() < 0.5:
        sc = [1.0 if (d < 2) else float(ch([0.5, 0.6, 1.5, 2.0, 2.5, 3.0, 0.75, 1.0]))
              for d in dims]
        s = np.array(sc, F)
        ins.append(("scales", s)); consts["scales"] = s
    else:
        sz = [shape[d] if d < 2 else ri(1, 9) for d in dims]
        if R.random() < 0.3:
            attrs["keep_aspect_ratio_policy"] = ch(["not_larger", "not_smaller"])
        ins.append(("", None))
        s = np.array(sz, np.int64)
        ins.append(("sizes", s)); consts["sizes"] = s
    return Case("Resize", ins, attrs, opset, consts)


def g_pad():
    rank = ri(1, 4)
    shape = [ri(1, 5) for _ in range(rank)]
    mode = ch(["constant", "reflect", "edge", "wrap"])
    axes = None
    if R.random() < 0.3:
        axes = sorted(R.choice(range(rank), size=ri(1, rank), replace=False).tolist())
        if R.random() < 0.5:
            axes = [a - rank for a in axes]
    n = len(axes) if axes else rank
    dims = [(a + rank) % rank for a in axes] if axes else list(range(rank))
    pads = []
    for side in range(2):
        for d in dims:
            lim = shape[d] - 1 if mode == "reflect" else 3
            lo = -shape[d] // 2 if mode in ("constant", "edge") and R.random() < 0.2 else 0
            pads.append(ri(lo, max(lim, 0)))
    p = np.array(pads, np.int64)
    ins = [("X", arr(shape)), ("pads", p)]
    consts = {"pads": p}
    if mode == "constant" and R.random() < 0.5:
        c = np.array(0.25, F); ins.append(("cv", c)); consts["cv"] = c
    elif axes:
        ins.append(("", None))
    if axes:
        a = np.array(axes, np.int64); ins.append(("axes", a)); consts["axes"] = a
    return Case("Pad", ins, {"mode": mode}, ch([19, 21]), consts)


def g_slice():
    rank = ri(1, 4)
    shape = [ri(1, 6) for _ in range(rank)]
    k = ri(1, rank)
    axes = R.choice(range(rank), size=k, replace=False).tolist()
    st, en, sp = [], [], []
    for a in axes:
        step = ch([1, 1, 2, 3, -1, -2, -3])
        big = 2**62 if R.random() < 0.2 else None
        s_ = ri(-shape[a] - 2, shape[a] + 2)
        e_ = ri(-shape[a] - 2, shape[a] + 2) if big is None else (big if step > 0 else -big)
        st.append(s_); en.append(e_); sp.append(step)
    axes = [a - rank if R.random() < 0.3 else a for a in axes]
    cs = {n: np.array(v, np.int64) for n, v in (("starts", st), ("ends", en), ("axes", axes),
                                               ("steps", sp))}
    ins = [("X", arr(shape))] + [(n, cs[n]) for n in ("starts", "ends", "axes", "steps")]
    return Case("Slice", ins, {}, 13, cs)


def g_reduce():
    op = ch(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
             "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"])
    rank = ri(1, 4)
    shape = [ri(1, 5) for _ in range(rank)]
    attrs = {"keepdims": ri(0, 1)}
    ins = [("X", arr(shape, 0.1, 1) if op == "ReduceLogSum" else arr(shape))]
    consts = {}
    r = R.random()
    if r < 0.6:
        axes = R.choice(range(rank), size=ri(1, rank), replace=False).tolist()
        axes = [a - rank if R.random() < 0.3 else a for a in axes]
        a = np.array(axes, np.int64); ins.append(("axes", a)); consts["axes"] = a
    elif r < 0.8:
        a = np.array([], np.int64); ins.append(("axes", a)); consts["axes"] = a
        if R.random() < 0.5:
            attrs["noop_with_empty_axes"] = 1
    return Case(op, ins, attrs, 18, consts)


def g_gather():
    op = ch(["Gather", "GatherElements", "GatherND"])
    rank = ri(1, 4)
    shape = [ri(1, 5) for _ in range(rank)]
    if op == "Gather":
        ax = ri(-rank, rank - 1)
        n = shape[ax]
        ishape = [ri(1, 3) for _ in range(ri(0, 2))]
        idx = R.integers(-n, n, size=ishape).astype(np.int64)
        return Case(op, [("X", arr(shape)), ("I", idx)], {"axis": ax}, 13, {"I": idx})
    if op == "GatherElements":
        ax = ri(-rank, rank - 1)
        ish = [ri(1, s) for s in shape]
        ish[ax] = ri(1, 4)
        idx = R.integers(-shape[ax], shape[ax], size=ish).astype(np.int64)
        return Case(op, [("X", arr(shape)), ("I", idx)], {"axis": ax}, 13, {"I": idx})
    b = ri(0, rank - 1)
    last = ri(1, rank - b)
    ish = shape[:b] + [ri(1, 3) for _ in range(ri(0, 2))] + [last]
    idx = np.stack([R.integers(-shape[b + j], shape[b + j], size=ish[:-1]) for j in range(last)],
                   -1).astype(np.int64)
    return Case(op, [("X", arr(shape)), ("I", idx)], {"batch_dims": b}, 13, {"I": idx})


def g_scatter():
    op = ch(["ScatterElements", "ScatterND"])
    rank = ri(1, 4)
    shape = [ri(1, 5) for _ in range(rank)]
    red = ch(["none", "add", "mul", "max", "min"])
    if op == "ScatterElements":
        ax = ri(-rank, rank - 1)
        ish = [ri(1, s) for s in shape]
        if red == "none":  # unique indices along the axis
            ish[ax] = ri(1, shape[ax])
            idx = np.argsort(R.random(size=shape), axis=ax)
            idx = np.take(idx, range(ish[ax]), axis=ax)
            idx = idx[tuple(slice(0, v) for v in ish)].astype(np.int64)
        else:
            idx = R.integers(-shape[ax], shape[ax], size=ish).astype(np.int64)
        return Case(op, [("X", arr(shape)), ("I", idx), ("U", arr(ish))],
                    {"axis": ax, "reduction": red}, 18, {"I": idx})
    last = ri(1, rank)
    cnt = ri(1, 4)
    import itertools
    all_idx = list(itertools.product(*[range(s) for s in shape[:last]]))
    cnt = min(cnt, len(all_idx))
    pick = R.choice(len(all_idx), size=cnt, replace=(red != "none"))
    idx = np.array([all_idx[p] for p in pick], np.int64).reshape(cnt, last)
    ush = [cnt] + shape[last:]
    return Case(op, [("X", arr(shape)), ("I", idx), ("U", arr(ush))], {"reduction": red}, 18,
                {"I": idx})


def g_softmax():
    op = ch(["Softmax", "LogSoftmax", "Hardmax"])
    rank = ri(1, 4)
    shape = [ri(1, 5) for _ in range(rank)]
    return Case(op, [("X", arr(shape, -3, 3))], {"axis": ri(-rank, rank - 1)}, 13)


def g_cumsum():
    rank = ri(1, 3)
    shape = [ri(1, 5) for _ in range(rank)]
    ax = np.array(ri(-rank, rank - 1), np.int64)
    return Case("CumSum", [("X", arr(shape)), ("axis", ax)],
                {"exclusive": ri(0, 1), "reverse": ri(0, 1)}, 14, {"axis": ax})


def g_topk():
    rank = ri(1, 3)
    shape = [ri(1, 6) for _ in range(rank)]
    ax = ri(-rank, rank - 1)
    k = np.array([ri(1, shape[ax])], np.int64)
    x = R.permutation(int(np.prod(shape))).reshape(shape).astype(F)
    return Case("TopK", [("X", x), ("K", k)], {"axis": ax, "largest": ri(0, 1), "sorted": 1}, 11,
                {"K": k}, nout=2)


def g_arg():
    op = ch(["ArgMax", "ArgMin"])
    rank = ri(1, 4)
    shape = [ri(1, 5) for _ in range(rank)]
    x = R.integers(0, 3, size=shape).astype(F)  # ties
    return Case(op, [("X", x)], {"axis": ri(-rank, rank - 1), "keepdims": ri(0, 1),
                                 "select_last_index": ri(0, 1)}, 13)


def g_d2s():
    op = ch(["DepthToSpace", "SpaceToDepth"])
    b = ri(1, 3)
    if op == "DepthToSpace":
        x = arr([ri(1, 2), b * b * ri(1, 3), ri(1, 4), ri(1, 4)])
        return Case(op, [("X", x)], {"blocksize": b, "mode": ch(["DCR", "CRD"])}, 13)
    x = arr([ri(1, 2), ri(1, 3), b * ri(1, 3), b * ri(1, 3)])
    return Case(op, [("X", x)], {"blocksize": b}, 13)


def g_gemm():
    m, k, n = ri(1, 5), ri(1, 5), ri(1, 5)
    ta, tb = ri(0, 1), ri(0, 1)
    a = arr([k, m] if ta else [m, k]); b = arr([n, k] if tb else [k, n])
    attrs = {"transA": ta, "transB": tb, "alpha": float(ch([1.0, 0.5, -2.0])),
             "beta": float(ch([1.0, 0.0, 3.0]))}
    ins = [("A", a), ("B", b)]
    consts = {}
    if R.random() < 0.7:
        cshape = ch([[m, n], [n], [1, n], [m, 1], [1], []])
        c = arr(cshape); ins.append(("C", c))
        if R.random() < 0.5:
            consts["C"] = c
    if R.random() < 0.5:
        consts["B"] = b
    return Case("Gemm", ins, attrs, 13, consts)


def g_norm():
    op = ch(["LayerNormalization", "InstanceNormalization", "GroupNormalization"])
    if op == "LayerNormalization":
        rank = ri(1, 4)
        shape = [ri(1, 5) for _ in range(rank)]
        ax = ri(-rank, rank - 1)
        a = ax % rank
        sc = arr(shape[a:]); bi = arr(shape[a:])
        ins = [("X", arr(shape)), ("S", sc)]
        consts = {"S": sc}
        if R.random() < 0.6:
            ins.append(("Bb", bi)); consts["Bb"] = bi
        return Case(op, ins, {"axis": ax, "epsilon": 1e-3}, 17, consts)
    if op == "InstanceNormalization":
        shape = [ri(1, 2), ri(1, 4)] + [ri(1, 5) for _ in range(ri(1, 3))]
        sc = arr([shape[1]]); bi = arr([shape[1]])
        return Case(op, [("X", arr(shape)), ("S", sc), ("Bb", bi)], {"epsilon": 1e-3}, 6,
                    {"S": sc, "Bb": bi})
    g = ri(1, 3)
    shape = [ri(1, 2), g * ri(1, 2)] + [ri(1, 4) for _ in range(ri(1, 2))]
    sc = arr([shape[1]]); bi = arr([shape[1]])
    return Case(op, [("X", arr(shape)), ("S", sc), ("Bb", bi)], {"epsilon": 1e-3, "num_groups": g},
                21, {"S": sc, "Bb": bi})


def g_gridsample():
    nd = ch([2, 2, 3])
    sp = [ri(1, 5) for _ in range(nd)]
    osp = [ri(1, 4) for _ in range(nd)]
    x = arr([ri(1, 2), ri(1, 2)] + sp)
    grid = arr([x.shape[0]] + osp + [nd], -1.3, 1.3)
    mode = ch(["linear", "nearest", "cubic"]) if nd == 2 else ch(["linear", "nearest"])
    return Case("GridSample", [("X", x), ("G", grid)],
                {"mode": mode, "padding_mode": ch(["zeros", "border", "reflection"]),
                 "align_corners": ri(0, 1)}, 22)


def g_einsum():
    eq, shapes = ch([
        ("ij,jk->ik", [[3, 4], [4, 5]]), ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
        ("ii->i", [[4, 4]]), ("ij->ji", [[3, 4]]), ("ij,ij->", [[3, 4], [3, 4]]),
        ("i,j->ij", [[3], [4]]), ("...ij,...jk", [[2, 3, 4], [4, 5]]), ("bhqd,bhkd->bhqk", [[1, 2, 3, 4], [1, 2, 5, 4]]),
        ("ijk->", [[2, 3, 4]]), ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 5]]), ("iij->ij", [[3, 3, 2]]),
        ("ab...,bc->ac...", [[2, 3, 4], [3, 5]]), ("i,i", [[5], [5]]), ("kj,ji", [[3, 4], [4, 2]])])
    ins = [("I%d" % i, arr(s)) for i, s in enumerate(shapes)]
    return Case("Einsum", ins, {"equation": eq}, 12)


def g_act():
    op, attrs = ch([("Elu", {"alpha": 0.7}), ("Selu", {"alpha": 1.5, "gamma": 0.8}),
                    ("LeakyRelu", {"alpha": 0.3}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
                    ("ThresholdedRelu", {"alpha": 0.2}), ("Celu", {"alpha": 0.6}),
                    ("Gelu", {"approximate": "tanh"}), ("Gelu", {}), ("Shrink", {"bias": 0.2, "lambd": 0.4}),
                    ("Softplus", {}), ("Softsign", {}), ("Mish", {}), ("HardSwish", {})])
    opset = 20 if op == "Gelu" else 22 if op in ("Elu", "Selu", "HardSigmoid", "ThresholdedRelu", "Softplus", "Softsign", "Mish", "HardSwish") else 16 if op == "LeakyRelu" else 12 if op == "Celu" else 9
    return Case(op, [("X", arr([ri(1, 4), ri(1, 5)], -3, 3))], attrs, opset)


def g_split():
    rank = ri(1, 3)
    shape = [ri(1, 7) for _ in range(rank)]
    ax = ri(-rank, rank - 1)
    n = shape[ax]
    if R.random() < 0.5:
        k = ri(1, min(n, 4))
        return Case("Split", [("X", arr(shape))], {"axis": ax, "num_outputs": k}, 18,
                    nout=k)
    parts = []
    left = n
    while left > 0:
        p = ri(0 if R.random() < 0.2 else 1, left); parts.append(p); left -= p
    s = np.array(parts, np.int64)
    return Case("Split", [("X", arr(shape)), ("split", s)], {"axis": ax}, 18, {"split": s},
                nout=len(parts))


def g_misc():
    op = ch(["Trilu", "OneHot", "Tile", "Expand", "Transpose", "Compress", "ReverseSequence",
             "Mod", "Clip", "LRN", "MeanVarianceNormalization", "Flatten", "Col2Im",
             "CenterCropPad", "AffineGrid", "Det", "NegativeLogLikelihoodLoss"])
    if op == "Trilu":
        shape = [ri(1, 3), ri(1, 5), ri(1, 5)][-ri(2, 3):]
        k = np.array(ri(-4, 4), np.int64)
        return Case(op, [("X", arr(shape)), ("k", k)], {"upper": ri(0, 1)}, 14, {"k": k})
    if op == "OneHot":
        rank = ri(1, 2); shape = [ri(1, 4) for _ in range(rank)]
        depth = ri(2, 5)
        idx = R.integers(-depth, depth, size=shape).astype(np.int64)
        d = np.array(depth, np.int64); v = np.array([0.5, 2.0], F)
        return Case(op, [("I", idx), ("D", d), ("V", v)], {"axis": ri(-rank - 1, rank)}, 11,
                    {"D": d, "V": v})
    if op == "Tile":
        rank = ri(1, 3); shape = [ri(1, 3) for _ in range(rank)]
        r_ = np.array([ri(1, 3) for _ in range(rank)], np.int64)
        return Case(op, [("X", arr(shape)), ("r", r_)], {}, 13, {"r": r_})
    if op == "Expand":
        rank = ri(1, 3); shape = [ch([1, ri(1, 3)]) for _ in range(rank)]
        tgt = [ri(1, 3) if s == 1 else s for s in shape]
        if R.random() < 0.5:
            tgt = [ri(1, 2)] + tgt
        tgt = [1 if R.random() < 0.2 else t for t in tgt]
        t = np.array(tgt, np.int64)
        return Case(op, [("X", arr(shape)), ("s", t)], {}, 13, {"s": t})
    if op == "Transpose":
        rank = ri(1, 5); shape = [ri(1, 4) for _ in range(rank)]
        return Case(op, [("X", arr(shape))], {"perm": R.permutation(rank).tolist()}, 13)
    if op == "Compress":
        rank = ri(1, 3); shape = [ri(1, 4) for _ in range(rank)]
        if R.random() < 0.7:
            ax = ri(-rank, rank - 1)
            c = (R.random(size=ri(1, shape[ax])) < 0.5)
            return Case(op, [("X", arr(shape)), ("c", c)], {"axis": ax}, 11, {"c": c})
        c = (R.random(size=ri(1, int(np.prod(shape)))) < 0.5)
        return Case(op, [("X", arr(shape)), ("c", c)], {}, 11, {"c": c})
    if op == "ReverseSequence":
        ta = ri(0, 1); t, b = ri(1, 5), ri(1, 4)
        shape = [t, b, ri(1, 3)] if ta == 0 else [b, t, ri(1, 3)]
        ln = R.integers(1, t + 1, size=b).astype(np.int64)
        return Case(op, [("X", arr(shape)), ("L", ln)], {"time_axis": ta, "batch_axis": 1 - ta},
                    10, {"L": ln})
    if op == "Mod":
        fm = ri(0, 1)
        if fm:
            return Case(op, [("A", arr([3, 4], -5, 5)), ("B", arr([4], 0.5, 2) * ch([1, -1]))],
                        {"fmod": 1}, 13)
        a = R.integers(-20, 20, size=[3, 4]).astype(np.int32)
        b = (R.integers(1, 6, size=[4]) * R.choice([-1, 1], size=[4])).astype(np.int32)
        return Case(op, [("A", a), ("B", b)], {}, 13)
    if op == "Clip":
        ins = [("X", arr([3, 4], -2, 2))]
        consts = {}
        lo = np.array(-0.5, F) if R.random() < 0.7 else None
        hi = np.array(0.7, F) if R.random() < 0.7 else None
        if lo is not None and hi is not None and R.random() < 0.2:
            lo, hi = np.array(0.8, F), np.array(0.2, F)
        ins.append(("lo", lo) if lo is not None else ("", None))
        if lo is not None: consts["lo"] = lo
        if hi is not None:
            ins.append(("hi", hi)); consts["hi"] = hi
        return Case(op, ins, {}, 13, consts)
    if op == "LRN":
        return Case(op, [("X", arr([1, ri(1, 6), ri(1, 3), ri(1, 3)]))],
                    {"size": ch([1, 2, 3, 4, 5]), "alpha": 0.01, "beta": 0.6, "bias": 1.5}, 13)
    if op == "MeanVarianceNormalization":
        rank = ri(2, 4); shape = [ri(1, 4) for _ in range(rank)]
        axes = sorted(R.choice(range(rank), size=ri(1, rank), replace=False).tolist())
        return Case(op, [("X", arr(shape))], {"axes": axes}, 13)
    if op == "Flatten":
        rank = ri(1, 4); shape = [ri(1, 4) for _ in range(rank)]
        return Case(op, [("X", arr(shape))], {"axis": ri(-rank, rank)}, 13)
    if op == "Col2Im":
        k = [ri(1, 3), ri(1, 3)]; d = [ri(1, 2), ri(1, 2)]; s = [ri(1, 2), ri(1, 2)]
        p = [ri(0, 1) for _ in range(4)]
        img = [ri(k[i] * d[i], 6) for i in range(2)]
        L = 1
        for i in range(2):
            L *= (img[i] + p[i] + p[i + 2] - d[i] * (k[i] - 1) - 1) // s[i] + 1
        c = ri(1, 2)
        x = arr([1, c * k[0] * k[1], L])
        im = np.array(img, np.int64); kk = np.array(k, np.int64)
        return Case(op, [("X", x), ("im", im), ("k", kk)],
                    {"dilations": d, "pads": p, "strides": s}, 18, {"im": im, "k": kk})
    if op == "CenterCropPad":
        rank = ri(1, 3); shape = [ri(1, 6) for _ in range(rank)]
        tgt = np.array([ri(1, 7) for _ in range(rank)], np.int64)
        return Case(op, [("X", arr(shape)), ("s", tgt)], {}, 18, {"s": tgt})
    if op == "AffineGrid":
        n = ri(1, 2)
        if R.random() < 0.5:
            th = arr([n, 2, 3]); sz = np.array([n, ri(1, 3), ri(1, 4), ri(1, 4)], np.int64)
        else:
            th = arr([n, 3, 4]); sz = np.array([n, 1, ri(1, 3), ri(1, 3), ri(1, 3)], np.int64)
        return Case(op, [("T", th), ("sz", sz)], {"align_corners": ri(0, 1)}, 20, {"sz": sz})
    if op == "Det":
        nn = ri(1, 4)
        return Case(op, [("X", arr([ri(1, 2), nn, nn]))], {}, 22)
    n, c = ri(1, 3), ri(2, 4)
    rest = [ri(1, 3) for _ in range(ri(0, 2))]
    x = arr([n, c] + rest)
    t = R.integers(0, c, size=[n] + rest).astype(np.int64)
    attrs = {"reduction": ch(["none", "sum", "mean"])}
    ins = [("X", x), ("T", t)]
    consts = {"T": t}
    if R.random() < 0.5:
        attrs["ignore_index"] = int(t.flat[0])
    if R.random() < 0.5:
        w = arr([c], 0.1, 1); ins.append(("Wt", w)); consts["Wt"] = w
    return Case(op, ins, attrs, 22, consts)



def g_rnn():
    op = ch(["RNN", "GRU", "LSTM"])
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    T, B, I, H = ri(1, 4), ri(1, 3), ri(1, 4), ri(1, 4)
    direction = ch(["forward", "reverse", "bidirectional"])
    D = 2 if direction == "bidirectional" else 1
    layout = ri(0, 1)
    attrs = {"hidden_size": H, "direction": direction, "layout": layout}
    if R.random() < 0.3:
        attrs["clip"] = 0.5
    if op == "GRU":
        attrs["linear_before_reset"] = ri(0, 1)
    if R.random() < 0.3:
        acts = {"RNN": [["Tanh"], ["Relu"], ["Sigmoid"]], "GRU": [["Sigmoid", "Tanh"], ["HardSigmoid", "Relu"]],
                "LSTM": [["Sigmoid", "Tanh", "Tanh"], ["HardSigmoid", "Tanh", "Relu"]]}[op]
        a = ch(acts)
        attrs["activations"] = a * D
    x = arr([B, T, I] if layout else [T, B, I])
    w = arr([D, gates * H, I]); r = arr([D, gates * H, H])
    ins = [("X", x), ("W", w), ("R", r)]
    consts = {"W": w, "R": r}
    opt = []
    if R.random() < 0.7:
        b = arr([D, 2 * gates * H]); opt.append(("Bb", b)); consts["Bb"] = b
    else:
        opt.append(("", None))
    if R.random() < 0.4:
        sl = R.integers(1, T + 1, size=B).astype(np.int32); opt.append(("sl", sl)); consts["sl"] = sl
    else:
        opt.append(("", None))
    if R.random() < 0.5:
        h0 = arr([B, D, H] if layout else [D, B, H]); opt.append(("h0", h0))
    else:
        opt.append(("", None))
    if op == "LSTM":
        if R.random() < 0.5:
            c0 = arr([B, D, H] if layout else [D, B, H]); opt.append(("c0", c0))
        else:
            opt.append(("", None))
        if R.random() < 0.3:
            p = arr([D, 3 * H]); opt.append(("P", p)); consts["P"] = p
    while opt and opt[-1][1] is None:
        opt.pop()
    nout = 3 if op == "LSTM" else 2
    return Case(op, ins + opt, attrs, ch([14, 22]), consts, nout=nout, ort_only=True)


def g_quant():
    op = ch(["QuantizeLinear", "DequantizeLinear", "QLinearMatMul", "MatMulInteger",
             "QLinearConv", "ConvInteger", "DynamicQuantizeLinear"])
    if op in ("QuantizeLinear", "DequantizeLinear"):
        rank = ri(1, 3); shape = [ri(1, 4) * (2 if d == rank - 1 else 1) for d in range(rank)]
        mode = ch(["tensor", "axis", "block"])
        dt = ch([np.int8, np.uint8, np.int16, np.uint16])
        attrs = {}
        if mode == "tensor":
            sshape = []
        elif mode == "axis":
            ax = ri(-rank, rank - 1); attrs["axis"] = ax; sshape = [shape[ax]]
        else:
            ax = ri(0, rank - 1); bs = ch([1, 2]) if shape[ax] % 2 == 0 else 1
            attrs["axis"] = ax; attrs["block_size"] = bs
            sshape = list(shape); sshape[ax] = shape[ax] // bs
        sc = arr(sshape, 0.01, 0.2)
        info = np.iinfo(dt)
        zp = R.integers(max(info.min, -50), min(info.max, 50) + 1, size=sshape).astype(dt)
        if op == "QuantizeLinear":
            x = arr(shape, -10, 10)
            ins = [("X", x), ("S", sc)] + ([("Z", zp)] if R.random() < 0.8 else [])
            return Case(op, ins, attrs, 21, {"S": sc, "Z": zp})
        x = R.integers(info.min, info.max + 1, size=shape).astype(dt)
        return Case(op, [("X", x), ("S", sc), ("Z", zp)], attrs, 21, {"S": sc, "Z": zp})
    if op == "DynamicQuantizeLinear":
        return Case(op, [("X", arr([ri(1, 3), ri(1, 5)], -3, 3))], {}, 11, nout=3)
    if op == "MatMulInteger":
        m, k, n = ri(1, 4), ri(1, 5), ri(1, 4)
        at, bt = ch([np.int8, np.uint8]), ch([np.int8, np.uint8])
        a = R.integers(-100 if at == np.int8 else 0, 100, size=[ri(1, 2), m, k]).astype(at)
        b = R.integers(-100 if bt == np.int8 else 0, 100, size=[k, n]).astype(bt)
        ins = [("A", a), ("Bm", b)]
        consts = {"Bm": b}
        if R.random() < 0.7:
            az = np.array(ri(0, 9), at); bz = R.integers(0, 9, size=[n] if R.random() < 0.5 else []).astype(bt)
            ins += [("az", az), ("bz", bz)]; consts.update({"az": az, "bz": bz})
        return Case(op, ins, {}, 10, consts)
    if op == "QLinearMatMul":
        m, k, n = ri(1, 4), ri(1, 5), ri(1, 4)
        t = ch([np.int8, np.uint8])
        lo = -128 if t == np.int8 else 0
        a = R.integers(lo, lo + 256, size=[m, k]).astype(t); b = R.integers(lo, lo + 256, size=[k, n]).astype(t)
        f = lambda v: np.array(v, F)
        z = lambda: np.array(ri(lo + 100, lo + 150), t)
        bs = arr([n], 0.005, 0.02) if R.random() < 0.5 else f(0.01)
        bz = R.integers(lo + 100, lo + 150, size=bs.shape).astype(t)
        ins = [("A", a), ("as", f(0.02)), ("az", z()), ("Bm", b), ("bs", bs), ("bz", bz), ("ys", f(0.5)), ("yz", z())]
        return Case(op, ins, {}, 21, {n_: v for n_, v in ins if n_ not in ("A",)})
    if op in ("QLinearConv", "ConvInteger"):
        g = ch([1, 1, 2]); cin = g * ri(1, 2); cout = g * ri(1, 2)
        k = [ri(1, 3), ri(1, 3)]; sp = [ri(3, 6), ri(3, 6)]
        attrs = {"group": g, "strides": [ri(1, 2), ri(1, 2)], "dilations": [ri(1, 2), 1], "pads": [ri(0, 1) for _ in range(4)]}
        t = np.uint8 if op == "ConvInteger" else ch([np.int8, np.uint8])
        lo = -128 if t == np.int8 else 0
        x = R.integers(lo, lo + 256, size=[1, cin] + sp).astype(t)
        w = R.integers(-100, 100, size=[cout, cin // g] + k).astype(np.int8 if op == "QLinearConv" else np.uint8) if op == "QLinearConv" else R.integers(0, 200, size=[cout, cin // g] + k).astype(np.uint8)
        if op == "ConvInteger":
            xz = np.array(ri(0, 20), t)
            return Case(op, [("X", x), ("W", w), ("xz", xz)], attrs, 10, {"W": w, "xz": xz})
        f = lambda v: np.array(v, F)
        ws = arr([cout], 0.005, 0.02) if R.random() < 0.5 else f(0.01)
        wz = np.zeros(ws.shape, np.int8)
        ins = [("X", x), ("xs", f(0.02)), ("xz", np.array(lo + 128, t)), ("W", w), ("ws", ws), ("wz", wz),
               ("ys", f(0.3)), ("yz", np.array(lo + 120, t))]
        if R.random() < 0.5:
            bb = R.integers(-1000, 1000, size=[cout]).astype(np.int32); ins.append(("bb", bb))
        return Case(op, ins, attrs, 10, {n_: v for n_, v in ins if n_ != "X"})


def g_bcast():
    op = ch(["Sum", "Max", "Min", "Mean", "Where", "PRelu", "MatMul", "Div", "Pow", "BitShift",
             "IsInf", "Shape", "EyeLike", "Range", "LpNormalization", "BatchNormalization",
             "GlobalLpPool", "Cast", "Unique", "Upsample"])
    if op in ("Sum", "Max", "Min", "Mean"):
        n = ri(1, 3); rank = ri(1, 3)
        base = [ri(1, 3) for _ in range(rank)]
        ins = []
        for i in range(n):
            r_ = ri(1, rank); sh = [1 if R.random() < 0.3 else d for d in base[rank - r_:]]
            ins.append(("I%d" % i, arr(sh)))
        return Case(op, ins, {}, 13)
    if op == "Where":
        rank = ri(1, 3); base = [ri(1, 3) for _ in range(rank)]
        sh = lambda: [1 if R.random() < 0.4 else d for d in base[rank - ri(1, rank):]]
        c = R.random(size=sh()) < 0.5
        return Case(op, [("C", c), ("A", arr(sh())), ("Bb", arr(sh()))], {}, 16)
    if op == "PRelu":
        shape = [ri(1, 2), ri(1, 4), ri(1, 3), ri(1, 3)]
        sl = arr(ch([[shape[1], 1, 1], [1], [shape[-1]], [shape[1], shape[2], shape[3]]]))
        return Case(op, [("X", arr(shape)), ("s", sl)], {}, 16, {"s": sl})
    if op == "MatMul":
        a = ch([[ri(1, 4)], [ri(1, 3), ri(1, 4)], [ri(1, 2), ri(1, 3), ri(1, 4)], [ri(1, 2), 1, ri(1, 3), ri(1, 4)]])
        k = a[-1]
        b = ch([[k], [k, ri(1, 3)], [ri(1, 2), k, ri(1, 3)], [1, ri(1, 2), k, ri(1, 3)]])
        if len(a) >= 3 and len(b) >= 3:
            b[-3] = ch([1, a[-3]])
        return Case(op, [("A", arr(a)), ("Bm", arr(b))], {}, 13)
    if op == "Div":
        t = ch([np.int32, np.int64, np.int8, np.uint8])
        lo = 0 if t == np.uint8 else -50
        a = R.integers(lo, 50, size=[3, 4]).astype(t)
        b = R.integers(1, 7, size=[4]).astype(t)
        if t != np.uint8:
            b = (b * R.choice([-1, 1], size=4)).astype(t)
        return Case(op, [("A", a), ("Bv", b)], {}, 14)
    if op == "Pow":
        bt = ch([np.float32, np.int32, np.int64])
        a = arr([3, 4], 0.1, 2) if R.random() < 0.5 else R.integers(-5, 5, size=[3, 4]).astype(ch([np.int32, np.int64]))
        b = R.integers(0, 4, size=[4]).astype(bt)
        return Case(op, [("A", a), ("Bv", b)], {}, 15)
    if op == "BitShift":
        t = ch([np.uint8, np.uint16, np.uint32, np.uint64])
        a = R.integers(0, 200, size=[3, 4]).astype(t); b = R.integers(0, 8, size=[4]).astype(t)
        return Case(op, [("A", a), ("Bv", b)], {"direction": ch(["LEFT", "RIGHT"])}, 11)
    if op == "IsInf":
        x = np.array([1, -np.inf, np.inf, np.nan, 0, -3], F)
        return Case(op, [("X", x)], {"detect_negative": ri(0, 1), "detect_positive": ri(0, 1)}, 20)
    if op == "Shape":
        rank = ri(1, 4); shape = [ri(1, 4) for _ in range(rank)]
        attrs = {}
        if R.random() < 0.5: attrs["start"] = ri(-rank - 1, rank + 1)
        if R.random() < 0.5: attrs["end"] = ri(-rank - 1, rank + 1)
        return Case(op, [("X", arr(shape))], attrs, 21)
    if op == "EyeLike":
        attrs = {"k": ri(-3, 3)}
        if R.random() < 0.5: attrs["dtype"] = ch([TensorProto.INT32, TensorProto.DOUBLE])
        return Case(op, [("X", arr([ri(1, 4), ri(1, 5)]))], attrs, 22)
    if op == "Range":
        st, lim, de = ch([(0, 5, 1), (5, 0, -2), (1.5, 4.0, 0.7), (3, 3, 1), (-2, 7, 3), (2.0, -1.0, -0.4)])
        t = np.float32 if isinstance(st, float) else ch([np.int32, np.int64, np.float32])
        a, b, c = np.array(st, t), np.array(lim, t), np.array(de, t)
        return Case(op, [("s", a), ("l", b), ("d", c)], {}, 11, {"s": a, "l": b, "d": c})
    if op == "LpNormalization":
        rank = ri(1, 3); shape = [ri(1, 4) for _ in range(rank)]
        return Case(op, [("X", arr(shape))], {"axis": ri(-rank, rank - 1), "p": ri(1, 2)}, 22)
    if op == "BatchNormalization":
        shape = [ri(1, 2), ri(1, 4)] + [ri(1, 3) for _ in range(ri(0, 2))]
        c = shape[1]
        ps = [arr([c]), arr([c]), arr([c]), arr([c], 0.1, 1)]
        ins = [("X", arr(shape))] + list(zip(["sc", "bi", "mu", "va"], ps))
        return Case(op, ins, {"epsilon": 1e-3, "momentum": 0.8}, 15, dict(ins[1:]))
    if op == "GlobalLpPool":
        return Case(op, [("X", arr([ri(1, 2), ri(1, 3)] + [ri(1, 4) for _ in range(ri(1, 3))]))], {"p": ri(1, 3)}, 22)
    if op == "Cast":
        src = ch([np.float32, np.int32, np.int64, np.uint8, np.int8, np.bool_, np.float64, np.float16])
        to = ch([TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8, TensorProto.INT8,
                 TensorProto.BOOL, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT16, TensorProto.UINT16])
        if src in (np.float32, np.float64, np.float16):
            # (a float beyond an integer type's range casts to an undefined value: the spec)
            dst = helper.tensor_dtype_to_np_dtype(to)
            lo, hi = (np.iinfo(dst).min, np.iinfo(dst).max) if dst.kind in "iu" else (-300, 300)
            x = R.uniform(max(lo, -300), min(hi, 300), size=[3, 4]).astype(src)
        elif src == np.bool_:
            x = R.random(size=[3, 4]) < 0.5
        else:
            info = np.iinfo(src); x = R.integers(max(info.min, -1000), min(info.max, 1000), size=[3, 4]).astype(src)
        return Case(op, [("X", x)], {"to": to}, 21)
    if op == "Unique":
        x = R.integers(0, 4, size=[ri(1, 3), ri(1, 4)]).astype(F)
        attrs = {"sorted": 1}
        if R.random() < 0.5: attrs["axis"] = ri(-2, 1)
        # a constant: odlac refuses Unique of a run-time input (its result shapes depend on it)
        return Case(op, [("X", x)], attrs, 11, {"X": x}, nout=4)
    x = arr([1, ri(1, 2), ri(1, 3), ri(1, 3)])
    sc = np.array([1, 1, ch([1.0, 2.0, 3.0, 1.5]), ch([1.0, 2.0, 2.5])], F)
    return Case("Upsample", [("X", x), ("sc", sc)], {"mode": ch(["nearest", "linear"])}, 9, {"sc": sc})


def g_detect():
    op = ch(["RoiAlign", "NonMaxSuppression", "MaxUnpool", "MaxRoiPool"])
    if op == "RoiAlign":
        x = arr([ri(1, 2), ri(1, 2), ri(3, 8), ri(3, 8)])
        n = ri(1, 3)
        rois = np.sort(R.uniform(0, 7, size=[n, 2, 2]), axis=1).transpose(0, 2, 1).reshape(n, 4)[:, [0, 1, 2, 3]].astype(F)
        rois = np.stack([rois[:, 0], rois[:, 2], rois[:, 1], rois[:, 3]], 1).astype(F)
        bi = R.integers(0, x.shape[0], size=[n]).astype(np.int64)
        attrs = {"mode": ch(["avg", "max"]), "output_height": ri(1, 3), "output_width": ri(1, 3),
                 "sampling_ratio": ri(0, 2), "spatial_scale": float(ch([1.0, 0.5])),
                 "coordinate_transformation_mode": ch(["half_pixel", "output_half_pixel"])}
        return Case(op, [("X", x), ("rois", rois), ("bi", bi)], attrs, 16, {"rois": rois, "bi": bi})
    if op == "NonMaxSuppression":
        b, c, n = ri(1, 2), ri(1, 2), ri(1, 6)
        boxes = R.uniform(0, 10, size=[b, n, 4]).astype(F)
        scores = R.uniform(0, 1, size=[b, c, n]).astype(F)
        ins = [("bx", boxes), ("sc", scores), ("mo", np.array([ri(0, 4)], np.int64)),
               ("iou", np.array([float(ch([0.0, 0.3, 0.5]))], F)), ("st", np.array([float(ch([0.0, 0.4]))], F))]
        return Case(op, ins, {"center_point_box": ri(0, 1)}, 11, {k: v for k, v in ins[2:]})
    if op == "MaxRoiPool":
        x = arr([1, ri(1, 2), ri(3, 6), ri(3, 6)])
        rois = np.array([[0, 0, 0, 2, 2], [0, 1, 1, 4, 3]], F)[:ri(1, 2)]
        return Case(op, [("X", x), ("rois", rois)], {"pooled_shape": [ri(1, 2), ri(1, 2)], "spatial_scale": 1.0}, 1, {"rois": rois})
    x = arr([1, ri(1, 2), ri(1, 3), ri(1, 3)])
    k = [2, 2]
    idx = np.arange(x.size).reshape(x.shape).astype(np.int64)
    idx = (idx // x.shape[3]) * x.shape[3] * 4 + (idx % x.shape[3]) * 2  # positions in a 2x upsampled plane
    return Case(op, [("X", x), ("I", idx)], {"kernel_shape": k, "strides": [2, 2]}, 22, {"I": idx})


def g_signal():
    op = ch(["DFT", "STFT", "HannWindow", "HammingWindow", "BlackmanWindow"])
    if op.endswith("Window"):
        # not a symmetric window of 1 element: 0 / 0 in ONNX's function, 1 in odlac (documented)
        periodic = ri(0, 1)
        n = np.array(ri(1 if periodic else 2, 8), np.int64)
        return Case(op, [("n", n)], {"periodic": periodic}, 17, {"n": n})
    if op == "DFT":
        n = ri(2, 8)
        cplx = R.random() < 0.5
        x = arr([ri(1, 2), n, 2 if cplx else 1])
        attrs = {"onesided": 0 if cplx else ri(0, 1), "inverse": ri(0, 1) if cplx else 0}
        ins = [("X", x)]
        consts = {}
        if R.random() < 0.5:
            L = np.array(ri(1, n + 2), np.int64); ins.append(("L", L)); consts["L"] = L
        else:
            ins.append(("", None))
        ax = np.array(1, np.int64); ins.append(("ax", ax)); consts["ax"] = ax
        return Case(op, ins, attrs, 20, consts)
    sig = arr([1, ri(8, 16), 1])
    fl = ri(2, 6); st = np.array(ri(1, 3), np.int64)
    ins = [("X", sig), ("st", st)]
    consts = {"st": st}
    if R.random() < 0.5:
        w = arr([fl], 0, 1); ins.append(("w", w)); consts["w"] = w
        if R.random() < 0.5:
            l_ = np.array(fl, np.int64); ins.append(("fl", l_)); consts["fl"] = l_
    else:
        ins.append(("", None)); l_ = np.array(fl, np.int64); ins.append(("fl", l_)); consts["fl"] = l_
    return Case(op, ins, {"onesided": ri(0, 1)}, 17, consts)


def g_llm():
    op = ch(["Attention", "RotaryEmbedding", "RMSNormalization"])
    if op == "RMSNormalization":
        rank = ri(2, 4); shape = [ri(1, 4) for _ in range(rank)]
        ax = ri(-rank, rank - 1); sc = arr(shape[ax % rank:])
        return Case(op, [("X", arr(shape)), ("S", sc)], {"axis": ax, "epsilon": 1e-3}, 23, {"S": sc})
    if op == "RotaryEmbedding":
        b, s, nh, hd = ri(1, 2), ri(1, 4), ri(1, 2), 2 * ri(1, 3)
        rd = ch([hd, hd, 2 * ri(1, hd // 2)])
        x = arr([b, s, nh * hd]) if R.random() < 0.5 else arr([b, nh, s, hd])
        attrs = {"interleaved": ri(0, 1)}
        if x.ndim == 3: attrs["num_heads"] = nh
        if rd != hd: attrs["rotary_embedding_dim"] = rd
        mp = ri(s, s + 3)
        cos = arr([mp, rd // 2]); sin = arr([mp, rd // 2])
        pid = R.integers(0, mp, size=[b, s]).astype(np.int64)
        return Case(op, [("X", x), ("cos", cos), ("sin", sin), ("pid", pid)], attrs, 23, {"cos": cos, "sin": sin, "pid": pid})
    b, qh, sq, skv, hd = ri(1, 2), ch([1, 2, 4]), ri(1, 4), ri(1, 5), ri(1, 4)
    kvh = ch([d for d in (1, 2, 4) if qh % d == 0])
    vd = ch([hd, ri(1, 4)])
    q = arr([b, qh, sq, hd]); k = arr([b, kvh, skv, hd]); v = arr([b, kvh, skv, vd])
    attrs = {}
    if R.random() < 0.4: attrs["is_causal"] = 1
    if R.random() < 0.3: attrs["scale"] = 0.3
    if R.random() < 0.3: attrs["softcap"] = 2.0
    ins = [("Q", q), ("K", k), ("V", v)]
    if R.random() < 0.4:
        if R.random() < 0.5:
            m = arr([sq, skv])
        else:
            m = R.random(size=[b, 1, sq, skv]) < 0.8
            m[..., 0] = True
        ins.append(("M", m))
    return Case(op, ins, attrs, 23)


def g_old():
    """Ops at the older opsets whose signatures or semantics differ from today's."""
    op = ch(["Softmax", "LogSoftmax", "Hardmax", "Clip", "Pad", "Slice", "ReduceSum",
             "ReduceMean", "Split", "Resize", "Upsample", "TopK"])
    rank = ri(1, 4)
    shape = [ri(1, 4) for _ in range(rank)]
    if op in ("Softmax", "LogSoftmax", "Hardmax"):  # opset 11: the input seen as 2-D at axis
        # (ONNX's reference computes them as opset 13's, along the one axis)
        return Case(op, [("X", arr(shape, -3, 3))], {"axis": ri(-rank, rank - 1)}, 11,
                    ort_only=True)
    if op == "Clip":  # opset 6: min and max attributes
        attrs = {}
        if R.random() < 0.8: attrs["min"] = -0.4
        if R.random() < 0.8: attrs["max"] = 0.6
        return Case(op, [("X", arr(shape))], attrs, 6)
    if op == "Pad":  # opset 2: pads and value attributes
        mode = ch(["constant", "reflect", "edge"])
        pads = [ri(0, (shape[d % rank] - 1) if mode == "reflect" else 2) for d in range(2 * rank)]
        return Case(op, [("X", arr(shape))], {"pads": pads, "mode": mode, "value": 0.3}, 2)
    if op == "Slice":  # opset 1: starts, ends, axes attributes, no steps
        named = R.random() < 0.7  # else no axes attribute: the first len(starts) axes
        axes = (sorted(R.choice(range(rank), size=ri(1, rank), replace=False).tolist())
                if named else list(range(ri(1, rank))))
        attrs = {"starts": [ri(-shape[a] - 1, shape[a] + 1) for a in axes],
                 "ends": [ri(-shape[a] - 1, shape[a] + 1) for a in axes]}
        if named:
            attrs["axes"] = axes
        return Case(op, [("X", arr(shape))], attrs, 1)
    if op in ("ReduceSum", "ReduceMean"):  # opset 11: axes attribute
        attrs = {"keepdims": ri(0, 1)}
        if R.random() < 0.7:
            attrs["axes"] = R.choice(range(-rank, rank), size=1).tolist()
        return Case(op, [("X", arr(shape))], attrs, 11)
    if op == "Split":  # opset 11: split attribute
        ax = ri(-rank, rank - 1); n = shape[ax]
        parts = [1] * n if n <= 3 else [1, n - 1]
        attrs = {"axis": ax}
        if R.random() < 0.5: attrs["split"] = parts
        nout = len(parts) if "split" in attrs else ri(1, n)
        if "split" not in attrs and n % nout:
            nout = 1
        return Case(op, [("X", arr(shape))], attrs, 11, nout=nout)
    if op == "Resize":  # opset 11: roi and scales inputs, tf_half_pixel_for_nn
        x = arr([1, ri(1, 2), ri(2, 5), ri(2, 5)])
        roi = np.array([], F)
        sc = np.array([1, 1, ch([0.5, 2.0, 1.5, 3.0]), ch([0.5, 2.0, 2.5])], F)
        ctm = ch(["half_pixel", "asymmetric", "align_corners", "tf_half_pixel_for_nn",
                  "pytorch_half_pixel"])
        mode = "nearest" if ctm == "tf_half_pixel_for_nn" else ch(["nearest", "linear", "cubic"])
        attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
        if mode == "nearest":
            attrs["nearest_mode"] = ch(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
        return Case(op, [("X", x), ("roi", roi), ("sc", sc)], attrs, 11, {"roi": roi, "sc": sc},
                    ort_only=ctm == "tf_half_pixel_for_nn")  # (which ONNX's reference lacks)
    if op == "Upsample":  # opset 7: scales attribute
        x = arr([1, ri(1, 2), ri(1, 3), ri(1, 3)])
        return Case(op, [("X", x)], {"mode": ch(["nearest", "linear"]),
                                     "scales": [1.0, 1.0, ch([1.0, 2.0, 3.0]), ch([2.0, 1.5])]}, 7,
                    ort_only=True)  # (ONNX's reference runs no Upsample-7)
    ax = ri(-rank, rank - 1)  # TopK opset 1: k attribute
    x = R.permutation(int(np.prod(shape))).reshape(shape).astype(F)
    return Case(op, [("X", x)], {"axis": ax, "k": ri(1, shape[ax])}, 1, nout=2)


FAMILIES = {k[2:]: v for k, v in dict(globals()).items() if k.startswith("g_")}
NP_TO_ONNX = {np.dtype(t): helper.np_dtype_to_tensor_dtype(np.dtype(t)) for t in (
    np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint64,
    np.uint32, np.uint16, np.uint8, np.bool_)}


def build(c):
    """The case as a model whose outputs carry ONNX's inferred types; and its feed."""
    inputs, inits, feed, names = [], [], {}, []
    for n, v in c.inputs:
        names.append(n)
        if v is None:
            continue
        if n in c.consts:
            inits.append(numpy_helper.from_array(v, n))
        else:
            inputs.append(helper.make_tensor_value_info(n, NP_TO_ONNX[v.dtype], list(v.shape)))
            feed[n] = v
    outs = ["Y%d" % i for i in range(c.nout)]
    node = helper.make_node(c.op, names, outs, **c.attrs)
    opsets = [helper.make_opsetid("", c.opset)]
    # Identity nodes make the outputs intermediate values, which shape inference types.
    ids = [helper.make_node("Identity", [o], ["Z" + o]) for o in outs]
    g = helper.make_graph([node] + ids, "g", inputs,
                          [helper.make_tensor_value_info("Z" + o, TensorProto.UNDEFINED, None)
                           for o in outs], inits)
    m = helper.make_model(g, opset_imports=opsets, ir_version=9)
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    types = {vi.name: vi for vi in m.graph.value_info}
    if any(o not in types for o in outs):
        raise ValueError("shape inference gives no type for an output")
    g = helper.make_graph([node], "g", inputs, [types[o] for o in outs], inits)
    m = helper.make_model(g, opset_imports=opsets, ir_version=9)
    onnx.checker.check_model(m, full_check=True)
    return m, feed


def agree(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return np.array_equal(a, b)
    nan = np.isnan(a)
    return np.array_equal(nan, np.isnan(b)) and bool(
        np.all(np.abs(a - b)[~nan] <= ATOL + RTOL * np.abs(b)[~nan]))


def expected(c, m, feed):
    """ONNX Runtime's outputs, checked as the docstring says; ValueError names a skip."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        res = ort.InferenceSession(m.SerializeToString(), so,
                                   providers=["CPUExecutionProvider"]).run(None, feed)
    except Exception as e:  # noqa: BLE001 (any refusal of ONNX Runtime's skips the case)
        raise ValueError("ONNX Runtime: " + str(e).splitlines()[0][:160]) from None
    for vi, r in zip(m.graph.output, res):
        dims = vi.type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):  # data-dependent: ORT's extents
            for d, n in zip(dims, np.asarray(r).shape):
                d.Clear()
                d.dim_value = n
        if [d.dim_value for d in dims] != list(np.asarray(r).shape):
            raise ValueError("ONNX Runtime's shape %s, ONNX's shape inference %s"
                             % (list(np.asarray(r).shape), [d.dim_value for d in dims]))
    if c.ort_only:
        return res
    try:
        ref = ReferenceEvaluator(m).run(None, feed)
    except Exception as e:  # noqa: BLE001
        raise ValueError("ONNX's reference: " + str(e).splitlines()[0][:160]) from None
    if not all(agree(a, b) for a, b in zip(res, ref)):
        raise ValueError("ONNX Runtime and ONNX's reference disagree")
    return res


def write_case(out, name, c, m, feed, res):
    """The case's folder in ONNX's layout (odlactest.write_test_folder) and its case.txt."""
    odlactest.write_test_folder(out, name, m, [([feed[vi.name] for vi in m.graph.input], res)])
    with open(os.path.join(out, "node", name, "case.txt"), "w") as f:
        f.write(describe(c) + "\n")


def describe(c):
    lines = ["%s (opset %d) %s" % (c.op, c.opset, c.attrs)]
    for n, v in c.inputs:
        if v is None:
            lines.append("  (absent)")
        else:
            shown = v.tolist() if n in c.consts and v.size <= 16 else ""
            lines.append("  %s %s %s%s %s" % (n, v.dtype, list(v.shape),
                                              " initializer" if n in c.consts else "", shown))
    return "\n".join(lines)


def generate(out, seed, count, families):
    global R
    R = np.random.default_rng(seed)
    os.makedirs(os.path.join(out, "node"))
    tolerances, skipped, made, tries = {}, [], 0, 0
    while made < count and tries < 20 * count:
        tries += 1
        family = ch(families)
        c = FAMILIES[family]()
        try:
            m, feed = build(c)
            res = expected(c, m, feed)
        except (ValueError, onnx.checker.ValidationError,
                onnx.shape_inference.InferenceError) as e:
            skipped.append("%s: %s\n  %s" % (family, str(e).splitlines()[0][:200],
                                             describe(c).replace("\n", "\n  ")))
            continue
        name = "test_%s_%04d" % (c.op.lower(), made)
        write_case(out, name, c, m, feed, res)
        tolerances["node/" + name] = {"rtol": RTOL, "atol": ATOL}
        made += 1
    with open(os.path.join(out, "disagreements.txt"), "w") as f:
        f.write("# Cases drawn and skipped (gen_random_suite.py): why, then the case.\n")
        f.write("\n".join(skipped) + "\n")
    return tolerances, made, tries, len(skipped)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=600)
    p.add_argument("--families", default=",".join(sorted(FAMILIES)),
                   help="comma-separated, of: " + ", ".join(sorted(FAMILIES)))
    args = p.parse_args(argv)
    families = args.families.split(",")
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        p.error("unknown families: " + ", ".join(unknown))
    script = hashlib.sha256()
    for path in (os.path.abspath(__file__), odlactest.__file__):  # the generator and its writer
        with open(path, "rb") as f:
            script.update(f.read())
    script = script.hexdigest()[:16]
    key = {"onnx": onnx.__version__, "onnxruntime": ort.__version__, "numpy": np.__version__,
           "generator": script, "seed": args.seed, "count": args.count, "families": families}
    out = os.path.abspath(args.dir)
    try:
        with open(os.path.join(out, "suite.json")) as f:
            info = json.load(f)
    except (OSError, ValueError):
        info = {}
    if all(info.get(k) == v for k, v in key.items()):
        print("%s is current" % out)
        return 0
    ort.set_default_logger_severity(4)  # its refusals are listed, not printed
    warnings.simplefilter("ignore")  # nor the reference's numpy warnings (e.g. 0 / 0)
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tolerances, made, tries, skipped = generate(tmp, args.seed, args.count, families)
    with open(os.path.join(tmp, "suite.json"), "w") as f:
        json.dump(dict(key, suites={"node": sorted(os.listdir(os.path.join(tmp, "node")))},
                       tolerances=tolerances), f, indent=1)
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print("%s: %d cases of %d drawn (seed %d); %d skipped, listed in disagreements.txt"
          % (out, made, tries, args.seed, skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
