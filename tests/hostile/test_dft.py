"""Hostile DFT nodes: DFT-20's axis known only at run time must give the result shape the model
declares (a declaration no legal axis gives, or none, is refused at compile time with the
numbers); a run-time axis out of range or giving another shape, or a run-time dft_length that
disagrees with it, fails the run with the node's status, in compile and load mode (the stored
executable replays the axis operand); the inverse of a one-sided spectrum too short for its
default length is refused."""
import subprocess

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import hostile

FAILED = "(ExtDFT) producing 'y' failed with status 3"


def vi(name, dims, elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, dims)


def dft(x, y, opset=20, length=False, axis_type=T.INT64, axis_dims=(), **attrs):
    """A DFT of x (dims) with the axis (and dft_length when `length`) as graph inputs."""
    names = ["x", "dft_length" if length else "", "axis"]
    inputs = [vi("x", x)] + ([vi("dft_length", [], T.INT64)] if length else [])
    inputs.append(vi("axis", list(axis_dims), axis_type))
    node = h.make_node("DFT", names, ["y"], name="dft", **attrs)
    graph = h.make_graph([node], "g", inputs, [vi("y", y)])
    return h.make_model(graph, ir_version=10, opset_imports=[h.make_opsetid("", opset)])


def rfft(x, axis):
    """numpy's rfft of x [..., 1] as ONNX lays it out: (real, imaginary) last."""
    y = np.fft.rfft(x[..., 0].astype(np.float64), axis=axis)
    return np.stack([y.real, y.imag], axis=-1)


