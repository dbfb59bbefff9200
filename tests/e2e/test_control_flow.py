#!/usr/bin/python3
"""Control flow end to end: small ONNX models with If, Loop and Scan, built here with
onnx.helper, with expected outputs computed by plain numpy loops that follow the ONNX spec.
They are written in the libonnx-testdata layout and run through the conformance runner
(compile with odlac, build the C against the backend, run, compare), with an empty
expected-failure list: every model must pass.

Covered: an If nested in a Loop body reading values two scopes out; a Loop whose condition
stops it early; loop-carried values of several types (float32, float64, int32, int64, bool);
a Loop with a scan output and a constant trip count; Scan with reverse input and output
directions and non-zero input and output axes; an If whose branch returns an outer value; an
If whose condition is known at compile time and whose other branch returns another shape.

Environment: ODLAC, ODLA_LIB, ODLA_INCLUDE (as for the other e2e tests)."""
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "conformance", "run_conformance.py")
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import odlactest  # noqa: E402

F32, F64, I32, I64, BOOL = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT32,
                            TensorProto.INT64, TensorProto.BOOL)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def nested_if_in_loop(opset=13):
    """Loop(M, true, x, n): x doubles while its sum is below `threshold` (an initializer of the
    main graph, read inside an If inside the body), else grows by `step` (a graph input);
    n counts iterations (int32); the loop stops early once n reaches `limit` (a graph input)."""
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["x_in", "two"], ["x_then"])], "double_it", [],
        [vi("x_then", F32, [3])])
    else_g = helper.make_graph(
        [helper.make_node("Add", ["x_in", "step"], ["x_else"])], "grow_it", [],
        [vi("x_else", F32, [3])])
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["x_in"], ["sum"], keepdims=0),
         helper.make_node("Less", ["sum", "threshold"], ["small"]),
         helper.make_node("If", ["small"], ["x_out"], then_branch=then_g, else_branch=else_g),
         const("one_i32", np.array(1, np.int32)),
         helper.make_node("Add", ["n_in", "one_i32"], ["n_out"]),
         helper.make_node("Less", ["n_out", "limit"], ["cond_out"])],
        "body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("x_in", F32, [3]), vi("n_in", I32, [])],
        [vi("cond_out", BOOL, []), vi("x_out", F32, [3]), vi("n_out", I32, [])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x0", "n0"], ["x", "n"], body=body)],
        "nested_if_in_loop",
        [vi("M", I64, []), vi("x0", F32, [3]), vi("n0", I32, []), vi("step", F32, []),
         vi("limit", I32, [])],
        [vi("x", F32, [3]), vi("n", I32, [])],
        [numpy_helper.from_array(np.array(10.0, np.float32), "threshold"),
         numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    def reference(M, x0, n0, step, limit):
        x, n = x0.copy(), n0.copy()
        for _ in range(int(M)):
            x = x * np.float32(2) if x.sum() < np.float32(10) else x + step
            n = n + np.int32(1)
            if not n < limit:
                break
        return [x, n]

    cases = []
    for M, limit in ((8, 5), (3, 100), (0, 4)):
        ins = [np.array(M, np.int64), np.array([0.5, 1.0, -0.25], np.float32),
               np.array(0, np.int32), np.array(1.5, np.float32), np.array(limit, np.int32)]
        cases.append((ins, reference(*ins)))
    return model, cases


def loop_scan_types(opset=13):
    """Loop(4, cond) carrying float64 a, int64 k and bool flag; a scan output stacks a * k;
    the condition is passed through unchanged (the trip count alone ends the loop)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["k_in", "i"], ["k_out"]),
         helper.make_node("Cast", ["k_out"], ["k_f"], to=F64),
         helper.make_node("Mul", ["a_in", "k_f"], ["scan"]),
         helper.make_node("Add", ["a_in", "delta"], ["a_out"]),
         helper.make_node("Not", ["flag_in"], ["flag_out"])],
        "body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("a_in", F64, [2]), vi("k_in", I64, []),
         vi("flag_in", BOOL, [])],
        [vi("cond_out", BOOL, []), vi("a_out", F64, [2]), vi("k_out", I64, []),
         vi("flag_out", BOOL, []), vi("scan", F64, [2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "a0", "k0", "flag0"], ["a", "k", "flag", "stacked"],
                          body=body)],
        "loop_scan_types",
        [vi("a0", F64, [2]), vi("k0", I64, []), vi("flag0", BOOL, []), vi("delta", F64, [2])],
        [vi("a", F64, [2]), vi("k", I64, []), vi("flag", BOOL, []), vi("stacked", F64, [4, 2])],
        [numpy_helper.from_array(np.array(4, np.int64), "M")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    def reference(a0, k0, flag0, delta):
        a, k, flag, rows = a0.copy(), k0.copy(), flag0.copy(), []
        for i in range(4):
            k = k + np.int64(i)
            rows.append(a * np.float64(k))
            a = a + delta
            flag = np.logical_not(flag)
        return [a, k, np.array(flag), np.stack(rows)]

    ins = [np.array([1.0, -2.0]), np.array(3, np.int64), np.array(True), np.array([0.5, 0.25])]
    return model, [(ins, reference(*ins))]


def scan_directions(opset=11):
    """Scan over two inputs: x scanned along axis 1 in reverse, y along axis 0 forward; the
    state is a running sum; output 0 (sum after each step) goes to axis 1, output 1 (x slice
    times y slice) is stacked in reverse."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xs"], ["s1"]),
         helper.make_node("Add", ["s1", "ys"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["o1"]),
         helper.make_node("Mul", ["xs", "ys"], ["o2"])],
        "body",
        [vi("s_in", F32, [2]), vi("xs", F32, [2]), vi("ys", F32, [2])],
        [vi("s_out", F32, [2]), vi("o1", F32, [2]), vi("o2", F32, [2])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["s0", "x", "y"], ["s", "out1", "out2"], body=body,
                          num_scan_inputs=2, scan_input_axes=[1, 0],
                          scan_input_directions=[1, 0], scan_output_axes=[1, 0],
                          scan_output_directions=[0, 1])],
        "scan_directions",
        [vi("s0", F32, [2]), vi("x", F32, [2, 3]), vi("y", F32, [3, 2])],
        [vi("s", F32, [2]), vi("out1", F32, [2, 3]), vi("out2", F32, [3, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    def reference(s0, x, y):
        s, o1, o2 = s0.copy(), [], []
        for t in range(3):
            xs, ys = x[:, 2 - t], y[t]
            s = s + xs + ys
            o1.append(s.copy())
            o2.append(xs * ys)
        return [s, np.stack(o1, axis=1), np.stack(o2[::-1], axis=0)]

    rng = np.random.default_rng(7)
    ins = [rng.standard_normal(2).astype(np.float32),
           rng.standard_normal((2, 3)).astype(np.float32),
           rng.standard_normal((3, 2)).astype(np.float32)]
    return model, [(ins, reference(*ins))]


def if_returns_outer(opset=13):
    """If(c): the then branch returns the graph input x itself; the else branch x - 1."""
    then_g = helper.make_graph([], "then", [], [vi("x", F32, [4])])
    else_g = helper.make_graph(
        [const("one", np.array(1.0, np.float32)), helper.make_node("Sub", ["x", "one"], ["y"])],
        "else", [], [vi("y", F32, [4])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["r"], then_branch=then_g, else_branch=else_g)],
        "if_returns_outer", [vi("c", BOOL, [1]), vi("x", F32, [4])], [vi("r", F32, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    x = np.array([1.0, 2.5, -3.0, 0.0], np.float32)
    return model, [([np.array([True]), x], [x]), ([np.array([False]), x], [x - 1])]


def if_on_rank(opset=13):
    """If(Size(s) == 4), as ONNX's AffineGrid function branches on an input's rank: s has a
    static shape, so the condition is known at compile time, and the branch not taken returns
    another shape (s split into 5 parts, the last empty), which ONNX allows."""
    then_g = helper.make_graph(
        [helper.make_node("Split", ["s", "four_ones"], ["a", "b", "c", "d"]),
         helper.make_node("Concat", ["d", "c", "b", "a"], ["r_then"], axis=0)], "then", [],
        [vi("r_then", I64, [4])])
    else_g = helper.make_graph(
        [helper.make_node("Split", ["s", "five_parts"], ["a2", "b2", "c2", "d2", "e2"]),
         helper.make_node("Concat", ["a2", "e2"], ["r_else"], axis=0)], "else", [],
        [vi("r_else", I64, [1])])
    graph = helper.make_graph(
        [helper.make_node("Size", ["s"], ["n"]), const("four", np.array(4, np.int64)),
         const("four_ones", np.ones(4, np.int64)),
         const("five_parts", np.array([1, 1, 1, 1, 0], np.int64)),
         helper.make_node("Equal", ["n", "four"], ["is4"]),
         helper.make_node("If", ["is4"], ["r"], then_branch=then_g, else_branch=else_g)],
        "if_on_rank", [vi("s", I64, [4])], [vi("r", I64, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    s = np.array([7, -2, 30, 5], np.int64)
    return model, [([s], [s[::-1].copy()])]


def check_load_mode(root, env):
    """Load mode replays the calls that built the graph, If and Loop included: each model,
    compiled with --exec-mode=load and stored once, must give its data sets' outputs."""
    for name in sorted(os.listdir(os.path.join(root, "node"))):
        folder = os.path.join(root, "node", name)
        out = os.path.join(root, "load_" + name)
        r = subprocess.run([env["ODLAC"], os.path.join(folder, "model.onnx"), "-o", out,
                            "--emit-main", "--exec-mode=load"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{name}: odlac --exec-mode=load failed: {r.stderr}")
        exe = os.path.join(out, "run")
        sources = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
        # No -Werror: the generated code leaves a Loop's final condition value unused.
        # $CC: the sanitize build sets its instrumented compiler, which its library needs.
        cc = shlex.split(os.environ.get("CC", "cc"))
        subprocess.run([*cc, "-std=c99", "-O1", "-I", env["ODLA_INCLUDE"], *sources,
                        env["ODLA_LIB"], "-lm", "-o", exe], check=True)
        for k, ds in enumerate(odlactest.data_sets(folder)):
            if k == 0:  # --store writes net.odlx beside the program first
                inputs = sorted(os.path.join(ds, f) for f in os.listdir(ds)
                                if f.startswith("input_"))
                subprocess.run([exe, "--store", *inputs, "-o", os.path.join(out, "stored")],
                               check=True, capture_output=True)
            got, want = odlactest.run_data_set(exe, ds, os.path.join(out, "ds%d" % k))
            err = odlactest.max_error(got, want, 1e-5, 1e-6)
            if err is not None:
                sys.exit(f"{name} in load mode, data set {k}: {err}")
        print(f"{name}: load mode gives every data set's outputs")


def main():
    env = {k: os.environ.get(k) for k in ("ODLAC", "ODLA_LIB", "ODLA_INCLUDE")}
    missing = [k for k, v in env.items() if not v]
    if missing:
        sys.exit("set " + ", ".join(missing))
    with tempfile.TemporaryDirectory(prefix="odlac-cf-") as root:
        for name, build in (("cf_nested_if_in_loop", nested_if_in_loop),
                            ("cf_loop_scan_types", loop_scan_types),
                            ("cf_scan_directions", scan_directions),
                            ("cf_if_returns_outer", if_returns_outer),
                            ("cf_if_on_rank", if_on_rank)):
            model, cases = build()
            odlactest.write_test_folder(root, name, model, cases)
        xfail = os.path.join(root, "xfail_none.txt")
        open(xfail, "w").close()
        cmd = [sys.executable, RUNNER, "--odlac", env["ODLAC"], "--backend", "reference",
               "--backend-lib", env["ODLA_LIB"], "--include", env["ODLA_INCLUDE"],
               "--data", root, "--suites", "node", "--xfail", xfail, "--jobs", "2", "-v"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(r.stdout)
        if r.returncode != 0:
            sys.exit("control-flow models failed (runner exit %d)" % r.returncode)
        check_load_mode(root, env)
        # Interpret mode runs each op as it is built, which a body cannot: it is refused at
        # compile time, with the node named and nothing written.
        out = os.path.join(root, "interpret_out")
        r = subprocess.run([env["ODLAC"], os.path.join(root, "node", "cf_nested_if_in_loop",
                                                       "model.onnx"),
                            "--exec-mode=interpret", "-o", out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if (r.returncode != 1 or "control flow runs in compile and load mode only" not in r.stdout
                or os.path.exists(out)):
            sys.exit("--exec-mode=interpret on a Loop: exit %d, %r" % (r.returncode, r.stdout))


if __name__ == "__main__":
    main()
