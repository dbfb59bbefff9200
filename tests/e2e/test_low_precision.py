#!/usr/bin/env python3
"""ONNX's low-precision element types end to end: the 8-bit floats (FLOAT8E4M3FN, E4M3FNUZ,
E5M2, E5M2FNUZ, E8M0), FLOAT4E2M1 and the 4- and 2-bit integers (INT4, UINT4, INT2, UINT2)
through Cast, QuantizeLinear and DequantizeLinear, with expected outputs from ONNX 1.23's own
reference implementation (onnx.reference, on ml_dtypes), not from odlac.

ONNX's node tests hold a few values per conversion; these sweeps hold every float16 value, the
midpoints between neighbouring values of each target (the ties of round-to-nearest-even),
values beyond each target's range, both saturate settings and every round_mode, every code of
each 8- and 4-bit type, odd element counts (a half-filled last byte in the packed files) and
packed 4-bit initializers (weights), so a wrong rounding, sign, NaN or packing shows.

Run with the project venv's python (onnx 1.23, ml_dtypes). Environment as test_new_ops.py."""
import os
import sys

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_new_ops as base  # noqa: E402  (the model and folder helpers, the runner call)

RNG = np.random.default_rng(23)

FLOAT8 = {TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
          TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
          TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
          TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz}
SMALL = dict(FLOAT8)
SMALL.update({TensorProto.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu,
              TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
              TensorProto.INT4: ml_dtypes.int4, TensorProto.UINT4: ml_dtypes.uint4,
              TensorProto.INT2: ml_dtypes.int2, TensorProto.UINT2: ml_dtypes.uint2})
base.NP_TO_ONNX.update({np.dtype(t).type: k for k, t in SMALL.items()})
base.NP_TO_ONNX[np.float16] = TensorProto.FLOAT16
NAMES = {k: TensorProto.DataType.Name(k).lower() for k in SMALL}


def reference(name, opset, node, inputs, outputs, initializers=()):
    """A single-node case whose outputs (names and element types given by `outputs`, arrays
    whose values are ignored) are computed by ONNX's reference implementation."""
    _, model, ins, outs = base.single_node(name, opset, node, inputs, outputs, initializers)
    got = ReferenceEvaluator(model).run(None, dict(inputs))
    for want, have in zip(outs, got):
        assert want.dtype == have.dtype and want.shape == have.shape, (name, want, have)
    return name, model, ins, [np.asarray(g) for g in got]


def codes(t):
    """Every value of a one-byte or packed type, as that type."""
    if t in (TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2):
        info = ml_dtypes.iinfo(SMALL[t])
        return np.arange(int(info.min), int(info.max) + 1).astype(SMALL[t])
    # ml_dtypes holds FLOAT4E2M1 one code per byte, in the low nibble, as odlac does.
    n = 16 if t == TensorProto.FLOAT4E2M1 else 256
    return np.arange(n, dtype=np.uint8).view(SMALL[t])


def sweep(t):
    """float32 inputs for conversions to float type t: every float16 value, the midpoints of
    t's neighbouring finite values, values just beside them, and a few beyond t's range."""
    every_f16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    finite = np.unique(codes(t).astype(np.float32))
    finite = finite[np.isfinite(finite)]
    mid = (finite[:-1] + finite[1:]) / 2
    beside = np.concatenate([np.nextafter(mid, np.float32(np.inf)),
                             np.nextafter(mid, np.float32(-np.inf))])
    big = float(finite.max())
    far = np.array([big * 1.01, big * 1.5, big * 4, 1e30, np.inf], np.float32)
    return np.concatenate([every_f16, mid, beside, far, -far]).astype(np.float32)


def cast_node(to, **attrs):
    return helper.make_node("Cast", ["x"], ["y"], to=to, **attrs)


