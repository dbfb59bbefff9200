"""Trains gpt.py's decoder as a character-level model on the licence texts Debian ships
(/usr/share/common-licenses, each text once), and writes OUT/model.pt (the weights and the
model's sizes), OUT/vocab.txt (its characters, byte i being token i) and OUT/model.onnx (the
export with symbolic dims T and P). models/chargpt holds what it wrote, so that nothing trains
at build or test time.

  python train.py OUT [--steps N] [--seconds S]

Deterministic for a given torch version and thread count (seed 0, one thread)."""
import argparse
import glob
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt import GPT  # noqa: E402

LICENSES = "/usr/share/common-licenses"
SIZES = dict(d=96, heads=4, layers=3, ctx=128)


def corpus():
    seen, texts = set(), []
    for path in sorted(glob.glob(os.path.join(LICENSES, "*"))):
        real = os.path.realpath(path)
        if real in seen or not os.path.isfile(real):
            continue
        seen.add(real)
        with open(real, "rb") as f:
            texts.append(f.read())
    data = b"\n".join(texts)
    return bytes(b for b in data if 32 <= b < 127 or b == 10)  # printable ASCII and newlines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--seconds", type=float, default=1e9, help="stop training after this long")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    text = corpus()
    vocab = bytes(sorted(set(text)))
    ids = torch.tensor([vocab.index(b) for b in text], dtype=torch.long)
    model = GPT(len(vocab), **SIZES)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.steps)
    batch, length = 32, 96
    start = time.time()
    for step in range(args.steps):
        at = torch.randint(0, len(ids) - length - 1, (batch,))
        x = torch.stack([ids[i:i + length] for i in at])
        y = torch.stack([ids[i + 1:i + length + 1] for i in at])
        past_k, past_v = model.empty_cache(batch)
        logits, _, _ = model(x, past_k, past_v)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 250 == 0 or step == args.steps - 1:
            print("step %d loss %.3f (%.0f s)" % (step, loss.item(), time.time() - start),
                  flush=True)
        if time.time() - start > args.seconds:
            break
    model.eval()
    os.makedirs(args.out, exist_ok=True)
    torch.save({"sizes": dict(SIZES, vocab=len(vocab)), "state": model.state_dict()},
               os.path.join(args.out, "model.pt"))
    with open(os.path.join(args.out, "vocab.txt"), "wb") as f:
        f.write(vocab)
    model.export(os.path.join(args.out, "model.onnx"), SIZES["ctx"])
    print(bytes(vocab[i] for i in model.generate([vocab.index(b) for b in b"The "], 120)).decode())


if __name__ == "__main__":
    main()
