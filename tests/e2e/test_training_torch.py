"""The reference backend's training (odla_DifferentiateComputation) against PyTorch autograd.
tests/runtime/test_training.c --dump writes the data, loss and gradients of its five float64
models (an MLP and a small CNN, fused as odlac emits them and unfused, and a chain of the
rules' other cases); each model is written here again in PyTorch, run on the same data, and
its loss and gradients must match ODLA's to 1e-9 relative."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch
import torch.nn.functional as F

RTOL, ATOL = 1e-9, 1e-12


def mlp(d):
    h = F.relu(d["x"] @ d["W1"].T + d["b1"])
    logits = h @ d["W2"].T + d["b2"]
    return F.nll_loss(F.log_softmax(logits, 1), d["labels"])


def cnn(d):
    c = F.relu(F.conv2d(d["x"], d["K"], d["kb"], padding=1))
    f = F.max_pool2d(c, 2).reshape(2, -1)
    y = f @ d["W"] + d["fb"]
    return ((y - d["t"]) ** 2).mean()


def zoo(d):
    x = F.pad(d["X"], (0, 1, 1, 0))  # W: 0 before, 1 after; H: 1 before, 0 after
    c = F.relu(F.conv2d(x, d["K"], d["kb"], stride=(2, 1), dilation=(1, 2), groups=2) + d["R"])
    p = F.max_pool2d(F.pad(c, (1, 0, 1, 0), value=-float("inf")), 2, stride=1)
    alpha, beta = float(np.float32(0.7)), float(np.float32(1.3))  # odla_Gemm takes float32
    g = alpha * p.reshape(8, 12).T @ d["Wt"] + beta * d["C"]
    y = (g * d["s"]).sum(1).reshape(3, 4)
    weights = torch.tensor([0.5, 1.0, 2.0, 1.5], dtype=torch.float64)
    nll = F.nll_loss(F.log_softmax(y, 1), torch.tensor([1, 2, 3]), weight=weights,
                     ignore_index=2, reduction="none")
    return nll.mean()


# key: (function, {variable: shape}, {argument: shape}); the fused and unfused spellings of a
# model compute the same function.
MODELS = {
    "mlp": (mlp, {"W1": (8, 5), "b1": (8,), "W2": (3, 8), "b2": (3,)}, {"x": (4, 5)}),
    "mlp_fused": (mlp, {"W1": (8, 5), "b1": (8,), "W2": (3, 8), "b2": (3,)}, {"x": (4, 5)}),
    "cnn": (cnn, {"K": (3, 1, 3, 3), "kb": (3,), "W": (27, 2), "fb": (1, 2)},
            {"x": (2, 1, 6, 6), "t": (2, 2)}),
    "cnn_fused": (cnn, {"K": (3, 1, 3, 3), "kb": (3,), "W": (27, 2), "fb": (2,)},
                  {"x": (2, 1, 6, 6), "t": (2, 2)}),
    "zoo": (zoo, {"X": (2, 4, 7, 7), "K": (4, 2, 3, 3), "kb": (4,), "R": (2, 4, 3, 4),
                  "Wt": (8, 5), "C": (12, 1), "s": (5,)}, {}),
}


class TrainingTorchTest(unittest.TestCase):
    def test_gradients_match_pytorch(self):
        exe = os.environ["TEST_TRAINING"]
        with tempfile.TemporaryDirectory() as work:
            for key in MODELS:
                os.mkdir(os.path.join(work, key))
            r = subprocess.run([exe, work, "--dump", work], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            for key, (fn, variables, arguments) in MODELS.items():
                with self.subTest(model=key):
                    def load(name, shape, dtype=np.float64):
                        a = np.fromfile(os.path.join(work, key, name + ".bin"), dtype=dtype)
                        return torch.from_numpy(a.reshape(shape))

                    d = {k: load(k, s).requires_grad_() for k, s in variables.items()}
                    d.update({k: load(k, s) for k, s in arguments.items()})
                    if key.startswith("mlp"):
                        d["labels"] = load("labels", (4,), np.int64)
                    loss = fn(d)
                    loss.backward()
                    odla_loss = load("loss", (1,)).item()
                    self.assertTrue(np.isclose(odla_loss, loss.item(), RTOL, ATOL),
                                    f"loss: ODLA {odla_loss}, PyTorch {loss.item()}")
                    for k, s in variables.items():
                        want = d[k].grad.numpy()
                        got = load(k + ".grad", s).numpy()
                        err = np.max(np.abs(got - want) / (ATOL + np.abs(want)))
                        self.assertTrue(np.allclose(got, want, RTOL, ATOL),
                                        f"d loss / d {k}: worst relative error {err:.3g}")
                    print(f"{key}: loss {loss.item():.6f}, gradients of "
                          f"{', '.join(variables)} match PyTorch", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
