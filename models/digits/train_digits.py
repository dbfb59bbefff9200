"""Train a small CNN on sklearn's handwritten digits and export it for odlac.

This produces a *real* (trained) end-to-end test model for the ONNX -> C
compiler, with held-out data whose accuracy a compiled model can be checked
against.

Data: ``sklearn.datasets.load_digits()`` (1797 images, 8x8, integer pixel
values 0..16, 10 classes), stratified 80/20 split with
``train_test_split(..., test_size=0.2, random_state=0, stratify=y)``.

The model takes RAW pixel values (0..16) as float32 [N,1,8,8] and scales them
itself (a Mul by the scalar 1/16 is its first op), then
Conv(1->8,3,pad 1) -> BN -> ReLU -> Conv(8->16,3,pad 1) -> ReLU -> MaxPool(2)
-> Flatten -> Linear(256->32) -> ReLU -> Linear(32->10) -> Softmax, and
outputs class probabilities.  The batch dimension of `input` and `output` is
symbolic ("N").  BatchNorm is folded into the first Conv by the exporter.

Writes, under models/digits/:
    model.onnx
    heldout.csv                   label + 64 raw pixels per held-out image
    train.csv                     the same for the training images (the calibration
                                  inputs of odlac --quantize in tests/zoo/test_int8.py)
    test_data_set_0/input_0.pb    first 4 held-out images [4,1,8,8]
    test_data_set_0/output_0.pb   PyTorch probabilities [4,10]
    test_data_set_1/input_0.pb    first held-out image [1,1,8,8]
    test_data_set_1/output_0.pb   PyTorch probabilities [1,10]
    README.md                     description, incl. the held-out accuracy

Deterministic (fixed seeds, one thread, deterministic algorithms): running it
twice reproduces the same files byte for byte.  Run from the repository root:

    /usr/bin/python3 models/digits/train_digits.py
"""

import os

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

OUT_DIR = os.path.dirname(os.path.abspath(__file__))
SEED = 0
EPOCHS = 15
BATCH = 32
LR = 3e-3

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

    def logits(self, x):
        x = x * (1.0 / 16.0)  # raw 0..16 pixels -> 0..1
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.conv2(x))
        x = self.pool(x)
        x = torch.flatten(x, 1)
        x = torch.relu(self.fc1(x))
        return self.fc2(x)

    def forward(self, x):
        return torch.softmax(self.logits(x), dim=1)


