"""End-to-end tests of odlac --dynamic-batch: models exported from PyTorch with a dynamic batch
axis are compiled with --dynamic-batch (planned for 1 row, and for 3 rows so that batch 8 runs
a padded last pass), built with -Werror together with a driver that calls NAME_run_batch, and
run at batches 1, 3 and 8 against PyTorch on the same rows (relative 1e-4). Models whose ops
mix rows (a reduction or softmax over the batch axis) or whose inputs have no symbolic batch
are refused naming the node or input, with exit status 1 and nothing written. An ai.onnx.ml
TreeEnsemble, built with onnx.helper, runs at the same batches against numpy."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import odlactest  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
BATCHES = (1, 3, 8)

# Reads batch, then `batch` rows of NET_INPUT_0 from argv[1]; writes the rows of NET_OUTPUT_0
# to argv[2]. Sizes per row come from the header (the planned shapes hold NET_BATCH_SIZE rows).
DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "net.h"
int main(int argc, char **argv) {
  net_instance *inst;
  int batch, status;
  size_t in_row = NET_INPUT_0_COUNT / NET_BATCH_SIZE, out_row = NET_OUTPUT_0_COUNT / NET_BATCH_SIZE;
  float *in, *out;
  FILE *f = fopen(argv[1], "rb");
  if (argc != 3 || !f || fread(&batch, sizeof batch, 1, f) != 1)
    return 2;
  in = malloc(in_row * batch * sizeof *in);
  out = malloc(out_row * batch * sizeof *out);
  if (!in || !out || fread(in, sizeof *in, in_row * batch, f) != in_row * batch)
    return 2;
  fclose(f);
  if ((status = net_create(&inst)) != 0 || (status = net_run_batch(inst, batch, in, out)) != 0) {
    fprintf(stderr, "odla_status %d\n", status);
    return 1;
  }
  f = fopen(argv[2], "wb");
  if (!f || fwrite(out, sizeof *out, out_row * batch, f) != out_row * batch)
    return 2;
  fclose(f);
  net_destroy(inst);
  free(in);
  free(out);
  return 0;
}
"""


class SmallCnn(torch.nn.Module):
    """Conv, BatchNorm, ReLU, pooling, flatten, Linear, softmax over classes."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return torch.softmax(self.fc(torch.flatten(x, 1)), dim=1)


class Mlp(torch.nn.Module):
    """Linear, GELU, LayerNorm, a reshape through the batch's shape, Linear."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(12, 16)
        self.norm = torch.nn.LayerNorm(16)
        self.fc2 = torch.nn.Linear(16, 5)

    def forward(self, x):
        h = self.norm(torch.nn.functional.gelu(self.fc1(x)))
        h = h.reshape(x.shape[0], 4, 4).transpose(1, 2).reshape(x.shape[0], 16)
        return self.fc2(h)


class SharedToken(torch.nn.Module):
    """A learned row expanded to the batch size and joined to every row (as ViT's class token):
    folding makes it a constant of the compiled batch's rows, all equal, so right at any."""

    def __init__(self):
        super().__init__()
        self.token = torch.nn.Parameter(torch.zeros(1, 3))
        self.fc = torch.nn.Linear(9, 4)

    def forward(self, x):
        return self.fc(torch.cat([self.token.expand(x.shape[0], -1), x], dim=1))


class BatchSizeAsNumber(torch.nn.Module):
    """Uses the batch size as data: folding bakes in the compiled batch."""

    def forward(self, x):
        return x * x.shape[0]


class RowIndex(torch.nn.Module):
    """Adds each row's index: an arange over the batch, folded at the compiled batch."""

    def forward(self, x):
        return x + torch.arange(x.shape[0], dtype=torch.float32).unsqueeze(1)


class BatchMean(torch.nn.Module):
    """Subtracts the mean over the batch: rows are not independent."""

    def forward(self, x):
        return torch.relu(x - x.mean(dim=0, keepdim=True))


class BatchSoftmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x * 2.0, dim=0)


def export(model, example, path, dynamic=True):
    torch.manual_seed(0)
    model.eval()
    for p in model.parameters():  # non-trivial BatchNorm statistics come from the init below
        torch.nn.init.normal_(p, std=0.5)
    if hasattr(model, "bn"):
        model.bn.running_mean.normal_()
        model.bn.running_var.uniform_(0.5, 2.0)
    torch.onnx.export(model, example, path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}} if dynamic else None,
                      opset_version=13)


