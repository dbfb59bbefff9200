#!/usr/bin/python3
"""Sequences and optionals end to end: small ONNX models built here with onnx.helper, with
expected outputs computed by numpy following the ONNX spec, written in the libonnx-testdata
layout (sequence and optional values as SequenceProto and OptionalProto files) and run through
the conformance runner, which flattens them into the tensors of the generated API and passes
--sequence-length and --optional-absent from the data. The expected-failure list is empty:
every model must pass.

Covered: SequenceConstruct, SequenceInsert (with a position), SequenceErase, SequenceAt with a
negative position, SequenceLength, ConcatFromSequence with and without new_axis;
SplitToSequence with a constant split and with keepdims=0; SequenceMap over a sequence graph
input with elements of different shapes and a tensor operand, returning a sequence graph
output; optional graph inputs present and absent, Optional, OptionalHasElement and
OptionalGetElement; a Loop with a constant trip count carrying a growing sequence, and one
reading an outer sequence by its iteration number with a scan output (both unrolled);
an If with a run-time condition whose branches return sequences of one structure.

Environment: ODLAC, ODLA_LIB, ODLA_INCLUDE (as for the other e2e tests); ODLA_BACKEND and
ODLA_LINK_EXTRA for another backend than the reference one."""
import os
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

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
RNG = np.random.default_rng(15)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def seq_vi(name, elem, shape=None):
    return helper.make_value_info(
        name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, shape)))


def opt_vi(name, inner):
    return helper.make_value_info(name, helper.make_optional_type_proto(inner))


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def model_of(nodes, name, inputs, outputs, opset=18):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


class Seq(list):
    """A sequence value of the test data."""


class Opt:
    """An optional value of the test data (None: absent)."""

    def __init__(self, value):
        self.value = value


def to_proto(value, name):
    if isinstance(value, Seq):
        s = onnx.SequenceProto(name=name, elem_type=onnx.SequenceProto.TENSOR)
        s.tensor_values.extend(numpy_helper.from_array(np.asarray(v)) for v in value)
        return s
    if isinstance(value, Opt):
        o = onnx.OptionalProto(name=name)
        if value.value is None:
            return o
        inner = to_proto(value.value, "")
        if isinstance(inner, onnx.SequenceProto):
            o.elem_type = onnx.OptionalProto.SEQUENCE
            o.sequence_value.CopyFrom(inner)
        else:
            o.elem_type = onnx.OptionalProto.TENSOR
            o.tensor_value.CopyFrom(inner)
        return o
    return numpy_helper.from_array(np.asarray(value), name)


def sequence_ops():
    """[a, b] -> insert c at 1 -> [a, c, b] -> erase 0 -> [c, b]: its concatenation on axis 0,
    its length, its last element + 1, and [a, b] stacked on a new last axis."""
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s0"]),
        const("one", np.array(1, np.int64)),
        helper.make_node("SequenceInsert", ["s0", "c", "one"], ["s1"]),
        const("zero", np.array(0, np.int32)),
        helper.make_node("SequenceErase", ["s1", "zero"], ["s2"]),
        helper.make_node("ConcatFromSequence", ["s2"], ["joined"], axis=0),
        helper.make_node("SequenceLength", ["s2"], ["n"]),
        const("last", np.array(-1, np.int64)),
        helper.make_node("SequenceAt", ["s2", "last"], ["at"]),
        const("onef", np.array(1.0, np.float32)),
        helper.make_node("Add", ["at", "onef"], ["at_plus"]),
        helper.make_node("ConcatFromSequence", ["s0"], ["stacked"], axis=-1, new_axis=1),
    ]
    m = model_of(nodes, "sequence_ops", [vi("a", F32, [2, 3]), vi("b", F32, [2, 3]),
                                         vi("c", F32, [1, 3])],
                 [vi("joined", F32, [3, 3]), vi("n", I64, []), vi("at_plus", F32, [2, 3]),
                  vi("stacked", F32, [2, 3, 2])], opset=11)
    a, b, c = (RNG.standard_normal(s).astype(np.float32) for s in ((2, 3), (2, 3), (1, 3)))
    return m, [([a, b, c], [np.concatenate([c, b]), np.array(2, np.int64), b + 1,
                            np.stack([a, b], axis=-1)])]


