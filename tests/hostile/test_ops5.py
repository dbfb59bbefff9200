"""Hostile DeformConv, AffineGrid, GridSample, BatchNormalization (training), Range and
run-time-axes reduction nodes: shapes that contradict each other or the spec are refused at
compile time with the node, the rule and the numbers, leaving nothing behind; a run-time size
that contradicts the shape AffineGrid was compiled for fails the run with the node's status; a
reduction with run-time axes whose result shape nothing pins stays refused."""
import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

import hostile


def vi(name, dims, elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, dims)


def model(nodes, inputs, outputs, opset):
    graph = h.make_graph(nodes, "g", inputs, outputs)
    return h.make_model(graph, ir_version=10, opset_imports=[h.make_opsetid("", opset)])


def deform(x, w, offset, mask=None, **attrs):
    names = ["x", "w", "offset"] + (["", "mask"] if mask else [])
    inputs = [vi("x", x), vi("w", w), vi("offset", offset)] + ([vi("mask", mask)] if mask else [])
    return model([h.make_node("DeformConv", names, ["y"], name="dc", **attrs)], inputs,
                 [vi("y", None)], 22)


class Ops5Test(hostile.HostileCase):
    def test_deform_conv_offset_of_the_wrong_shape(self):
        self.refused(deform([1, 2, 5, 5], [3, 2, 2, 2], [1, 6, 4, 4]),
                     "node 'dc' (DeformConv", "offset must be [1,8,4,4] (offset_group 1 x 4 taps "
                     "x 2 axes), got f32[1,6,4,4]")

    def test_deform_conv_mask_of_the_wrong_shape(self):
        self.refused(deform([1, 2, 5, 5], [3, 2, 2, 2], [1, 8, 4, 4], mask=[1, 4, 3, 4]),
                     "mask must be [1,4,4,4], got f32[1,4,3,4]")

    def test_deform_conv_offset_group_not_dividing_the_channels(self):
        self.refused(deform([1, 3, 5, 5], [3, 3, 2, 2], [1, 16, 4, 4], offset_group=2),
                     "offset_group 2 must be at least 1 and divide the 3 input channels")

    def test_deform_conv_kernel_shape_disagrees(self):
        self.refused(deform([1, 2, 5, 5], [3, 2, 2, 2], [1, 8, 4, 4], kernel_shape=[3, 3]),
                     "kernel_shape [3,3] disagrees with the weights' spatial dims [2,2]")

    def test_affine_grid_theta_of_the_wrong_shape(self):
        m = model([h.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag")],
                  [vi("theta", [2, 2, 4]), vi("size", [4], T.INT64)], [vi("grid", [2, 3, 3, 2])],
                  20)
        self.refused(m, "node 'ag' (AffineGrid", "theta f32[2,2,4] must be [N, 2, 3] or [N, 3, 4]")

    def test_affine_grid_run_time_size_without_a_declared_result(self):
        m = model([h.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag")],
                  [vi("theta", [2, 2, 3]), vi("size", [4], T.INT64)], [vi("grid", None)], 20)
        self.refused(m, "size is known only at run time, and the model declares no static shape "
                        "for output 'grid'")

    def test_affine_grid_run_time_size_contradicting_the_declared_result(self):
        """The kernel checks size against the dims it was built with: the declared size gives
        ONNX's grid, any other size fails the run."""
        m = model([h.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag")],
                  [vi("theta", [1, 2, 3]), vi("size", [4], T.INT64)],
                  [vi("grid", [1, 2, 3, 2])], 20)
        out = self.path("out")
        r = self.odlac(self.save(m), "-o", out, "--emit-main", "--name", "net")
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = self.path("net")
        self.tc.build(out, exe)
        theta = np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)  # the identity
        r, y = self.run_driver(exe, {"theta": theta, "size": np.array([1, 5, 2, 3], np.int64)})
        self.assertEqual(r.returncode, 0, r.stderr)
        xs, ys = np.array([-2, 0, 2]) / 3, np.array([-1, 1]) / 2
        np.testing.assert_allclose(y[0][0, :, :, 0], np.tile(xs, (2, 1)), atol=1e-6)
        np.testing.assert_allclose(y[0][0, :, :, 1], np.tile(ys[:, None], (1, 3)), atol=1e-6)
        for size in ([1, 5, 3, 2], [2, 5, 2, 3]):
            with self.subTest(size=size):
                r, _ = self.run_driver(exe, {"theta": theta, "size": np.array(size, np.int64)})
                self.assertRefused(r, "(ExtAffineGrid) producing 'grid' failed with status 3")

    def test_grid_sample_grid_of_the_wrong_rank(self):
        m = model([h.make_node("GridSample", ["x", "grid"], ["y"], name="gs")],
                  [vi("x", [1, 1, 3, 3, 3]), vi("grid", [1, 2, 2, 2])], [vi("y", None)], 22)
        self.refused(m, "node 'gs' (GridSample", "must be [N, C, D1, ..., Dr] with r from 1 to 3")

    def test_grid_sample_of_four_axes(self):
        m = model([h.make_node("GridSample", ["x", "grid"], ["y"], name="gs")],
                  [vi("x", [1, 1, 2, 2, 2, 2]), vi("grid", [1, 2, 2, 2, 2, 4])], [vi("y", None)],
                  22)
        self.refused(m, "with r from 1 to 3")

    def test_range_f16_with_an_unknown_stash_type(self):
        inputs = [vi(n, [], T.FLOAT16) for n in ("a", "b", "c")]
        m = model([h.make_node("Range", ["a", "b", "c"], ["y"], name="r", stash_type=T.INT32)],
                  inputs, [vi("y", [4], T.FLOAT16)], 27)
        self.refused(m, "node 'r' (Range", "stash_type 6 is not FLOAT (1) or DOUBLE (11)")

    def test_run_time_axes_through_a_shape_changing_op_stay_unpinned(self):
        # Add with a [3] operand broadcasts: its declared result does not give ReduceSum's.
        m = model([h.make_node("ReduceSum", ["x", "axes"], ["s"], name="rs"),
                   h.make_node("Add", ["s", "b"], ["y"])],
                  [vi("x", [2, 3]), vi("axes", [1], T.INT64), vi("b", [3])], [vi("y", [2, 3])], 18)
        self.refused(m, "node 'rs' (ReduceSum", "axes (input 1, 'axes') is known only at run time "
                        "and the model declares no static shape for the result")

    def test_batchnorm_training_of_a_vector(self):
        m = model([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn",
                               training_mode=1)],
                  [vi("x", [4])] + [vi(n, [4]) for n in ("s", "b", "m", "v")], [vi("y", None)], 15)
        self.refused(m, "node 'bn' (BatchNormalization", "X f32[4] must have rank >= 2 (N, C, ...)")


if __name__ == "__main__":
    hostile.main()
