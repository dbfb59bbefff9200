#!/usr/bin/python3
"""ONNX's Attention (opsets 23 to 25) end to end, for the cases ONNX 1.23's node tests leave
out: V of another element type than Q, an integer attn_mask, qk_matmul_output mode 0 with a
softcap (the raw product, as the spec says) and mode 1 without one, multi-query attention with
a past cache and 3-D inputs, masks shorter than the keys with nonpad_kv_seqlen, a right
window without is_causal, causal cross attention with more queries than keys (its leading
rows attend nothing and are 0), and float64. Expected outputs come from attention() below, a
float64 numpy transcription of the spec (not odlac's decomposition, not ONNX's reference
code); models and folders as in test_new_ops.py, run by the conformance runner.

Environment: as test_new_ops.py."""
import numpy as np
from onnx import helper

from test_new_ops import RNG, run_cases, single_node

NEG_INF = -np.inf


def attention(q, k, v, mask=None, past_k=None, past_v=None, nonpad=None, scale=None,
              causal=False, q_heads=None, kv_heads=None, softcap=0.0, mode=0, left=-1,
              right=-1):
    """(Y, present_key, present_value, qk_matmul_output) in float64, from the spec's text."""
    three_d = q.ndim == 3
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    if three_d:  # [b, s, heads * size] -> [b, heads, s, size]
        def split(x, h):
            return x.reshape(x.shape[0], x.shape[1], h, -1).transpose(0, 2, 1, 3)
        q, k, v = split(q, q_heads), split(k, kv_heads), split(v, kv_heads)
    if past_k is not None:
        k = np.concatenate([past_k.astype(np.float64), k], axis=2)
        v = np.concatenate([past_v.astype(np.float64), v], axis=2)
    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(d) if scale is None else scale
    rep = hq // hkv  # query head h reads key head h // rep
    kr, vr = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    raw = np.einsum("bhqd,bhkd->bhqk", q, kr) * scale
    capped = softcap * np.tanh(raw / softcap) if softcap > 0 else raw
    # Which keys each query may attend, and the added mask.
    allowed = np.ones((b, 1, sq, sk), dtype=bool)
    added = np.zeros((1, 1, 1, 1))
    if nonpad is not None:
        offset = (nonpad - sq).reshape(b, 1, 1, 1)
        allowed &= np.arange(sk).reshape(1, 1, 1, sk) < nonpad.reshape(b, 1, 1, 1)
    else:
        offset = 0 if past_k is None else past_k.shape[2]
    diff = np.arange(sq).reshape(1, 1, sq, 1) + offset - np.arange(sk).reshape(1, 1, 1, sk)
    if causal:
        allowed &= diff >= 0
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= -diff <= right
    if mask is not None:
        pad = sk - mask.shape[-1]
        if mask.dtype == np.bool_:
            mask = np.concatenate([mask, np.zeros(mask.shape[:-1] + (pad,), bool)], axis=-1)
            allowed = allowed & mask
        else:
            mask = mask.astype(np.float64)
            added = np.concatenate([mask, np.full(mask.shape[:-1] + (pad,), NEG_INF)], axis=-1)
    bias = np.where(allowed, added, NEG_INF)
    biased = capped + bias
    row_max = np.max(biased, axis=-1, keepdims=True)
    empty = np.isneginf(np.max(bias, axis=-1, keepdims=True))
    e = np.exp(biased - np.where(np.isneginf(row_max), 0, row_max))
    probs = np.where(empty, 0.0, e / np.where(empty, 1.0, e.sum(axis=-1, keepdims=True)))
    y = np.einsum("bhqk,bhkd->bhqd", probs, vr)
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    return y, k, v, (raw, capped, biased, probs)[mode]


def rand(dtype, *shape):
    return RNG.random(shape).astype(dtype)


