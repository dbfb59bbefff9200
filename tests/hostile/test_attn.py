"""Hostile LinearAttention, CausalConvWithState and FlexAttention nodes (frontend/rules/
Transformer.cpp): shapes, optional inputs, attributes or modifier bodies that contradict each
other or the spec are refused at compile time with the node, the rule broken and the numbers,
leaving nothing behind; none is compiled with an attribute ignored."""
from hostile import HostileCase, main

from onnx import TensorProto, helper

F, F16, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64


def one_node(op, inputs, outputs, attrs=None, domain="", opsets=(("", 27),)):
    """One `op` node named 'n'; `inputs` as (name, elem_type, shape), "" for an absent optional
    one."""
    node = helper.make_node(op, [n for n, _, _ in inputs], list(outputs), name="n",
                            domain=domain, **(attrs or {}))
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs if n],
        [helper.make_tensor_value_info(o, F, None) for o in outputs])
    return helper.make_model(graph, ir_version=11,
                             opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])


class Case(HostileCase):
    op = ""

    def refused(self, model, *fragments):
        out = self.path("out")
        r = self.odlac(self.save(model), "-o", out)
        self.assertRefused(r, "node 'n' (" + self.op, *fragments)
        self.assertNothingLeft(out)


QKV = [("q", F, [2, 3, 8]), ("k", F, [2, 3, 8]), ("v", F, [2, 3, 6])]
NONE = ("", None, None)


class LinearAttentionNodes(Case):
    op = "LinearAttention"

    def node(self, inputs, attrs):
        return one_node("LinearAttention", inputs, ["o", "s"],
                        dict({"q_num_heads": 2, "kv_num_heads": 2}, **attrs))

    def test_unknown_update_rule(self):
        self.refused(self.node(QKV, {"update_rule": "softmax"}),
                     "update_rule 'softmax' is not one of linear, gated, delta, gated_delta")

    def test_heads_not_a_multiple(self):
        self.refused(self.node(QKV, {"update_rule": "linear", "q_num_heads": 3}),
                     "q_num_heads 3 must be a positive multiple of kv_num_heads 2")

    def test_rule_without_its_inputs(self):
        self.refused(self.node(QKV, {"update_rule": "gated"}),
                     "update_rule 'gated' requires the decay input")
        self.refused(self.node(QKV + [NONE, NONE, ("b", F, [2, 3, 2])], {"update_rule": "gated"}),
                     "update_rule 'gated' requires the decay input")
        self.refused(self.node(QKV + [NONE, ("g", F, [2, 3, 2])], {"update_rule": "delta"}),
                     "update_rule 'delta' forbids the decay input")

    def test_input_a_rule_forbids(self):
        self.refused(self.node(QKV + [NONE, NONE, ("b", F, [2, 3, 2])], {"update_rule": "linear"}),
                     "update_rule 'linear' forbids the beta input")

    def test_key_of_other_head_size(self):
        self.refused(self.node([("q", F, [2, 3, 8]), ("k", F, [2, 3, 6]), ("v", F, [2, 3, 6])],
                               {"update_rule": "linear"}),
                     "must be [b, T, 2 * dk], [b, T, 2 * dk] and [b, T, 2 * dv]")

    def test_mixed_types(self):
        self.refused(self.node([("q", F16, [2, 3, 8]), ("k", F, [2, 3, 8]), ("v", F, [2, 3, 6])],
                               {"update_rule": "linear"}),
                     "must be 3-D [batch, seq, heads * size] of one element type")

    def test_decay_of_other_width(self):
        self.refused(self.node(QKV + [NONE, ("g", F, [2, 3, 4])], {"update_rule": "gated"}),
                     "decay f32[2,3,4] must be f32[2, 3, 2] or [2, 3, 8]")

    def test_beta_of_other_width(self):
        self.refused(self.node(QKV + [NONE, ("g", F, [2, 3, 2]), ("b", F, [2, 3, 3])], {}),
                     "beta f32[2,3,3] must be f32[2, 3, 2] or [2, 3, 1]")

    def test_past_state_of_other_shape(self):
        self.refused(self.node(QKV + [("p", F, [2, 2, 3, 4])], {"update_rule": "linear"}),
                     "past_state f32[2,2,3,4] must be [2, 2, 4, 3]")

    def test_sequence_too_long_to_unroll(self):
        self.refused(self.node([("q", F, [1, 70000, 2]), ("k", F, [1, 70000, 2]),
                                ("v", F, [1, 70000, 2])], {"update_rule": "linear"}),
                     "the recurrence over 70000 tokens would unroll into more than 1048576 nodes "
                     "(at most 52428 tokens)")

    def test_unknown_attribute(self):
        self.refused(self.node(QKV, {"update_rule": "linear", "causal": 1}),
                     "'causal'")


