"""Hostile inputs the fuzz targets found (tests/fuzz; each input also in
tests/fuzz/regressions/<target>/), as the user meets them: odlac or a generated driver refuses
them with exit status 1 and a precise message."""
import os
import shutil
import subprocess
import tempfile

import hostile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REGRESSIONS = os.path.join(REPO, "tests", "fuzz", "regressions")


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def tensor_proto(dims, data_type=1, raw=b""):
    """A TensorProto's bytes: dims (field 1), data_type (2), raw_data (9)."""
    out = b"".join(b"\x08" + varint(d & (2**64 - 1)) for d in dims)
    return out + b"\x10" + varint(data_type) + b"\x4a" + varint(len(raw)) + raw


class ModelImport(hostile.HostileCase):
    """Models that the fuzz target `import` found."""

    def assertInputRefused(self, name, message):
        """odlac on regressions/import/NAME: exit 1 with `message`, nothing written."""
        out = self.path("out")
        r = self.odlac(os.path.join(REGRESSIONS, "import", name), "-o", out)
        self.assertRefused(r, message)
        self.assertNothingLeft(out)

    def test_reshape_product_overflow(self):
        # A Reshape whose constant shape's dims multiply past int64_t (signed overflow, UBSan).
        self.assertInputRefused("reshape-product-overflow",
                                "node #4 (Reshape, opset 6): shape [11012708447027201,1,"
                                "72057594037927948,12] has more than 2^63 elements")

    def test_adam_empty_tensor_name(self):
        # Adam's optimized tensors are a variadic parameter, whose names the schema check lets
        # be empty: the rule read the absent operand's type (UBSan, null member call).
        self.assertInputRefused("adam-empty-tensor-name",
                                "node #0 (ai.onnx.preview.training.Adam, opset 1): input 3 is "
                                "empty; every optimized tensor is required")

    def test_unsqueeze_float4_axes(self):
        # Run-time axes of a 4-bit float type: the shape came from the declared output and the
        # type went unchecked (found as UBSan's enum report on the extension type's code).
        self.assertInputRefused("unsqueeze-float4-axes",
                                "node #0 (Unsqueeze, opset 13): axes (input 1, 'axes') must be "
                                "int64, got f4e2m1[3]")

    def test_pad2_int32_huge_value(self):
        # Pad-6 of int32 data with value 3.7e19: Pad before opset 11 takes only float types,
        # and the value went through a double-to-int32 cast out of range (UBSan).
        self.assertInputRefused("pad2-int32-huge-value",
                                "node #0 (Pad, opset 6): Pad before opset 11 takes float16, "
                                "float and double, not i32")

    def test_concat_from_sequence_mixed_ranks(self):
        # A sequence of f32[0,3,4] and f32[2,3]: new_axis inserted at an axis normalized for
        # element 0's rank past the end of element 1's dims (ASan: heap-buffer-overflow).
        self.assertInputRefused("concat-from-sequence-mixed-ranks",
                                "node #1 (ConcatFromSequence, opset 12): element 1 is f32[2,3] "
                                "but element 0 is f32[0,3,4]: the elements joined must have one "
                                "rank")

    def test_reshape1_without_shape(self):
        # Reshape-4 (shape an attribute until Reshape-5) with one input: the rule read input 1
        # (UBSan, null member call). Reshape-1 to -4 now take the attribute, which is required.
        self.assertInputRefused("reshape1-without-shape",
                                "node #1 (Reshape, opset 4): attribute 'shape' is required by "
                                "Reshape-4")


class DriverTensorReader(hostile.HostileCase):
    """The generated driver's TensorProto reader (fuzz target `tensor`)."""

    @classmethod
    def setUpClass(cls):
        cls.build_dir = tempfile.mkdtemp(prefix="odlac-hostile-driver-")
        out = os.path.join(cls.build_dir, "gen")
        r = cls.tc.compile(os.path.join(REPO, "models", "mlp", "model.onnx"), out, "--emit-main")
        assert r.returncode == 0, r.stderr
        cls.exe = os.path.join(cls.build_dir, "net")
        cls.tc.build(out, cls.exe)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.build_dir, ignore_errors=True)

    def run_driver(self, data):
        path = self.path("input_0.pb")
        with open(path, "wb") as f:
            f.write(data)
        try:
            return subprocess.run([self.exe, path, "-o", self.path("out")], capture_output=True,
                                  text=True, errors="replace", timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.fail("the driver did not finish within %d s" % self.timeout)

    def test_dims_beyond_the_file(self):
        # A SequenceProto read as a TensorProto: its name's bytes parse as 9 packed dims whose
        # product (~10^18 elements) the driver once tried to allocate.
        with open(os.path.join(REGRESSIONS, "tensor", "dims-beyond-the-file"), "rb") as f:
            data = f.read()
        r = self.run_driver(data)
        self.assertRefused(r, "float_data holds 0 values, dims [115,101,113,95,101,109,112,116,121] need 2157896034072363200")
        self.assertFalse(os.path.exists(self.path("out")))

    def test_element_count_overflow(self):
        r = self.run_driver(tensor_proto([2**32, 2**32, 2**32], raw=b"\0" * 4))
        self.assertRefused(r, "dims [4294967296,4294967296,4294967296] hold more elements than fit in memory")

    def test_byte_count_beyond_int64(self):
        # regressions/tensor/byte-count-beyond-int64: 4539628424389459967 float32 elements fit
        # a size_t's bytes but not an int64_t's, in which the reader once formed their count
        # (signed overflow, UBSan).
        with open(os.path.join(REGRESSIONS, "tensor", "byte-count-beyond-int64"), "rb") as f:
            data = f.read()
        self.assertEqual(data, tensor_proto([4539628424389459967], raw=b"\0\0\0\x80"))
        r = self.run_driver(data)
        self.assertRefused(r, "dims [4539628424389459967] hold more elements than fit in memory")

    def test_packed_units_wrap(self):
        # regressions/tensor/packed-units-wrap: 2^63-1 float4e2m1 elements. The bytes that hold
        # them were once counted as (n * 4 + 7) / 8, which wraps to 0, matching the empty
        # raw_data, so the driver asked malloc for 2^63-1 bytes.
        with open(os.path.join(REGRESSIONS, "tensor", "packed-units-wrap"), "rb") as f:
            data = f.read()
        # (its dim is a 10-byte varint with a redundant last byte; the rest is tensor_proto's)
        self.assertEqual(data[11:], tensor_proto([2**63 - 1], data_type=23)[10:])
        r = self.run_driver(data)
        self.assertRefused(r, "raw_data holds 0 bytes, dims [9223372036854775807] need "
                              "4611686018427387904 (packed)")

    def test_negative_dim(self):
        r = self.run_driver(tensor_proto([1, -64]))
        self.assertRefused(r, "dim 1 is negative (-64)")

    def test_more_dims_than_the_driver_holds(self):
        r = self.run_driver(tensor_proto([1] * 17, raw=b"\0" * 4))
        self.assertRefused(r, "more than 16 dims")


if __name__ == "__main__":
    hostile.main()