def split_and_map():
    """x[4, 6] split on axis 1 into widths 1, 2, 3, each doubled by a SequenceMap body and
    joined again; and split on axis 0 without split and keepdims=0, stacked on a new last axis
    (x transposed)."""
    body = helper.make_graph(
        [const("two", np.array(2.0, np.float32)), helper.make_node("Mul", ["e", "two"], ["d"])],
        "double", [vi("e", F32, None)], [vi("d", F32, None)])
    nodes = [
        const("widths", np.array([1, 2, 3], np.int64)),
        helper.make_node("SplitToSequence", ["x", "widths"], ["parts"], axis=1),
        helper.make_node("SequenceMap", ["parts"], ["doubled"], body=body),
        helper.make_node("ConcatFromSequence", ["doubled"], ["y"], axis=1),
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        helper.make_node("ConcatFromSequence", ["rows"], ["t"], axis=-1, new_axis=1),
    ]
    m = model_of(nodes, "split_and_map", [vi("x", F32, [4, 6])],
                 [vi("y", F32, [4, 6]), vi("t", F32, [6, 4])], opset=17)
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    return m, [([x], [2 * x, x.T])]


def sequence_io():
    """A sequence graph input of 3 elements of different shapes (symbolic in the model, so
    pinned from the data) plus a tensor operand, mapped through Add and Shape into two
    sequence graph outputs; the input's length as a third output."""
    body = helper.make_graph(
        [helper.make_node("Add", ["e", "k"], ["sum"]), helper.make_node("Shape", ["e"], ["shp"])],
        "add_shape", [vi("e", F32, ["N"]), vi("k", F32, [1])],
        [vi("sum", F32, ["N"]), vi("shp", I64, [1])])
    nodes = [helper.make_node("SequenceMap", ["xs", "k"], ["sums", "shapes"], body=body),
             helper.make_node("SequenceLength", ["xs"], ["n"])]
    m = model_of(nodes, "sequence_io", [seq_vi("xs", F32, ["N"]), vi("k", F32, [1])],
                 [seq_vi("sums", F32, ["N"]), seq_vi("shapes", I64, [1]), vi("n", I64, [])],
                 opset=17)
    xs = Seq(RNG.standard_normal(n).astype(np.float32) for n in (2, 5, 3))
    k = np.array([0.5], np.float32)
    return m, [([xs, k], [Seq(x + k for x in xs), Seq(np.array([len(x)], np.int64) for x in xs),
                          np.array(3, np.int64)])]


def optionals(present):
    """An optional tensor graph input: whether it has an element, and an Optional of a
    tensor computed from the other input, read back with OptionalGetElement; the optional
    input passed through Identity to an optional graph output."""
    t = helper.make_tensor_type_proto(F32, [3])
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("Neg", ["x"], ["nx"]),
             helper.make_node("Optional", ["nx"], ["wrapped"]),
             helper.make_node("OptionalGetElement", ["wrapped"], ["back"]),
             helper.make_node("Identity", ["o"], ["o_out"])]
    m = model_of(nodes, "optionals", [opt_vi("o", t), vi("x", F32, [3])],
                 [vi("has", BOOL, []), vi("back", F32, [3]), opt_vi("o_out", t)])
    x = RNG.standard_normal(3).astype(np.float32)
    o = RNG.standard_normal(3).astype(np.float32) if present else None
    return m, [([Opt(o), x], [np.array(present), -x, Opt(o)])]


