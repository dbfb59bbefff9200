"""A GPT-2-style decoder (nanoGPT's layout) whose attention keeps a key/value cache that the
caller passes in and gets back: forward(idx, past_k, past_v) takes the new tokens [B, T] and the
cache of the P tokens before them [L, B, H, P, D], and returns the logits [B, T, V] and the
cache of all P + T tokens. The causal mask is a buffer of ctx x ctx sliced at [P:P+T, :P+T] and
the positions are arange(P, P + T), as such models compute them, so an ONNX export has both
symbolic dims T and P (odlac --dim T=... --dim P=0..)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads, ctx):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("causal", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx),
                             persistent=False)

    def forward(self, x, past_k, past_v):
        B, T, C = x.shape
        P = past_k.shape[2]
        hd = C // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, hd).transpose(1, 2)
        k = torch.cat([past_k, k.view(B, T, self.heads, hd).transpose(1, 2)], dim=2)
        v = torch.cat([past_v, v.view(B, T, self.heads, hd).transpose(1, 2)], dim=2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(self.causal[:, :, P:P + T, :P + T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        x = x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return x, k, v


class GPT(nn.Module):
    def __init__(self, vocab, d=64, heads=4, layers=2, ctx=128):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads, ctx) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
        self.vocab, self.d, self.heads, self.layers, self.ctx = vocab, d, heads, layers, ctx

    def empty_cache(self, batch=1):
        shape = (self.layers, batch, self.heads, 0, self.d // self.heads)
        return torch.zeros(shape), torch.zeros(shape)

    def forward(self, idx, past_k, past_v):
        B, T = idx.shape
        P = past_k.shape[3]
        x = self.wte(idx) + self.wpe(torch.arange(P, P + T, device=idx.device))
        ks, vs = [], []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, past_k[i], past_v[i])
            ks.append(k)
            vs.append(v)
        return self.head(self.ln(x)), torch.stack(ks), torch.stack(vs)

    @torch.no_grad()
    def generate(self, prompt, steps):
        """Greedy decoding: the prompt's ids, then `steps` ids (fewer where the context ends),
        each the most likely next one."""
        steps = min(steps, self.ctx - len(prompt) + 1)
        past_k, past_v = self.empty_cache()
        idx, out = torch.tensor([prompt]), []
        for _ in range(steps):
            logits, past_k, past_v = self(idx, past_k, past_v)
            out.append(int(logits[0, -1].argmax()))
            idx = torch.tensor([[out[-1]]])
        return out

    def export(self, path, max_tokens):
        """ONNX (torch's dynamo exporter) with symbolic dims T (new tokens) and P (cached)."""
        hd = self.d // self.heads
        example = (torch.zeros(1, 3, dtype=torch.long),
                   torch.zeros(self.layers, 1, self.heads, 2, hd),
                   torch.zeros(self.layers, 1, self.heads, 2, hd))
        top = min(max_tokens, self.ctx - 2)  # torch.export's bounds keep P + T inside ctx
        T = torch.export.Dim("T", min=2, max=top)
        P = torch.export.Dim("P", min=2, max=top)
        torch.onnx.export(self, example, path, input_names=["idx", "past_k", "past_v"],
                          output_names=["logits", "present_k", "present_v"],
                          dynamic_shapes=({1: T}, {3: P}, {3: P}), dynamo=True, verbose=False,
                          external_data=False)


def load(path):
    """The model train.py saved (model.pt), in eval mode."""
    saved = torch.load(path, weights_only=True)
    sizes = dict(saved["sizes"])
    model = GPT(sizes.pop("vocab"), **sizes)
    model.load_state_dict(saved["state"])
    return model.eval()
