#!/usr/bin/python3
"""DFT end to end in the cases ONNX 1.23's node tests leave out, against numpy's np.fft (fft,
ifft, rfft as fft's first half, irfft), not against odlac: DFT-20's axis as a graph input
(positive and negative, several axes of one model), odd and even lengths, dft_length shorter
and longer than the axis (a constant and a graph input), the inverse of a one-sided spectrum
(numpy's irfft, DFT-17 and DFT-20, complex and real spectra, the imaginary parts numpy ignores
set), complex inputs and float64.

Environment: as test_new_ops.py (ODLAC, ODLA_LIB, ODLA_INCLUDE, ODLA_BACKEND,
ODLA_LINK_EXTRA)."""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_new_ops as base  # noqa: E402  (the model and folder helpers, the runner call)

RNG = np.random.default_rng(20)


def signal(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def numpy_dft(x, axis, length=None, inverse=False, onesided=False):
    """ONNX DFT by numpy: x [..., 1 or 2] real or (real, imaginary)."""
    c = x[..., 0].astype(np.float64)
    if x.shape[-1] == 2:
        c = c + 1j * x[..., 1]
    axis = axis % x.ndim  # ONNX's: negative counts from the end of x's dims
    if inverse and onesided:
        n = length if length is not None else 2 * (c.shape[axis] - 1)
        return np.fft.irfft(c, n=n, axis=axis)[..., None].astype(x.dtype)
    y = (np.fft.ifft if inverse else np.fft.fft)(c, n=length, axis=axis)
    if onesided:
        y = np.take(y, range(y.shape[axis] // 2 + 1), axis=axis)
    return np.stack([y.real, y.imag], axis=-1).astype(x.dtype)


def dft_case(name, opset, x, axis, length=None, length_input=False, axis_input=False,
             inverse=False, onesided=False):
    """One DFT node; axis and dft_length as attributes or constants (initializers), or as graph
    inputs (axis_input, length_input)."""
    names, inputs, init, attrs = ["x"], [("x", x)], [], dict(inverse=int(inverse),
                                                             onesided=int(onesided))
    if length is not None:
        names.append("dft_length")
        (inputs if length_input else init).append(("dft_length", np.array(length, np.int64)))
    elif opset >= 20:
        names.append("")
    if opset >= 20:
        names.append("axis")
        (inputs if axis_input else init).append(("axis", np.array(axis, np.int64)))
    else:
        attrs["axis"] = axis
    node = helper.make_node("DFT", names, ["y"], **attrs)
    y = numpy_dft(x, axis, length, inverse, onesided)
    return base.single_node(name, opset, node, inputs, [("y", y)], init)


def run_time_axis_cases():
    # One model, every axis that gives its declared shape: x [3, 6, 6, 2] has two.
    x = signal(3, 6, 6, 2)
    for axis in (1, 2, -3, -2):
        yield dft_case("dft_axis_input_%s" % str(axis).replace("-", "m"), 20, x, axis,
                       axis_input=True)
    yield dft_case("dft_axis_input_0_inverse", 20, signal(6, 4, 2), 0, axis_input=True,
                   inverse=True)
    # Odd and even lengths of a one-sided forward transform, a real signal.
    for n in (7, 8):
        yield dft_case("dft_rfft_axis_input_%d" % n, 20, signal(2, n, 3, 1), -3,
                       axis_input=True, onesided=True)
    # dft_length shorter and longer than the axis: a constant, then a graph input too.
    x = signal(2, 6, 5, 2)
    for length in (4, 9):
        yield dft_case("dft_axis_input_length_%d" % length, 20, x, 2, length, axis_input=True)
        yield dft_case("dft_axis_and_length_input_%d" % length, 20, x, -2, length,
                       length_input=True, axis_input=True)
    yield dft_case("dft_rfft_axis_and_length_input_11", 20, x, 1, 11, length_input=True,
                   axis_input=True, onesided=True)
    yield dft_case("dft_axis_input_f64", 20, signal(4, 5, 1, dtype=np.float64), 0,
                   axis_input=True)


def irfft_cases():
    # A one-sided spectrum of 4 bins along axis 1, with imaginary parts in bin 0 and in bin 3
    # (the Nyquist bin of the default length 6) that numpy ignores.
    spec = signal(2, 4, 3, 2)
    yield dft_case("dft_irfft_default_length", 20, spec, 1, inverse=True, onesided=True)
    yield dft_case("dft_irfft_opset17_axis_attr", 17, spec, -3, inverse=True, onesided=True)
    yield dft_case("dft_irfft_axis_input", 20, spec, -3, axis_input=True, inverse=True,
                   onesided=True)
    # Odd lengths read every bin (7: bins 0..3) or fewer (5: 0..2); 10 pads with zeros.
    for length in (5, 7, 10):
        yield dft_case("dft_irfft_length_%d" % length, 20, spec, 1, length, inverse=True,
                       onesided=True)
    yield dft_case("dft_irfft_opset17_length_input_7", 17, spec, 1, 7, length_input=True,
                   inverse=True, onesided=True)
    yield dft_case("dft_irfft_axis_and_length_input_8", 20, spec, 2, 8, length_input=True,
                   axis_input=True, inverse=True, onesided=True)
    yield dft_case("dft_irfft_real_spectrum", 20, signal(5, 2, 1), 0, inverse=True,
                   onesided=True)
    yield dft_case("dft_irfft_f64", 17, signal(1, 6, 2, dtype=np.float64), 1, 9, inverse=True,
                   onesided=True)
    # irfft inverts rfft: the round trip of an odd-length signal.
    x = signal(3, 9, 1)
    half = numpy_dft(x, 1, onesided=True)
    name, model, ins, outs = dft_case("dft_irfft_of_rfft_9", 20, half, 1, 9, inverse=True,
                                      onesided=True)
    np.testing.assert_allclose(outs[0], x, atol=1e-5)  # the reference itself is numpy's irfft
    yield name, model, ins, outs


def main():
    base.run_cases((run_time_axis_cases, irfft_cases), "dft")


if __name__ == "__main__":
    main()