def save_tensor(arr, name, path):
    t = numpy_helper.from_array(np.ascontiguousarray(arr), name=name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def write_csv(path, images, labels):
    """One image per line, label then 64 raw pixels, after a header line."""
    with open(path, "w") as f:
        f.write("label,pixels(8x8 row-major, 0..16)\n")
        for img, lab in zip(images, labels):
            f.write(",".join([str(int(lab))] +
                             [str(int(v)) for v in img.ravel()]) + "\n")


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    torch.manual_seed(SEED)
    np.random.seed(SEED)

    digits = load_digits()
    X = digits.images.astype(np.float32)  # [1797, 8, 8], values 0..16
    y = digits.target.astype(np.int64)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.2, random_state=0, stratify=y)
    print(f"train {len(y_tr)} images, held-out {len(y_te)} images")

    xtr = torch.from_numpy(X_tr).unsqueeze(1)
    ytr = torch.from_numpy(y_tr)
    xte = torch.from_numpy(X_te).unsqueeze(1)
    yte = torch.from_numpy(y_te)

    model = DigitsCNN()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(ytr), generator=gen)
        total = 0.0
        for i in range(0, len(perm), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = loss_fn(model.logits(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        if epoch % 5 == 4 or epoch == EPOCHS - 1:
            print(f"epoch {epoch + 1:3d}: loss {total / len(ytr):.4f}  "
                  f"train acc {accuracy(model, xtr, ytr):.4f}  "
                  f"held-out acc {accuracy(model, xte, yte):.4f}")

    model.eval()
    train_acc = accuracy(model, xtr, ytr)
    test_acc = accuracy(model, xte, yte)
    n_correct = round(test_acc * len(yte))
    print(f"final train accuracy {train_acc:.4f}")
    print(f"final held-out accuracy {test_acc:.4f} "
          f"({n_correct}/{len(yte)})")
    assert test_acc >= 0.95, "held-out accuracy below 95%"

    # ---- export ----
    model_path = os.path.join(OUT_DIR, "model.onnx")
    torch.onnx.export(
        model,
        xte[:1],
        model_path,
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
        opset_version=13,
        do_constant_folding=True,
    )
    m = onnx.load(model_path)
    onnx.checker.check_model(m)
    ops = [n.op_type for n in m.graph.node]
    print(f"model.onnx: {os.path.getsize(model_path)} bytes")
    print(f"  node op types (in order): {ops}")
    assert "Mul" in ops and ops[0] in ("Mul", "Constant"), ops
    in_dim0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    assert in_dim0.dim_param == "N", in_dim0

    # ---- held-out and training CSVs ----
    write_csv(os.path.join(OUT_DIR, "heldout.csv"), X_te, y_te)
    write_csv(os.path.join(OUT_DIR, "train.csv"), X_tr, y_tr)

    # ---- test data sets ----
    for ds_idx, n in ((0, 4), (1, 1)):
        ds = os.path.join(OUT_DIR, f"test_data_set_{ds_idx}")
        os.makedirs(ds, exist_ok=True)
        x = xte[:n]
        with torch.no_grad():
            p = model(x)
        save_tensor(x.numpy(), "input", os.path.join(ds, "input_0.pb"))
        save_tensor(p.numpy(), "output", os.path.join(ds, "output_0.pb"))
        print(f"  test_data_set_{ds_idx}: input {list(x.shape)}, output "
              f"{list(p.shape)}, argmax {p.argmax(1).tolist()}, "
              f"labels {y_te[:n].tolist()}")

    # ---- README ----
    with open(os.path.join(OUT_DIR, "README.md"), "w") as f:
        f.write(README.format(
            n_train=len(y_tr), n_test=len(y_te), epochs=EPOCHS, batch=BATCH,
            lr=LR, train_acc=100 * train_acc, test_acc=100 * test_acc,
            n_correct=n_correct, torch=torch.__version__,
            onnx=onnx.__version__))


README = """\
# digits: a small trained CNN on sklearn's handwritten digits

*This file is generated by `train_digits.py`; edit the template there.*

A real, trained end-to-end test model for odlac, with held-out data whose
accuracy a compiled model can be checked against.

## Model

`model.onnx` (opset 13) takes **raw** pixel values (0..16, as in
`sklearn.datasets.load_digits()`) as float32 `input` of shape `[N,1,8,8]`
(the batch dimension `N` is symbolic) and outputs class probabilities
`output` of shape `[N,10]`.

    x * (1/16)                      (Mul by a scalar constant: 0..16 -> 0..1)
    Conv(1->8, 3x3, pad 1) -> BatchNorm -> ReLU    (BN folded into the Conv on export)
    Conv(8->16, 3x3, pad 1) -> ReLU
    MaxPool(2)                      -> [N,16,4,4]
    Flatten -> Linear(256->32) -> ReLU -> Linear(32->10) -> Softmax

## Training

- Data: `load_digits()` (1797 images), stratified hold-out split
  `train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)`:
  {n_train} training images, {n_test} held-out images.
- Adam (lr {lr}), batch {batch}, {epochs} epochs, cross-entropy loss, CPU,
  torch seed 0, one thread, deterministic algorithms.
- Accuracy of the PyTorch model: train {train_acc:.2f}%, **held-out
  {test_acc:.2f}% ({n_correct}/{n_test})**.
- Generated with torch {torch}, onnx {onnx}.

## Files

- `model.onnx`: the exported model.
- `heldout.csv`: the {n_test} held-out images, one per line:
  `label,p0,...,p63` (raw integer pixels 0..16, row-major), after a header
  line `label,pixels(8x8 row-major, 0..16)`. The order is the split's order.
- `train.csv`: the {n_train} training images in the same form (odlac's `--quantize`
  calibrates on them in `tests/zoo/test_int8.py`).
- `test_data_set_0/`: `input_0.pb` = the first 4 held-out images `[4,1,8,8]`,
  `output_0.pb` = PyTorch's probabilities `[4,10]`.
- `test_data_set_1/`: the first held-out image alone `[1,1,8,8]` and its
  probabilities `[1,10]`.

## Regenerate

From the repository root (deterministic; reproduces the same files):

    /usr/bin/python3 models/digits/train_digits.py
"""


if __name__ == "__main__":
    main()
