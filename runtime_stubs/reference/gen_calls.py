#!/usr/bin/python3
"""Generates the reference backend's call log from the ODLA headers: every ODLA call that
builds a computation, recorded when an application makes it and replayed when a stored
executable or computation is loaded (calls.h explains why; executable_io.c stores the log).

Usage: gen_calls.py INCLUDE_DIR OUT_H OUT_C
The outputs are committed beside this script, so that the backend builds from its sources
alone with any C99 compiler; house.generated_calls (tests/house/check_generated_calls.py)
fails when they differ from this script's output for the headers.

For every op builder the headers declare (a function returning odla_value or odla_values)
and the few status-returning calls that shape a graph (RECORDED_STATUS), it writes:
  OUT_H  ref_call_names.h: renames the function (odla_Add becomes ref_built_Add) in every
         source of the backend, which includes it through ref.h, so that the backend's own
         calls between builders are not recorded; the call indices REF_CALL_<name>, their
         number REF_NUM_CALLS and REF_CALL_TABLE_SIGNATURE, a hash of the table that stored
         files carry (another table refuses them);
  OUT_C  ref_call_table.c: the public function, which calls the renamed builder and, when it
         succeeded, appends its arguments to the computation's log (ref_rec_*); a replayer
         that reads the same arguments back from a stored file (ref_get_*, every count and
         index checked) and calls the public function; and ref_call_table, the replayers by
         index, each with its argument kinds; and ref_call_name, the names by index.
Building with ODLA_REFERENCE_NO_CALL_LOG (libodla_dnnl, which overrides some builders) renames nothing
and records nothing.

Each parameter type has one encoding (KINDS, a letter per kind). A pointer parameter is an
array whose length the generator must be told (LENGTHS, a C expression over the earlier
parameters, evaluated when recording and checked when replaying): a builder with a pointer
parameter and no length, or a parameter type without a kind, fails the build rather than
being recorded wrongly. Variadic functions cannot be wrapped in C: HAND_WRITTEN names their
recorders and replayers."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from odla_decls import declarations, split_params  # noqa: E402

# Calls that return a status and change the graph being built.
RECORDED_STATUS = {"odla_SetValueAsOutput", "odla_SetValueAsOutputById", "odla_SetValuesAsOutput",
                   "odla_BeginIf", "odla_EnterBranchBody", "odla_BeginLoop",
                   "odla_DifferentiateComputation"}
# Builders that are not recorded, and why.
NOT_RECORDED = {"odla_CreateValue": "interpret mode, whose computations are never stored"}
# Variadic builders: their public function records itself (ops_custom.c), and
# ref_replay_<name> (declared in calls.h) replays it; the kinds they add after the named
# parameters ('P': a CustomOp's attribute block).
HAND_WRITTEN = {"odla_CustomOp": "P"}

# Parameter type (without const) -> kind. Enums (found in the headers) are kind '4' too.
KINDS = {
    "odla_value": "v",        # i32 value index, -1 for NULL
    "odla_values": "V",       # u32 count, i32 value indices
    "odla_value_id": "i",     # u32 length (0xffffffff: NULL), bytes
    "odla_value_ids": "I",    # u32 count, ids
    "odla_value_shape": "s",  # i32 rank (-1: undefined), i64 dims
    "odla_value_type": "t",   # u32 element type, shape
    "odla_int32": "4", "odla_uint32": "4", "odla_float32": "4", "odla_bool": "4",
    "odla_int64": "8",
    "odla_size_t": "z",       # u64
    "odla_computation": "C",  # nothing stored: the computation being built or loaded
    "odla_uint32 *": "a", "odla_int32 *": "a", "odla_loop_output_mode *": "a",  # u32 count
    "odla_char *": "c",       # as an id
    "odla_void *": "d",       # constant data: u64 offset in the weights, u64 bytes
}
REC = {"v": "ref_rec_value(&rec_, {a})", "V": "ref_rec_values(&rec_, &{a})",
       "i": "ref_rec_str(&rec_, (const char *){a})", "I": "ref_rec_ids(&rec_, &{a})",
       "s": "ref_rec_shape(&rec_, &{a})", "t": "ref_rec_type(&rec_, &{a})",
       "4": "ref_rec_4(&rec_, &{a})", "8": "ref_rec_8(&rec_, (uint64_t){a})",
       "z": "ref_rec_8(&rec_, (uint64_t){a})", "C": None,
       "a": "ref_rec_array(&rec_, {a}, (uint64_t)({n}))", "c": "ref_rec_str(&rec_, {a})",
       "d": "ref_rec_data(&rec_, {a}, &{n})"}
GET = {"v": "{a} = ref_get_value(r)", "V": "{a} = ref_get_values(r)",
       "i": "{a} = (odla_value_id)(uintptr_t)ref_get_str(r)", "I": "{a} = ref_get_ids(r)",
       "s": "{a} = ref_get_shape(r)", "t": "{a} = ref_get_type(r)", "4": "ref_get_4(r, &{a})",
       "8": "{a} = (odla_int64)ref_get_8(r)", "z": "{a} = ref_get_size(r)",
       "C": "{a} = r->comp", "a": "{a} = ({t})ref_get_array(r, (uint64_t)({n}))",
       "c": "{a} = ref_get_str(r)", "d": "{a} = ref_get_data(r, &{n})"}

# Lengths of array parameters (kind 'a'), and the type a constant's data has (kind 'd').
SPATIAL = "REF_CALL_SPATIAL(input)"
RANK = "ref_call_rank(input)"
LENGTHS = {}
for f, ps in (("AveragePool", "window_dims strides paddings_front paddings_back"),
              ("MaxPool", "window_dims strides paddings_front paddings_back"),
              ("ExtAveragePool", "window_dims strides dilations paddings_front paddings_back"),
              ("ExtLpPool", "window_dims strides dilations paddings_front paddings_back"),
              ("ExtMaxPool", "window_dims strides dilations paddings_front paddings_back"),
              ("ExtMaxPoolIndices", "window_dims strides dilations paddings_front paddings_back"),
              ("Conv", "strides dilations paddings_front paddings_back"),
              ("DeConv", "strides dilations paddings_front paddings_back"),
              ("ExtConv", "strides dilations paddings_front paddings_back"),
              ("ExtDeformConv", "strides dilations paddings_front paddings_back"),
              ("ExtQLinearConv", "strides dilations paddings_front paddings_back")):
    for p in ps.split():
        LENGTHS[("odla_" + f, p)] = SPATIAL
for f, ps in (("Pad", ("padding_front", "padding_back")), ("Slice", ("start", "end", "stride")),
              ("Tile", ("repeat",))):
    for p in ps:
        LENGTHS[("odla_" + f, p)] = RANK
for f in ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
          "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Squeeze"):
    LENGTHS[("odla_" + f, "axes")] = "num_of_axes"
LENGTHS[("odla_LpNormalize", "axes")] = "axes_size"
# Col2Im's input is [N, C * prod(block), L]: image_shape holds one entry per image axis.
for p in ("dilations", "paddings_front", "paddings_back", "strides"):
    LENGTHS[("odla_ExtCol2Im", p)] = "ref_call_length(image_shape)"
LENGTHS[("odla_EndLoop", "flags")] = "output_values.size"
for f, per_direction in (("ExtRNN", 1), ("ExtGRU", 2), ("ExtLSTM", 3)):
    LENGTHS[("odla_" + f, "activations")] = f"REF_CALL_DIRECTIONS(direction) * {per_direction}"
LENGTHS[("odla_CreateConstant", "data_ptr")] = "value_type"

BANNER = "/* Generated by runtime_stubs/reference/gen_calls.py from the ODLA headers: do not edit. */"


def enum_types(include_dir):
    found = set()
    for root, _, files in os.walk(os.path.join(include_dir, "ODLA")):
        for f in files:
            if f.endswith(".h"):
                text = open(os.path.join(root, f)).read()
                found.update(re.findall(r"typedef\s+enum\s*\{[^}]*\}\s*(\w+)\s*;", text))
    return found


def param_type(p, arg):
    """The parameter's type without const and its name, e.g. 'odla_uint32 *'."""
    t = re.sub(r"\b%s\s*$" % re.escape(arg), "", p).replace("const", " ")
    t = " ".join(t.split()).replace(" *", "*").replace("*", " *").strip()
    return t


