"""End-to-end tests of odlac --dim (symbolic dims with a range): PyTorch models exported with
symbolic dims (torch.onnx.export with dynamo and dynamic_shapes) are compiled with --dim, built
with -Werror together with a driver that calls NAME_run_shaped, and run at several sizes
against PyTorch (relative 1e-4): a two-layer nn.TransformerEncoder at batch N and length T
(1 x 1 up to the bounds, and back), and an MLP whose exporter-named dims --input-shape names.
Sizes out of range give ODLA_INVALID_PARAM; --emit-main's driver takes the dims from its input
files' shapes; models whose code cannot follow the dims (a stride over a symbolic dim) are
refused, naming the call and the sizes, with exit status 1.

Environment: ODLAC, ODLA_LIB, ODLA_INCLUDE, ODLA_BACKEND (odlac's --backend, default
reference) and ODLA_LINK_EXTRA (extra link flags, e.g. "-ldnnl -lgomp -lstdc++ -lm")."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import odlactest  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
BACKEND = os.environ.get("ODLA_BACKEND", "reference")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
LINK_EXTRA = os.environ.get("ODLA_LINK_EXTRA", "-lm").split()

# argv[1]: the dims (NET_DIMS int64 numbers) then input 0; writes output 0 to argv[2]. Each
# further pair of files runs again on the same instance, so that sizes change between runs.
DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "net.h"
static size_t count(int rank, const odla_int64 *shape) {
  size_t n = 1;
  int i;
  for (i = 0; i < rank; ++i)
    n *= (size_t)shape[i];
  return n;
}
int main(int argc, char **argv) {
  net_instance *inst;
  int k, status;
  if ((status = net_create(&inst)) != 0) {
    fprintf(stderr, "net_create: odla_status %d\n", status);
    return 1;
  }
  for (k = 1; k + 1 < argc; k += 2) {
    net_dims dims;
    odla_int64 shape[16];
    size_t n_in, n_out;
    float *in, *out;
    FILE *f = fopen(argv[k], "rb");
    if (!f || fread(&dims, sizeof dims, 1, f) != 1)
      return 2;
    n_in = count(net_input_shape(&dims, 0, shape), shape);
    n_out = count(net_output_shape(&dims, 0, shape), shape);
    in = malloc(n_in * sizeof *in + 1);
    out = malloc(n_out * sizeof *out + 1);
    if (!in || !out || fread(in, sizeof *in, n_in, f) != n_in)
      return 2;
    fclose(f);
    if ((status = net_run_shaped(inst, &dims, in, out)) != 0) {
      fprintf(stderr, "net_run_shaped: odla_status %d\n", status);
      free(in);
      free(out);
      net_destroy(inst);
      return 1;
    }
    f = fopen(argv[k + 1], "wb");
    if (!f || fwrite(out, sizeof *out, n_out, f) != n_out)
      return 2;
    fclose(f);
    free(in);
    free(out);
  }
  net_destroy(inst);
  return 0;
}
"""


def encoder():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                             batch_first=True, dropout=0.0)
    return torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()


class Mlp(torch.nn.Module):
    """Linear, GELU, LayerNorm over the last axis of [N, T, 12], then a sum over T."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = torch.nn.Linear(12, 16)
        self.norm = torch.nn.LayerNorm(16)
        self.fc2 = torch.nn.Linear(16, 5)

    def forward(self, x):
        return self.fc2(self.norm(torch.nn.functional.gelu(self.fc1(x)))).sum(dim=1)


class CausalSelfAttention(torch.nn.Module):
    """Attention over T positions with a causal mask the model makes from T (torch.triu of a
    T x T fill): a constant of T x T at each size, whose data odlac takes as the leading block
    of the largest's."""

    def forward(self, x):
        t = x.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        return torch.softmax(x @ x.transpose(1, 2) * 0.25 + mask, -1) @ x


class StridedConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(4, 4, 3, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)


def export(model, example, path, dims, names=True):
    """dims: {axis: (name, max)} of input 0; names=False leaves the exporter's own names."""
    shapes = {a: torch.export.Dim(n if names else "d%d" % a, min=2, max=m)
              for a, (n, m) in dims.items()}
    torch.onnx.export(model, (example,), path, input_names=["x"], output_names=["y"],
                      dynamic_shapes=[shapes], dynamo=True, verbose=False)


