"""Hostile sequences and optionals (frontend/rules/Sequence.cpp, the Loop and If rules over
them, the flattening of graph inputs): what odlac cannot resolve at compile time (a length, a
position or a presence known only at run time), positions out of range, contradicting
structures, sequences fed where tensors go and bad --sequence-length / --optional-absent flags
are refused with the node, the value and the reason, leaving nothing behind."""
from hostile import HostileCase, main

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def seq_vi(name, elem=F, shape=(2,)):
    return helper.make_value_info(
        name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, shape)))


def opt_vi(name, shape=(2,)):
    return helper.make_value_info(name, helper.make_optional_type_proto(
        helper.make_tensor_type_proto(F, shape)))


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name))


def model(nodes, inputs, outputs, opset=18):
    return helper.make_model(helper.make_graph(nodes, "g", inputs, outputs),
                             opset_imports=[helper.make_opsetid("", opset)])


def pair_then(*nodes, outputs=None):
    """a, b -> s = [a, b], then `nodes`."""
    return model([helper.make_node("SequenceConstruct", ["a", "b"], ["s"], name="make")]
                 + list(nodes), [vi("a", F, [2]), vi("b", F, [2])],
                 outputs or [vi("y", F, None)])


class SequenceFlags(HostileCase):
    def identity(self):
        return model([helper.make_node("Identity", ["xs"], ["ys"])], [seq_vi("xs")],
                     [seq_vi("ys")])

    def test_sequence_input_needs_its_length(self):
        self.refused(self.identity(), "graph input 'xs' is a sequence",
                     "--sequence-length xs=N", "xs.0, xs.1")

    def test_length_not_a_number(self):
        self.refused(self.identity(), "--sequence-length 'xs=two'", flags=("--sequence-length",
                                                                           "xs=two"))

    def test_length_too_long(self):
        self.refused(self.identity(), "N from 0 to 4096",
                     flags=("--sequence-length", "xs=5000"))

    def test_length_of_a_tensor_input(self):
        m = model([helper.make_node("Neg", ["x"], ["y"])], [vi("x", F, [2])], [vi("y", F, [2])])
        self.refused(m, "--sequence-length names 'x', which is not a graph input of a sequence",
                     flags=("--sequence-length", "x=2"))

    def test_absent_names_a_tensor_input(self):
        m = model([helper.make_node("Neg", ["x"], ["y"])], [vi("x", F, [2])], [vi("y", F, [2])])
        self.refused(m, "--optional-absent names 'x', which is not a graph input of an optional",
                     flags=("--optional-absent", "x"))

    def test_element_with_a_symbolic_dim(self):
        m = model([helper.make_node("Identity", ["xs"], ["ys"])], [seq_vi("xs", F, ["N"])],
                  [seq_vi("ys", F, ["N"])])
        self.refused(m, "graph input 'xs.1': dim 0 is symbolic", "--input-shape xs.1:",
                     flags=("--sequence-length", "xs=2", "--input-shape", "xs.0:3"))

    def test_a_sequence_of_sequences(self):
        inner = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2]))
        m = model([helper.make_node("Identity", ["xs"], ["ys"])],
                  [helper.make_value_info("xs", helper.make_sequence_type_proto(inner))],
                  [helper.make_value_info("ys", helper.make_sequence_type_proto(inner))])
        self.refused(m, "graph input 'xs' is a sequence of a sequence values",
                     flags=("--sequence-length", "xs=1"))