def recorded_calls(include_dir):
    """The table: (return type, name, parameters, argument names, kinds, lengths, types,
    variadic) per recorded call, sorted by name. Exits when a call cannot be recorded."""
    enums = enum_types(include_dir)
    calls, errors = [], []
    for ret, name, params, args, variadic in declarations(include_dir):
        builder = ret in ("odla_value", "odla_values")
        if not (builder or name in RECORDED_STATUS) or name in NOT_RECORDED:
            continue
        if variadic and name not in HAND_WRITTEN:
            errors.append(f"{name} is variadic: record and replay it by hand (HAND_WRITTEN)")
            continue
        kinds, lengths, types = "", [], []
        for p, a in zip(split_params(params) if args else [], args):
            t = param_type(p, a)
            k = "4" if t in enums else KINDS.get(t)
            if k is None:
                errors.append(f"{name}: parameter '{p}' has a type without a kind (KINDS)")
                k = "?"
            n = LENGTHS.get((name, a))
            if k in "ad" and n is None:
                errors.append(f"{name}: the length of '{a}' is not known (LENGTHS)")
            kinds += k
            lengths.append(n)
            types.append(t)
        calls.append((ret, name, params, args, kinds + HAND_WRITTEN.get(name, ""), lengths,
                      types, variadic))
    for (f, p) in LENGTHS:
        if not any(c[1] == f and p in c[3] for c in calls):
            errors.append(f"LENGTHS names {f}({p}), which the headers do not declare")
    if errors:
        sys.exit("gen_calls.py:\n  " + "\n  ".join(errors))
    return calls, enums


