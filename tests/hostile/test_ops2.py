"""Hostile transformer-op nodes (frontend/rules/Transformer.cpp): Attention, RotaryEmbedding and
TensorScatter nodes whose shapes, cache, mask or attributes contradict each other or the spec are refused at compile time with
the node, the rule broken and the numbers, leaving nothing behind; none is compiled with an
attribute ignored."""
from hostile import HostileCase, main

from onnx import TensorProto, helper

F = TensorProto.FLOAT


def attention(opset, inputs, attrs=None, outputs=("Y",), op="Attention"):
    """One `op` node named 'att'; `inputs` as (name, elem_type, shape), "" for an absent
    optional one."""
    node = helper.make_node(op, [n for n, _, _ in inputs], list(outputs), name="att",
                            **(attrs or {}))
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs if n],
        [helper.make_tensor_value_info(o, F, None) for o in outputs if o])
    return helper.make_model(graph, ir_version=10,
                             opset_imports=[helper.make_opsetid("", opset)])


Q4 = ("Q", F, [1, 2, 3, 4])
K4 = ("K", F, [1, 2, 5, 4])
V4 = ("V", F, [1, 2, 5, 4])


class AttentionNodes(HostileCase):
    def refused(self, model, *fragments):
        out = self.path("out")
        r = self.odlac(self.save(model), "-o", out)
        self.assertRefused(r, "node 'att' (Attention", *fragments)
        self.assertNothingLeft(out)

    def test_3d_without_head_counts(self):
        self.refused(attention(23, [("Q", F, [1, 3, 8]), ("K", F, [1, 5, 8]), ("V", F, [1, 5, 8])]),
                     "are 3-D: q_num_heads and kv_num_heads must both be given")

    def test_3d_hidden_not_divisible(self):
        self.refused(attention(23, [("Q", F, [1, 3, 8]), ("K", F, [1, 5, 8]), ("V", F, [1, 5, 8])],
                               {"q_num_heads": 3, "kv_num_heads": 2}),
                     "q_num_heads 3 must divide Q's hidden size")

    def test_heads_not_a_multiple(self):
        self.refused(attention(23, [("Q", F, [1, 3, 3, 4]), K4, V4]),
                     "the 3 query heads must be a multiple of the 2 key/value heads")

    def test_4d_head_counts_disagree(self):
        self.refused(attention(23, [Q4, K4, V4], {"q_num_heads": 4}),
                     "have 2 query and 2 key heads, but q_num_heads is 4")

    def test_4d_head_counts_at_opset_25(self):
        self.refused(attention(25, [Q4, K4, V4], {"q_num_heads": 2, "kv_num_heads": 2}),
                     "are 4-D: q_num_heads and kv_num_heads must not be given")

    def test_past_key_alone(self):
        self.refused(attention(23, [Q4, K4, V4, ("", None, None), ("past_key", F, [1, 2, 3, 4])]),
                     "past_key and past_value must be given together")

    def test_past_value_of_other_size(self):
        self.refused(attention(23, [Q4, K4, V4, ("", None, None), ("past_key", F, [1, 2, 3, 4]),
                                    ("past_value", F, [1, 2, 2, 4])]),
                     "past_key f32[1,2,3,4] and past_value f32[1,2,2,4] must be f32[1,2,P,4] and "
                     "f32[1,2,P,4]")

    def test_nonpad_with_past(self):
        self.refused(attention(24, [Q4, K4, V4, ("", None, None), ("past_key", F, [1, 2, 3, 4]),
                                    ("past_value", F, [1, 2, 3, 4]),
                                    ("nonpad_kv_seqlen", TensorProto.INT64, [1])]),
                     "nonpad_kv_seqlen cannot be combined with past_key and past_value")

    def test_mask_longer_than_keys(self):
        self.refused(attention(23, [Q4, K4, V4, ("attn_mask", F, [3, 6])]),
                     "attn_mask f32[3,6] must have rank >= 1 and at most 5 keys")

    def test_mask_that_enlarges_the_scores(self):
        self.refused(attention(23, [Q4, K4, V4, ("attn_mask", F, [2, 2, 2, 3, 5])]),
                     "must broadcast onto the scores [1,2,3,5]")

    def test_bad_attribute_values(self):
        for attrs, fragment in (
                ({"qk_matmul_output_mode": 4}, "qk_matmul_output_mode 4 is not one of 0, 1, 2, 3"),
                ({"softmax_precision": 7}, "softmax_precision 7 is not one of 1 (float)"),
                ({"softcap": -1.0}, "softcap -1.000000 must be finite and >= 0"),
                ({"scale": 0.0}, "scale 0.000000 must be finite and > 0"),
                ({"is_causal": 2}, "is_causal 2 is not 0 or 1")):
            with self.subTest(attrs=attrs):
                self.refused(attention(23, [Q4, K4, V4], attrs), fragment)

    def test_window_below_minus_one(self):
        self.refused(attention(25, [Q4, K4, V4], {"left_window_size": -2}),
                     "left_window_size -2 and right_window_size -1 must be -1 (unbounded) or >= 0")

    def test_window_before_opset_25(self):
        self.refused(attention(24, [Q4, K4, V4], {"left_window_size": 1}),
                     "attribute 'left_window_size' is not an attribute of Attention-24")


class RotaryEmbeddingNodes(HostileCase):
    def refused(self, attrs, *fragments, x=("X", F, [1, 2, 3, 8]), cache=[50, 4]):
        out = self.path("out")
        model = attention(23, [x, ("cos", F, cache), ("sin", F, cache),
                               ("pos", TensorProto.INT64, [1, 3])], attrs, op="RotaryEmbedding")
        r = self.odlac(self.save(model), "-o", out)
        self.assertRefused(r, "node 'att' (RotaryEmbedding", *fragments)
        self.assertNothingLeft(out)

    def test_odd_rotary_dim(self):
        self.refused({"rotary_embedding_dim": 3},
                     "rotary_embedding_dim 3 must be even and at most the head size 8")

    def test_3d_without_num_heads(self):
        self.refused({}, "is 3-D: num_heads 0 must be > 0 and divide its hidden size",
                     x=("X", F, [1, 3, 16]))

    def test_cache_of_other_size(self):
        self.refused({}, "cos_cache f32[50,3] and sin_cache f32[50,3] must both be "
                         "f32[max_position, 4]", cache=[50, 3])


class TensorScatterNodes(HostileCase):
    def refused(self, attrs, *fragments, update=[2, 1, 2, 5]):
        out = self.path("out")
        model = attention(24, [("past", F, [2, 1, 4, 5]), ("update", F, update),
                               ("w", TensorProto.INT64, [2])], attrs, op="TensorScatter")
        r = self.odlac(self.save(model), "-o", out)
        self.assertRefused(r, "node 'att' (TensorScatter", *fragments)
        self.assertNothingLeft(out)

    def test_batch_axis(self):
        self.refused({"axis": 0}, "must have one element type and differ only along the "
                                  "sequence axis 0 (not the batch axis 0)")

    def test_update_longer_than_cache(self):
        self.refused({}, "past_cache f32[2,1,4,5] and update f32[2,1,6,5]", update=[2, 1, 6, 5])

    def test_unknown_mode(self):
        self.refused({"mode": "ring"}, "mode 'ring' is not one of linear, circular")


if __name__ == "__main__":
    main()
