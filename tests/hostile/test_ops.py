"""The ops area's hostile cases: packed 4- and 2-bit tensors whose sizes do not match their
dims (initializers in a model, input files of the generated driver), values of Cast's and
QuantizeLinear's attributes outside their spec, blocked parameters of the wrong shape. Each
is refused with its precise message and exit 1, and leaves nothing behind.

ONNX 1.12 (Debian's python) has no names for the types of opsets 21 and later, so they are
written as their numbers (onnx.proto: 22 INT4, 21 UINT4)."""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile  # noqa: E402
import test_driver  # noqa: E402  (its TensorProto writer)

INT4, UINT4 = 22, 21


def int4_tensor(name, dims, **fields):
    t = TensorProto.FromString(test_driver.tensor(dims, INT4, **fields))
    t.name = name
    return t


def model(nodes, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def dequantize_int4(weights):
    """y = DequantizeLinear(w, 0.5): w an INT4 initializer of 5 elements."""
    return model([helper.make_node("DequantizeLinear", ["w", "s"], ["y"])], [],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])],
                 [weights, helper.make_tensor("s", TensorProto.FLOAT, [], [0.5])])


class Refused(hostile.HostileCase):
    def refused(self, m, *fragments):
        out = self.path("out")
        r = self.odlac(self.save(m), "-o", out)
        self.assertRefused(r, *fragments)
        self.assertNothingLeft(out)

    def test_packed_raw_data_of_the_wrong_size(self):
        # 5 int4 elements take 3 bytes; 2 bytes hold only 4.
        self.refused(dequantize_int4(int4_tensor("w", [5], raw_data=b"\x21\x43")),
                     "tensor 'w': raw_data holds 2 bytes, its type i4[5] needs 3 (packed)")

    def test_packed_int32_data_of_the_wrong_count(self):
        self.refused(dequantize_int4(int4_tensor("w", [5], int32_data=[0x21, 0x43, 5, 6])),
                     "tensor 'w': holds 4 int32_data entries, its type i4[5] needs 3 (packed)")

    def test_packed_int32_data_beyond_a_byte(self):
        self.refused(dequantize_int4(int4_tensor("w", [5], int32_data=[0x21, -3, 5])),
                     "tensor 'w': int32_data[1] = -3 does not fit a byte of i4[5] (0 to 255)")

    def test_cast_round_mode_outside_the_spec(self):
        m = model([helper.make_node("Cast", ["x"], ["y"], to=24, round_mode="sideways")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                  [helper.make_tensor_value_info("y", 24, [3])], opset=24)
        self.refused(m, "round_mode='sideways' is not one of up, down, nearest")

    def test_cast_saturate_outside_the_spec(self):
        m = model([helper.make_node("Cast", ["x"], ["y"], to=17, saturate=2)],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                  [helper.make_tensor_value_info("y", 17, [3])], opset=19)
        self.refused(m, "saturate=2 is not 0 or 1")

    def test_blocked_scale_of_the_wrong_shape(self):
        # x [3,4] in blocks of 2 along axis 1 needs a [3,2] scale.
        m = model([helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1, block_size=2,
                                    output_dtype=INT4)],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                  [helper.make_tensor_value_info("y", INT4, [3, 4])],
                  [helper.make_tensor("s", TensorProto.FLOAT, [3, 3], [1.0] * 9)])
        self.refused(m, "blocked scale f32[3,3] must be [3,2] (input f32[3,4], blocks of 2 "
                        "along axis 1)")

    def test_negative_block_size(self):
        m = model([helper.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=0,
                                    block_size=-2)],
                  [helper.make_tensor_value_info("x", TensorProto.INT8, [4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
                  [helper.make_tensor("s", TensorProto.FLOAT, [2], [1.0, 2.0])])
        self.refused(m, "block_size -2 is negative")


class PackedDriverInputs(hostile.HostileCase):
    """The driver of y = Cast(x: int4[5]) to int8 on packed input files."""

    @classmethod
    def setUpClass(cls):
        cls.build_dir = tempfile.mkdtemp(prefix="odlac-packed-")
        m = model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT8)],
                  [helper.make_tensor_value_info("x", INT4, [5])],
                  [helper.make_tensor_value_info("y", TensorProto.INT8, [5])])
        path = os.path.join(cls.build_dir, "m.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        out = os.path.join(cls.build_dir, "out")
        subprocess.run([cls.tc.odlac, path, "-o", out, "--emit-main"], check=True)
        cls.exe = os.path.join(cls.build_dir, "driver")
        cls.tc.build(out, cls.exe)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.build_dir, ignore_errors=True)

    def run_on(self, tensor):
        x = self.path("x.pb")
        with open(x, "wb") as f:
            f.write(tensor.SerializeToString())
        r = subprocess.run([self.exe, x, "-o", self.path("res")], capture_output=True,
                           text=True, timeout=60)
        self.assertGreaterEqual(r.returncode, 0, f"killed by signal {-r.returncode}")
        return x, r

    def test_valid_files_unpack(self):
        # -1, 2, -3, 4, 7: low nibble first, the last byte half-filled.
        want = np.array([-1, 2, -3, 4, 7], np.int8)
        for fields in ({"raw_data": b"\x2f\x4d\x07"}, {"int32_data": [0x2f, 0x4d, 0x07]}):
            _, r = self.run_on(int4_tensor("x", [5], **fields))
            self.assertEqual(r.returncode, 0, r.stderr)
            t = TensorProto()
            with open(self.path("res", "output_0.pb"), "rb") as f:
                t.ParseFromString(f.read())
            self.assertEqual(np.frombuffer(t.raw_data, np.int8).tolist(), want.tolist())

    def test_raw_data_of_the_wrong_size(self):
        x, r = self.run_on(int4_tensor("x", [5], raw_data=b"\x2f\x4d"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"{x}: raw_data holds 2 bytes, dims [5] need 3 (packed)", r.stderr)

    def test_int32_data_beyond_a_byte(self):
        x, r = self.run_on(int4_tensor("x", [5], int32_data=[0x2f, 300, 7]))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"{x}: int32_data[1] = 300 does not fit a packed byte (0 to 255)",
                      r.stderr)


if __name__ == "__main__":
    hostile.main()
