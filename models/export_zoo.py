"""Exports the larger models that the optimizer tests and the benchmarks use, with Debian's
PyTorch and torchvision, into a cache folder outside the repository (they are tens of MB).

Each model gets the ONNX backend-test layout: DIR/<name>/model.onnx and
DIR/<name>/test_data_set_0/{input_0.pb,output_0.pb} with PyTorch's output, plus the traced
TorchScript module DIR/<name>/model.pt (the benchmarks time PyTorch on it). Random weights,
fixed seeds, batch 1, opset 13; BatchNorm statistics are randomized so folding them is not a
no-op. Models: resnet50, mobilenet_v2, squeezenet1_1, efficientnet_b0, resnet18,
mobilenet_v3_large, vit_b_16 (torchvision), gpt2_block (one GPT-2-small block over 128 tokens,
causal self-attention), transformer_block (one pre-norm block over a [32, 64] matrix of tokens; tests/halo), and
bert_encoder (BERT-style: embeddings sum, L layers of self-attention + GELU MLP, LayerNorm;
hidden 768, 12 heads, sequence 128 by default, --bert-layers to make it smaller), and
bert_encoder_small (2 layers, hidden 256, 4 heads, sequence 64, symbolic batch and sequence
dims; the optimizer's acceptance test).

Usage: /usr/bin/python3 models/export_zoo.py [--out DIR] [--only name,...] [--bert-layers N]
Default DIR: $ODLAC_MODEL_CACHE or ~/.cache/odlac/models. Existing exports (model.onnx and
model.pt both present) are kept unless --force."""
import argparse
import math
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

OPSET = 13


def randomize_batchnorm(model, seed):
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)


class BertLayer(torch.nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.q = torch.nn.Linear(hidden, hidden)
        self.k = torch.nn.Linear(hidden, hidden)
        self.v = torch.nn.Linear(hidden, hidden)
        self.o = torch.nn.Linear(hidden, hidden)
        self.ln1 = torch.nn.LayerNorm(hidden, eps=1e-12)
        self.fc1 = torch.nn.Linear(hidden, ffn)
        self.fc2 = torch.nn.Linear(ffn, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        b, s, h = x.shape
        return x.view(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, x, mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1]) + mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        b, h, s, d = ctx.shape
        ctx = ctx.transpose(1, 2).reshape(b, s, h * d)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))


