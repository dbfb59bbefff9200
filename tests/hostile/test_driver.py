"""The generated driver (--emit-main, codegen/templates/main_support.c) on hostile input
files and arguments: every field of a TensorProto it reads is checked against the input it is
for (type, dims, the element count of every data field, raw_data's size, value ranges,
overflow), only regular files are read, and arguments are checked. Each case has its exit
status (2 for a usage error, 1 for a bad file) and its precise message, and never a crash:
the driver is built with AddressSanitizer and UBSan where the compiler has them."""
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile  # noqa: E402

A = np.arange(6, dtype=np.float32).reshape(2, 3) / 4  # input a: float [2,3]
B = np.array([[1, -2, 3], [-128, 127, 0]], np.int8)  # input b: int8 [2,3]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
# A sanitizer report exits 99 and 98, never the driver's own 1 or 2; a refused allocation
# returns NULL as malloc does.
SANITIZER_ENV = {"ASAN_OPTIONS": "exitcode=99:allocator_may_return_null=1:detect_leaks=0",
                 "UBSAN_OPTIONS": "exitcode=98:print_stacktrace=1"}


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(number, wire, payload):
    """One protobuf field: a varint value (wire 0), fixed bytes (1, 5) or bytes (2)."""
    key = varint(number << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def tensor(dims, data_type, **fields):
    t = TensorProto()
    t.dims.extend(dims)
    t.data_type = data_type
    for k, v in fields.items():
        if isinstance(v, bytes):
            setattr(t, k, v)
        else:
            getattr(t, k).extend(v)
    return t.SerializeToString()


def raw_a(dims=(2, 3)):
    return tensor(dims, TensorProto.FLOAT, raw_data=A.tobytes())


class DriverTest(hostile.HostileCase):
    @classmethod
    def setUpClass(cls):
        """One model, a + Cast(b), compiled once; its driver built with the sanitizers."""
        cls.build_dir = tempfile.mkdtemp(prefix="odlac-driver-")
        graph = helper.make_graph(
            [helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["a", "bf"], ["y"])], "g",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
             helper.make_tensor_value_info("b", TensorProto.INT8, [2, 3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
        model = os.path.join(cls.build_dir, "m.onnx")
        with open(model, "wb") as f:
            f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
                    .SerializeToString())
        out = os.path.join(cls.build_dir, "out")
        subprocess.run([cls.tc.odlac, model, "-o", out, "--emit-main"], check=True)
        sources = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
        cls.exe = os.path.join(cls.build_dir, "driver")
        flags = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-I",
                 cls.tc.include, *sources, cls.tc.lib, "-lm", "-o", cls.exe]
        cls.sanitized = subprocess.run([cls.tc.cc, *SANITIZE, *flags],
                                       capture_output=True).returncode == 0
        if not cls.sanitized:
            subprocess.run([cls.tc.cc, *flags], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.build_dir, ignore_errors=True)

    def file(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def driver(self, *args, status, message=None):
        """Runs the driver; checks its exit status and that stderr holds `message`."""
        env = dict(os.environ, **SANITIZER_ENV)
        try:
            r = subprocess.run([self.exe, *args], capture_output=True, text=True,
                               errors="replace", cwd=self.work, env=env, timeout=60)
        except subprocess.TimeoutExpired:
            self.fail(f"the driver did not finish on {args}")
        self.assertGreaterEqual(r.returncode, 0, f"killed by signal {-r.returncode}:\n{r.stderr}")
        self.assertEqual(r.returncode, status, r.stderr)
        if message:
            self.assertIn(message, r.stderr)
        return r

    def bad_a(self, data, message, status=1):
        """Input a replaced by `data`, b valid: the driver refuses with `message`."""
        b = self.file("b.pb", tensor([2, 3], TensorProto.INT8, raw_data=B.tobytes()))
        a = self.file("a.pb", data)
        self.driver(a, b, "-o", self.path("res"), status=status, message=f"{a}: {message}")
        self.assertFalse(os.path.exists(self.path("res", "output_0.pb")))

    def bad_b(self, data, message):
        a = self.file("a.pb", raw_a())
        b = self.file("b.pb", data)
        self.driver(a, b, status=1, message=f"{b}: {message}")

    def assertRunsOn(self, a_data, b_data, *args):
        a, b = self.file("a.pb", a_data), self.file("b.pb", b_data)
        r = self.driver(a, b, "-o", self.path("res"), *args, status=0)
        t = TensorProto()
        with open(self.path("res", "output_0.pb"), "rb") as f:
            t.ParseFromString(f.read())
        np.testing.assert_allclose(numpy_helper.to_array(t), A + B.astype(np.float32))
        self.assertEqual(t.name, "y")
        return r


class ValidInputs(DriverTest):
    def test_every_encoding_of_the_data(self):
        b_raw = tensor([2, 3], TensorProto.INT8, raw_data=B.tobytes())
        b_typed = tensor([2, 3], TensorProto.INT8, int32_data=B.astype(np.int32).ravel().tolist())
        self.assertRunsOn(raw_a(), b_raw)
        self.assertRunsOn(tensor([2, 3], TensorProto.FLOAT, float_data=A.ravel().tolist()),
                          b_typed)
        # float_data one element a field (unpacked) and in two packed runs, dims unpacked
        # too, a name longer than the driver keeps and a field it does not know: all fine.
        unpacked = (field(1, 0, 2) + field(1, 0, 3) + field(2, 0, 1) +
                    b"".join(field(4, 5, v.tobytes()) for v in A.ravel()) +
                    field(8, 2, b"a" * 1000) + field(20, 0, 7))
        self.assertRunsOn(unpacked, b_typed)
        split = (field(1, 2, varint(2) + varint(3)) + field(2, 0, 1) +
                 field(4, 2, A.ravel()[:2].tobytes()) + field(4, 2, A.ravel()[2:].tobytes()))
        self.assertRunsOn(split, b_raw)

    def test_repeat_times_the_runs(self):
        b = tensor([2, 3], TensorProto.INT8, raw_data=B.tobytes())
        r = self.assertRunsOn(raw_a(), b, "--repeat", "3")
        self.assertIn("latency_ms median=", r.stdout)


class BadTensors(DriverTest):
    def test_element_counts_must_match_the_dims(self):
        self.bad_a(tensor([2, 3], TensorProto.FLOAT, float_data=[0.5] * 100),
                   "float_data holds 100 values, dims [2,3] need 6")
        self.bad_a(tensor([2, 3], TensorProto.FLOAT, float_data=[0.5] * 5),
                   "float_data holds 5 values, dims [2,3] need 6")
        self.bad_a(tensor([2, 3], TensorProto.FLOAT, raw_data=b"\0" * 20),
                   "raw_data holds 20 bytes, dims [2,3] need 24")
        self.bad_a(tensor([2, 3], TensorProto.FLOAT, raw_data=A.tobytes(),
                          float_data=[1.0] * 6), "holds both raw_data and float_data")
        self.bad_a(tensor([2, 3], TensorProto.FLOAT), "float_data holds 0 values, dims [2,3] need 6")

    def test_data_in_another_type_s_field(self):
        self.bad_a(tensor([2, 3], TensorProto.FLOAT, int64_data=[1] * 6),
                   "int64_data holds 6 values, but ONNX type 1 keeps its elements in float_data "
                   "or raw_data")
        self.bad_a(tensor([2, 3], TensorProto.FLOAT, float_data=[1.0] * 6, double_data=[1.0]),
                   "double_data holds 1 values, but ONNX type 1 keeps its elements in float_data")

    def test_dims_that_overflow_or_do_not_match(self):
        self.bad_a(tensor([2**32, 2**32, 6], TensorProto.FLOAT, raw_data=b"\0" * 24),
                   "dims [4294967296,4294967296,6] hold more elements than fit in memory")
        self.bad_a(tensor([2**62, 2**62], TensorProto.FLOAT),
                   "dims [4611686018427387904,4611686018427387904] hold more elements")
        self.bad_a(tensor([-1, 6], TensorProto.FLOAT), "dim 0 is negative (-1)")
        self.bad_a(tensor([1] * 17, TensorProto.FLOAT, raw_data=b"\0" * 4), "more than 16 dims")
        self.bad_a(tensor([3, 2], TensorProto.FLOAT, raw_data=A.tobytes()),
                   "input 'a' must have ONNX type 1 and shape [2,3], the file holds type 1 and "
                   "shape [3,2]")
        self.bad_a(tensor([6], TensorProto.FLOAT, raw_data=A.tobytes()),
                   "input 'a' must have ONNX type 1 and shape [2,3], the file holds type 1 and "
                   "shape [6]")
        # Big dims with little data: refused before anything is allocated for them.
        self.bad_a(tensor([2**30, 2**20], TensorProto.FLOAT, float_data=[1.0]),
                   "float_data holds 1 values, dims [1073741824,1048576] need 1125899906842624")

    def test_types(self):
        self.bad_a(tensor([2, 3], TensorProto.DOUBLE, double_data=[1.0] * 6),
                   "input 'a' must have ONNX type 1 and shape [2,3], the file holds type 11")
        self.bad_a(tensor([2, 3], TensorProto.COMPLEX64, raw_data=b"\0" * 48),
                   "element type 14 is not supported by this driver")
        self.bad_a(tensor([2, 3], TensorProto.UNDEFINED, raw_data=A.tobytes()),
                   "element type 0 is not supported by this driver")
        self.bad_a(tensor([2, 3], TensorProto.STRING, string_data=[b"x"] * 6),
                   "input 'a' must have ONNX type 1 and shape [2,3], the file holds type 8")
        self.bad_a(tensor([2, 3], TensorProto.STRING, string_data=[b"x"] * 5),
                   "string_data holds 5 strings, dims [2,3] need 6")
        self.bad_a(tensor([2, 3], TensorProto.STRING, raw_data=b"\0" * 48),
                   "a string tensor keeps its elements in string_data only, not in raw_data")
        self.bad_a(field(2, 0, 2**40), "not a valid TensorProto")

    def test_values_must_fit_the_element_type(self):
        self.bad_b(tensor([2, 3], TensorProto.INT8, int32_data=[1, 300, 0, 0, 0, 0]),
                   "int32_data[1] = 300 does not fit ONNX type 3")
        self.bad_b(tensor([2, 3], TensorProto.INT8, int32_data=[0, 0, 0, 0, 0, -129]),
                   "int32_data[5] = -129 does not fit ONNX type 3")
        self.bad_b(tensor([2, 3], TensorProto.UINT8, raw_data=B.tobytes()),
                   "input 'b' must have ONNX type 3 and shape [2,3], the file holds type 2")

    def test_wire_format(self):
        good = raw_a()
        self.bad_a(good[:-3], "not a valid TensorProto")  # raw_data cut short
        self.bad_a(b"\xff" * 11, "not a valid TensorProto")  # a varint over 10 bytes
        self.bad_a(field(1, 5, b"\0\0\0\0") + good,
                   "not a valid TensorProto: field 1 has wire type 5")
        self.bad_a(field(2, 2, b"\x01") + good, "not a valid TensorProto: field 2 has wire type 2")
        self.bad_a(field(4, 2, b"\0" * 5) + good, "not a valid TensorProto")  # 5 bytes of floats
        self.bad_a(good + varint(5 << 3 | 3), "not a valid TensorProto")  # a group
        self.bad_a(field(5, 2, b"\xff") + good, "not a valid TensorProto")  # a cut varint

    def test_what_the_driver_does_not_take(self):
        ext = TensorProto()
        ext.CopyFrom(TensorProto.FromString(tensor([2, 3], TensorProto.FLOAT)))
        ext.data_location = TensorProto.EXTERNAL
        self.bad_a(ext.SerializeToString(), "external data is not supported by this driver")
        ext.data_location = TensorProto.DEFAULT
        ext.external_data.add(key="location", value="../../etc/passwd")
        self.bad_a(ext.SerializeToString(), "external data is not supported by this driver")
        seg = TensorProto.FromString(raw_a())
        seg.segment.begin = 0
        seg.segment.end = 6
        self.bad_a(seg.SerializeToString(), "tensor segments are not supported by this driver")


class BadFiles(DriverTest):
    def test_only_regular_files_are_read(self):
        b = self.file("b.pb", tensor([2, 3], TensorProto.INT8, raw_data=B.tobytes()))
        folder = self.path("folder.pb")
        os.mkdir(folder)
        self.driver(folder, b, status=1, message=f"{folder}: not a regular file")
        self.driver("/dev/zero", b, status=1, message="/dev/zero: not a regular file")
        fifo = self.path("fifo.pb")
        os.mkfifo(fifo)  # no writer: opening it must not wait
        self.driver(fifo, b, status=1, message=f"{fifo}: not a regular file")
        missing = self.path("missing.pb")
        self.driver(missing, b, status=1,
                    message=f"{missing}: cannot read: No such file or directory")
        self.driver(self.file("empty.pb", b""), b, status=1,
                    message="element type 0 is not supported by this driver")

    def test_an_output_path_too_long_for_the_driver(self):
        # An existing folder whose path leaves no room for "/output_0.pb" within 4096 bytes.
        deep = self.work
        while len(deep) < 3900:
            deep = os.path.join(deep, "d" * 99)
        deep = os.path.join(deep, "e" * (4096 - len("/output_0.pb") - len(deep) - 1))
        os.makedirs(deep)
        a, b = self.file("a.pb", raw_a()), self.file("b.pb", tensor([2, 3], TensorProto.INT8,
                                                                    raw_data=B.tobytes()))
        self.driver(a, b, "-o", deep, status=1, message=": output folder path too long")


def npy(array=None, header=None, data=None, version=1):
    """A .npy file: `array` as NumPy writes it, or a crafted header (the dict's text) and data."""
    if header is None:
        buf = io.BytesIO()
        np.save(buf, array)
        return buf.getvalue()
    text = header.encode()
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + (data or b"")
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(text)) + text + (data or b"")


class NpyFiles(DriverTest):
    """NumPy .npy inputs and outputs, and printed outputs."""

    def test_npy_in_and_out(self):
        a, b = self.file("a.npy", npy(A)), self.file("b.npy", npy(B))
        self.driver(a, b, "-o", self.path("res"), "--npy", status=0)
        np.testing.assert_allclose(np.load(self.path("res", "output_0.npy")),
                                   A + B.astype(np.float32))
        # A .npy file beside a .pb one, format version 2, a header padded NumPy's way.
        self.assertRunsOn(npy(header="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
                              + " " * 40 + "\n", data=A.tobytes(), version=2),
                          tensor([2, 3], TensorProto.INT8, raw_data=B.tobytes()))

    def test_outputs_are_printed_unless_written(self):
        a, b = self.file("a.npy", npy(A)), self.file("b.npy", npy(B))
        r = self.driver(a, b, status=0)
        want = " ".join(f"{v:.9g}" for v in (A + B.astype(np.float32)).ravel())
        self.assertEqual(r.stdout, f"y: ONNX type 1, shape [2,3]: {want}\n")
        r = self.driver(a, b, "-o", self.path("res"), status=0)
        self.assertEqual(r.stdout, "")
        r = self.driver(a, b, "-o", self.path("res"), "--print", status=0)
        self.assertIn("y: ONNX type 1, shape [2,3]: ", r.stdout)
        self.driver(a, b, "--npy", status=2, message="--npy names the format of the files -o "
                                                   "writes: add -o OUTDIR")

    def test_bad_npy_files(self):
        ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
        cases = [
            (npy(A.astype(">f4")), ".npy dtype '>f4' is not one an input can have"),
            (npy(np.asfortranarray(np.ones((3, 2), np.float32)).T.copy(order="F")),
             "the .npy data is in Fortran order"),
            (npy(A.astype(np.float64)), "input 'a' must have ONNX type 1 and shape [2,3], the "
                                        "file holds type 11"),
            (npy(header=ok, data=A.tobytes()[:-1]), ".npy data holds 23 bytes, shape [2,3] of "
                                                    "'<f4' needs 24"),
            (npy(header=ok, data=A.tobytes() + b"\0"), ".npy data holds 25 bytes"),
            (npy(header=ok.replace("'shape'", "'shape2'"), data=A.tobytes()),
             "the .npy header has an unexpected or repeated key 'shape2'"),
            (npy(header=ok.replace("}", "'descr': '<f4', }"), data=A.tobytes()),
             "the .npy header has an unexpected or repeated key 'descr'"),
            (npy(header=ok.replace("(2, 3)", "(" + "1, " * 17 + ")"), data=A.tobytes()),
             "the .npy shape has more than 16 dims or a dim too large"),
            (npy(header=ok.replace("(2, 3)", "(4294967296, 4294967296, 6)"), data=A.tobytes()),
             ".npy shape [4294967296,4294967296,6] holds more elements than fit in memory"),
            (npy(header=ok.replace("(2, 3)", "(99999999999999999999,)"), data=A.tobytes()),
             "the .npy header is not the dict"),
            (npy(header=ok.replace("(2, 3)", "(-2, 3)"), data=A.tobytes()),
             "the .npy header is not the dict"),
            (npy(header=ok.replace("'<f4'", "'<f4\\x'"), data=A.tobytes()),
             "the .npy header is not the dict"),
            (npy(header=ok + "x", data=A.tobytes()), "the .npy header is not the dict"),
            (npy(header=ok[:-2]), "the .npy header is not the dict"),
            (b"\x93NUMPY\x01\x00\xff\xff{}", "the .npy header claims 65535 bytes"),
            (b"\x93NUMPY\x04\x00\x00\x00", "not a .npy file of format version 1, 2 or 3"),
            (b"\x93NUMPY\x02\x00\x05", "not a .npy file"),
            (npy(np.array(["x"] * 6).reshape(2, 3)), ".npy dtype '<U1' is not one an input"),
        ]
        for data, message in cases:
            with self.subTest(message=message):
                self.bad_a(data, message)


class IndicesOutOfRange(hostile.HostileCase):
    """An index outside its axis at run time: the backend names the op, its result, the index
    and where it is among the indices, then the node; the driver exits 1."""

    def test_gather_family(self):
        d = numpy_helper.from_array(np.arange(20, dtype=np.float32).reshape(5, 4), "d")
        graph = helper.make_graph(
            [helper.make_node("Gather", ["d", "i"], ["g"], axis=0),
             helper.make_node("GatherElements", ["d", "j"], ["ge"], axis=1),
             helper.make_node("GatherND", ["d", "k"], ["gn"])], "g",
            [helper.make_tensor_value_info("i", TensorProto.INT64, [3]),
             helper.make_tensor_value_info("j", TensorProto.INT64, [5, 2]),
             helper.make_tensor_value_info("k", TensorProto.INT64, [2, 2])],
            [helper.make_tensor_value_info("g", TensorProto.FLOAT, [3, 4]),
             helper.make_tensor_value_info("ge", TensorProto.FLOAT, [5, 2]),
             helper.make_tensor_value_info("gn", TensorProto.FLOAT, [2])], [d])
        model = self.path("m.onnx")
        with open(model, "wb") as f:
            f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
                    .SerializeToString())
        out = self.path("out")
        subprocess.run([self.tc.odlac, model, "-o", out, "--emit-main"], check=True)
        exe = self.path("run")
        subprocess.run([self.tc.cc, "-std=c99", "-I", self.tc.include,
                        *sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c")),
                        self.tc.lib, "-lm", "-lpthread", "-o", exe], check=True)
        good = {"i": np.array([0, -5, 4]), "j": np.zeros((5, 2), np.int64),
                "k": np.array([[0, 3], [-1, -4]])}
        cases = [("i", np.array([0, 7, 1]), "Gather: result 'g': index 7 (element 1 of the "
                  "indices) is outside [-5, 5)"),
                 ("j", np.array([[0, 1]] * 4 + [[2, -5]]), "GatherElements: result 'ge': index "
                  "-5 (element 9 of the indices) is outside [-4, 4)"),
                 ("k", np.array([[0, 3], [5, 0]]), "GatherND: result 'gn': index 5 (element 2 "
                  "of the indices) is outside [-5, 5)")]
        for name, bad, message in [(None, None, None)] + cases:
            paths = []
            for n, v in good.items():
                paths.append(self.path(n + ".npy"))
                np.save(paths[-1], (bad if n == name else v).astype(np.int64))
            r = subprocess.run([exe, *paths], capture_output=True, text=True)
            if name is None:
                self.assertEqual(r.returncode, 0, r.stderr)
                continue
            with self.subTest(op=message.split(":")[0]):
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertIn("producing '" + message.split("'")[1] + "' failed with status", r.stderr)