class SequenceNodes(HostileCase):
    def test_position_out_of_range(self):
        self.refused(pair_then(const("p", np.array(2, np.int64)),
                               helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at")),
                     "node 'at' (SequenceAt", "position 2 is out of range [-2, 1]")

    def test_position_known_at_run_time(self):
        m = pair_then(helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at"))
        m.graph.input.append(vi("p", I64, []))
        self.refused(m, "node 'at' (SequenceAt", "position (input 1, 'p') must be known at "
                     "compile time", "picks an element of a sequence")

    def test_sequence_where_a_tensor_goes(self):
        self.refused(pair_then(helper.make_node("Neg", ["s"], ["y"], name="neg")),
                     "node 'neg' (Neg", "operand 0 ('s') is a sequence of 2, and Neg takes "
                     "tensors there")

    def test_insert_of_another_element_type(self):
        m = pair_then(helper.make_node("SequenceInsert", ["s", "i"], ["t"], name="ins"),
                      helper.make_node("ConcatFromSequence", ["t"], ["y"], axis=0))
        m.graph.input.append(vi("i", I64, [2]))
        self.refused(m, "node 'ins' (SequenceInsert", "tensor 'i' is i64, the sequence "
                     "holds f32")

    def test_erase_from_empty(self):
        self.refused(model([helper.make_node("SequenceEmpty", [], ["e"]),
                            helper.make_node("SequenceErase", ["e"], ["f"], name="erase"),
                            helper.make_node("SequenceLength", ["f"], ["y"])], [],
                           [vi("y", I64, [])]),
                     "node 'erase' (SequenceErase", "the sequence is empty")

    def test_concat_of_empty(self):
        self.refused(model([helper.make_node("SequenceEmpty", [], ["e"]),
                            helper.make_node("ConcatFromSequence", ["e"], ["y"], axis=0,
                                             name="cat")], [], [vi("y", F, None)]),
                     "node 'cat' (ConcatFromSequence", "the sequence is empty")

    def test_split_that_does_not_add_up(self):
        self.refused(model([const("w", np.array([1, 2], np.int64)),
                            helper.make_node("SplitToSequence", ["x", "w"], ["s"], name="split"),
                            helper.make_node("SequenceLength", ["s"], ["y"])],
                           [vi("x", F, [4])], [vi("y", I64, [])]),
                     "node 'split' (SplitToSequence", "split [1,2] adds up to 3, but axis 0")

    def test_split_known_at_run_time(self):
        self.refused(model([helper.make_node("SplitToSequence", ["x", "w"], ["s"], name="split"),
                            helper.make_node("SequenceLength", ["s"], ["y"])],
                           [vi("x", F, [4]), vi("w", I64, [])], [vi("y", I64, [])]),
                     "split (input 1, 'w') must be known at compile time",
                     "fixes the sequence's length")

    def test_map_over_sequences_of_two_lengths(self):
        body = helper.make_graph([helper.make_node("Add", ["p", "q"], ["r"])], "b",
                                 [vi("p", F, [2]), vi("q", F, [2])], [vi("r", F, [2])])
        m = pair_then(helper.make_node("SequenceConstruct", ["a"], ["one"]),
                      helper.make_node("SequenceMap", ["s", "one"], ["m"], body=body, name="map"),
                      helper.make_node("ConcatFromSequence", ["m"], ["y"], axis=0))
        self.refused(m, "node 'map' (SequenceMap", "input 1 is a sequence of 1, input 0 one "
                     "of 2")

    def test_get_element_of_an_absent_optional(self):
        m = model([helper.make_node("OptionalGetElement", ["o"], ["y"], name="get")],
                  [opt_vi("o")], [vi("y", F, [2])])
        self.refused(m, "node 'get' (OptionalGetElement", "is an absent optional tensor",
                     flags=("--optional-absent", "o"))


class ControlFlowOverSequences(HostileCase):
    def loop(self, trip, trip_input=False):
        body = helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("SequenceInsert", ["s_in", "x"], ["s_out"])],
            "grow", [vi("i", I64, []), vi("c_in", BOOL, []), seq_vi("s_in")],
            [vi("c_out", BOOL, []), seq_vi("s_out")])
        nodes = [helper.make_node("SequenceEmpty", [], ["e"]),
                 helper.make_node("Loop", ["m", "", "e"], ["s"], body=body, name="loop"),
                 helper.make_node("SequenceLength", ["s"], ["y"])]
        inputs = [vi("x", F, [2])]
        if trip_input:
            inputs.append(vi("m", I64, []))
        else:
            nodes.insert(0, const("m", np.array(trip, np.int64)))
        return model(nodes, inputs, [vi("y", I64, [])])

    def test_trip_count_known_at_run_time(self):
        self.refused(self.loop(0, trip_input=True), "node 'loop' (Loop",
                     "M (input 0, 'm') must be known at compile time",
                     "the loop carries or reads a sequence or an optional")

    def test_unrolled_scan_output_of_no_iteration(self):
        body = helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("SequenceAt", ["s", "i"], ["row"])],
            "rows", [vi("i", I64, []), vi("c_in", BOOL, [])],
            [vi("c_out", BOOL, []), vi("row", F, [2])])
        m = pair_then(const("zero", np.array(0, np.int64)),
                      helper.make_node("Loop", ["zero", "", ], ["y"], body=body, name="loop"))
        self.refused(m, "node 'loop' (Loop", "scan output 0 ('y') would be empty: the unrolled "
                     "loop runs no iteration")

    def test_too_many_iterations(self):
        self.refused(self.loop(1 << 40), "node 'loop' (Loop",
                     "more than 4096 iterations, the most odlac unrolls")

    def test_if_whose_branches_disagree(self):
        t = helper.make_graph([helper.make_node("SequenceConstruct", ["x"], ["ts"])], "t", [],
                              [seq_vi("ts")])
        e = helper.make_graph([helper.make_node("SequenceConstruct", ["x", "x"], ["es"])], "e",
                              [], [seq_vi("es")])
        m = model([helper.make_node("If", ["c"], ["s"], then_branch=t, else_branch=e, name="if"),
                   helper.make_node("SequenceLength", ["s"], ["y"])],
                  [vi("c", BOOL, []), vi("x", F, [2])], [vi("y", I64, [])])
        self.refused(m, "node 'if' (If", "a sequence of 1 in then_branch and a sequence of 2 in "
                     "else_branch", "known only at run time")

    def test_sequence_out_of_a_run_time_body(self):
        # A Scan body runs at run time: a sequence cannot leave it.
        body = helper.make_graph(
            [helper.make_node("SequenceConstruct", ["e"], ["es"])], "scan_body",
            [vi("e", F, [2])], [seq_vi("es")])
        m = model([helper.make_node("Scan", ["x"], ["s"], body=body, num_scan_inputs=1,
                                    name="scan")],
                  [vi("x", F, [3, 2])], [vi("s", F, None)])
        self.refused(m, "output 'es' is a sequence", "cannot cross the boundary of a body")


if __name__ == "__main__":
    main()
