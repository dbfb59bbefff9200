#!/usr/bin/python3
"""Custom ops end to end (--custom-op-domain): an ONNX model with a node of the domain
com.example between core ops is compiled with odlac in compile, interpret and load mode,
linked with an application that registers the op's kernel and shape function in C
(odla_ExtRegisterCustomOp), run, and compared with numpy. Also: without the flag the node is
refused as today; with it, a model that does not declare the custom output's type is refused
(exit 1, the message names the node and the output, nothing written).

Environment: ODLAC, ODLA_LIB, ODLA_INCLUDE (as for the other e2e tests)."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import odlactest  # noqa: E402

R, C, REPEAT = 3, 4, 2
ALPHA, BIAS = 1.5, [0.5, -1.0, 0.25, 2.0]

# The application: AffineTile(x [R, C]) = (y [R, C * repeat], n [R] int64) with
# y[r, k * C + c] = max(alpha * x[r, c] + bias[c], 0) for act "relu", n[r] = #(y[r, :C] > 0).
# It reads its attributes by name, as odla_ext_custom.h describes, and runs the model through
# the generated one-call API on the input file's floats, writing the outputs as raw bytes.
APP = r"""
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>
#include <stdio.h>
#include <string.h>
#include "net.h"

static const odla_ext_custom_attr *attr(const odla_ext_custom_call *call, const char *name,
                                        odla_int32 kind) {
  int i;
  for (i = 0; i < call->num_attrs; ++i)
    if (strcmp(call->attrs[i].name, name) == 0 && call->attrs[i].kind == kind)
      return &call->attrs[i];
  return NULL;
}

static odla_status shape(const odla_ext_custom_call *call, odla_value_type *out) {
  const odla_ext_custom_attr *repeat = attr(call, "repeat", ODLA_EXT_ATTR_INT);
  if (call->num_inputs != 1 || call->num_outputs != 2 || !repeat ||
      call->input_types[0].shape.size != 2 || strcmp(call->function_name, "com.example") != 0)
    return ODLA_INVALID_PARAM;
  out[0] = call->input_types[0];
  out[0].shape.dims[1] *= *(const odla_int64 *)repeat->data;
  out[1].element_type = ODLA_INT64;
  out[1].shape.size = 1;
  out[1].shape.dims[0] = call->input_types[0].shape.dims[0];
  return ODLA_SUCCESS;
}

static odla_status kernel(const odla_ext_custom_call *call, const odla_void *const *in,
                          odla_void *const *out) {
  const odla_ext_custom_attr *alpha = attr(call, "alpha", ODLA_EXT_ATTR_FLOAT);
  const odla_ext_custom_attr *bias = attr(call, "bias", ODLA_EXT_ATTR_FLOATS);
  const odla_ext_custom_attr *act = attr(call, "act", ODLA_EXT_ATTR_STRING);
  odla_int64 rows = call->input_types[0].shape.dims[0];
  odla_int64 cols = call->input_types[0].shape.dims[1];
  odla_int64 width = call->output_types[0].shape.dims[1], r, c, k;
  const float *x = (const float *)in[0];
  float *y = (float *)out[0];
  odla_int64 *n = (odla_int64 *)out[1];
  if (!alpha || !bias || !act || bias->count != cols)
    return ODLA_INVALID_PARAM;
  for (r = 0; r < rows; ++r) {
    n[r] = 0;
    for (c = 0; c < cols; ++c) {
      float v = *(const float *)alpha->data * x[r * cols + c] + ((const float *)bias->data)[c];
      if (strcmp((const char *)act->data, "relu") == 0 && v < 0)
        v = 0;
      n[r] += v > 0;
      for (k = 0; k < width / cols; ++k)
        y[r * width + k * cols + c] = v;
    }
  }
  return ODLA_SUCCESS;
}