class CausalConvWithStateNodes(Case):
    op = "CausalConvWithState"

    def node(self, inputs, attrs=None):
        return one_node("CausalConvWithState", inputs, ["y", "s"], attrs)

    X, W = ("x", F, [2, 4, 8]), ("w", F, [4, 1, 3])

    def test_unknown_activation(self):
        self.refused(self.node([self.X, self.W], {"activation": "gelu"}),
                     "activation 'gelu' is not one of none, silu, swish")

    def test_weight_not_depthwise(self):
        self.refused(self.node([self.X, ("w", F, [4, 2, 3])]),
                     "weight f32[4,2,3] must be [4, 1, k] with k >= 1")

    def test_bias_of_other_size(self):
        self.refused(self.node([self.X, self.W, ("b", F, [3])]), "bias f32[3] must be f32[4]")

    def test_past_state_of_other_length(self):
        self.refused(self.node([self.X, self.W, NONE, ("p", F, [2, 4, 3])]),
                     "past_state f32[2,4,3] must be f32[2,4,2]")

    def test_rank_2_input(self):
        self.refused(self.node([("x", F, [4, 8]), self.W]),
                     "must be [batch, channels, length] and [channels, 1, k]")


def modifier(name, nodes, inputs=("x",), outputs=("y",)):
    return helper.make_graph(nodes, name, [helper.make_tensor_value_info(i, F, None)
                                           for i in inputs],
                             [helper.make_tensor_value_info(o, F, None) for o in outputs])


class FlexAttentionNodes(Case):
    op = "ai.onnx.preview.FlexAttention"

    def node(self, attrs=None, inputs=(("Q", F, [1, 4, 3, 8]), ("K", F, [1, 2, 5, 8]),
                                       ("V", F, [1, 2, 5, 6]))):
        return one_node("FlexAttention", list(inputs), ["Y"], attrs, domain="ai.onnx.preview",
                        opsets=(("", 26), ("ai.onnx.preview", 1)))

    def test_bad_attribute_values(self):
        for attrs, fragment in (
                ({"softmax_precision": 7}, "softmax_precision 7 is not one of 1 (float)"),
                ({"scale": -1.0}, "scale -1.000000 must be finite and > 0"),
                ({"scale": float("inf")}, "scale inf must be finite and > 0")):
            with self.subTest(attrs=attrs):
                self.refused(self.node(attrs), fragment)

    def test_rank_3(self):
        self.refused(self.node(inputs=[("Q", F, [4, 3, 8]), ("K", F, [2, 5, 8]),
                                       ("V", F, [2, 5, 6])]),
                     "must be 4-D tensors of one floating-point type")

    def test_heads_not_a_multiple(self):
        self.refused(self.node(inputs=[("Q", F, [1, 3, 3, 8]), ("K", F, [1, 2, 5, 8]),
                                       ("V", F, [1, 2, 5, 6])]),
                     "the 3 query heads must be a multiple of the 2 key/value heads")

    def test_score_mod_changing_the_shape(self):
        body = modifier("score_mod", [helper.make_node("ReduceMax", ["x"], ["y"], keepdims=0)])
        self.refused(self.node({"score_mod": body}),
                     "score_mod must return one tensor of its input's type f32[1,4,3,5], but "
                     "returns 1 of type f32[]")

    def test_prob_mod_of_two_outputs(self):
        body = modifier("prob_mod", [helper.make_node("Identity", ["x"], ["y"]),
                                     helper.make_node("Identity", ["x"], ["z"])],
                        outputs=("y", "z"))
        self.refused(self.node({"prob_mod": body}),
                     "prob_mod must return one tensor of its input's type f32[1,4,3,5], but "
                     "returns 2")

    def test_score_mod_of_two_inputs(self):
        body = modifier("score_mod", [helper.make_node("Add", ["x", "i"], ["y"])],
                        inputs=("x", "i"))
        self.refused(self.node({"score_mod": body}),
                     "body 'score_mod' declares 2 inputs; the op binds 1")

    def test_score_mod_not_a_graph(self):
        self.refused(self.node({"score_mod": 3}),
                     "attribute 'score_mod' must be a graph, but its type is INT")


if __name__ == "__main__":
    main()
