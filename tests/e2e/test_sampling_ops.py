#!/usr/bin/python3
"""DeformConv, AffineGrid, GridSample over 1 to 3 axes, BatchNormalization's training mode,
float16 Range, bool ReduceMax/ReduceMin and reductions with run-time axes pinned through
shape-keeping ops, in the cases ONNX 1.23's node tests leave out (strides, dilations, groups,
offset groups, asymmetric pads, 1-D convolutions, constant sizes, bicubic volumes, border and reflection padding,
1-D signals, float64, run-time sizes...), end to end with expected outputs from ONNX 1.23's reference
implementation (onnx.reference), not from odlac.

Environment: as test_new_ops.py (ODLAC, ODLA_LIB, ODLA_INCLUDE, ODLA_BACKEND, ODLA_LINK_EXTRA);
run with the project venv's python (onnx 1.23)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_new_ops as base  # noqa: E402  (the model and folder helpers, the runner call)

RNG = np.random.default_rng(23)


def floats(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def case(name, opset, nodes, inputs, output_names):
    """A model of `nodes` whose outputs ONNX's reference computes from `inputs`, declared with
    the types and shapes it computes."""
    graph = helper.make_graph(nodes, name, [base.vi(k, v) for k, v in inputs],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                               for o in output_names])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    outs = ReferenceEvaluator(model).run(None, dict(inputs))
    del model.graph.output[:]
    model.graph.output.extend(base.vi(o, np.asarray(v)) for o, v in zip(output_names, outs))
    return name, model, [v for _, v in inputs], [np.asarray(v) for v in outs]


def deform_conv_cases():
    # group 2, offset_group 2, strides, dilations, asymmetric pads, mask and bias.
    x, w = floats(2, 4, 7, 6), floats(6, 2, 3, 2)
    attrs = dict(group=2, offset_group=2, strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1])
    oh, ow = (7 + 3 - 3) // 2 + 1, (6 + 1 - 3) // 1 + 1
    offset = 1.5 * floats(2, 2 * 6 * 2, oh, ow)
    mask, b = RNG.uniform(0, 1, (2, 2 * 6, oh, ow)).astype(np.float32), floats(6)
    yield case("ops5_deform_conv_groups_mask_bias", 22,
               [helper.make_node("DeformConv", ["x", "w", "offset", "b", "mask"], ["y"], **attrs)],
               [("x", x), ("w", w), ("offset", offset), ("b", b), ("mask", mask)], ["y"])
    # float64, offsets reaching far outside the image, no mask.
    x, w = floats(1, 3, 5, 5, dtype=np.float64), floats(2, 3, 2, 2, dtype=np.float64)
    offset = 4 * floats(1, 8, 4, 4, dtype=np.float64)
    yield case("ops5_deform_conv_f64_outside", 22,
               [helper.make_node("DeformConv", ["x", "w", "offset"], ["y"], kernel_shape=[2, 2])],
               [("x", x), ("w", w), ("offset", offset)], ["y"])


def deform_conv_1d_case():
    """1-D DeformConv, which ONNX's reference lacks: the 2-D reference over images of two rows
    (it divides by the height - 1), with zero row offsets, gives it in its first output row."""
    x, w = floats(2, 2, 9), floats(3, 2, 3)
    ow = (9 + 3 - 5) // 2 + 1
    offset, mask = 2 * floats(2, 3, ow), RNG.uniform(0, 1, (2, 3, ow)).astype(np.float32)
    x2 = np.stack([x, floats(2, 2, 9)], axis=2)
    offset2 = np.zeros((2, 3, 2, 2, ow), np.float32)  # [N, taps, (row, column), rows, columns]
    offset2[:, :, 1, 0] = offset
    mask2 = np.stack([mask, mask], axis=2)
    _, _, _, want = case("lifted", 22, [helper.make_node(
        "DeformConv", ["x", "w", "offset", "", "mask"], ["y"], strides=[1, 2], dilations=[1, 2],
        pads=[0, 1, 0, 2])], [("x", x2), ("w", w[:, :, None]),
                              ("offset", offset2.reshape(2, 6, 2, ow)), ("mask", mask2)], ["y"])
    node = helper.make_node("DeformConv", ["x", "w", "offset", "", "mask"], ["y"], strides=[2],
                            dilations=[2], pads=[1, 2])
    yield base.single_node("ops5_deform_conv_1d", 22, node,
                           [("x", x), ("w", w), ("offset", offset), ("mask", mask)],
                           [("y", np.ascontiguousarray(want[0][:, :, 0]))])


def affine_grid_cases():
    for align in (0, 1):
        theta = floats(2, 2, 3)
        size = np.array([2, 3, 4, 1], dtype=np.int64)  # a width of one pixel
        yield case("ops5_affine_grid_2d_const_size_align%d" % align, 20,
                   [helper.make_node("Constant", [], ["size"],
                                     value=helper.make_tensor("size", TensorProto.INT64, [4],
                                                              size)),
                    helper.make_node("AffineGrid", ["theta", "size"], ["grid"],
                                     align_corners=align)],
                   [("theta", theta)], ["grid"])
    # ONNX's reference returns float32 grids whatever theta's type: float32 here.
    theta = floats(1, 3, 4)
    yield case("ops5_affine_grid_3d_runtime_size", 20,
               [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=1)],
               [("theta", theta), ("size", np.array([1, 2, 2, 3, 4], dtype=np.int64))], ["grid"])


def grid_sample_cases():
    x3, g3 = floats(1, 2, 3, 4, 3), 1.3 * floats(1, 2, 3, 2, 3)
    for mode in ("linear", "nearest", "cubic"):
        for pad in ("zeros", "border", "reflection"):
            yield case("ops5_gridsample_3d_%s_%s" % (mode, pad), 22,
                       [helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                                         padding_mode=pad, align_corners=int(pad == "border"))],
                       [("x", x3), ("grid", g3)], ["y"])
    x1, g1 = floats(2, 3, 7), 1.2 * floats(2, 5, 1)
    yield case("ops5_gridsample_1d_cubic_reflection", 22,
               [helper.make_node("GridSample", ["x", "grid"], ["y"], mode="cubic",
                                 padding_mode="reflection")],
               [("x", x1), ("grid", g1)], ["y"])


def training_and_generator_cases():
    x = floats(3, 2, 4, 5, dtype=np.float64)
    stats = [("scale", floats(2, dtype=np.float64)), ("bias", floats(2, dtype=np.float64)),
             ("mean", floats(2, dtype=np.float64)),
             ("var", RNG.uniform(0.5, 2, 2).astype(np.float64))]
    yield case("ops5_batchnorm_training_f64", 15,
               [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"],
                                 ["y", "running_mean", "running_var"], training_mode=1,
                                 momentum=0.7, epsilon=1e-3)],
               [("x", x)] + stats, ["y", "running_mean", "running_var"])

    def f16(name, v):
        return helper.make_node("Constant", [], [name], value=helper.make_tensor(
            name, TensorProto.FLOAT16, [], np.array([v], dtype=np.float16)))
    yield case("ops5_range_f16_constant_double_stash", 27,
               [f16("start", 1.5), f16("limit", 9.0), f16("delta", 0.7),
                helper.make_node("Range", ["start", "limit", "delta"], ["y"],
                                 stash_type=TensorProto.DOUBLE),
                helper.make_node("Identity", ["x"], ["x_copy"])],
               [("x", floats(2))], ["y", "x_copy"])


def reduction_cases():
    b = RNG.uniform(0, 1, (3, 4, 2)) < 0.3
    axes = np.array([-1, 0], dtype=np.int64)
    for op in ("ReduceMax", "ReduceMin"):
        yield case("ops5_%s_bool_runtime_axes_no_keepdims" % op.lower(), 20,
                   [helper.make_node(op, ["b", "axes"], ["y"], keepdims=0)],
                   [("b", b), ("axes", axes)], ["y"])
    # ReduceSum with run-time axes whose result reaches the declared output through Exp, Neg
    # and Cast: the declared dims pin it.
    x = floats(2, 3, 4)
    yield case("ops5_reduce_sum_runtime_axes_pinned", 18,
               [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=1),
                helper.make_node("Exp", ["s"], ["e"]), helper.make_node("Neg", ["e"], ["n"]),
                helper.make_node("Cast", ["n"], ["y"], to=TensorProto.DOUBLE)],
               [("x", x), ("axes", np.array([1], dtype=np.int64))], ["y"])


def main():
    base.run_cases((deform_conv_cases, deform_conv_1d_case, affine_grid_cases, grid_sample_cases,
                    training_and_generator_cases, reduction_cases), "sampling-op")


if __name__ == "__main__":
    main()
