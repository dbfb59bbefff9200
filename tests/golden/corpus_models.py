"""Writes the synthetic models of corpus_diff.sh into a folder (argument 1): what the checked-in
models lack and codegen treats apart. Deterministic: the same files on every run.

- strings.onnx: a string constant (NAME.c's string literals) compared with a string input;
- specials.onnx: f32, f64 and i64 constants holding NaN, infinities and INT64_MIN (the
  weights file's math.h and special literals);
- dtypes.onnx: a constant of each other type the weights file writes as integers;
- big.onnx: 1.2 MB of weights, above the 1 MiB where the default weights mode picks the blob;
- batch.onnx: a symbolic leading dim, for --dynamic-batch.
Run with the project's venv Python (it needs onnx and numpy)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(folder, name, nodes, inputs, outputs, inits, opset=20):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="corpus_models.py")
    with open(os.path.join(folder, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def tensor(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def main():
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    words = TensorProto()
    words.name, words.data_type = "words", TensorProto.STRING
    words.dims.append(3)
    words.string_data.extend([b"monday", b"tab\there", b'quote"'])
    save(folder, "strings", [helper.make_node("Equal", ["x", "words"], ["y"])],
         [tensor("x", TensorProto.STRING, [3])], [tensor("y", TensorProto.BOOL, [3])], [words])

    cf = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0, 3e-41], dtype=np.float32)
    cd = np.array([np.nan, -np.inf, 0.1], dtype=np.float64)
    ci = np.array([np.iinfo(np.int64).min, -1, 7], dtype=np.int64)
    save(folder, "specials",
         [helper.make_node("Add", ["a", "cf"], ["ya"]),
          helper.make_node("Add", ["d", "cd"], ["yd"]),
          helper.make_node("Add", ["i", "ci"], ["yi"])],
         [tensor("a", TensorProto.FLOAT, [6]), tensor("d", TensorProto.DOUBLE, [3]),
          tensor("i", TensorProto.INT64, [3])],
         [tensor("ya", TensorProto.FLOAT, [6]), tensor("yd", TensorProto.DOUBLE, [3]),
          tensor("yi", TensorProto.INT64, [3])],
         [numpy_helper.from_array(cf, "cf"), numpy_helper.from_array(cd, "cd"),
          numpy_helper.from_array(ci, "ci")])

    # One Add (And for bool) a type, each with a constant operand of that type.
    kinds = [(TensorProto.FLOAT16, np.float16), (TensorProto.INT8, np.int8),
             (TensorProto.INT16, np.int16), (TensorProto.INT32, np.int32),
             (TensorProto.UINT8, np.uint8), (TensorProto.UINT16, np.uint16),
             (TensorProto.UINT32, np.uint32), (TensorProto.UINT64, np.uint64),
             (TensorProto.BOOL, np.bool_)]
    nodes, inputs, outputs, inits = [], [], [], []
    for k, (elem, np_type) in enumerate(kinds):
        values = np.array([0, 1, 2, 3, 100, 127] * 3, dtype=np.int64)[:17]
        values = values.astype(np_type)
        if np_type is np.float16:
            values[0] = np.inf
        op = "And" if np_type is np.bool_ else "Add"
        nodes.append(helper.make_node(op, [f"x{k}", f"c{k}"], [f"y{k}"]))
        inputs.append(tensor(f"x{k}", elem, [17]))
        outputs.append(tensor(f"y{k}", elem, [17]))
        inits.append(numpy_helper.from_array(values, f"c{k}"))
    save(folder, "dtypes", nodes, inputs, outputs, inits)

    rng = np.random.default_rng(17)
    w = rng.standard_normal((512, 600)).astype(np.float32)
    save(folder, "big", [helper.make_node("MatMul", ["x", "w"], ["y"])],
         [tensor("x", TensorProto.FLOAT, [1, 512])], [tensor("y", TensorProto.FLOAT, [1, 600])],
         [numpy_helper.from_array(w, "w")])

    w1 = rng.standard_normal((8, 4)).astype(np.float32)
    b1 = rng.standard_normal((4,)).astype(np.float32)
    save(folder, "batch",
         [helper.make_node("MatMul", ["x", "w1"], ["h"]),
          helper.make_node("Add", ["h", "b1"], ["s"]),
          helper.make_node("Relu", ["s"], ["y"])],
         [tensor("x", TensorProto.FLOAT, ["N", 8])], [tensor("y", TensorProto.FLOAT, ["N", 4])],
         [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1")])


if __name__ == "__main__":
    main()