class BadArguments(DriverTest):
    def test_repeat(self):
        a, b = self.file("a.pb", raw_a()), self.file("b.pb", tensor([2, 3], TensorProto.INT8,
                                                                    raw_data=B.tobytes()))
        for value in ("abc", "18446744073709551616", "10000001", "-1", "", "3x", " 3"):
            with self.subTest(value=value):
                self.driver(a, b, "--repeat", value, status=2,
                            message=f"--repeat '{value}': expected a number of runs from 0 to "
                                    "10000000")
        self.driver(a, b, "--repeat", status=2, message="--repeat needs a value")
        self.driver(a, b, "-o", status=2, message="-o needs a value")
        r = self.driver(a, b, "--repeat", "0", status=0)
        self.assertNotIn("latency_ms", r.stdout)

    def test_files_and_options(self):
        a, b = self.file("a.pb", raw_a()), self.file("b.pb", tensor([2, 3], TensorProto.INT8,
                                                                    raw_data=B.tobytes()))
        self.driver(a, b, a, status=2, message=f"'{a}': the model takes 2 input files")
        self.driver(a, status=2, message="the model takes 2 input files, 1 given")
        self.driver(status=2, message="usage: ")
        self.driver(a, b, "--bogus", status=2, message="unknown option '--bogus'")


if __name__ == "__main__":
    hostile.main()
