"""Hostile sizes and external data (issue 14; docs/cli.md "Limits"): shapes whose products
overflow 64 bits, tensors beyond the target's size limit, attributes and data that would
overflow a shape computation or make odlac compute too much at compile time, and external
data that names something other than a regular file inside the model's folder. Each case
expects exit status 1 (or 0 where the input is valid), a message with the numbers, no output
left behind, and an end within the time limit."""
import os
import shutil
import socket
import stat

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import hostile

TIB = 1 << 40


def model(nodes, inputs, outputs=None, inits=(), opset=13):
    outputs = outputs or [h.make_tensor_value_info("y", T.FLOAT, [])]
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def vi(name, dims, elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, dims)


def i64(name, values):
    return nh.from_array(np.array(values, dtype=np.int64), name)


def relu_of(dims, elem=T.FLOAT):
    return model([h.make_node("Relu", ["x"], ["y"])], [vi("x", dims, elem)],
                 [vi("y", [], elem)])


class SizesTest(hostile.HostileCase):
    def compiled(self, m, *flags):
        out = self.path("out")
        r = self.odlac(self.save(m), "-o", out, *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        return out

    # ---- shapes whose products overflow 64 bits -------------------------------------------

    def test_input_whose_element_count_overflows(self):
        self.refused(relu_of([2**32, 2**32]),
                     "graph input 'x' f32[4294967296,4294967296]: its element count exceeds "
                     "2^48 (281474976710656)")

    def test_input_whose_byte_count_overflows(self):
        self.refused(relu_of([2**62]), "graph input 'x' f32[4611686018427387904]: its element "
                                       "count exceeds 2^48")

    def test_expand_to_an_overflowing_shape(self):
        m = model([h.make_node("Expand", ["x", "s"], ["y"])], [vi("x", [1])],
                  inits=[i64("s", [2**32, 2**32])])
        self.refused(m, "(Expand, opset 13): Broadcast: result 0 f32[4294967296,4294967296]: "
                        "its element count exceeds 2^48")

    def test_empty_tensor_whose_other_dims_overflow_strides(self):
        self.refused(relu_of([0, 2**30, 2**30]),
                     "f32[0,1073741824,1073741824]: the product of its nonzero dims exceeds "
                     "2^48", "strides")

    def test_rank_beyond_odla(self):
        self.refused(relu_of([1] * 11), "rank 11 exceeds 10, the most axes an ODLA value has")

    def test_negative_input_dim(self):
        self.refused(relu_of([-3]), "graph input 'x' f32[-3]: dim 0 is negative (-3)")

    def test_initializer_whose_dims_overflow(self):
        w = T()
        w.name, w.data_type = "w", T.FLOAT
        w.dims.extend([2**40, 2**40])
        m = model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x", [1])], inits=[w])
        self.refused(m, "initializer tensor 'w' f32[1099511627776,1099511627776]: its element "
                        "count exceeds 2^48")

    # ---- the per-target size limit ---------------------------------------------------------

    def test_4_tib_input_is_refused_with_the_limit(self):
        self.refused(relu_of([TIB]),
                     "graph input 'x' f32[1099511627776]: its 4398046511104 bytes (4 TiB) "
                     "exceed the size limit of 1099511627776 bytes (1 TiB) for 64-bit targets; "
                     "raise it with --size-limit (at most 281474976710656 bytes (256 TiB) there)")

    def test_size_limit_raises_the_limit_and_the_macros_are_exact(self):
        out = self.compiled(relu_of([TIB]), "--size-limit=8T")
        with open(os.path.join(out, "net.h")) as f:
            header = f.read()
        self.assertIn("#define NET_INPUT_0_COUNT 1099511627776\n", header)
        self.assertIn("#define NET_INPUT_0_BYTES 4398046511104\n", header)
        self.assertIn("#define NET_OUTPUT_0_BYTES 4398046511104\n", header)

    def test_size_limit_cannot_exceed_the_targets(self):
        self.refused(relu_of([4]), "--size-limit=562949953421312 exceeds 281474976710656 bytes "
                                   "(256 TiB), the most a tensor can have on 64-bit targets",
                     flags=("--size-limit=512T",))
        self.refused(relu_of([4]), "--size-limit=4294967296 exceeds 2147483647 bytes",
                     "on 32-bit targets",
                     flags=("--size-limit=4G", "--target=armv7a-linux-gnueabihf"))

    def test_size_limit_values_are_parsed_strictly(self):
        for bad in ("12abc", "-1", "", "0", "99999999999999999999", "8388608T"):
            with self.subTest(value=bad):
                self.refused(relu_of([4]), f"--size-limit '{bad}': expected a positive number "
                                           "of bytes below 2^63", flags=(f"--size-limit={bad}",))

    def test_32_bit_targets_limit_tensors_to_ptrdiff_max(self):
        for triple in ("armv7a-linux-gnueabihf", "thumbv7em-none-eabi"):
            with self.subTest(target=triple):
                self.refused(relu_of([3 << 28]),  # 3 GiB
                             "f32[805306368]: its 3221225472 bytes (3 GiB) exceed the size limit "
                             "of 2147483647 bytes (about 1 GiB) for 32-bit targets, the most a "
                             "tensor there can have", flags=(f"--target={triple}",))

    def test_weights_and_arena_together_within_the_limit(self):
        w = nh.from_array(np.ones((256, 256), np.float32), "w")  # 256 KiB
        m = model([h.make_node("MatMul", ["x", "w"], ["t"]), h.make_node("Relu", ["t"], ["y"])],
                  [vi("x", [64, 256])], inits=[w])
        # Every tensor fits 300 KiB; the weights and the arena together do not.
        self.refused(m, "the weights (262144 bytes (256 KiB)) and the activation arena (",
                     "together exceed the size limit of 307200 bytes (300 KiB) set by "
                     "--size-limit", flags=("--size-limit=300K",))

    # ---- attributes and data that overflow a shape computation ------------------------------

    def test_tile_repeats_overflow(self):
        m = model([h.make_node("Tile", ["x", "r"], ["y"])], [vi("x", [TIB], T.BOOL)],
                  [vi("y", [], T.BOOL)], inits=[i64("r", [2**31])])
        self.refused(m, "Tile: axis 0: extent 1099511627776 repeated 2147483648 times overflows "
                        "int64")

    def test_reshape_target_overflow(self):
        m = model([h.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", [4])],
                  inits=[i64("s", [2**40, 2**40, -1])])
        self.refused(m, "(Reshape, opset 13): shape [1099511627776,1099511627776,-1] has more "
                        "than 2^63 elements")

    def test_declared_shapes_beyond_the_limits_are_no_facts(self):
        # A run-time shape takes its dims from the declared output: one whose product
        # overflows is ignored, as if the model declared none.
        m = model([h.make_node("Reshape", ["x", "s"], ["y"])],
                  [vi("x", [4]), vi("s", [2], T.INT64)], [vi("y", [2**40, 2**40])])
        self.refused(m, "shape (input 1, 's') is known only at run time and the model declares "
                        "no static shape for output 'y'")

    def test_conv_transpose_extent_overflow(self):
        m = model([h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2**30],
                               output_padding=[2**31 - 1])],
                  [vi("x", [1, 1, 2**30])],
                  inits=[nh.from_array(np.ones((1, 1, 1), np.float32), "w")])
        self.refused(m, "ConvTranspose: result 0 f32[1,1,1152921505680588800]: its element "
                        "count exceeds 2^48")

    def test_max_unpool_extent_overflow(self):
        m = model([h.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2**62],
                               strides=[2**62])],
                  [vi("x", [1, 1, 4]), vi("i", [1, 1, 4], T.INT64)], opset=11)
        self.refused(m, "spatial axis 0: extent 4, stride 4611686018427387904, kernel "
                        "4611686018427387904 and pads 0+0 overflow int64")

    def test_one_hot_result_beyond_the_limit(self):
        m = model([h.make_node("OneHot", ["i", "d", "v"], ["y"])], [vi("i", [2**20], T.INT64)],
                  inits=[i64("d", 2**30), nh.from_array(np.array([0, 1], np.float32), "v")],
                  opset=11)
        self.refused(m, "OneHot: result 0 f32[1048576,1073741824]: its element count exceeds "
                        "2^48")

    def test_pad_of_int64_min(self):
        m = model([h.make_node("Pad", ["x", "p"], ["y"])], [vi("x", [2, 2])],
                  inits=[i64("p", [-2**63, 0, 0, 0])])
        self.refused(m, "pads [-9223372036854775808,0,0,0] has an entry beyond +-2^48")

    def test_top_k_beyond_odla_uint32(self):
        m = model([h.make_node("TopK", ["x", "k"], ["y", "z"])], [vi("x", [2**33])],
                  [vi("y", []), vi("z", [], T.INT64)], inits=[i64("k", [2**32 + 1])], opset=11)
        self.refused(m, "TopK: k 4294967297 must be in [0, 8589934592]", "below 2^32")

    def test_depth_to_space_blocksize_beyond_2_31(self):
        m = model([h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2**31)],
                  [vi("x", [1, 4, 2, 2])])
        self.refused(m, "blocksize 2147483648 does not divide the 4 channels")

    def test_range_edge_values(self):
        m = model([h.make_node("Range", ["a", "b", "c"], ["y"])], [],
                  [vi("y", [], T.INT64)],
                  inits=[i64("a", -2**62), i64("b", 2**62), i64("c", 2**53)])
        self.refused(m, "start -4611686018427387904.000000 is beyond +-2^62")

    # ---- ops of opsets 18 and later ---------------------------------------------------------

    def col2im(self, block, pads=(0, 0, 0, 0), y_dims=None, block_input=False):
        """Col2Im-18 of x [1, 4, 4] into a 3x3 image; block_shape constant or an input."""
        inputs = [vi("x", [1, 4, 4])] + ([vi("block", [2], T.INT64)] if block_input else [])
        inits = [i64("image", [3, 3])] + ([] if block_input else [i64("block", block)])
        return model([h.make_node("Col2Im", ["x", "image", "block"], ["y"], pads=list(pads))],
                     inputs, [vi("y", y_dims)], inits=inits, opset=18)

    def test_col2im_block_volume_overflow(self):
        # (2^32)^2 wraps to 0 in 64 bits: the channel count was divided by it.
        self.refused(self.col2im([2**32, 2**32]),
                     "(Col2Im, opset 18): block_shape [4294967296,4294967296] must be positive "
                     "and its volume divide the input's dim 1 (4)")

    def test_col2im_negative_pads(self):
        self.refused(self.col2im([2, 2], pads=(-1, 0, 0, 0)),
                     "Col2Im: attribute pads[0] is -1; pads must not be negative")

    def test_col2im_block_read_at_run_time(self):
        """A block_shape input is checked by the kernel before it multiplies: the right one
        gives numpy's result, an overflowing one an error."""
        out = self.compiled(self.col2im(None, y_dims=[1, 1, 3, 3], block_input=True),
                            "--emit-main", "--name", "net")
        exe = self.path("net")
        self.tc.build(out, exe)
        x = np.arange(16, dtype=np.float32).reshape(1, 4, 4)
        want = np.zeros((3, 3), np.float32)  # block 2x2 at the 4 positions of the 3x3 image
        for row in range(4):
            for pos in range(4):
                want[pos // 2 + row // 2, pos % 2 + row % 2] += x[0, row, pos]
        for block, ok in (([2, 2], True), ([2**32, 2**32], False), ([2**62, 1], False),
                          ([1, 2**62], False), ([0, 2], False)):
            with self.subTest(block=block):
                r, y = self.run_driver(exe, {"x": x, "block": np.array(block, np.int64)})
                if ok:
                    self.assertEqual(r.returncode, 0, r.stderr)
                    np.testing.assert_array_equal(y[0].reshape(3, 3), want)
                else:
                    self.assertRefused(r, "node 0 (ExtCol2Im) producing 'y' failed with status 3")

    def test_group_normalization_groups_of_no_channels(self):
        # Any num_groups divides 0 channels: num_groups * batch rows must still be a size.
        m = model([h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2**62)],
                  [vi("x", [2, 0, 4])],
                  inits=[nh.from_array(np.zeros(0, np.float32), n) for n in ("s", "b")], opset=21)
        self.refused(m, "num_groups 4611686018427387904 times the batch 2 exceeds 2^48 rows")

    def resize_to(self, dims, sizes, policy):
        node = h.make_node("Resize", ["x", "", "", "s"], ["y"], keep_aspect_ratio_policy=policy)
        return model([node], [vi("x", dims)], inits=[i64("s", sizes)], opset=18)

    def test_resize_aspect_policy_edge_sizes(self):
        self.refused(self.resize_to([1, 1, 0, 4], [1, 1, 5, 5], "not_larger"),
                     "keep_aspect_ratio_policy=not_larger: axis 2 of input [1,1,0,4] and size 5 "
                     "give no scale")
        self.refused(self.resize_to([1, 1, 2, 2], [1, 1, 2**62, 2], "not_smaller"),
                     "keep_aspect_ratio_policy=not_smaller: sizes [1,1,4611686018427387904,2] "
                     "scale axis 0 of input [1,1,2,2] beyond 10^15")

    def test_stride_0_with_auto_pad(self):
        # odlac's import rule refuses it before anything divides by the stride.
        m = model([h.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[0, 0])],
                  [vi("x", [1, 1, 4, 4])],
                  inits=[nh.from_array(np.ones((1, 1, 3, 3), np.float32), "w")])
        self.refused(m, "(Conv, opset 13): attribute strides[0] is 0; strides must be positive")

    # ---- bounded work at compile time --------------------------------------------------------

    def test_padding_beyond_the_size_limit(self):
        m = model([h.make_node("Pad", ["x", "p", "v"], ["y"])], [vi("x", [2, 2])],
                  inits=[i64("p", [TIB, 0, 0, 0]), nh.from_array(np.array(1, np.float32), "v")])
        self.refused(m, "node '' (Broadcast) result 'y/front' f32[1099511627776,2]: its "
                        "8796093022208 bytes (8 TiB) exceed the size limit of 1099511627776 bytes")

    def test_large_constant_padding_is_no_compile_time_constant(self):
        # 4 GiB of padding by a non-zero value: broadcast when the graph runs, not written out
        # as a constant when it compiles (fuzz_import once timed out on such a model).
        m = model([h.make_node("Pad", ["x", "p", "v"], ["y"])], [vi("x", [2, 2])],
                  inits=[i64("p", [2**29, 0, 0, 0]), nh.from_array(np.array(1, np.float32), "v")])
        out = self.path("out")
        r = self.odlac(self.save(m), "--emit=c", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
        self.assertLess(size, 1 << 20, "the padding was written out")

    def test_constant_padding_broadcast_when_it_runs(self):
        # 160 KB of padding by 1.5 and -2 on both sides of axis 0 and one side of axis 1: past
        # constant folding's 64 KiB, so the pieces are Broadcasts that run; numpy.pad's answer.
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        for value in (1.5, -2.0):
            m = model([h.make_node("Pad", ["x", "p", "v"], ["y"])], [vi("x", [2, 3])],
                      inits=[i64("p", [7000, 0, 7000, 2]),
                             nh.from_array(np.array(value, np.float32), "v")])
            out = self.path("out")
            r = self.odlac(self.save(m), "-o", out, "--emit-main", "--name", "net")
            self.assertEqual(r.returncode, 0, r.stderr)
            exe = self.path("net")
            self.tc.build(out, exe)
            r, got = self.run_driver(exe, {"x": x})
            self.assertEqual(r.returncode, 0, r.stderr)
            want = np.pad(x, ((7000, 7000), (0, 2)), constant_values=value)
            np.testing.assert_array_equal(got[0], want)
            shutil.rmtree(out)

    def test_wrap_padding_beyond_the_compile_time_budget(self):
        m = model([h.make_node("Pad", ["x", "p"], ["y"], mode="wrap")], [vi("x", [2, 2])],
                  inits=[i64("p", [TIB, 0, 0, 0])], opset=19)
        self.refused(m, "the wrap indices of axis 0 would be a constant i64[1099511627778]")

    def test_wrap_padding_before_pad_19(self):
        m = model([h.make_node("Pad", ["x", "p"], ["y"], mode="wrap")], [vi("x", [2, 2])],
                  inits=[i64("p", [1, 0, 0, 0])], opset=18)
        self.refused(m, "(Pad, opset 18): attribute mode='wrap' is defined from Pad-19; this "
                        "node is Pad-18")

    def test_generated_range_beyond_the_compile_time_budget(self):
        m = model([h.make_node("Range", ["a", "b", "c"], ["y"])], [], [vi("y", [], T.INT64)],
                  inits=[i64("a", 0), i64("b", TIB), i64("c", 1)])
        self.refused(m, "the range would be a constant i64[1099511627776]: its 8796093022208 "
                        "bytes (8 TiB) exceed the 1073741824 bytes (1 GiB)")

    def test_evaluation_beyond_the_compile_time_budget(self):
        # ReduceSum(ConstantOfShape(2^33)) as Expand's shape: 32 GiB to compute a scalar.
        m = model([h.make_node("ConstantOfShape", ["s"], ["c"]),
                   h.make_node("ReduceSum", ["c"], ["r"], keepdims=0),
                   h.make_node("Cast", ["r"], ["ri"], to=T.INT64),
                   h.make_node("Reshape", ["ri", "one"], ["r2"]),
                   h.make_node("Expand", ["x", "r2"], ["y"])],
                  [vi("x", [1])], inits=[i64("s", [2**33]), i64("one", [1])])
        self.refused(m, "computing 'r2' at compile time takes 34359738388 bytes (about 32 GiB) "
                        "of intermediate results, more than the 1073741824 bytes (1 GiB) odlac "
                        "computes at compile time for one value")

    def loop(self, trip):
        body = h.make_graph(
            [h.make_node("Identity", ["c"], ["co"]), h.make_node("Add", ["vi", "one"], ["vn"])],
            "body", [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("vi", [1])],
            [vi("co", [], T.BOOL), vi("vn", [1])], [nh.from_array(np.ones(1, np.float32), "one")])
        return h.make_node("Loop", ["m", "", "v"], ["vo"], body=body), \
            [i64("m", trip), nh.from_array(np.ones(1, np.float32), "v")]

    def test_a_long_loop_is_not_run_at_compile_time(self):
        # Its result as Expand's shape: known only at run time, not computed by odlac.
        loop, inits = self.loop(2**62)
        m = model([loop, h.make_node("Cast", ["vo"], ["voi"], to=T.INT64),
                   h.make_node("Expand", ["x", "voi"], ["y"])],
                  [vi("x", [1])], [vi("y", ["n"])], inits=inits)
        self.refused(m, "shape (input 1, 'voi') is known only at run time")
        # Folded by no pass either: a loop over constants compiles (it runs when the model does).
        loop, inits = self.loop(2**62)
        m = model([loop, h.make_node("Add", ["x", "vo"], ["y"])], [vi("x", [1])], [vi("y", [1])],
                  inits=inits)
        self.compiled(m, "-O2")

    # ---- external data ----------------------------------------------------------------------

    def external(self, location, offset=None, length=None, extra=()):
        """A model whose initializer 'w' (f32[4]) keeps its data in `location`."""
        w = T()
        w.name, w.data_type = "w", T.FLOAT
        w.dims.append(4)
        w.data_location = T.EXTERNAL
        for k, v in [("location", location), ("offset", offset), ("length", length), *extra]:
            if v is not None:
                e = w.external_data.add()
                e.key, e.value = k, v
        return model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x", [4])], [vi("y", [4])],
                     inits=[w])

    def data_file(self, name="w.bin", size=16, folder=None):
        p = os.path.join(folder or self.work, name)
        with open(p, "wb") as f:
            f.write(np.arange(size // 4, dtype=np.float32).tobytes())
        return p

    def test_valid_external_data_compiles(self):
        self.data_file(size=32)
        self.compiled(self.external("w.bin", offset="16", length="16"))

    def test_offsets_and_lengths_are_parsed_strictly(self):
        self.data_file(size=64)
        for key in ("offset", "length"):
            for bad in ("12abc", "-1", "", "+4", " 4", "0x10", "99999999999999999999"):
                with self.subTest(key=key, value=bad):
                    self.refused(self.external("w.bin", **{key: bad}),
                                 f"tensor 'w': external data: {key} '{bad}' is not a byte count "
                                 "(decimal digits only, at most 2^63 - 1)")

    def test_length_must_match_the_tensor(self):
        self.data_file(size=64)
        self.refused(self.external("w.bin", length="12"),
                     "external data 'w.bin' has length 12 but the tensor needs 16 bytes")

    def test_bytes_past_the_end_and_offset_overflow(self):
        self.data_file(size=16)
        self.refused(self.external("w.bin", offset="4"),
                     "external data 'w.bin': bytes 4..20 lie past its end (16 bytes)")
        self.refused(self.external("w.bin", offset=str(2**63 - 1)),
                     "bytes 9223372036854775807..2^63+ lie past its end (16 bytes)")

    def test_keys_given_twice(self):
        self.data_file()
        self.refused(self.external("w.bin", extra=[("offset", "0"), ("offset", "4")]),
                     "external data: key 'offset' is given twice")

    def test_no_location(self):
        self.refused(self.external(None, offset="0"), "tensor 'w': external data '' has no "
                                                      "location")

    def test_nul_and_control_characters_in_the_location(self):
        self.data_file()
        for loc, shown, what in [("w.bin\0.txt", "w.bin\\x00.txt", "a NUL byte"),
                                 ("w\n.bin", "w\\x0a.bin", "a control character"),
                                 ("w\x1b[2J.bin", "w\\x1b[2J.bin", "a control character")]:
            with self.subTest(location=shown):
                r = self.refused(self.external(loc),
                                 f"external data '{shown}': the location contains {what}")
                self.assertNotIn("\x1b", r.stderr)

    def test_absolute_location(self):
        p = self.data_file()
        self.refused(self.external(p), "is an absolute path; it must be relative to the "
                                       "model's folder")

    def test_locations_resolving_outside_the_folder(self):
        os.mkdir(self.path("m"))
        self.data_file()  # beside the folder the model is in
        m = self.external("../w.bin")
        out = self.path("out")
        r = self.odlac(self.save(m, os.path.join("m", "m.onnx")), "-o", out)
        self.assertRefused(r, "external data '../w.bin' resolves outside the model's folder (to ")
        os.symlink(self.path("w.bin"), self.path("m", "link.bin"))
        r = self.odlac(self.save(self.external("link.bin"), os.path.join("m", "m.onnx")), "-o", out)
        self.assertRefused(r, "external data 'link.bin' resolves outside the model's folder (to ")
        os.symlink("/dev/zero", self.path("m", "zero.bin"))
        r = self.odlac(self.save(self.external("zero.bin"), os.path.join("m", "m.onnx")), "-o", out)
        self.assertRefused(r, "external data 'zero.bin' resolves outside the model's folder (to "
                              "/dev/zero)")
        self.assertNothingLeft(out)

    def test_a_location_inside_through_dot_dot_is_fine(self):
        os.mkdir(self.path("sub"))
        self.data_file()
        self.compiled(self.external("sub/../w.bin"))

    def test_fifo_is_refused_without_blocking(self):
        os.mkfifo(self.path("w.bin"))
        self.timeout = 30
        self.refused(self.external("w.bin"), "external data 'w.bin' is a FIFO; external data "
                                             "must be a regular file")

    def test_directory_and_socket_are_refused(self):
        os.mkdir(self.path("dir.bin"))
        self.refused(self.external("dir.bin"), "external data 'dir.bin' is a directory")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(self.path("sock.bin"))
            self.assertTrue(stat.S_ISSOCK(os.stat(self.path("sock.bin")).st_mode))
            self.refused(self.external("sock.bin"), "external data 'sock.bin' is a socket")
        finally:
            s.close()

    def test_external_data_in_a_body_is_checked_before_the_checker(self):
        # The If's then-branch holds an initializer whose data is a FIFO: refused at once.
        os.mkfifo(self.path("w.bin"))
        w = self.external("w.bin").graph.initializer[0]
        branch = h.make_graph([h.make_node("Identity", ["w"], ["t"])], "then", [],
                              [vi("t", [4])], [w])
        other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e", [4])])
        m = model([h.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=other)],
                  [vi("x", [4]), vi("c", [], T.BOOL)], [vi("y", [4])])
        self.timeout = 30
        self.refused(m, "external data 'w.bin' is a FIFO")


if __name__ == "__main__":
    hostile.main()
