"""ONNX Runtime's static quantization as its documentation recommends it, shared by the int8
tests (tests/zoo/test_int8.py) and benchmark (bench/int8.py): quant_pre_process (ORT's graph
optimizations, which fold batch normalization into the convolutions, and shape inference),
then quantize_static in QDQ format with int8 activations and per-channel int8 weights (its
defaults for CPUs with VNNI) and min/max calibration. Run with the project venv's python.

On an x86 CPU without VNNI, ONNX Runtime's int8 kernels multiply 8-bit pairs into 16-bit sums
that saturate (pmaddubsw), so that its int8 outputs there are not the exact products odlac
computes (the digits CNN: 50 output steps apart). ONNX Runtime's documentation recommends
reduce_range there (7-bit weights, whose pair sums cannot saturate), and quantize() uses it
on such machines: the model is then the same for every engine and ORT's outputs exact."""
import os
import platform

import onnx
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process


class _Reader(CalibrationDataReader):
    def __init__(self, feeds):
        self.items = iter(feeds)

    def get_next(self):
        return next(self.items, None)


def saturating_cpu():
    """Whether ONNX Runtime's int8 kernels saturate here: an x86 CPU without VNNI."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return not any(f" {flag}" in flags for flag in ("avx512_vnni", "avx_vnni", "amx_int8"))


def quantize(model_path, out_path, calibration, qoperator=False):
    """Writes the QDQ model of `model_path` to `out_path` (with `qoperator`, the QOperator
    format: QLinearConv and com.microsoft's QLinearAdd, QGemm... instead of Q/DQ pairs);
    `calibration` is a list of inputs, each an array (a model with one input) or a dict from
    input name to array."""
    name = onnx.load(model_path, load_external_data=False).graph.input[0].name
    feeds = [c if isinstance(c, dict) else {name: c} for c in calibration]
    pre = out_path + ".pre.onnx"
    quant_pre_process(model_path, pre)
    fmt = QuantFormat.QOperator if qoperator else QuantFormat.QDQ
    quantize_static(pre, out_path, _Reader(feeds), quant_format=fmt, per_channel=True,
                    reduce_range=saturating_cpu(), activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8)
    os.remove(pre)