def cast_cases():
    for t, dt in FLOAT8.items():
        x = sweep(t)
        for sat in (0, 1):
            yield reference("lp_cast_f32_to_%s_sat%d" % (NAMES[t], sat), 21,
                            cast_node(t, saturate=sat), [("x", x)],
                            [("y", np.zeros(x.shape, dt))])
        x16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
        yield reference("lp_cast_f16_to_%s_nosat" % NAMES[t], 21, cast_node(t, saturate=0),
                        [("x", x16)], [("y", np.zeros(x16.shape, dt))])
    # E8M0: powers of two, their neighbours, halfway points, large and tiny values, negatives
    # (the sign is dropped), each round_mode with and without saturation.
    p = np.ldexp(np.float32(1), np.arange(-127, 128)).astype(np.float32)
    x = np.concatenate([p, p * 1.5, p * 1.25, p * 1.75, np.nextafter(p, np.float32(0)),
                        np.nextafter(p, np.float32(np.inf)), -p * 1.5,
                        RNG.standard_normal(4000).astype(np.float32) * 1e3,
                        np.array([3.4e38, np.inf, -np.inf, np.nan, 1e-45], np.float32)])
    x = x.astype(np.float32)
    for mode in ("up", "down", "nearest"):
        for sat in (0, 1):
            yield reference("lp_cast_f32_to_e8m0_%s_sat%d" % (mode, sat), 24,
                            cast_node(TensorProto.FLOAT8E8M0, saturate=sat, round_mode=mode),
                            [("x", x)], [("y", np.zeros(x.shape, ml_dtypes.float8_e8m0fnu))])
    # FLOAT4E2M1 (always saturates), an odd count so the packed output ends half-filled.
    x = sweep(TensorProto.FLOAT4E2M1)[:-1]
    if x.size % 2 == 0:
        x = x[:-1]
    yield reference("lp_cast_f32_to_float4e2m1", 23, cast_node(TensorProto.FLOAT4E2M1),
                    [("x", x)], [("y", np.zeros(x.shape, ml_dtypes.float4_e2m1fn))])
    # From every code of each type to float32 and float16, and back to float32.
    for t, dt in SMALL.items():
        c = codes(t)
        opset = 25 if t in (TensorProto.INT2, TensorProto.UINT2) else 24
        for to, npt in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
            yield reference("lp_cast_%s_to_%s" % (NAMES[t], np.dtype(npt).name), opset,
                            cast_node(to), [("x", c)], [("y", np.zeros(c.shape, npt))])
    # Integers to the narrow integers wrap; floats take their integral part, 0 out of range.
    ints = np.arange(-40, 41, dtype=np.int32)
    fl = np.concatenate([np.arange(-20, 20.5, 0.25), [np.nan, np.inf, -np.inf]]).astype(
        np.float32)
    for t in (TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2):
        opset = 25 if t in (TensorProto.INT2, TensorProto.UINT2) else 21
        for src, x in (("i32", ints), ("f32", fl)):
            yield reference("lp_cast_%s_to_%s" % (src, NAMES[t]), opset, cast_node(t),
                            [("x", x)], [("y", np.zeros(x.shape, SMALL[t]))])
        c = codes(t)
        yield reference("lp_cast_%s_to_i8" % NAMES[t], opset, cast_node(TensorProto.INT8),
                        [("x", c)], [("y", np.zeros(c.shape, np.int8))])


def quant_cases():
    qnode = lambda **a: helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], **a)  # noqa
    dnode = lambda **a: helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], **a)  # noqa
    # Blocked int4 along a middle axis of odd extent (the last block is short).
    x = (RNG.standard_normal((2, 7, 3)) * 6).astype(np.float32)
    s = (RNG.random((2, 3, 3)) + 0.25).astype(np.float32)
    z = RNG.integers(-3, 3, (2, 3, 3)).astype(ml_dtypes.int4)
    yield reference("lp_quantize_blocked_int4", 21, qnode(axis=1, block_size=3),
                    [("x", x), ("s", s), ("z", z)], [("y", np.zeros(x.shape, ml_dtypes.int4))])
    # Per-axis to the 8-bit floats, values beyond the range, with and without saturation.
    x = (RNG.standard_normal((3, 5)) * 300).astype(np.float32)
    s = np.array([0.5, 1.0, 2.0], np.float32)
    for t, dt in FLOAT8.items():
        for sat in (0, 1):
            z = np.zeros(3, dt)
            yield reference("lp_quantize_%s_sat%d" % (NAMES[t], sat), 21,
                            qnode(axis=0, saturate=sat), [("x", x), ("s", s), ("z", z)],
                            [("y", np.zeros(x.shape, dt))])
    # uint2 and float4e2m1 per tensor from float16 (scale float16 too).
    x = (RNG.standard_normal(11) * 3).astype(np.float16)
    for t, opset in ((TensorProto.UINT2, 25), (TensorProto.FLOAT4E2M1, 23)):
        z = np.array(1 if t == TensorProto.UINT2 else 0, SMALL[t])
        yield reference("lp_quantize_f16_%s" % NAMES[t], opset, qnode(),
                        [("x", x), ("s", np.array(0.75, np.float16)), ("z", z)],
                        [("y", np.zeros(x.shape, SMALL[t]))])
    # Weight-only int4 and uint4: packed initializers of odd size, blocked, dequantized to
    # float16 (output_dtype, opset 23) and float32.
    for t in (TensorProto.INT4, TensorProto.UINT4):
        lo, hi = (-8, 8) if t == TensorProto.INT4 else (0, 16)
        w = RNG.integers(lo, hi, (5, 9)).astype(SMALL[t])
        s = (RNG.random((5, 3)) + 0.1).astype(np.float32)
        z = RNG.integers(lo, hi, (5, 3)).astype(SMALL[t])
        for out, npt in ((TensorProto.FLOAT16, np.float16), (0, np.float32)):
            attrs = {"axis": 1, "block_size": 4}
            if out:
                attrs["output_dtype"] = out
            name = "lp_dequantize_%s_weights_%s" % (NAMES[t], np.dtype(npt).name)
            _, model, _, _ = base.single_node(name, 23, dnode(**attrs), [],
                                              [("y", np.zeros(w.shape, npt))],
                                              [("x", w), ("s", s), ("z", z)])
            got = ReferenceEvaluator(model).run(None, {})[0]
            yield name, model, [], [got]
    # Every code of the 8-bit floats dequantized with a scale, per tensor.
    for t, dt in FLOAT8.items():
        c = codes(t)
        yield reference("lp_dequantize_%s_all" % NAMES[t], 21,
                        helper.make_node("DequantizeLinear", ["x", "s"], ["y"]),
                        [("x", c), ("s", np.array(0.125, np.float32))],
                        [("y", np.zeros(c.shape, np.float32))])


def main():
    base.run_cases((cast_cases, quant_cases), "low-precision")


if __name__ == "__main__":
    main()