class TransformerBlock2d(torch.nn.Module):
    """A pre-norm transformer block over one sequence as a [tokens, hidden] matrix: LayerNorm,
    single-head self-attention, LayerNorm and a GELU MLP, each with a residual. Every product
    is a plain matrix product, so backends without odla_BatchMatMul (HALO's) run it."""

    def __init__(self, hidden, ffn):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.q = torch.nn.Linear(hidden, hidden)
        self.k = torch.nn.Linear(hidden, hidden)
        self.v = torch.nn.Linear(hidden, hidden)
        self.o = torch.nn.Linear(hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc1 = torch.nn.Linear(hidden, ffn)
        self.fc2 = torch.nn.Linear(ffn, hidden)

    def forward(self, x):
        h = self.ln1(x)
        q, k, v = self.q(h), self.k(h), self.v(h)
        scores = torch.matmul(q, k.transpose(0, 1)) / math.sqrt(q.shape[-1])
        x = x + self.o(torch.matmul(torch.softmax(scores, dim=-1), v))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class Gpt2Block(torch.nn.Module):
    """One GPT-2-small block (the transformers library's GPT2Block, written out): LayerNorm,
    causal self-attention of 12 heads through one [768, 2304] projection, LayerNorm and an MLP
    of 3072 with GPT-2's tanh GELU, each with a residual; over [1, tokens, 768]."""

    def __init__(self, hidden=768, heads=12, ffn=3072, max_len=1024):
        super().__init__()
        self.heads = heads
        # GPT-2's own causal mask buffer (its "bias"), sliced to the tokens.
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.attn = torch.nn.Linear(hidden, 3 * hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc = torch.nn.Linear(hidden, ffn)
        self.out = torch.nn.Linear(ffn, hidden)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.attn(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        scores = scores.masked_fill(~self.causal[:t, :t], float("-inf"))
        y = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class BertEncoder(torch.nn.Module):
    """BERT-base-shaped encoder: token + position embeddings, LayerNorm, L layers."""

    def __init__(self, layers, hidden=768, heads=12, ffn=3072, vocab=30522, max_len=512):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, hidden)
        self.pos = torch.nn.Embedding(max_len, hidden)
        self.ln = torch.nn.LayerNorm(hidden, eps=1e-12)
        self.layers = torch.nn.ModuleList(BertLayer(hidden, heads, ffn) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        x = self.ln(self.tok(input_ids) + self.pos(torch.arange(s).unsqueeze(0)))
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x


def export(name, model, inputs, input_names, out_dir, dynamic_axes=None):
    folder = os.path.join(out_dir, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    model.eval()
    with torch.no_grad():
        expected = model(*inputs)
    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=OPSET, input_names=input_names,
                      output_names=["output"], do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE, dynamic_axes=dynamic_axes)
    onnx.checker.check_model(path)
    # The same model as TorchScript, for timing PyTorch in the benchmarks (bench/). The tracer's
    # own check runs the model twice and compares the graphs, which differ for ViT's encoder
    # (torch 1.13) while computing the same: the traced module's output is checked instead.
    traced = torch.jit.trace(model, tuple(inputs), check_trace=False)
    with torch.no_grad():
        again = traced(*inputs)
    if not torch.allclose(again, expected, rtol=1e-4, atol=1e-5):
        raise RuntimeError(f"{name}: the traced module's output differs from the model's")
    traced.save(os.path.join(folder, "model.pt"))
    for i, (n, t) in enumerate(zip(input_names, inputs)):
        with open(os.path.join(folder, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.numpy(), n).SerializeToString())
    with open(os.path.join(folder, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(expected.numpy(), "output").SerializeToString())
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB -> {folder}")


def exported(out_dir, name):
    return all(os.path.exists(os.path.join(out_dir, name, f)) for f in ("model.onnx", "model.pt"))


def main():
    ap = argparse.ArgumentParser()
    default = os.environ.get("ODLAC_MODEL_CACHE",
                             os.path.join(os.path.expanduser("~"), ".cache", "odlac", "models"))
    ap.add_argument("--out", default=default)
    ap.add_argument("--only", default="")
    ap.add_argument("--bert-layers", type=int, default=12)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    only = set(filter(None, args.only.split(",")))
    vision = {
        "resnet50": torchvision.models.resnet50,
        "mobilenet_v2": torchvision.models.mobilenet_v2,
        "squeezenet1_1": torchvision.models.squeezenet1_1,
        "efficientnet_b0": torchvision.models.efficientnet_b0,
        "resnet18": torchvision.models.resnet18,
        "mobilenet_v3_large": torchvision.models.mobilenet_v3_large,
        "vit_b_16": torchvision.models.vit_b_16,
    }
    for seed, (name, ctor) in enumerate(vision.items()):
        if (only and name not in only) or (exported(args.out, name) and not args.force):
            continue
        torch.manual_seed(seed)
        model = ctor()
        randomize_batchnorm(model, seed)
        if name == "vit_b_16":  # torchvision starts its classifier at zero: every output 0
            torch.nn.init.normal_(model.heads.head.weight, std=0.02)
            torch.nn.init.normal_(model.heads.head.bias, std=0.02)
        x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(100 + seed))
        export(name, model, [x], ["input"], args.out)
    name = "bert_encoder" if args.bert_layers == 12 else f"bert_encoder_{args.bert_layers}l"
    if (not only or name in only or "bert_encoder" in only) and (
            args.force or not exported(args.out, name)):
        torch.manual_seed(7)
        model = BertEncoder(args.bert_layers)
        g = torch.Generator().manual_seed(8)
        ids = torch.randint(0, 30522, (1, 128), generator=g)
        mask = torch.ones(1, 128, dtype=torch.int64)
        mask[0, 100:] = 0
        export(name, model, [ids, mask], ["input_ids", "attention_mask"], args.out)
    # The small encoder of the optimizer's acceptance test (tests/zoo): symbolic batch and
    # sequence dims, as real BERT exports have, so the head reshapes arrive as
    # Shape->Gather->Unsqueeze->Concat chains; pin them with --input-shape input_ids:1x64 and
    # attention_mask:1x64.
    name = "bert_encoder_small"
    if (not only or name in only) and (args.force or not exported(args.out, name)):
        torch.manual_seed(9)
        model = BertEncoder(2, hidden=256, heads=4, ffn=1024, vocab=8192, max_len=128)
        g = torch.Generator().manual_seed(10)
        ids = torch.randint(0, 8192, (1, 64), generator=g)
        mask = torch.ones(1, 64, dtype=torch.int64)
        mask[0, 48:] = 0
        dims = {0: "batch", 1: "sequence"}
        export(name, model, [ids, mask], ["input_ids", "attention_mask"], args.out,
               dynamic_axes={"input_ids": dims, "attention_mask": dims, "output": dims})
    # A GPT-2-small block over 128 tokens (bench/bench.py).
    name = "gpt2_block"
    if (not only or name in only) and (args.force or not exported(args.out, name)):
        torch.manual_seed(13)
        model = Gpt2Block()
        x = torch.randn(1, 128, 768, generator=torch.Generator().manual_seed(14))
        export(name, model, [x], ["input"], args.out)
    # The transformer block HALO's backends are tried on (tests/halo): 32 tokens, hidden 64.
    name = "transformer_block"
    if (not only or name in only) and (args.force or not exported(args.out, name)):
        torch.manual_seed(11)
        model = TransformerBlock2d(64, 256)
        x = torch.randn(32, 64, generator=torch.Generator().manual_seed(12))
        export(name, model, [x], ["input"], args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
