#!/usr/bin/python3
"""LinearAttention-27, CausalConvWithState-27 and ai.onnx.preview's FlexAttention-1 end to end,
in the cases ONNX 1.23's node tests leave out: LinearAttention with a float32 state under
float16 activations, per-head decay with grouped-query heads in gated_delta, one beta shared by
every head, a negative scale, multi-query heads with a past state, chunk_size; CausalConvWithState
decoding fewer positions than its carried state holds, with bias and SiLU, and both ops over an
empty sequence (the state passes through); FlexAttention whose
score_mod reads a graph input of the enclosing graph (a captured value) and carries its own
initializer, a prob_mod, softmax_precision double over float32 inputs, and double inputs with an
explicit scale. Expected outputs come from float64 numpy transcriptions of the specs below (not
odlac's decompositions, not ONNX's reference code); folders as in test_new_ops.py, run by the
conformance runner.

Environment: as test_new_ops.py."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from test_new_ops import RNG, run_cases, vi

F32, F64 = np.float32, np.float64


def model_of(name, nodes, inputs, outputs, opsets, initializers=()):
    """A test case: a graph of `nodes`, `inputs` and `outputs` as (name, array)."""
    graph = helper.make_graph(nodes, name, [vi(k, v) for k, v in inputs],
                              [vi(k, v) for k, v in outputs],
                              [numpy_helper.from_array(v, k) for k, v in initializers])
    model = helper.make_model(graph, ir_version=11,
                              opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    return name, model, [v for _, v in inputs], [v for _, v in outputs]


# ---- LinearAttention ------------------------------------------------------------------------

def linear_attention(q, k, v, q_heads, kv_heads, rule, past=None, decay=None, beta=None,
                     scale=0.0):
    """(output [b, T, hq * dv], present_state [b, hkv, dk, dv]) in float64, from the spec."""
    b, t, _ = q.shape
    dk, dv = q.shape[2] // q_heads, v.shape[2] // kv_heads
    def heads(x, h):
        return x.astype(F64).reshape(b, t, h, x.shape[2] // h)
    qh, kh, vh = heads(q, q_heads), heads(k, kv_heads), heads(v, kv_heads)
    state = np.zeros((b, kv_heads, dk, dv)) if past is None else past.astype(F64)
    scale = scale or 1 / np.sqrt(dk)
    group = q_heads // kv_heads
    out = np.zeros((b, t, q_heads, dv))
    for i in range(t):
        k_t, v_t = kh[:, i], vh[:, i]  # [b, hkv, dk], [b, hkv, dv]
        if rule in ("gated", "gated_delta"):
            g = decay.astype(F64)[:, i].reshape(b, kv_heads, -1)  # per head or per key feature
            state = state * np.exp(g)[..., None]
        if rule in ("delta", "gated_delta"):
            rate = beta.astype(F64)[:, i].reshape(b, -1, 1)  # per head or one for all
            v_t = rate * (v_t - np.einsum("bhkv,bhk->bhv", state, k_t))
        state = state + k_t[..., :, None] * v_t[..., None, :]
        for h in range(q_heads):
            out[:, i, h] = scale * np.einsum("bk,bkv->bv", qh[:, i, h], state[:, h // group])
    return out.reshape(b, t, q_heads * dv), state


def la_case(name, arrays, q_heads, kv_heads, rule, attrs=None):
    names = ["query", "key", "value", "past_state", "decay", "beta"]
    given = [(n, arrays.get(n)) for n in names]
    while given[-1][1] is None:
        given.pop()
    out, state = linear_attention(arrays["query"], arrays["key"], arrays["value"], q_heads,
                                  kv_heads, rule, arrays.get("past_state"), arrays.get("decay"),
                                  arrays.get("beta"), (attrs or {}).get("scale", 0.0))
    node = helper.make_node("LinearAttention", [n if a is not None else "" for n, a in given],
                            ["output", "present_state"], q_num_heads=q_heads,
                            kv_num_heads=kv_heads, update_rule=rule, **(attrs or {}))
    t, s = arrays["query"].dtype, arrays.get("past_state", arrays["query"]).dtype
    return model_of("linear_attention_" + name, [node], [(n, a) for n, a in given if a is not None],
                    [("output", out.astype(t)), ("present_state", state.astype(s))], [("", 27)])


def unit_keys(dtype, b, t, heads, dk):
    k = RNG.standard_normal((b, t, heads, dk))
    return (k / np.linalg.norm(k, axis=-1, keepdims=True)).reshape(b, t, heads * dk).astype(dtype)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def linear_attention_cases():
    f16 = np.float16
    yield la_case("fp16_f32_state_head_decay_gqa", {
        "query": RNG.standard_normal((2, 3, 16)).astype(f16), "key": unit_keys(f16, 2, 3, 2, 4),
        "value": RNG.standard_normal((2, 3, 6)).astype(f16),
        "past_state": RNG.standard_normal((2, 2, 4, 3)).astype(F32),
        "decay": (-RNG.random((2, 3, 2))).astype(f16),
        "beta": sigmoid(RNG.standard_normal((2, 3, 2))).astype(f16)}, 4, 2, "gated_delta")
    yield la_case("delta_shared_beta_negative_scale", {
        "query": RNG.standard_normal((1, 5, 8)).astype(F32), "key": unit_keys(F32, 1, 5, 2, 4),
        "value": RNG.standard_normal((1, 5, 10)).astype(F32),
        "beta": sigmoid(RNG.standard_normal((1, 5, 1))).astype(F32)}, 2, 2, "delta",
        {"scale": -0.5, "chunk_size": 2})
    yield la_case("gated_key_decay_past_mqa", {
        "query": RNG.standard_normal((2, 2, 9)).astype(F32),
        "key": RNG.standard_normal((2, 2, 3)).astype(F32),
        "value": RNG.standard_normal((2, 2, 2)).astype(F32),
        "past_state": RNG.standard_normal((2, 1, 3, 2)).astype(F32),
        "decay": (-RNG.random((2, 2, 3))).astype(F32)}, 3, 1, "gated")
    yield la_case("empty_sequence_keeps_the_state", {
        "query": np.zeros((1, 0, 4), F32), "key": np.zeros((1, 0, 4), F32),
        "value": np.zeros((1, 0, 4), F32),
        "past_state": RNG.standard_normal((1, 2, 2, 2)).astype(F32)}, 2, 2, "linear")


# ---- CausalConvWithState --------------------------------------------------------------------

def causal_conv(x, w, bias=None, past=None, silu=False):
    """(output, present_state) in float64, from the spec."""
    b, c, length = x.shape
    k = w.shape[2]
    carried = np.zeros((b, c, k - 1)) if past is None else past.astype(F64)
    padded = np.concatenate([carried, x.astype(F64)], axis=2)
    y = np.zeros((b, c, length))
    for i in range(length):
        y[:, :, i] = np.sum(padded[:, :, i:i + k] * w.astype(F64)[None, :, 0, :], axis=2)
    if bias is not None:
        y += bias.astype(F64)[None, :, None]
    if silu:
        y = y * sigmoid(y)
    return y, padded[:, :, length:]


def causal_conv_cases():
    x, w = RNG.standard_normal((1, 3, 2)).astype(F32), RNG.standard_normal((3, 1, 5)).astype(F32)
    bias, past = RNG.standard_normal(3).astype(F32), RNG.standard_normal((1, 3, 4)).astype(F32)
    y, state = causal_conv(x, w, bias, past, silu=True)
    node = helper.make_node("CausalConvWithState", ["input", "weight", "bias", "past_state"],
                            ["output", "present_state"], activation="silu")
    yield model_of("causal_conv_with_state_decode_shorter_than_state", [node],
                   [("input", x), ("weight", w), ("bias", bias), ("past_state", past)],
                   [("output", y.astype(F32)), ("present_state", state.astype(F32))], [("", 27)])
    x = np.zeros((1, 3, 0), F32)
    y, state = causal_conv(x, w, bias, past, silu=True)
    yield model_of("causal_conv_with_state_empty_input_keeps_the_state", [node],
                   [("input", x), ("weight", w), ("bias", bias), ("past_state", past)],
                   [("output", y.astype(F32)), ("present_state", state.astype(F32))], [("", 27)])


# ---- FlexAttention --------------------------------------------------------------------------

def flex_attention(q, k, v, scale=None, score_mod=None, prob_mod=None):
    """Y in float64, from the spec: query head h reads key head h // (hq / hkv)."""
    group = q.shape[1] // k.shape[1]
    kr, vr = (np.repeat(x.astype(F64), group, axis=1) for x in (k, v))
    scale = 1 / np.sqrt(q.shape[3]) if scale is None else scale
    scores = np.einsum("bhqd,bhkd->bhqk", q.astype(F64), kr) * scale
    if score_mod:
        scores = score_mod(scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs = e / e.sum(axis=-1, keepdims=True)
    if prob_mod:
        probs = prob_mod(probs)
    return np.einsum("bhqk,bhkd->bhqd", probs, vr)


def body(name, elem, nodes, initializers=()):
    """A modifier graph (x) -> y of element type `elem`, rank 4."""
    return helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", elem, None)],
                             [helper.make_tensor_value_info("y", elem, None)],
                             [numpy_helper.from_array(v, n) for n, v in initializers])