int main(int argc, char **argv) {
  float x[NET_INPUT_0_COUNT], out[NET_OUTPUT_0_COUNT];
  odla_int64 n[NET_OUTPUT_1_COUNT];
  FILE *f;
  int rc;
  /* app X_FILE RESULT_FILE [--store | --no-register] */
  if (argc < 3)
    return 2;
  if (!(argc == 4 && strcmp(argv[3], "--no-register") == 0) &&
      odla_ExtRegisterCustomOp("AffineTile", kernel, shape, NULL) != ODLA_SUCCESS)
    return 3;
#ifdef NET_EXECUTABLE_FILE /* load mode */
  if (argc == 4 && strcmp(argv[3], "--store") == 0)
    return net_store(NET_EXECUTABLE_FILE) == 0 ? 0 : 7;
  if ((rc = net_init(NET_EXECUTABLE_FILE)) != 0) {
    fprintf(stderr, "net_init failed: %d\n", rc);
    return 5;
  }
#endif
  f = fopen(argv[1], "rb");
  if (!f || fread(x, sizeof x, 1, f) != 1)
    return 4;
  fclose(f);
  if ((rc = net(x, out, n)) != 0) {
    fprintf(stderr, "net failed: %d\n", rc);
    return 5;
  }
  f = fopen(argv[2], "wb");
  if (!f || fwrite(out, sizeof out, 1, f) != 1 || fwrite(n, sizeof n, 1, f) != 1)
    return 6;
  fclose(f);
  net_fini();
  return 0;
}
"""


def model(declare_y=True):
    """x [R, C] -> Add(w) -> com.example.AffineTile -> (y, n); out = Neg(y) * 2 via Add."""
    w = numpy_helper.from_array(np.linspace(-1, 1, R * C, dtype=np.float32).reshape(R, C), "w")
    nodes = [helper.make_node("Add", ["x", "w"], ["a"]),
             helper.make_node("AffineTile", ["a"], ["y", "n"], domain="com.example",
                              name="affine", alpha=ALPHA, bias=BIAS, act="relu", repeat=REPEAT),
             helper.make_node("Neg", ["y"], ["ny"]),
             helper.make_node("Add", ["ny", "ny"], ["out"])]
    value_info = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [R, C * REPEAT])]
    graph = helper.make_graph(
        nodes, "custom", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [R, C])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [R, C * REPEAT]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [R])],
        [w], value_info=value_info if declare_y else [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                   helper.make_opsetid("com.example", 1)])


def reference(x, w):
    a = x + w
    v = np.maximum(np.float32(ALPHA) * a + np.array(BIAS, np.float32), 0).astype(np.float32)
    return -2 * np.tile(v, (1, REPEAT)), (v > 0).sum(axis=1).astype(np.int64)


class CustomOpsTest(unittest.TestCase):
    tc = odlactest.Toolchain()

    def setUp(self):
        self.work = tempfile.TemporaryDirectory()
        self.dir = self.work.name
        self.model = os.path.join(self.dir, "model.onnx")
        onnx.save(model(), self.model)

    def tearDown(self):
        self.work.cleanup()

    def test_runs_application_kernel_in_every_mode(self):
        rng = np.random.default_rng(7)
        x = rng.standard_normal((R, C)).astype(np.float32)
        w = np.linspace(-1, 1, R * C, dtype=np.float32).reshape(R, C)
        want_out, want_n = reference(x, w)
        self.assertTrue(0 < want_n.sum() < R * C, "the data must exercise both relu branches")
        xfile = os.path.join(self.dir, "x.bin")
        x.tofile(xfile)
        for mode in ("compile", "interpret", "load"):
            with self.subTest(mode=mode):
                out = os.path.join(self.dir, mode)
                r = self.tc.compile(self.model, out, "--custom-op-domain=com.example",
                                    f"--exec-mode={mode}")
                self.assertEqual(r.returncode, 0, r.stderr)
                builder = "net_store.c" if mode == "load" else "net.c"  # where the graph is built
                with open(os.path.join(out, builder)) as f:  # one line however it wraps
                    self.assertIn('odla_CustomOp((odla_values){.size = 1, .values = {a}}, '
                                  '"AffineTile", "com.example"',
                                  " ".join(f.read().split()).replace("( ", "("))
                with open(os.path.join(out, "app.c"), "w") as f:
                    f.write(APP)
                exe = os.path.join(out, "app")
                self.tc.build(out, exe)
                result = os.path.join(out, "result.bin")
                if mode == "load":
                    # One process stores the executable; the next ones load it, and find the
                    # kernel again by name only where the application registered it.
                    p = subprocess.run([exe, xfile, result, "--store"], cwd=out,
                                       capture_output=True, text=True)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    p = subprocess.run([exe, xfile, result, "--no-register"], cwd=out,
                                       capture_output=True, text=True)
                    self.assertEqual(p.returncode, 5, p.stderr)
                    self.assertIn("custom op 'AffineTile' is not registered", p.stderr)
                p = subprocess.run([exe, xfile, result], cwd=out, capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                with open(result, "rb") as f:
                    raw = f.read()
                got_out = np.frombuffer(raw[:want_out.nbytes], np.float32).reshape(want_out.shape)
                got_n = np.frombuffer(raw[want_out.nbytes:], np.int64)
                np.testing.assert_allclose(got_out, want_out, rtol=1e-6, atol=1e-6)
                np.testing.assert_array_equal(got_n, want_n)

    def test_unknown_domain_without_flag(self):
        out = os.path.join(self.dir, "out")
        r = self.tc.compile(self.model, out)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("node 'affine' (com.example.AffineTile, opset 1): unsupported: domain "
                      "'com.example' has no import rules", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_missing_output_type(self):
        onnx.save(model(declare_y=False), self.model)
        out = os.path.join(self.dir, "out")
        r = self.tc.compile(self.model, out, "--custom-op-domain=com.example")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("node 'affine' (com.example.AffineTile, opset 1): output 0 ('y') has no "
                      "static type in the model's value_info or graph outputs", r.stderr)
        self.assertNotIn("output 1", r.stderr)  # n is a graph output: declared
        self.assertFalse(os.path.exists(out))

    def test_backend_without_the_feature(self):
        manifest = os.path.join(self.dir, "nocustom.txt")
        with open(manifest, "w") as f:
            f.write("backend nocustom\nlibrary odla_nocustom\nlayout channels_first\n"
                    "modes compile\nextensions *\nops *\n")
        out = os.path.join(self.dir, "out")
        r = self.tc.compile(self.model, out, "--custom-op-domain=com.example",
                            "--backend-manifest", manifest)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("backend 'nocustom' lacks odla_CustomOp with application kernels "
                      "(manifest feature custom_ops and extension ExtRegisterCustomOp), needed by "
                      "1 node(s): node 'affine' (CustomOp)", r.stderr)
        self.assertFalse(os.path.exists(out))
        r = self.tc.compile(self.model, out, "--custom-op-domain=com.example",
                            "--odla-profile=core")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("backend 'reference' lacks odla_CustomOp with application kernels", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_constant_inputs_are_not_folded(self):
        """A custom op whose only input is a constant stays a call: odlac cannot run it."""
        m = model()
        m.graph.node[0].input[0] = "w"  # a = w + w: computable from constants
        del m.graph.input[:]
        onnx.save(m, self.model)
        out = os.path.join(self.dir, "out")
        r = self.tc.compile(self.model, out, "--custom-op-domain=com.example", "-O3")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "net.c")) as f:
            self.assertIn('"AffineTile", "com.example"', f.read())


if __name__ == "__main__":
    unittest.main()
