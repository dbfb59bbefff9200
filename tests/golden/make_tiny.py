"""Writes the golden test's model, tests/golden/tiny/model.onnx, with one data set whose
expected output is computed here with plain numpy (an implementation independent of odlac).

The model: Conv(2->3, 3x3, pad 1, bias) -> Relu -> MaxPool(2x2) -> Flatten -> Gemm(12->4)
-> Softmax. Run with Debian's /usr/bin/python3 from the repository root."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny")


def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, m, h, wd), dtype=np.float64)
    for i in range(h):
        for j in range(wd):
            patch = xp[:, :, i:i + kh, j:j + kw].reshape(n, -1)
            out[:, :, i, j] = patch @ w.reshape(m, -1).T
    return out + b.reshape(1, m, 1, 1)


def main():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    w = (rng.standard_normal((3, 2, 3, 3)) * 0.5).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32) * 0.1
    fw = (rng.standard_normal((4, 12)) * 0.5).astype(np.float32)
    fb = rng.standard_normal(4).astype(np.float32) * 0.1

    y = np.maximum(conv2d(x.astype(np.float64), w, b, 1), 0)
    y = y.reshape(1, 3, 2, 2, 2, 2).max(axis=(3, 5))
    y = y.reshape(1, 12) @ fw.T.astype(np.float64) + fb
    e = np.exp(y - y.max(axis=1, keepdims=True))
    expected = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

    nodes = [
        helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["conv"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"], name="relu"),
        helper.make_node("MaxPool", ["relu"], ["pool"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["fc"], name="fc", transB=1),
        helper.make_node("Softmax", ["fc"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(w, "conv.w"), numpy_helper.from_array(b, "conv.b"),
         numpy_helper.from_array(fw, "fc.w"), numpy_helper.from_array(fb, "fc.b")])
    model = helper.make_model(graph, producer_name="odlac-golden",
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(HERE, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(HERE, "model.onnx"))
    for name, arr in (("input_0.pb", x), ("output_0.pb", expected)):
        tensor = numpy_helper.from_array(arr, "x" if name.startswith("input") else "probs")
        with open(os.path.join(HERE, "test_data_set_0", name), "wb") as f:
            f.write(tensor.SerializeToString())
    print("wrote", HERE, "expected", expected)


if __name__ == "__main__":
    main()
