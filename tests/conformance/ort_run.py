#!/usr/bin/env python3
"""Runs one ONNX model through ONNX Runtime the way odlac's generated driver runs it, for
run_conformance.py --engine ort: TensorProto files in, TensorProto files out.

  ort_run.py MODEL --check                      load the model only (a session)
  ort_run.py MODEL input_0.pb ... -o DIR        run it, write DIR/output_<i>.pb

Exit status: 0 ok, 3 ONNX Runtime refuses the model (no session), 4 the run failed; the
message is one line, 'ort: error: ...'. Run it with the project venv's python (onnxruntime
from PyPI). The runner imports this file and calls check() and run() in a forked child per
call instead, which saves the seconds that importing onnx and onnxruntime takes. One thread
per session: the runner runs one test per core.

Tensors cross as raw bytes (ONNX's little-endian layout, 4-bit and 2-bit types packed), so
every element type ONNX Runtime holds (bfloat16, float8, int4...) passes through unchanged,
including those numpy has no type for. Strings cannot become OrtValues: a model with a
string input runs through InferenceSession.run with numpy arrays instead.
"""

import ctypes
import os
import re
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

REFUSED, RUN_FAILED = 3, 4
ort.set_default_logger_severity(4)


def message(err):
    """ONNX Runtime's message on one line, without the source position and C++ signature
    that some carry ('... failed:/onnxruntime_src/...cc:256 onnxruntime::Model::Model(...)
    Unsupported model IR version: 14, ...')."""
    msg = " ".join(str(err).split())
    msg = re.sub(r"/onnxruntime_src/\S+:\d+ (\S+\(.*?\)(?: const)? )?", "", msg)
    return msg[:300]


def session(model_path):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 4  # fatal only: a failure's message is the exception's
    return ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])


def to_ort(tensor):
    # from_array(to_array(t)) puts the data in raw_data whichever field the file used.
    raw = numpy_helper.from_array(numpy_helper.to_array(tensor)).raw_data
    value = ort.OrtValue.ortvalue_from_shape_and_type(list(tensor.dims), tensor.data_type)
    if len(raw) != value.tensor_size_in_bytes():
        raise ValueError("%s: %d bytes of data, ONNX Runtime holds %d"
                         % (tensor.name, len(raw), value.tensor_size_in_bytes()))
    ctypes.memmove(value.data_ptr(), raw, len(raw))
    return value


def from_ort(value, name):
    if not value.is_tensor():
        raise ValueError("output %s is not a tensor" % name)
    elem = value.element_type()
    if elem == onnx.TensorProto.STRING:
        return numpy_helper.from_array(np.asarray(value.numpy()), name)
    t = onnx.TensorProto()
    t.name = name
    t.data_type = elem
    t.dims.extend(value.shape())
    t.raw_data = ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes())
    return t


def check(model_path):
    """(0, '') when ONNX Runtime takes the model, else (REFUSED, its message)."""
    try:
        session(model_path)
    except Exception as e:  # any refusal: unsupported op, type, IR version, invalid graph
        return REFUSED, "session: " + message(e)
    return 0, ""


def run(model_path, inputs, out_dir):
    """Runs one data set; (0, '') or (REFUSED or RUN_FAILED, the message)."""
    try:
        sess = session(model_path)
    except Exception as e:
        return REFUSED, "session: " + message(e)
    try:
        metas = sess.get_inputs()
        if len(inputs) != len(metas):
            raise ValueError("%d input files, the session has %d inputs"
                             % (len(inputs), len(metas)))
        tensors = [onnx.load_tensor(p) for p in inputs]
        names = [o.name for o in sess.get_outputs()]
        if any(t.data_type == onnx.TensorProto.STRING for t in tensors):
            feeds = {m.name: numpy_helper.to_array(t) for m, t in zip(metas, tensors)}
            results = [numpy_helper.from_array(np.asarray(r), n)
                       for n, r in zip(names, sess.run(names, feeds))]
        else:
            feeds = {m.name: to_ort(t) for m, t in zip(metas, tensors)}
            results = [from_ort(r, n)
                       for n, r in zip(names, sess.run_with_ort_values(names, feeds))]
        os.makedirs(out_dir, exist_ok=True)
        for i, t in enumerate(results):
            with open(os.path.join(out_dir, "output_%d.pb" % i), "wb") as f:
                f.write(t.SerializeToString())
    except Exception as e:
        return RUN_FAILED, "run: " + message(e)
    return 0, ""


def main(argv):
    if len(argv) == 2 and argv[1] == "--check":
        code, msg = check(argv[0])
    elif len(argv) >= 3 and argv[-2] == "-o":
        code, msg = run(argv[0], argv[1:-2], argv[-1])
    else:
        sys.exit("usage: ort_run.py MODEL --check | MODEL input_0.pb ... -o DIR")
    if code:
        print("ort: error: " + msg)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