def main():
    include_dir, out_h, out_c = sys.argv[1:4]
    calls, enums = recorded_calls(include_dir)

    # FNV-1a (64-bit) of the table: what a stored file's calls mean.
    sig = 14695981039346656037
    for c in calls:
        for b in f"{c[1]}({c[4]});".encode():
            sig = ((sig ^ b) * 1099511628211) % (1 << 64)

    h = [BANNER, "#ifndef ODLA_REFERENCE_REF_CALL_NAMES_H_", "#define ODLA_REFERENCE_REF_CALL_NAMES_H_",
         "", "/* The backend's own names of the recorded ODLA functions (ref_call_table.c defines the",
         " * public ones). */", "#ifndef ODLA_REFERENCE_NO_CALL_LOG"]
    for c in calls:
        if c[1] not in HAND_WRITTEN:
            h.append(f"#define {c[1]} ref_built_{c[1][5:]}")
    h += ["#endif", "", "/* Indices in ref_call_table. */", "enum {"]
    h += [f"  REF_CALL_{c[1]}," for c in calls]
    h += ["  REF_NUM_CALLS", "};", "#define REF_CALL_TABLE_SIGNATURE 0x%016xull" % sig, "", "#endif"]

    o = [BANNER, '#include "calls.h"', "", "#include <stdint.h>", ""]
    o.append("/* Enums are recorded as 4 bytes, through int32 (a target's enums may be smaller:")
    o.append(" * arm-none-eabi's are); odla_bool is 4 bytes itself. */")
    o.append("typedef char ref_call_size_of_odla_bool[sizeof(odla_bool) == 4 ? 1 : -1];")
    o += ["", "#ifndef ODLA_REFERENCE_NO_CALL_LOG"]
    for ret, name, params, args, kinds, lengths, types, variadic in calls:
        if name in HAND_WRITTEN:
            continue
        short = name[5:]
        o.append(f"#undef {name}")
        o.append(f"extern ODLA_API_EXPORT {ret} ODLA_API_CALL {name}({params});")
        o.append(f"ODLA_API_EXPORT {ret} ODLA_API_CALL {name}({params}) {{")
        o.append(f"  {ret} r_ = ref_built_{short}({', '.join(args)});")
        o.append("  ref_rec rec_;")
        target = next((a for a, k in zip(args, kinds) if k == "C"), "ref_current()")
        ok = {"odla_value": "r_ != NULL", "odla_values": "1"}.get(ret, "r_ == ODLA_SUCCESS")
        o.append(f"  if (!ref_rec_begin(&rec_, {target}, REF_CALL_{name}, {ok}))")
        o.append("    return r_;")
        for a, k, n, t in zip(args, kinds, lengths, types):
            if t in enums:
                o.append(f"  {{ const int32_t e_ = (int32_t){a}; ref_rec_4(&rec_, &e_); }}")
            elif REC[k]:
                o.append("  " + REC[k].format(a=a, n=n) + ";")
        o += ["  ref_rec_end(&rec_);", "  return r_;", "}", ""]
    o += ["#endif /* ODLA_REFERENCE_NO_CALL_LOG */", ""]
    for ret, name, params, args, kinds, lengths, types, variadic in calls:
        if name in HAND_WRITTEN:
            continue
        o.append(f"static odla_status ref_replay_{name[5:]}(ref_replay *r) {{")
        for a, t in zip(args, types):
            o.append(f"  {'const ' if t.endswith('*') else ''}{t} {a};")
        for a, k, n, t in zip(args, kinds, lengths, types):
            if t in enums:
                o.append(f"  {{ int32_t e_; ref_get_4(r, &e_); {a} = ({t})e_; }}")
            else:
                o.append("  " + GET[k].format(a=a, n=n, t="const " + t) + ";")
        done = {"odla_value": "ref_replay_value", "odla_values": "ref_replay_values"}
        o += ["  if (r->bad)", "    return ref_replay_bad(r);",
              f"  return {done.get(ret, 'ref_replay_status')}(r, {name}({', '.join(args)}));", "}",
              ""]
    o.append("const ref_call_entry ref_call_table[REF_NUM_CALLS] = {")
    for c in calls:
        o.append(f'    {{"{c[4]}", ref_replay_{c[1][5:]}}},')
    o += ["};", "", "const char *const ref_call_name[REF_NUM_CALLS] = {"]
    for c in calls:
        o.append(f'    "{c[1]}",')
    o += ["};", ""]
    for path, lines in ((out_h, h), (out_c, o)):
        text = "\n".join(lines) + "\n"
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