class DftTest(hostile.HostileCase):
    def build(self, model, *flags):
        out = self.path("out")
        r = self.odlac(self.save(model), "-o", out, "--emit-main", "--name", "net", *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = self.path("net")
        self.tc.build(out, exe)
        return exe

    def check_axes(self, exe, axis_type=np.int64, length=None):
        """x [2, 6, 5, 1] one-sided: only axis 1 (-3) gives the declared [2, 4, 5, 2]."""
        x = np.random.default_rng(5).standard_normal((2, 6, 5, 1)).astype(np.float32)
        extra = {} if length is None else {"dft_length": np.array(length, np.int64)}
        for axis in (1, -3):
            r, y = self.run_driver(exe, {"x": x, **extra, "axis": np.array(axis, axis_type)})
            self.assertEqual(r.returncode, 0, r.stderr)
            np.testing.assert_allclose(y[0], rfft(x, 1), rtol=1e-5, atol=1e-5)
        # Legal axes giving [2, 6, 3, 2] and [1, 6, 5, 2]; the last dim; beyond the rank.
        for axis in (0, 2, -2, -4, 3, -1, 4, -5, 2**31 - 1, -2**31):
            with self.subTest(axis=axis):
                r, _ = self.run_driver(exe, {"x": x, **extra, "axis": np.array(axis, axis_type)})
                self.assertRefused(r, FAILED)
        return x

    def test_run_time_axis_out_of_range_or_of_another_shape_fails_the_run(self):
        self.check_axes(self.build(dft([2, 6, 5, 1], [2, 4, 5, 2], onesided=1)))

    def test_int32_axis_and_an_axis_beyond_int32(self):
        exe = self.build(dft([2, 6, 5, 1], [2, 4, 5, 2], axis_type=T.INT32, onesided=1))
        self.check_axes(exe, np.int32)
        exe = self.build(dft([2, 6, 5, 1], [2, 4, 5, 2], onesided=1))
        r, _ = self.run_driver(exe, {"x": np.zeros((2, 6, 5, 1), np.float32),
                                     "axis": np.array(2**32 + 1, np.int64)})
        self.assertRefused(r, FAILED)

    def test_run_time_length_must_agree_with_the_run_time_axis(self):
        exe = self.build(dft([2, 6, 5, 1], [2, 4, 5, 2], length=True, onesided=1))
        x = self.check_axes(exe, length=6)
        # Lengths 6 and 7 give 4 bins; 5, 8 and 0 do not (nor -1 or 2^40).
        r, y = self.run_driver(exe, {"x": x, "dft_length": np.array(7, np.int64),
                                     "axis": np.array(1, np.int64)})
        self.assertEqual(r.returncode, 0, r.stderr)
        want = np.fft.rfft(x[..., 0].astype(np.float64), n=7, axis=1)
        np.testing.assert_allclose(y[0], np.stack([want.real, want.imag], -1), atol=1e-5)
        for length in (5, 8, 0, -1, 2**40):
            with self.subTest(length=length):
                r, _ = self.run_driver(exe, {"x": x, "dft_length": np.array(length, np.int64),
                                             "axis": np.array(1, np.int64)})
                self.assertRefused(r, FAILED)

    def test_load_mode_replays_the_axis_operand(self):
        exe = self.build(dft([2, 6, 5, 1], [2, 4, 5, 2], onesided=1), "--exec-mode=load")
        x = np.zeros((2, 6, 5, 1), np.float32)
        store = subprocess.run([exe, "--store", *self.inputs(x, 1), "-o", self.path("stored")],
                               capture_output=True, text=True, timeout=self.timeout)
        self.assertEqual(store.returncode, 0, store.stderr)
        self.check_axes(exe)

    def inputs(self, x, axis):
        files = []
        for i, v in enumerate((x, np.array(axis, np.int64))):
            files.append(self.path(f"store_{i}.pb"))
            with open(files[-1], "wb") as f:
                f.write(numpy_helper.from_array(v).SerializeToString())
        return files

    def test_declared_shape_no_axis_gives_is_refused(self):
        self.refused(dft([2, 6, 5, 1], [2, 6, 4, 2], onesided=1), "node 'dft' (DFT",
                     "axis (input 2) is known only at run time, and no axis in [-4, -2] or "
                     "[0, 2] of input f32[2,6,5,1] gives the dims [2,6,4,2] declared for output "
                     "'y' (axis 0 gives [2,6,5,2], axis 1 gives [2,4,5,2], axis 2 gives "
                     "[2,6,3,2])")
        # A run-time length allows any extent along the axis, not other dims elsewhere.
        self.refused(dft([2, 6, 5, 1], [3, 7, 5, 2], length=True), "gives the dims [3,7,5,2]",
                     "(axis 0 gives [n,6,5,2], axis 1 gives [2,n,5,2], axis 2 gives [2,6,n,2])")
        # The inverse of a one-sided spectrum is real: a last dim of 1.
        self.refused(dft([2, 4, 3, 2], [2, 6, 3, 2], inverse=1, onesided=1),
                     "axis 0 gives [2,4,3,1], axis 1 gives [2,6,3,1], axis 2 gives [2,4,4,1]")

    def test_declared_shape_of_another_rank_is_refused(self):
        self.refused(dft([2, 6, 5, 1], [2, 6, 5], onesided=1),
                     "gives the dims [2,6,5] declared for output 'y'")

    def test_run_time_axis_without_a_declared_shape_is_refused(self):
        self.refused(dft([2, 6, 5, 1], None), "node 'dft' (DFT",
                     "axis (input 2) is known only at run time, and the model declares no "
                     "static shape for output 'y'")

    def test_axis_of_several_elements_is_refused(self):
        self.refused(dft([2, 6, 5, 1], [2, 6, 5, 2], axis_dims=[2]), "node 'dft' (DFT",
                     "axis i64[2] must hold one element")

    def test_input_without_a_signal_axis_is_refused(self):
        self.refused(dft([8], [8]), "node 'dft' (DFT", "input f32[8] must have a signal axis and "
                     "a last dim of 1 (real) or 2 (complex)")

    def test_one_bin_spectrum_has_no_default_inverse_length(self):
        node = h.make_node("DFT", ["x"], ["y"], name="dft", axis=1, inverse=1, onesided=1)
        m = h.make_model(h.make_graph([node], "g", [vi("x", [2, 1, 3, 2])], [vi("y", None)]),
                         ir_version=10, opset_imports=[h.make_opsetid("", 17)])
        self.refused(m, "the one-sided spectrum of 1 bin(s) along axis 1 gives the default "
                        "dft_length 2 * (bins - 1) = 0, which must be at least 1")


if __name__ == "__main__":
    hostile.main()
