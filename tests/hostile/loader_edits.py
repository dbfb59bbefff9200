#!/usr/bin/python3
"""hostile.loader_edits: thousands of random structural edits of stored executables, each
loaded and run under AddressSanitizer and UndefinedBehaviorSanitizer (loader_edits.c says
what an edit is and what counts as a failure).

The executables are those of six models, compiled with odlac --exec-mode=load and stored
by their NAME_store: the CNN and the MLP of models/, a model of broadcasting and data
movement ops built here, the If-in-a-Loop model of tests/e2e/test_control_flow.py and the
custom-op model of tests/e2e/test_custom_ops.py (whose application registers its kernel).

usage: loader_edits.py [--edits N] [--seed S] [--keep DIR] [--new-calls]
Environment: ODLAC, ODLA_LIB, ODLA_INCLUDE (as for the e2e tests) and LOADER_EDITS, the
sanitized harness. ctest runs the default 2000 edits with seed 1 (about 40 s on the shared
2-core machine); more by hand: loader_edits.py --edits 20000 --seed 2."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import odlactest  # noqa: E402
import test_control_flow  # noqa: E402
import test_custom_ops  # noqa: E402

MODELS = os.path.join(HERE, "..", "..", "models")
STORE_MAIN = '#include "net.h"\nint main(void) { return net_store(NET_EXECUTABLE_FILE); }\n'


def broadcasting_model():
    """Broadcasting arithmetic, comparisons and Where over [2,3,4], [3,1] and [4] operands,
    then reductions and data movement (Transpose, Slice, Pad, Tile, Concat, Reshape,
    Unsqueeze/Squeeze, Gather, Softmax): the ops whose parameter blocks hold strides and
    shapes."""
    F = TensorProto.FLOAT
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.standard_normal((3, 1)).astype(np.float32), "b"),
             numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "c"),
             numpy_helper.from_array(np.array([1, 0], np.int64), "idx"),
             numpy_helper.from_array(np.array([0, 1, 0], np.int64), "starts"),
             numpy_helper.from_array(np.array([2, 3, 3], np.int64), "ends"),
             numpy_helper.from_array(np.array([0, 1, 0, 0, 0, 1], np.int64), "pads"),
             numpy_helper.from_array(np.array([1, 1, 2], np.int64), "reps"),
             numpy_helper.from_array(np.array([1], np.int64), "axis1"),
             numpy_helper.from_array(np.array([4, 2], np.int64), "shape2")]
    nodes = [helper.make_node("Add", ["x", "b"], ["s"]),
             helper.make_node("Mul", ["s", "c"], ["m"]),
             helper.make_node("Sub", ["m", "b"], ["d"]),
             helper.make_node("Max", ["d", "c"], ["mx"]),
             helper.make_node("Greater", ["mx", "b"], ["g"]),
             helper.make_node("Where", ["g", "mx", "c"], ["w"]),
             helper.make_node("Div", ["w", "c"], ["q"]),
             helper.make_node("ReduceSum", ["q", "axis1"], ["r"], keepdims=1),
             helper.make_node("Transpose", ["q"], ["t"], perm=[2, 0, 1]),
             helper.make_node("Slice", ["t", "starts", "ends"], ["sl"]),
             helper.make_node("Pad", ["sl", "pads"], ["p"]),
             helper.make_node("Tile", ["p", "reps"], ["tl"]),
             helper.make_node("Concat", ["tl", "tl"], ["cc"], axis=0),
             helper.make_node("Softmax", ["cc"], ["sm"], axis=-1),
             helper.make_node("Gather", ["sm", "idx"], ["ga"], axis=1),
             helper.make_node("Reshape", ["r", "shape2"], ["rs"]),
             helper.make_node("Unsqueeze", ["rs", "axis1"], ["u"]),
             helper.make_node("Squeeze", ["u", "axis1"], ["y2"])]
    graph = helper.make_graph(
        nodes, "broadcasting", [helper.make_tensor_value_info("x", F, [2, 3, 4])],
        [helper.make_tensor_value_info("ga", F, [4, 2, 8]),
         helper.make_tensor_value_info("y2", F, [4, 2])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def store(tc, work, name, model_path, app=None, flags=()):
    """Compiles `model_path` in load mode and runs its store program; returns the file."""
    out = os.path.join(work, name)
    r = tc.compile(model_path, out, "--exec-mode=load", *flags)
    if r.returncode != 0:
        sys.exit(f"loader_edits.py: odlac failed on {name}: {r.stderr}")
    with open(os.path.join(out, "store_main.c"), "w") as f:
        f.write(app or STORE_MAIN)
    exe = os.path.join(out, "store")
    # Not tc.build's -Werror: odlac leaves a Loop's unused final condition value unused
    # (PrintSink names every result of a multi-result call), which is no concern here.
    sources = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
    subprocess.run([tc.cc, "-std=c99", "-O1", "-I", tc.include, *sources, tc.lib, "-lm", "-o", exe],
                   check=True)
    args = [exe] if not app else [exe, "x.bin", "r.bin", "--store"]
    r = subprocess.run(args, cwd=out, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"loader_edits.py: storing {name} failed ({r.returncode}): {r.stderr}")
    return os.path.join(out, "net.odlx")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--edits", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep")
    ap.add_argument("--new-calls", action="store_true", help="only edits that append calls")
    a = ap.parse_args()
    tc = odlactest.Toolchain()
    with tempfile.TemporaryDirectory(prefix="odlac-loader-edits-") as work:
        models = {"mlp": os.path.join(MODELS, "mlp", "model.onnx"),
                  "cnn": os.path.join(MODELS, "cnn", "model.onnx")}
        for name, model in (("broadcasting", broadcasting_model()),
                            ("loop_if", test_control_flow.nested_if_in_loop()[0]),
                            ("custom_op", test_custom_ops.model())):
            models[name] = os.path.join(work, name + ".onnx")
            onnx.save(model, models[name])
        files = []
        for name, path in models.items():
            custom = name == "custom_op"
            files.append(store(tc, work, name, path, test_custom_ops.APP if custom else None,
                               ("--custom-op-domain=com.example",) if custom else ()))
        cmd = [os.environ["LOADER_EDITS"], "--seed", str(a.seed), "--edits", str(a.edits)]
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            cmd += ["--keep", a.keep]
        if a.new_calls:
            cmd.append("--new-calls")
        r = subprocess.run(cmd + files)
        return r.returncode


if __name__ == "__main__":
    sys.exit(main())