def case(name, opset, inputs, outputs, attrs, out_dtype):
    """A model of one Attention node: `inputs` as (name, array) with "" for an absent optional
    one, `outputs` the indices of the results it asks for."""
    arrays = {n: a for n, a in inputs if n}
    kwargs = {"mask": arrays.get("attn_mask"), "past_k": arrays.get("past_key"),
              "past_v": arrays.get("past_value"), "nonpad": arrays.get("nonpad_kv_seqlen")}
    names = {"is_causal": "causal", "q_num_heads": "q_heads", "kv_num_heads": "kv_heads",
             "qk_matmul_output_mode": "mode", "left_window_size": "left",
             "right_window_size": "right"}
    for key, value in attrs.items():
        kwargs[names.get(key, key)] = value
    results = attention(arrays["Q"], arrays["K"], arrays["V"], **kwargs)
    out_names = ["Y", "present_key", "present_value", "qk_matmul_output"]
    node = helper.make_node("Attention", [n for n, _ in inputs],
                            [out_names[i] if i in outputs else "" for i in range(max(outputs) + 1)],
                            **attrs)
    dtypes = {1: arrays["K"].dtype, 2: arrays["V"].dtype}
    outs = [(out_names[i], results[i].astype(dtypes.get(i, out_dtype))) for i in outputs]
    return single_node("attention_" + name, opset, node, [(n, a) for n, a in inputs if n], outs)


def attention_cases():
    f32, f64 = np.float32, np.float64
    yield case("v_float64", 23, [("Q", rand(f32, 2, 2, 3, 4)), ("K", rand(f32, 2, 2, 5, 4)),
                                 ("V", rand(f64, 2, 2, 5, 6))], [0], {"is_causal": 1}, f32)
    int_mask = RNG.integers(-3, 3, (3, 5)).astype(np.int32)
    yield case("int_mask", 23, [("Q", rand(f32, 1, 2, 3, 4)), ("K", rand(f32, 1, 2, 5, 4)),
                                ("V", rand(f32, 1, 2, 5, 4)), ("attn_mask", int_mask)], [0],
               {}, f32)
    qkv = [("Q", rand(f32, 2, 3, 4, 8) * 4), ("K", rand(f32, 2, 3, 6, 8)),
           ("V", rand(f32, 2, 3, 6, 8))]
    yield case("mode0_softcap", 23, qkv, [0, 3], {"softcap": 1.5, "scale": 0.5}, f32)
    yield case("mode1_no_softcap", 23, qkv + [("attn_mask", rand(f32, 4, 6))], [0, 3],
               {"qk_matmul_output_mode": 1}, f32)
    # Multi-query attention, 3-D, with a past cache: offset 3 for the causal frontier.
    yield case("3d_mqa_past_causal", 23,
               [("Q", rand(f32, 2, 4, 16)), ("K", rand(f32, 2, 4, 4)), ("V", rand(f32, 2, 4, 5)),
                ("attn_mask", rand(f32, 2, 1, 4, 7)), ("past_key", rand(f32, 2, 1, 3, 4)),
                ("past_value", rand(f32, 2, 1, 3, 5))], [0, 1, 2, 3],
               {"q_num_heads": 4, "kv_num_heads": 1, "is_causal": 1, "qk_matmul_output_mode": 2},
               f32)
    nonpad = np.array([5, 3], dtype=np.int64)
    # A bool mask for 4 of the 6 keys, padding from nonpad_kv_seqlen, a right window alone.
    yield case("nonpad_right_window_bool_mask", 25,
               [("Q", rand(f32, 2, 2, 3, 4)), ("K", rand(f32, 2, 2, 6, 4)),
                ("V", rand(f32, 2, 2, 6, 4)), ("attn_mask", RNG.random((3, 4)) > 0.3),
                ("", None), ("", None), ("nonpad_kv_seqlen", nonpad)], [0, 3],
               {"right_window_size": 1, "qk_matmul_output_mode": 3}, f32)
    # 3-D grouped-query attention, a float mask shorter than the keys, an external cache.
    yield case("3d_gqa_nonpad_short_mask", 24,
               [("Q", rand(f32, 2, 3, 24)), ("K", rand(f32, 2, 6, 8)), ("V", rand(f32, 2, 6, 8)),
                ("attn_mask", rand(f32, 3, 5)), ("", None), ("", None),
                ("nonpad_kv_seqlen", np.array([6, 2], dtype=np.int64))], [0],
               {"q_num_heads": 6, "kv_num_heads": 2, "is_causal": 1}, f32)
    # Causal cross attention, 5 queries and 3 keys, left window 0: query i attends key i
    # alone, so queries 3 and 4 attend nothing and are 0.
    yield case("causal_cross_left_window_empty_rows", 25,
               [("Q", rand(f64, 1, 2, 5, 4)), ("K", rand(f64, 1, 2, 3, 4)),
                ("V", rand(f64, 1, 2, 3, 4))], [0, 3],
               {"is_causal": 1, "left_window_size": 0, "qk_matmul_output_mode": 3}, f64)


def main():
    run_cases((attention_cases,), "attention")


if __name__ == "__main__":
    main()