class DynamicBatchTest(unittest.TestCase):
    tc = odlactest.Toolchain()

    def compile_and_build(self, work, model, *flags):
        out = os.path.join(work, "out" + "".join(f.replace("-", "_").replace("=", "") for f in flags))
        r = self.tc.compile(model, out, "--dynamic-batch", *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "driver.c"), "w") as f:
            f.write(DRIVER)
        exe = os.path.join(out, "run")
        self.tc.build(out, exe)
        return exe

    def run_batch(self, exe, rows):
        with tempfile.TemporaryDirectory() as work:
            src, dst = os.path.join(work, "in.bin"), os.path.join(work, "out.bin")
            with open(src, "wb") as f:
                f.write(np.int32(rows.shape[0]).tobytes() + rows.astype(np.float32).tobytes())
            r = subprocess.run([exe, src, dst], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            return np.fromfile(dst, dtype=np.float32)

    def check_model(self, model, row_shape, batch_sizes=((), ("--batch-size=3",))):
        torch.manual_seed(1)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "model.onnx")
            export(model, torch.randn(2, *row_shape), path)
            for flags in batch_sizes:
                exe = self.compile_and_build(work, path, *flags)
                for n in BATCHES:
                    with self.subTest(flags=flags, batch=n):
                        x = torch.randn(n, *row_shape)
                        with torch.no_grad():
                            want = model(x).numpy()
                        got = self.run_batch(exe, x.numpy()).reshape(want.shape)
                        err = odlactest.max_error([got], [want], RTOL, ATOL)
                        self.assertIsNone(err)

    def test_driver_runs_any_batch(self):
        # --emit-main's driver takes the batch from its input file's leading dim.
        model = Mlp()
        torch.manual_seed(1)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "model.onnx")
            export(model, torch.randn(2, 12), path)
            out = os.path.join(work, "out")
            r = self.tc.compile(path, out, "--dynamic-batch", "--emit-main")
            self.assertEqual(r.returncode, 0, r.stderr)
            exe = os.path.join(out, "run")
            self.tc.build(out, exe)
            for n in BATCHES:
                x = torch.randn(n, 12)
                r, got = odlactest.run_npy(exe, work, x.numpy())
                self.assertEqual(r.returncode, 0, r.stderr)
                with torch.no_grad():
                    want = model(x).numpy()
                self.assertEqual(got.shape, want.shape)
                self.assertIsNone(odlactest.max_error([got], [want], RTOL, ATOL))

    def test_cnn(self):
        self.check_model(SmallCnn(), (3, 8, 8))

    def test_mlp(self):
        self.check_model(Mlp(), (12,))

    def test_shared_token(self):
        # Planned for 1 row only: at 3, the token's 3 rows are refused as not the batch's.
        self.check_model(SharedToken(), (6,), batch_sizes=((),))

    def test_tree_ensemble(self):
        # ai.onnx.ml TreeEnsemble over rows [x0, x1]: x0 <= 0 gives 1 to target 0, else
        # x1 > 0.5 gives 2, else 4, to target 1; against numpy.
        from onnx import TensorProto, helper, numpy_helper
        f32 = TensorProto.FLOAT
        node = helper.make_node(
            "TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", n_targets=2, tree_roots=[0],
            nodes_modes=numpy_helper.from_array(np.array([0, 3], np.uint8)),
            nodes_featureids=[0, 1], nodes_splits=numpy_helper.from_array(
                np.array([0, 0.5], np.float32)), nodes_truenodeids=[0, 1],
            nodes_trueleafs=[1, 1], nodes_falsenodeids=[1, 2], nodes_falseleafs=[0, 1],
            leaf_targetids=[0, 1, 1], leaf_weights=numpy_helper.from_array(
                np.array([1, 2, 4], np.float32)))
        graph = helper.make_graph([node], "trees", [helper.make_tensor_value_info(
            "x", f32, ["batch", 2])], [helper.make_tensor_value_info("y", f32, ["batch", 2])])
        model = helper.make_model(graph, ir_version=8, opset_imports=[
            helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 5)])
        rng = np.random.default_rng(4)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "model.onnx")
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
            for flags in ((), ("--batch-size=3",)):
                exe = self.compile_and_build(work, path, *flags)
                for n in BATCHES:
                    with self.subTest(flags=flags, batch=n):
                        x = rng.standard_normal((n, 2)).astype(np.float32)
                        want = np.zeros((n, 2), np.float32)
                        want[:, 0] = np.where(x[:, 0] <= 0, 1, 0)
                        want[:, 1] = np.where(x[:, 0] <= 0, 0, np.where(x[:, 1] > 0.5, 2, 4))
                        got = self.run_batch(exe, x).reshape(n, 2)
                        np.testing.assert_array_equal(got, want)

    def refused(self, model, row_shape, expect, dynamic=True, flags=("--dynamic-batch",)):
        with tempfile.TemporaryDirectory() as work:
            path, out = os.path.join(work, "model.onnx"), os.path.join(work, "out")
            export(model, torch.randn(2, *row_shape), path, dynamic)
            r = self.tc.compile(path, out, *flags)
            self.assertEqual(r.returncode, 1, r.stderr)
            for text in expect:
                self.assertIn(text, r.stderr)
            self.assertFalse(os.path.exists(out), "a refused model must write nothing")

    def test_refuses_reduction_over_batch(self):
        self.refused(BatchMean(), (6,), ["--dynamic-batch: node '", "(ReduceMean)",
                                         "reduces over the batch axis 0"])

    def test_refuses_softmax_over_batch(self):
        self.refused(BatchSoftmax(), (6,), ["(Softmax)", "its axis is the batch axis 0"])

    def test_refuses_batch_size_as_data(self):
        self.refused(BatchSizeAsNumber(), (6,), ["(Mul)", "folding computed from the batch size",
                                                 "its value differs between batch 1 and batch 2"])
        self.refused(RowIndex(), (6,), ["(Add)", "folding computed from the batch size"])

    def test_refuses_fixed_batch(self):
        self.refused(Mlp(), (12,), ["input 'x'", "needs a symbolic leading dim", "[2,12]"],
                     dynamic=False)

    def test_refuses_flag_misuse(self):
        self.refused(Mlp(), (12,), ["--batch-size needs --dynamic-batch"],
                     flags=("--batch-size=2",))
        self.refused(Mlp(), (12,), ["--dynamic-batch needs --exec-mode=compile"],
                     flags=("--dynamic-batch", "--exec-mode=interpret"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
