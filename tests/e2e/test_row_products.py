#!/usr/bin/python3
"""Products of one row by constant weights (a decoder step's Gemms, a classifier's), the shapes
the backends' one-row kernels take, end to end against float64 numpy written here (not odlac's
code), through the conformance runner (as test_new_ops.py): on libodla_dnnl its own kernel
over packed 64-column panels (runtime_stubs/dnnl/rowproduct.cpp), on the reference backend B
read in place (ref_sgemv), transposed and not.

Gemm with B transposed and not, a per-column bias, a scalar C scaled by beta, alpha without C,
a ReLU after it and a residual Add (fused into the product at odlac's default level), MatMul
of one row; column counts that leave a partial panel and vector (300, 1000), a depth that is
no multiple of four (257), and 256K weights (split over the threads). The values are multiples
of 1/8 in [-1, 1], so every sum is exact in float32 whatever its order: the outputs must equal
numpy's.

Environment: as test_new_ops.py (ODLAC, ODLA_LIB, ODLA_INCLUDE, ODLA_BACKEND,
ODLA_LINK_EXTRA)."""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_new_ops as base  # noqa: E402  (the model and folder helpers, the runner call)

RNG = np.random.default_rng(25)


def floats(*shape):
    return (RNG.integers(-8, 9, shape) / 8).astype(np.float32)


def model(name, nodes, inputs, outputs, weights):
    graph = helper.make_graph(nodes, name, [base.vi(k, v) for k, v in inputs],
                              [base.vi(k, v) for k, v in outputs],
                              [numpy_helper.from_array(v, k) for k, v in weights])
    return (name, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
            [v for _, v in inputs], [v for _, v in outputs])


def gemm_cases():
    k, n = 257, 300
    x = floats(1, k)
    xd = x.astype(np.float64)
    wt, c = floats(n, k), floats(n)  # B transposed: a PyTorch Linear's weights
    y = xd @ wt.astype(np.float64).T + c
    yield model("row_gemm_transposed_bias",
                [helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1)],
                [("x", x)], [("y", y.astype(np.float32))], [("w", wt), ("c", c)])
    w = floats(k, n)
    y = 0.5 * (xd @ w.astype(np.float64))
    yield model("row_gemm_alpha", [helper.make_node("Gemm", ["x", "w"], ["y"], alpha=0.5)],
                [("x", x)], [("y", y.astype(np.float32))], [("w", w)])
    s = floats(1)
    y = xd @ w.astype(np.float64) + 0.5 * s.astype(np.float64)
    yield model("row_gemm_beta_scalar_c",
                [helper.make_node("Gemm", ["x", "w", "s"], ["y"], beta=0.5)],
                [("x", x)], [("y", y.astype(np.float32))], [("w", w), ("s", s)])
    y = np.maximum(xd @ wt.astype(np.float64).T + c, 0.0)
    yield model("row_gemm_relu",
                [helper.make_node("Gemm", ["x", "w", "c"], ["g"], transB=1),
                 helper.make_node("Relu", ["g"], ["y"])],
                [("x", x)], [("y", y.astype(np.float32))], [("w", wt), ("c", c)])
    r = floats(1, n)
    y = xd @ wt.astype(np.float64).T + c + r.astype(np.float64)
    yield model("row_gemm_residual",
                [helper.make_node("Gemm", ["x", "w", "c"], ["g"], transB=1),
                 helper.make_node("Add", ["g", "r"], ["y"])],
                [("x", x), ("r", r)], [("y", y.astype(np.float32))], [("w", wt), ("c", c)])


def matmul_cases():
    x, w = floats(1, 256), floats(256, 1000)
    y = x.astype(np.float64) @ w.astype(np.float64)
    yield model("row_matmul_wide", [helper.make_node("MatMul", ["x", "w"], ["y"])],
                [("x", x)], [("y", y.astype(np.float32))], [("w", w)])


def main():
    base.run_cases((gemm_cases, matmul_cases), "row-product")


if __name__ == "__main__":
    main()