def loop_unrolled():
    """Loop with trip count 3 carrying a sequence that grows by x[:i + 1] each iteration (as
    ONNX's test_loop13_seq, with a constant trip count), joined at the end."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         const("one", np.array(1, np.int64)),
         helper.make_node("Add", ["i", "one"], ["end"]),
         const("axes", np.array([0], np.int64)),
         helper.make_node("Unsqueeze", ["end", "axes"], ["ends"]),
         const("starts", np.array([0], np.int64)),
         helper.make_node("Slice", ["x", "starts", "ends"], ["piece"]),
         helper.make_node("SequenceInsert", ["seq_in", "piece"], ["seq_out"])],
        "grow", [vi("i", I64, []), vi("cond_in", BOOL, []), seq_vi("seq_in", F32, None)],
        [vi("cond_out", BOOL, []), seq_vi("seq_out", F32, None)])
    nodes = [const("m", np.array(3, np.int64)), const("t", np.array(True)),
             helper.make_node("SequenceEmpty", [], ["empty"], dtype=F32),
             helper.make_node("Loop", ["m", "t", "empty"], ["pieces"], body=body),
             helper.make_node("ConcatFromSequence", ["pieces"], ["y"], axis=0)]
    m = model_of(nodes, "loop_unrolled", [vi("x", F32, [5])],
                 [seq_vi("pieces", F32, None), vi("y", F32, [6])], opset=13)
    x = RNG.standard_normal(5).astype(np.float32)
    pieces = [x[:i + 1] for i in range(3)]
    return m, [([x], [Seq(pieces), np.concatenate(pieces)])]


def loop_reads_sequence():
    """Loop over SequenceLength(xs) that carries only a tensor but reads xs[i] (an outer
    sequence, by the iteration number): unrolled; it sums the elements into the carried
    tensor and emits each element doubled as a scan output."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("SequenceAt", ["xs", "i"], ["e"]),
         helper.make_node("Add", ["acc_in", "e"], ["acc_out"]),
         const("two", np.array(2.0, np.float32)),
         helper.make_node("Mul", ["e", "two"], ["doubled"])],
        "accumulate", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc_in", F32, [3])],
        [vi("cond_out", BOOL, []), vi("acc_out", F32, [3]), vi("doubled", F32, [3])])
    nodes = [helper.make_node("SequenceLength", ["xs"], ["n"]),
             const("zeros", np.zeros(3, np.float32)),
             helper.make_node("Loop", ["n", "", "zeros"], ["sum", "rows"], body=body)]
    m = model_of(nodes, "loop_reads_sequence", [seq_vi("xs", F32, [3])],
                 [vi("sum", F32, [3]), vi("rows", F32, [4, 3])], opset=13)
    xs = Seq(RNG.standard_normal(3).astype(np.float32) for _ in range(4))
    return m, [([xs], [np.sum(xs, axis=0), 2 * np.stack(xs)])]


def if_sequences():
    """If with a run-time condition whose branches each return a sequence of two tensors of
    the same shapes: the elements are selected with the condition."""
    then_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["nx"]),
         helper.make_node("SequenceConstruct", ["x", "nx"], ["then_seq"])],
        "then", [], [seq_vi("then_seq", F32, [3])])
    else_g = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["ax"]),
         helper.make_node("SequenceConstruct", ["ax", "x"], ["else_seq"])],
        "else", [], [seq_vi("else_seq", F32, [3])])
    nodes = [helper.make_node("If", ["c"], ["s"], then_branch=then_g, else_branch=else_g),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)]
    m = model_of(nodes, "if_sequences", [vi("c", BOOL, []), vi("x", F32, [3])],
                 [vi("y", F32, [6])], opset=13)
    x = RNG.standard_normal(3).astype(np.float32)
    return m, [([np.array(True), x], [np.concatenate([x, -x])]),
               ([np.array(False), x], [np.concatenate([np.abs(x), x])])]


def main():
    env = {k: os.environ.get(k) for k in ("ODLAC", "ODLA_LIB", "ODLA_INCLUDE")}
    missing = [k for k, v in env.items() if not v]
    if missing:
        sys.exit("set " + ", ".join(missing))
    backend = os.environ.get("ODLA_BACKEND", "reference")
    with tempfile.TemporaryDirectory(prefix="odlac-seq-") as root:
        cases = {"seq_ops": sequence_ops, "seq_split_and_map": split_and_map,
                 "seq_io": sequence_io, "seq_optional_present": lambda: optionals(True),
                 "seq_optional_absent": lambda: optionals(False),
                 "seq_loop_unrolled": loop_unrolled, "seq_loop_reads": loop_reads_sequence,
                 "seq_if": if_sequences}
        for name, build in sorted(cases.items()):
            model, data = build()
            odlactest.write_test_folder(root, name, model, data, encode=to_proto)
        xfail = os.path.join(root, "xfail_none.txt")
        open(xfail, "w").close()
        cmd = [sys.executable, RUNNER, "--odlac", env["ODLAC"], "--backend", backend,
               "--odlac-flag=--backend=" + backend, "--backend-lib", env["ODLA_LIB"],
               "--include", env["ODLA_INCLUDE"], "--data", root, "--suites", "node",
               "--xfail", xfail, "--jobs", "2", "-v"]
        if os.environ.get("ODLA_LINK_EXTRA"):
            cmd += ["--link-extra", os.environ["ODLA_LINK_EXTRA"]]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(r.stdout)
        if r.returncode != 0:
            sys.exit("sequence and optional models failed (runner exit %d)" % r.returncode)
        passed = sum(line.startswith("pass ") for line in r.stdout.splitlines())
        if passed != len(cases):
            sys.exit("%d of %d models passed" % (passed, len(cases)))


if __name__ == "__main__":
    main()
