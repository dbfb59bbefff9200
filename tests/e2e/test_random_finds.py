#!/usr/bin/python3
"""The cases the random single-op suite (tests/conformance/gen_random_suite.py) found odlac
wrong on, fixed and kept here as they were found, end to end on each backend. Expected outputs
come from ONNX 1.23's reference implementation (onnx.reference), or from numpy following the
spec where the reference does not (Slice):

- Slice with a negative step and a start before the axis: the start clamps to 0 (element 0 is
  taken), as the spec's [0, dim - 1] for negative steps says, with the parameters constant and
  known only at run time;
- the composite reductions over no axes (noop_with_empty_axes): ReduceL1 and ReduceL2 give
  |x|, ReduceLogSum log x, ReduceSumSquare x * x (they were the identity);
- GridSample's bicubic filter with border padding and align_corners = 0 at coordinates within
  half a pixel outside the image: the coordinate stays, each tap is clamped;
- Resize's tf_crop_and_resize with scales: each extent is floor(in * scale), as ONNX's shape
  inference, its reference and ONNX Runtime have it (odlac took the crop box's extent too);
- MaxPool over volumes with a window of depth 1 and a depth stride above 1 (the row kernel
  read the input at the output's depth);
- Resize's tf_half_pixel_for_nn (opset 11, which ONNX's reference lacks) on an axis at scale
  1: each element stays (as in ONNX Runtime); the formula's (x + 0.5) / 1 with ceil rounding
  took the next channel.

Environment: as test_new_ops.py (ODLAC, ODLA_LIB, ODLA_INCLUDE, ODLA_BACKEND, ODLA_LINK_EXTRA);
run with the project venv's python (onnx 1.23)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_new_ops as base  # noqa: E402  (the model and folder helpers, the runner call)
import test_sampling_ops as sampling  # noqa: E402  (case(): expected from ONNX's reference)

RNG = np.random.default_rng(41)


def floats(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def slice_cases():
    # Axis 1: start -4 on an extent of 3 with step -1 is -1, clamped to 0; the end far before
    # the axis is -1: [0]. Axis 3: start -4 of 5 is 1, step -3 passes the front: [1].
    x = floats(5, 3, 6, 5)
    starts, ends = np.array([-2, -4, 2, -4]), np.array([-1, -2**62, 4, -2**62])
    axes, steps = np.array([0, 1, 2, 3]), np.array([2, -1, 1, -3])
    want = x[3:4:2, 0:1, 2:4, 1:2]
    params = [("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps)]
    node = helper.make_node("Slice", ["x"] + [n for n, _ in params], ["y"])
    graph = helper.make_graph([const(n, v.astype(np.int64)) for n, v in params] + [node],
                              "slice", [base.vi("x", x)], [base.vi("y", want)])
    yield ("found_slice_negative_step_start_before_axis",
           helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), [x], [want])
    # The same parameters read at run time (the model declares the result's shape).
    inputs = [("x", x)] + [(n, v.astype(np.int64)) for n, v in params]
    yield base.single_node("found_slice_negative_step_runtime", 13, node, inputs, [("y", want)])


def reduction_cases():
    x = floats(2, 3, 4)
    for op in ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"):
        data = np.abs(x) + 0.1 if op == "ReduceLogSum" else x
        yield sampling.case("found_%s_noop_with_empty_axes" % op.lower(), 18,
                            [const("axes", np.array([], np.int64)),
                             helper.make_node(op, ["x", "axes"], ["y"], keepdims=0,
                                              noop_with_empty_axes=1)],
                            [("x", data)], ["y"])


def grid_sample_cases():
    # Coordinates within half a pixel outside either edge, and beyond it.
    x = floats(1, 2, 4, 5)
    grid = RNG.uniform(-1.15, 1.15, (1, 6, 7, 2)).astype(np.float32)
    yield sampling.case("found_gridsample_cubic_border_unaligned", 22,
                        [helper.make_node("GridSample", ["x", "grid"], ["y"], mode="cubic",
                                          padding_mode="border", align_corners=0)],
                        [("x", x), ("grid", grid)], ["y"])


def resize_cases():
    x = floats(2, 3, 4, 4)
    roi = np.array([0, 0, 0.15, 0.13, 1, 1, 0.91, 0.67], np.float32)
    for mode in ("linear", "cubic"):
        scales = np.array([1, 1, 0.5, 2], np.float32) if mode == "linear" else \
            np.array([1, 1, 0.75, 2.5], np.float32)
        # (with 4 * 0.75 = 3 exact, ONNX Runtime agrees with the reference: it takes the
        # resized extent as an integer where the reference takes in * scale)
        yield sampling.case("found_resize_crop_scales_%s" % mode, 19,
                            [const("roi", roi), const("scales", scales),
                             helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode=mode,
                                              coordinate_transformation_mode="tf_crop_and_resize",
                                              extrapolation_value=0.5)],
                            [("x", x)], ["y"])


def half_pixel_for_nn_case():
    x = floats(1, 2, 4, 5)
    scales = np.array([1, 1, 1.5, 2], np.float32)

    def source(o, scale, n):  # (o + 0.5) / scale, ceil (an integral value stays), at most n - 1
        v = (o + 0.5) / scale
        return min(int(np.ceil(v)), n - 1)
    rows = [source(o, 1.5, 4) for o in range(6)]
    cols = [source(o, 2.0, 5) for o in range(10)]
    want = x[:, :, rows][:, :, :, cols]
    node = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="nearest",
                            coordinate_transformation_mode="tf_half_pixel_for_nn",
                            nearest_mode="ceil")
    yield base.single_node("found_resize_tf_half_pixel_for_nn_unscaled_axes", 11, node,
                           [("x", x)], [("y", want)],
                           initializers=[("roi", np.array([], np.float32)), ("scales", scales)])


def pool_cases():
    x = floats(1, 3, 5, 8, 9)
    yield sampling.case("found_maxpool_3d_depth1_window_strided", 19,
                        [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1, 2, 1],
                                          strides=[3, 1, 2], dilations=[1, 2, 2],
                                          pads=[0, 1, 0, 0, 0, 0])],
                        [("x", x)], ["y"])


def main():
    base.run_cases((slice_cases, reduction_cases, grid_sample_cases, resize_cases,
                    half_pixel_for_nn_case, pool_cases), "random-find")


if __name__ == "__main__":
    main()