def flex_case(name, q, k, v, y, attrs, extra_inputs=()):
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview",
                            **attrs)
    return model_of("flexattention_" + name, [node],
                    [("Q", q), ("K", k), ("V", v)] + list(extra_inputs), [("Y", y)],
                    [("", 26), ("ai.onnx.preview", 1)])


def flex_attention_cases():
    q, k, v = (RNG.standard_normal(s).astype(F32) for s in ([1, 4, 3, 8], [1, 2, 5, 8],
                                                             [1, 2, 5, 6]))
    # score_mod adds the graph input 'bias' (captured from the enclosing graph) and masks with
    # its own initializer; prob_mod doubles; softmax (and the bodies) in double.
    bias = RNG.standard_normal((3, 5))
    keep = RNG.random((1, 1, 3, 5)) > 0.3
    keep[..., 0] = True
    score_mod = body("score_mod", TensorProto.DOUBLE, [
        helper.make_node("Add", ["x", "bias"], ["biased"]),
        helper.make_node("Where", ["keep", "biased", "neg_inf"], ["y"])],
        [("keep", keep), ("neg_inf", np.array(-np.inf))])
    prob_mod = body("prob_mod", TensorProto.DOUBLE, [
        helper.make_node("Constant", [], ["two"], value=numpy_helper.from_array(np.array(2.0))),
        helper.make_node("Mul", ["x", "two"], ["y"])])
    y = flex_attention(q, k, v, score_mod=lambda s: np.where(keep, s + bias, -np.inf),
                       prob_mod=lambda p: 2 * p)
    yield flex_case("gqa_captured_score_mod_prob_mod_double_softmax", q, k, v, y.astype(F32),
                    {"score_mod": score_mod, "prob_mod": prob_mod,
                     "softmax_precision": TensorProto.DOUBLE}, [("bias", bias)])
    q, k, v = (RNG.standard_normal(s) for s in ([2, 2, 4, 3], [2, 2, 6, 3], [2, 2, 6, 5]))
    y = flex_attention(q, k, v, scale=float(F32(0.3)))
    yield flex_case("double_scaled", q, k, v, y, {"scale": 0.3})


def main():
    run_cases((linear_attention_cases, causal_conv_cases, flex_attention_cases), "attn-ops")


if __name__ == "__main__":
    main()
