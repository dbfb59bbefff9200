#!/usr/bin/python3
"""Convolution and pooling shapes that the backends' specialized kernels take, end to end
against float64 numpy written here (not odlac's code), through the conformance runner (as
test_new_ops.py):

- depthwise Conv (group = channels; the reference backend's phase-plane kernel on x86-64 and
  aarch64): kernels 1 to 7, strides 1 and 2, symmetric and asymmetric pads, maps narrower or
  shorter than the kernel, one-row maps, a channel multiplier of 2, no bias, batch 2, float16,
  and the cases it leaves to the row loop (dilation 2, unequal strides); 24 and 72 channels
  (no multiple of 16: on libodla_dnnl, oneDNN's blocked layouts padded);
- a 72-channel depthwise Conv whose result a [1, 72, 1, 1] scale multiplies (MobileNetV3's
  squeeze-excite shape: on libodla_dnnl the product of a padded blocked layout, which oneDNN
  would run on its reference kernel and the backend leaves to its own);
- AveragePool whose window is the whole map (GlobalAveragePool and AveragePool with
  kernel = map, the reference backend's sixteen-sum kernel) over 1-D, 2-D and 3-D maps, one
  cell and 16 x 16 + 3 cells, beside a padded window that keeps the general loop.

Environment: as test_new_ops.py (ODLAC, ODLA_LIB, ODLA_INCLUDE, ODLA_BACKEND,
ODLA_LINK_EXTRA)."""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_new_ops as base  # noqa: E402  (the model and folder helpers, the runner call)

RNG = np.random.default_rng(24)


def conv2d(x, w, b, group, strides, pads, dil):
    """ONNX Conv in float64: x [N, C, H, W], w [M, C / group, kh, kw], pads [top, left, bottom,
    right]."""
    n, c, h, wd = x.shape
    m, cpg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]))
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - (kh - 1) * dil[0] - 1) // strides[0] + 1
    ow = (xp.shape[3] - (kw - 1) * dil[1] - 1) // strides[1] + 1
    y = np.zeros((n, m, oh, ow))
    mpg = m // group
    for o in range(m):
        g = o // mpg
        for ci in range(cpg):
            for i in range(kh):
                for j in range(kw):
                    r0, c0 = i * dil[0], j * dil[1]
                    y[:, o] += w[o, ci, i, j] * xp[:, g * cpg + ci,
                                                   r0:r0 + (oh - 1) * strides[0] + 1:strides[0],
                                                   c0:c0 + (ow - 1) * strides[1] + 1:strides[1]]
        if b is not None:
            y[:, o] += b[o]
    return y


def floats(*shape, dtype=np.float32):
    """Multiples of 1/8 in [-1, 1]: every product and sum of a convolution here is exact in
    float16 and float32 whatever the order, so outputs near 0 compare as well as the rest."""
    return (RNG.integers(-8, 9, shape) / 8).astype(dtype)