class SymbolicDimsTest(unittest.TestCase):
    tc = odlactest.Toolchain()

    def build(self, work, model, *flags, program=DRIVER):
        """Compiles the model with `flags` on BACKEND and builds its C with `program` (the
        source of main, or None for one of the generated files: --emit-main's)."""
        out = os.path.join(work, "out")
        r = self.tc.compile(model, out, "--backend", BACKEND, *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        if program:
            with open(os.path.join(out, "driver.c"), "w") as f:
                f.write(program)
        exe = os.path.join(out, "run")
        sources = sorted(os.path.join(out, s) for s in os.listdir(out) if s.endswith(".c"))
        subprocess.run([self.tc.cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror",
                        "-I", self.tc.include, "-I", out, *sources, self.tc.lib, *LINK_EXTRA,
                        "-lm", "-lpthread", "-o", exe], check=True)
        return exe

    def run_sizes(self, exe, work, cases):
        """cases: [(dims, x)]: one process runs them in order; returns the outputs."""
        args = []
        for k, (dims, x) in enumerate(cases):
            src, dst = os.path.join(work, "in%d.bin" % k), os.path.join(work, "out%d.bin" % k)
            with open(src, "wb") as f:
                f.write(np.array(dims, np.int64).tobytes() + x.astype(np.float32).tobytes())
            args += [src, dst]
        r = subprocess.run([exe, *args], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [np.fromfile(args[2 * k + 1], np.float32) for k in range(len(cases))]

    def check(self, model, exe, work, sizes, shape):
        """Runs model at each of `sizes` (tuples of the dims, in NET_dims' order; shape(*dims)
        gives the input's shape)."""
        cases = [(d, torch.randn(*shape(*d))) for d in sizes]
        got = self.run_sizes(exe, work, [(d, x.numpy()) for d, x in cases])
        for (dims, x), g in zip(cases, got):
            with torch.no_grad():
                want = model(x).numpy()
            with self.subTest(dims=dims):
                self.assertIsNone(odlactest.max_error([g.reshape(want.shape)], [want], RTOL, ATOL))

    def test_transformer_encoder(self):
        model = encoder()
        torch.manual_seed(1)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "enc.onnx")
            export(model, torch.randn(2, 7, 32), path, {0: ("N", 8), 1: ("T", 64)})
            exe = self.build(work, path, "--dim", "N=4", "--dim", "T=16")
            self.check(model, exe, work, [(1, 1), (2, 5), (4, 16), (3, 9), (1, 16), (4, 1), (2, 5)],
                       lambda n, t: (n, t, 32))
            with open(os.path.join(work, "out", "net.h")) as f:
                header = f.read()
            self.assertIn("#define NET_DIM_T_MAX 16", header)
            # Out of range: ODLA_INVALID_PARAM, and the instance stays usable.
            r = subprocess.run([exe, self.write(work, (5, 3), 5 * 3 * 32), "/dev/null"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("odla_status 3", r.stderr)  # ODLA_INVALID_PARAM

    def write(self, work, dims, count):
        path = os.path.join(work, "bad.bin")
        with open(path, "wb") as f:
            f.write(np.array(dims, np.int64).tobytes() + np.zeros(count, np.float32).tobytes())
        return path

    def test_driver(self):
        # --emit-main's driver takes N and T from its input file's shape.
        model = encoder()
        torch.manual_seed(3)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "enc.onnx")
            export(model, torch.randn(2, 7, 32), path, {0: ("N", 8), 1: ("T", 64)})
            exe = self.build(work, path, "--dim", "N=4", "--dim", "T=16", "--emit-main",
                             program=None)
            for n, t in ((3, 5), (1, 16), (4, 1)):
                x = torch.randn(n, t, 32)
                r, got = odlactest.run_npy(exe, work, x.numpy())
                self.assertEqual(r.returncode, 0, r.stderr)
                with torch.no_grad():
                    want = model(x).numpy()
                self.assertEqual(got.shape, want.shape)
                self.assertIsNone(odlactest.max_error([got], [want], RTOL, ATOL))
            np.save(os.path.join(work, "x.npy"), np.zeros((5, 2, 32), np.float32))
            r = subprocess.run([exe, os.path.join(work, "x.npy")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("the inputs' shapes give dims out of their ranges: N=5 (1..4)", r.stderr)

    def test_driver_prints_a_hostile_dim_name_as_text(self):
        # A dim_param is the model's text: in the driver's message it is an argument of the
        # format, never part of it ('%s%n' would read and write through garbage).
        model = Mlp().eval()
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "mlp.onnx")
            export(model, torch.randn(2, 3, 12), path, {0: (None, 8), 1: (None, 8)}, names=False)
            import onnx
            m = onnx.load(path)
            dims = m.graph.input[0].type.tensor_type.shape.dim
            dims[0].dim_param, dims[1].dim_param = "b%s%n\"*/", "s"
            onnx.save(m, path)
            exe = self.build(work, path, "--dim", "b%s%n\"*/=4", "--dim", "s=6", "--emit-main",
                             program=None)
            r, got = odlactest.run_npy(exe, work, np.zeros((5, 2, 12), np.float32))
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn('b%s%n"*/=5 (1..4)', r.stderr)

    def test_named_by_input_shape(self):
        model = Mlp().eval()
        torch.manual_seed(2)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "mlp.onnx")
            export(model, torch.randn(2, 3, 12), path, {0: (None, 8), 1: (None, 8)}, names=False)
            exe = self.build(work, path, "--input-shape", "x:BxSx12", "--dim", "B=1..6",
                             "--dim", "S=2..10")
            self.check(model, exe, work, [(1, 2), (6, 10), (3, 7), (6, 2)],
                       lambda n, t: (n, t, 12))

    def test_causal_mask(self):
        model = CausalSelfAttention().eval()
        torch.manual_seed(4)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "causal.onnx")
            export(model, torch.randn(1, 5, 8), path, {1: ("T", 64)})
            exe = self.build(work, path, "--dim", "T=16")
            self.check(model, exe, work, [(1,), (7,), (16,), (2,)], lambda t: (1, t, 8))

    def generate(self, work, model_path, vocab, prompt, steps, *dims):
        """examples/generate/generate.c built over the model compiled with `dims`: the ids it
        generates from the prompt's text."""
        with open(os.path.join(EXAMPLES, "generate", "generate.c")) as f:
            exe = self.build(work, model_path, *dims, program=f.read())
        r = subprocess.run([exe, "--ids", vocab, prompt, str(steps)], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [int(t) for t in r.stdout.split()]

    def test_decoder_tokens_equal_torch(self):
        # examples/generate: gpt.py's decoder (random weights) with its key/value cache in and
        # out, compiled with --dim T=32 --dim P=0..32; generate.c's greedy tokens from a prompt
        # (P = 0, then T = 1 with the cache fed back) equal PyTorch's. 128 wide, so that on
        # libodla_dnnl the MLP's products (128 x 512, 512 x 128 with the residual) are large
        # enough to leave the reference kernel: one row each at T = 1 (rowproduct.cpp).
        sys.path.insert(0, os.path.join(EXAMPLES, "generate"))
        from gpt import GPT
        torch.manual_seed(0)
        model = GPT(65, d=128).eval()
        prompt, steps = [1, 2, 3, 4, 5], 28  # the last run sees P = 32, the most
        want = model.generate(prompt, steps)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "gpt.onnx")
            model.export(path, 32)
            vocab = os.path.join(work, "vocab")
            with open(vocab, "wb") as f:
                f.write(bytes(range(40, 40 + 65)))
            got = self.generate(work, path, vocab, bytes(40 + i for i in prompt).decode(), steps,
                                "--dim", "T=32", "--dim", "P=0..32", "--weights=c")
            self.assertEqual(got, want)
            # The computation in stages: a step (T held, P one more) builds again only those of
            # the cache, and each layer's present keys go straight into the output.
            with open(os.path.join(work, "out", "net.c")) as f:
                code = f.read()
            stages = re.findall(r"/\* Stage \d+ of \d+: built again when ([^*]*) changes", code)
            self.assertGreater(len(stages), 2)
            self.assertIn("T", stages)
            self.assertIn("T or P", stages)
            self.assertIn("(unsigned char *)present_k + (", code)

    def test_trained_decoder_tokens_equal_torch(self):
        # models/chargpt, trained on Debian's licence texts, as scripts/demo.sh runs it: 100
        # characters after a prompt, the same as PyTorch's.
        sys.path.insert(0, os.path.join(EXAMPLES, "generate"))
        from gpt import load
        folder = os.path.join(EXAMPLES, "..", "models", "chargpt")
        model = load(os.path.join(folder, "model.pt"))
        vocab = os.path.join(folder, "vocab.txt")
        with open(vocab, "rb") as f:
            chars = f.read()
        prompt = "The Licensor "
        want = model.generate([chars.index(c) for c in prompt.encode()], 100)
        with tempfile.TemporaryDirectory() as work:
            got = self.generate(work, os.path.join(folder, "model.onnx"), vocab, prompt, 100,
                                "--dim", "T=16", "--dim", "P=0..111", "--weights=c")
        self.assertEqual(got, want)
        self.assertIn(" the ", bytes(chars[i] for i in got).decode())  # words, not noise

    def test_refused(self):
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "strided.onnx")
            export(StridedConv().eval(), torch.randn(1, 4, 9), path, {2: ("T", 64)})
            out = os.path.join(work, "out")
            r = self.tc.compile(path, out, "--dim", "T=16")
            self.assertEqual(r.returncode, 1)
            self.assertIn("odla_Conv for 'y': number 2 of its output_dims is 8 at T=16", r.stderr)
            self.assertIn("not a sum of products of the dims", r.stderr)
            self.assertFalse(os.path.exists(out))
            r = self.tc.compile(path, out, "--dim", "T=16", "--dim", "Q=4")
            self.assertEqual(r.returncode, 1)
            self.assertIn("--dim Q: no graph input has a dim of that name", r.stderr)
            r = self.tc.compile(path, out, "--dim", "T=16", "--no-heap", "--weights=c")
            self.assertEqual(r.returncode, 1)
            self.assertIn("--dim is not supported with --no-heap", r.stderr)
            r = self.tc.compile(path, out, "--dim", "T=5..4")
            self.assertEqual(r.returncode, 1)
            self.assertIn("need 0 <= MIN <= MAX and MAX >= 1", r.stderr)


if __name__ == "__main__":
    unittest.main()
