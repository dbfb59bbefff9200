#!/usr/bin/python3
"""Hostile stored executables, named cases: the stored executables of the MLP of models/ and of
the custom-op model, edited one field at a time the way an attacker who knows the format
would (checksum summed again), truncated, re-versioned, signed with one key and loaded with
another; each is loaded by loader_tool.c (built here against the reference backend) and must
be refused with the expected odla_status and a message naming the problem, or, where the
edit is harmless, load and run. The format is executable_io.c's; its calls' argument kinds
come from the generator of the backend's call table (gen_calls.py), so these cases walk a
file exactly as the loader does. loader_edits.py applies thousands of random such edits."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "runtime_stubs", "reference"))
import gen_calls  # noqa: E402
import hostile  # noqa: E402
import loader_edits  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import test_custom_ops  # noqa: E402

SUCCESS, FILE_NOT_EXIST, INVALID_PARAM, UNSUPPORTED_OP = 0, 2, 3, 7
KEY, OTHER_KEY = "0123456789abcdef-key", "fedcba9876543210-key"
TABLE = gen_calls.recorded_calls(os.path.join(ROOT, "runtime_stubs", "include"))[0]


def fnv1a(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) % (1 << 64)
    return h


class Stored:
    """A stored executable: its header, its call log as fields, its weights."""

    def __init__(self, data):
        self.data = bytearray(data)
        self.weights_at = self.u64(48)
        self.calls = []  # (name, start, end, fields: [(kind letter, offset)])
        at = 64
        n = self.u32(at)
        at += 4
        for _ in range(n):
            start, index = at, self.u32(at)
            name, kinds = TABLE[index][1], TABLE[index][4]
            fields = [("call", at)]
            at = self.walk(kinds, at + 4, fields)
            self.calls.append((name, start, at, fields))
        self.log_end = at

    def u32(self, at):
        return struct.unpack_from("<I", self.data, at)[0]

    def u64(self, at):
        return struct.unpack_from("<Q", self.data, at)[0]

    def walk(self, kinds, at, fields):
        ids = 0
        for k in kinds:
            fields.append((k, at))
            if k == "v" or k == "4":
                at += 4
            elif k in "8z":
                at += 8
            elif k == "V":
                at += 4 + 4 * self.u32(at)
            elif k in "ic":
                n = self.u32(at)
                at += 4 + (0 if n == 0xffffffff else n)
            elif k == "I":
                ids = self.u32(at)
                at = self.walk("i" * ids, at + 4, [])
            elif k == "s":
                at += 4 + 8 * max(struct.unpack_from("<i", self.data, at)[0], 0)
            elif k == "t":
                at = self.walk("s", at + 4, [])
            elif k == "a":
                n = self.u32(at)
                at += 4 + (0 if n == 0xffffffff else 4 * n)
            elif k == "d":
                at += 16
            elif k == "P":  # ops_custom.c: flags, version, attributes, result types
                flags = self.u32(at)
                at += 4
                if flags & 1:
                    n = self.u32(at + 4)
                    at = self.walk("c44c" * n, at + 8, [])
                    if flags & 2:
                        at = self.walk("t" * ids, at, [])
        return at

    def field(self, call_name, kind, nth=0):
        """The offset of the nth argument of `kind` in the first call named call_name."""
        for name, _, _, fields in self.calls:
            if name == call_name:
                return [at for k, at in fields if k == kind][nth]
        raise KeyError(call_name)

    def put(self, fmt, at, value):
        struct.pack_into(fmt, self.data, at, value)
        return self

    def resum(self):
        """Sums the call log again, as someone editing the file would."""
        struct.pack_into("<Q", self.data, 40, fnv1a(self.data[64:self.weights_at]))
        return bytes(self.data)

    def relaid(self, log):
        """The file with another call log (u32 count and calls), laid out and summed."""
        weights = self.data[self.weights_at:]
        at = 64 + (len(log) + 63) // 64 * 64
        out = bytearray(self.data[:64]) + log + bytes(at - 64 - len(log)) + weights
        struct.pack_into("<QQQ", out, 32, len(out), 0, at)
        struct.pack_into("<Q", out, 40, fnv1a(out[64:at]))
        return bytes(out)


class LoaderTest(hostile.HostileCase):
    @classmethod
    def setUpClass(cls):
        cls.shared = tempfile.mkdtemp(prefix="odlac-hostile-loader-")
        cls.tool = os.path.join(cls.shared, "loader_tool")
        subprocess.run([cls.tc.cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", cls.tc.include,
                        os.path.join(HERE, "loader_tool.c"), cls.tc.lib, "-lm", "-o", cls.tool],
                       check=True)
        with open(loader_edits.store(cls.tc, cls.shared, "mlp", os.path.join(
                loader_edits.MODELS, "mlp", "model.onnx")), "rb") as f:
            cls.mlp = f.read()
        custom = os.path.join(cls.shared, "custom.onnx")
        with open(custom, "wb") as f:
            f.write(test_custom_ops.model().SerializeToString())
        with open(loader_edits.store(cls.tc, cls.shared, "custom", custom, test_custom_ops.APP,
                                     ("--custom-op-domain=com.example",)), "rb") as f:
            cls.custom = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared, ignore_errors=True)

    def run_tool(self, *args):
        try:
            return subprocess.run([self.tool, *args], capture_output=True, text=True,
                                  errors="replace", timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.fail(f"loader_tool {' '.join(args)} did not finish within {self.timeout} s")

    def load(self, image, key=None, cmd="load", name="x.odlx"):
        path = self.save(image, name)
        return self.run_tool(cmd, path, *([key] if key else []))

    def assertLoads(self, image, key=None, cmd="load"):
        r = self.load(image, key, cmd)
        self.assertRefused(r, status=SUCCESS)

    def assertLoadRefused(self, image, status, *fragments, key=None, cmd="load"):
        self.assertRefused(self.load(image, key, cmd), *fragments, status=status)

    def stored(self, image=None):
        return Stored(image or self.mlp)

    # ---- The file as a whole ------------------------------------------------------------

    def test_unedited_loads_and_runs_from_a_file_and_memory(self):
        self.assertLoads(self.mlp)
        self.assertLoads(self.mlp, cmd="load-memory")

    def test_missing_file(self):
        r = self.run_tool("load", self.path("none.odlx"))
        self.assertRefused(r, "LoadExecutable: cannot open", status=FILE_NOT_EXIST)

    def test_directory(self):
        r = self.run_tool("load", self.work)
        self.assertRefused(r, "executable: not a regular file", status=INVALID_PARAM)

    def test_empty_and_truncated(self):
        self.assertLoadRefused(b"", INVALID_PARAM, "executable: truncated (no header)")
        self.assertLoadRefused(self.mlp[:63], INVALID_PARAM, "truncated (no header)")
        self.assertLoadRefused(self.mlp[:len(self.mlp) // 2], INVALID_PARAM,
                               "executable: truncated or overlong")
        self.assertLoadRefused(self.mlp[:len(self.mlp) // 2], INVALID_PARAM,
                               "executable: truncated or overlong", cmd="load-memory")

    def test_overlong(self):
        self.assertLoadRefused(self.mlp + b"\0", INVALID_PARAM, "truncated or overlong")

    def test_foreign_magic_and_other_kinds_of_file(self):
        self.assertLoadRefused(b"\x7fELF" + self.mlp[4:], INVALID_PARAM,
                               "not a file of libodla_reference (bad magic)")
        computation = b"ODLAREFC" + self.mlp[8:]
        self.assertLoadRefused(computation, INVALID_PARAM,
                               "this is a stored computation (odla_LoadComputation reads it)")
        self.assertLoads(computation, cmd="load-computation")
        self.assertLoadRefused(self.mlp, INVALID_PARAM, "stored computation: this is a stored "
                               "executable (odla_LoadExecutable reads it)", cmd="load-computation")

    def test_old_format_version(self):
        self.assertLoadRefused(self.stored().put("<I", 8, 1).resum(), INVALID_PARAM,
                               "format version 1; this backend reads version 2", "store it again")

    def test_other_byte_order(self):
        self.assertLoadRefused(self.stored().put("<I", 12, 0x04030201).resum(), INVALID_PARAM,
                               "stored on a machine of another byte order")

    def test_other_call_table(self):
        self.assertLoadRefused(self.stored().put("<Q", 16, 12345).resum(), INVALID_PARAM,
                               "another set of ODLA calls")

    def test_unknown_header_flags(self):
        self.assertLoadRefused(self.stored().put("<Q", 24, 6).resum(), INVALID_PARAM,
                               "corrupt header (unknown flags)")

    def test_data_offset_past_the_end(self):
        s = self.stored()
        self.assertLoadRefused(s.put("<Q", 48, len(self.mlp) + 64).resum(), INVALID_PARAM,
                               "corrupt header (data offset)")

    def test_checksum_catches_corruption(self):
        s = self.stored()
        s.data[s.log_end - 1] ^= 0x40  # not summed again
        self.assertLoadRefused(bytes(s.data), INVALID_PARAM, "checksum mismatch: corrupt")

    # ---- The call log, edited and summed again ---------------------------------------------

    def test_call_index_past_the_table(self):
        s = self.stored()
        bad = len(TABLE) + 7
        self.assertLoadRefused(s.put("<I", s.field("odla_Gemm", "call"), bad).resum(),
                               INVALID_PARAM, f"function index {bad} is not in this library's "
                               f"table of {len(TABLE)} calls")

    def test_call_index_of_another_call(self):
        # Gemm's bytes then read as a Relu and its arguments, and what follows as more calls:
        # each checked as such, until one does not fit.
        s = self.stored()
        relu = [i for i, c in enumerate(TABLE) if c[1] == "odla_Relu"][0]
        r = self.load(s.put("<I", s.field("odla_Gemm", "call"), relu).resum())
        self.assertRefused(r, "LoadExecutable: executable: call", status=INVALID_PARAM)

    def test_value_index_out_of_range(self):
        s = self.stored()
        self.assertLoadRefused(s.put("<i", s.field("odla_Gemm", "v"), 999).resum(), INVALID_PARAM,
                               "(odla_Gemm): value index 999 is not one of the")
        self.assertLoadRefused(s.put("<i", s.field("odla_Gemm", "v"), -2).resum(), INVALID_PARAM,
                               "value index -2 is not one of the")

    def test_value_used_before_it_is_built(self):
        s = self.stored()
        first_gemm = [c for c in s.calls if c[0] == "odla_Gemm"][0]
        later = len([c for c in s.calls if c[1] < first_gemm[1]]) + 5
        self.assertLoadRefused(s.put("<i", s.field("odla_Gemm", "v"), later).resum(),
                               INVALID_PARAM, f"value index {later} is not one of the")

    def test_constant_data_past_the_weights(self):
        s = self.stored()
        at = s.field("odla_CreateConstant", "d")
        self.assertLoadRefused(s.put("<Q", at, len(self.mlp)).resum(), INVALID_PARAM,
                               "(odla_CreateConstant): a constant of", "of the weights")

    def test_constant_size_other_than_its_type(self):
        s = self.stored()
        at = s.field("odla_CreateConstant", "d") + 8
        self.assertLoadRefused(s.put("<Q", at, s.u64(at) + 4).resum(), INVALID_PARAM,
                               "(odla_CreateConstant): a constant of")

    def test_constant_offset_not_aligned(self):
        s = self.stored()
        at = s.field("odla_CreateConstant", "d")
        self.assertLoadRefused(s.put("<Q", at, s.u64(at) + 4).resum(), INVALID_PARAM,
                               "each constant 64-byte aligned")

    def test_argument_dims_too_large(self):
        # The type's bytes are overflow-checked; the builder refuses it.
        s = self.stored()
        at = s.field("odla_CreateArgument", "t") + 8  # element type, rank, then dims[0]
        self.assertLoadRefused(s.put("<q", at, 1 << 62).resum(), INVALID_PARAM,
                               "(odla_CreateArgument): CreateArgument: value", "invalid type",
                               "at most 2^40 bytes")

    def test_negative_dim(self):
        s = self.stored()
        at = s.field("odla_CreateConstant", "t") + 8
        self.assertLoadRefused(s.put("<q", at, -3).resum(), INVALID_PARAM, "invalid type")

    def test_shape_rank_out_of_range(self):
        s = self.stored()
        at = s.field("odla_CreateArgument", "t") + 4
        self.assertLoadRefused(s.put("<i", at, 11).resum(), INVALID_PARAM,
                               "a shape of rank 11 (-1 to 10)")

    def test_string_past_the_end_of_the_log(self):
        s = self.stored()
        at = s.field("odla_CreateArgument", "i")
        self.assertLoadRefused(s.put("<I", at, 1 << 15).resum(), INVALID_PARAM,
                               "the call log ends inside an argument")

    def test_overlong_string(self):
        s = self.stored()
        at = s.field("odla_CreateArgument", "i")
        self.assertLoadRefused(s.put("<I", at, 1 << 20).resum(), INVALID_PARAM,
                               "a string of 1048576 bytes (at most 65536)")

    def test_string_with_a_nul_inside(self):
        s = self.stored()
        at = s.field("odla_CreateArgument", "i")
        s.data[at + 4] = 0
        self.assertLoadRefused(s.resum(), INVALID_PARAM, "a string with a NUL byte inside")

    def test_too_many_values_in_a_list(self):
        s = self.stored(self.custom)
        at = s.field("odla_CustomOp", "V")
        self.assertLoadRefused(s.put("<I", at, 65).resum(), INVALID_PARAM,
                               "65 values; an odla_values holds at most 64")

    def test_call_count_past_the_log(self):
        # One call more than the log holds: the padding after it is read as that call (0xff
        # here, as an attacker may fill it), or it ends inside it.
        s = self.stored()
        n = len(s.calls) + 1
        pad = s.weights_at - s.log_end
        s.data[s.log_end:s.weights_at] = b"\xff" * pad
        self.assertLoadRefused(s.put("<I", 64, n).resum(), INVALID_PARAM, f"call {n} of {n}",
                               "function index 4294967295 is not in this library's table"
                               if pad >= 4 else "the call log ends inside an argument")
        self.assertLoadRefused(s.put("<I", 64, 1 << 30).resum(), INVALID_PARAM,
                               "corrupt call count")

    def test_bytes_after_the_last_call(self):
        s = self.stored()
        self.assertLoadRefused(s.put("<I", 64, len(s.calls) - 1).resum(), INVALID_PARAM,
                               f"bytes after the last of {len(s.calls) - 1} calls")

    def test_calls_deleted_or_swapped(self):
        s = self.stored()
        log = bytes(s.data[64:s.log_end])
        name, start, end, _ = s.calls[0]
        deleted = struct.pack("<I", len(s.calls) - 1) + log[4 + end - start:]
        self.assertLoadRefused(s.relaid(deleted), INVALID_PARAM, "executable: call")
        a, b = s.calls[-2], s.calls[-1]  # the last two calls: the output before its Gemm
        swapped = log[:a[1] - 64] + log[b[1] - 64:b[2] - 64] + log[a[1] - 64:a[2] - 64]
        self.assertLoadRefused(s.relaid(swapped), INVALID_PARAM, "executable: call")

    def test_a_builder_refuses_an_argument(self):
        # Gemm's transpose flag is a plain 4-byte argument: 7 is not a bool; the builder's own
        # check refuses the shapes it then makes, and its message names the stored call.
        s = self.stored()
        at = s.field("odla_Gemm", "4")
        r = self.load(s.put("<I", at, 7).resum())
        self.assertRefused(r, "LoadExecutable: executable: call", "(odla_Gemm): Gemm:",
                           status=INVALID_PARAM)

    def test_array_length_other_than_the_call_makes(self):
        with open(loader_edits.store(self.tc, self.work, "cnn", os.path.join(
                loader_edits.MODELS, "cnn", "model.onnx")), "rb") as f:
            s = Stored(f.read())
        conv = [c[0] for c in s.calls if "Conv" in c[0]][0]
        at = s.field(conv, "a")
        self.assertLoadRefused(s.put("<I", at, 5).resum(), INVALID_PARAM,
                               f"({conv}): an array of 5 elements where the call's other "
                               "arguments make 2")

    def test_custom_op_not_registered(self):
        self.assertLoadRefused(self.custom, UNSUPPORTED_OP, "(odla_CustomOp): CustomOp: custom "
                               "op 'AffineTile' is not registered")

    def test_custom_op_attribute_data_other_than_its_kind(self):
        s = self.stored(self.custom)
        at = s.field("odla_CustomOp", "P") + 12  # flags, version, count; first attribute's name
        name_len = s.u32(at)
        at += 4 + name_len + 8  # its kind and count: its data's byte count follows
        self.assertLoadRefused(s.put("<I", at, s.u32(at) + 1).resum(), INVALID_PARAM,
                               "bytes where the call's other arguments make")

    # ---- Keys ---------------------------------------------------------------------------

    def signed(self, key=KEY):
        src = self.save(self.mlp, "plain.odlx")
        out = self.path("signed.odlx")
        self.assertRefused(self.run_tool("resign", src, out, key), status=SUCCESS)
        with open(out, "rb") as f:
            return f.read()

    def test_signed_with_the_key_loads(self):
        signed = self.signed()
        self.assertEqual(len(signed), len(self.mlp) + 32)
        self.assertLoads(signed, key=KEY)
        self.assertLoads(signed, key=KEY, cmd="load-memory")
        self.assertLoads(signed)  # without a key, a signed file loads as any other

    def test_unsigned_file_with_a_key_set(self):
        self.assertLoadRefused(self.mlp, INVALID_PARAM, "executable: not signed, and a key is "
                               "set (odla_ExtSetExecutableKey)", key=KEY)

    def test_wrong_key(self):
        self.assertLoadRefused(self.signed(), INVALID_PARAM, "the MAC does not match: signed "
                               "with another key, or modified since", key=OTHER_KEY)

    def test_signed_file_edited(self):
        signed = bytearray(self.signed())
        weights = struct.unpack_from("<Q", signed, 48)[0]
        signed[weights + 3] ^= 1  # the weights: not in the checksum, in the MAC
        self.assertLoadRefused(bytes(signed), INVALID_PARAM, "the MAC does not match", key=KEY)
        self.assertLoads(bytes(signed))  # without a key nothing covers the weights
        s = Stored(self.signed())
        s.data[s.log_end - 1] ^= 0x40
        self.assertLoadRefused(s.resum(), INVALID_PARAM, "the MAC does not match", key=KEY)

    def test_signed_file_cut_short(self):
        signed = self.signed()
        self.assertLoadRefused(signed[:-32], INVALID_PARAM, "the MAC does not match", key=KEY)
        self.assertLoadRefused(signed[:40], INVALID_PARAM, "truncated (no header)", key=KEY)

    def test_short_key_refused(self):
        r = self.run_tool("set-key", "short")
        self.assertRefused(r, "ExtSetExecutableKey: a key of 5 bytes: it needs at least 16",
                           status=INVALID_PARAM)

    def test_stored_computation_and_constants_arrays_are_signed_too(self):
        src = self.save(b"ODLAREFC" + self.mlp[8:], "plain.odlc")
        out = self.path("signed.odlc")
        self.assertRefused(self.run_tool("resign-computation", src, out, KEY), status=SUCCESS)
        with open(out, "rb") as f:
            computation = f.read()
        self.assertLoads(computation, key=KEY, cmd="load-computation")
        self.assertLoadRefused(computation, INVALID_PARAM, "stored computation: the MAC does not "
                               "match", key=OTHER_KEY, cmd="load-computation")
        self.assertLoadRefused(b"ODLAREFC" + self.mlp[8:], INVALID_PARAM, "stored computation: "
                               "not signed", key=KEY, cmd="load-computation")
        array = self.path("w.odlk")
        self.assertRefused(self.run_tool("constants-store", array, KEY), status=SUCCESS)
        self.assertRefused(self.run_tool("constants-load", array, KEY), status=SUCCESS)
        self.assertRefused(self.run_tool("constants-load", array, OTHER_KEY),
                           "constants array: the MAC does not match", status=INVALID_PARAM)
        self.assertRefused(self.run_tool("constants-store", array), status=SUCCESS)
        self.assertRefused(self.run_tool("constants-load", array, KEY),
                           "constants array: not signed", status=INVALID_PARAM)


if __name__ == "__main__":
    hostile.main()