def depthwise_cases():
    # name, input shape, multiplier, kernel, strides, pads, dilations, bias, dtype
    cases = [
        ("k3_s1", (1, 6, 9, 11), 1, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True, np.float32),
        ("c72_k5_s2", (1, 72, 14, 14), 1, (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), True,
         np.float32),
        ("c24_k3", (1, 24, 10, 10), 1, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True, np.float32),
        ("k5_s1_7x7", (1, 5, 7, 7), 1, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), True, np.float32),
        ("k5_s2", (1, 4, 13, 12), 1, (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), True, np.float32),
        ("k3_s2_odd", (1, 3, 15, 9), 1, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, np.float32),
        ("k7_asym", (1, 3, 10, 8), 1, (7, 7), (1, 1), (0, 3, 2, 1), (1, 1), True, np.float32),
        ("k3x5_s2_asym", (1, 3, 8, 9), 1, (3, 5), (2, 2), (2, 0, 0, 3), (1, 1), True,
         np.float32),
        ("k5_map_3x3", (1, 4, 3, 3), 1, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), True, np.float32),
        ("k3_s2_map_2x2", (1, 4, 2, 2), 1, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True,
         np.float32),
        ("k3_one_row", (1, 5, 1, 17), 1, (1, 3), (1, 1), (0, 1, 0, 1), (1, 1), True, np.float32),
        ("k1", (1, 5, 6, 6), 1, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), True, np.float32),
        ("k1_s2_pad", (1, 5, 6, 7), 1, (1, 1), (2, 2), (1, 0, 0, 1), (1, 1), True, np.float32),
        ("multiplier_2", (1, 3, 8, 8), 2, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True,
         np.float32),
        ("multiplier_2_s2", (1, 3, 9, 8), 2, (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), True,
         np.float32),
        ("no_bias_batch2", (2, 4, 7, 6), 1, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False,
         np.float32),
        ("float16", (1, 4, 7, 7), 1, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), True, np.float16),
        ("dilation_2", (1, 4, 9, 9), 1, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), True, np.float32),
        ("strides_1x2", (1, 4, 8, 9), 1, (3, 3), (1, 2), (1, 1, 1, 1), (1, 1), True, np.float32),
    ]
    for name, shape, mult, k, strides, pads, dil, bias, dtype in cases:
        c = shape[1]
        x, w = floats(*shape, dtype=dtype), floats(c * mult, 1, *k, dtype=dtype)
        b = floats(c * mult, dtype=dtype) if bias else None
        y = conv2d(x.astype(np.float64), w.astype(np.float64),
                   None if b is None else b.astype(np.float64), c, strides, pads, dil)
        node = helper.make_node("Conv", ["x", "w"] + (["b"] if bias else []), ["y"], group=c,
                                kernel_shape=list(k), strides=list(strides), pads=list(pads),
                                dilations=list(dil))
        weights = [("w", w)] + ([("b", b)] if bias else [])
        yield base.single_node("conv_depthwise_" + name, 13, node, [("x", x)],
                               [("y", y.astype(dtype))], weights)


def channel_scale_cases():
    x, w, b = floats(1, 72, 9, 9), floats(72, 1, 3, 3), floats(72)
    s = floats(1, 72, 1, 1)
    y = conv2d(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), 72, (1, 1),
               (1, 1, 1, 1), (1, 1)) * s.astype(np.float64)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=72, kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Mul", ["c", "s"], ["y"])]
    graph = helper.make_graph(nodes, "conv_depthwise_channel_scale", [base.vi("x", x)],
                              [base.vi("y", y.astype(np.float32))],
                              [numpy_helper.from_array(v, k)
                               for k, v in (("w", w), ("b", b), ("s", s))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    yield "conv_depthwise_channel_scale", model, [x], [y.astype(np.float32)]


def pooling_cases():
    for name, shape in (("1d", (2, 3, 35)), ("2d", (1, 4, 16, 19)), ("3d", (1, 2, 3, 4, 5)),
                        ("one_cell", (1, 5, 1, 1)), ("2d_large", (1, 2, 56, 56))):
        x = floats(*shape)
        y = x.astype(np.float64).mean(axis=tuple(range(2, x.ndim)), keepdims=True)
        yield base.single_node("pool_global_average_" + name, 13,
                               helper.make_node("GlobalAveragePool", ["x"], ["y"]),
                               [("x", x)], [("y", y.astype(np.float32))])
    x = floats(2, 3, 6, 7)
    y = x.astype(np.float64).mean(axis=(2, 3), keepdims=True)
    yield base.single_node("pool_average_whole_map", 13,
                           helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[6, 7]),
                           [("x", x)], [("y", y.astype(np.float32))])
    # Padded: each output a mean over the taps inside (count_include_pad = 0), not global.
    xp = x.astype(np.float64)
    want = np.zeros((2, 3, 1, 3))
    for ow in range(3):
        cols = [j for j in range(ow - 1, ow + 6) if 0 <= j < 7]
        want[:, :, 0, ow] = xp[:, :, :, cols].mean(axis=(2, 3))
    yield base.single_node("pool_average_map_padded", 13,
                           helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[6, 7],
                                            pads=[0, 1, 0, 1]),
                           [("x", x)], [("y", want.astype(np.float32))])


def main():
    base.run_cases((depthwise_cases, channel_scale_cases, pooling_cases), "conv-kernel")


if __name__ == "__main__":
    main()
