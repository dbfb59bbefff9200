"""Models from today's exporters (label zoo; issue 15): a CNN, a two-layer LSTM and a
pre-norm transformer encoder block, exported with torch.onnx.export(dynamo=True) of PyTorch
2.x from PyPI (the project venv) at opset 18, and a transformer MLP block written with
onnxscript (the library that exporter is built on) whose LayerNorm and GELU are ONNX local
functions, one with an attribute default. Each is compiled by odlac at -O0 and -O3, built
against the backend, run, and checked against PyTorch's own output.

Run with the project venv's python (scripts/install-deps.sh test: torch, onnxscript, onnx
1.23). ODLAC, ODLA_LIB, ODLA_INCLUDE name odlac and the backend library; ODLA_BACKEND=dnnl
compiles for libodla_dnnl's manifest (--backend=dnnl).

Why the onnxscript model: torch.onnx.export of PyTorch 2.9 turns submodules and control-flow
branches into local functions, then always runs onnxscript's version converter, which
inlines them first ("only supports inlined models"), so the files it writes carry none.
"""
import os
import sys
import tempfile
import unittest

import numpy as np
import onnx
import onnxscript
import torch
from onnx import numpy_helper
from onnxscript import FLOAT, script
from onnxscript import opset18 as op
from onnxscript.values import Opset

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import odlactest  # noqa: E402

OPSET = 18
# Against PyTorch: other summation orders, and the LSTM's and softmax's exp/tanh/sigmoid.
RTOL, ATOL = 1e-4, 1e-4


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1))
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(32, 8)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


def transformer_block():
    return torch.nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0,
                                            activation="gelu", batch_first=True,
                                            norm_first=True)


def randomize_batchnorm(model):
    """Running statistics other than 0 and 1, so that folding BatchNorm is tested."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    return model


# The onnxscript model: its two helpers become local functions of domain pkg.odlac.test.
LOCAL = Opset("pkg.odlac.test", 1)
D_MODEL, D_FF = 32, 64


@script(LOCAL, default_opset=op)
def layer_norm(x, scale, bias, epsilon: float = 1e-5):
    mean = op.ReduceMean(x, [-1])
    d = x - mean
    var = op.ReduceMean(d * d, [-1])
    return d / op.Sqrt(var + epsilon) * scale + bias


@script(LOCAL, default_opset=op)
def gelu_tanh(x):
    cube = op.Constant(value_float=0.044715) * x * x * x
    inner = op.Constant(value_float=0.7978845608) * (x + cube)
    return op.Constant(value_float=0.5) * x * (op.Constant(value_float=1.0) + op.Tanh(inner))


@script(default_opset=op)
def mlp_block(x: FLOAT[1, 8, D_MODEL], scale: FLOAT[D_MODEL], bias: FLOAT[D_MODEL],
              w1: FLOAT[D_MODEL, D_FF], w2: FLOAT[D_FF, D_MODEL]) -> FLOAT[1, 8, D_MODEL]:
    return x + op.MatMul(gelu_tanh(op.MatMul(layer_norm(x, scale, bias), w1)), w2)


def export_mlp_block(folder):
    """mlp_block's model with local functions, and PyTorch's value of the same formula."""
    g = torch.Generator().manual_seed(0)
    args = [torch.randn(1, 8, D_MODEL, generator=g), torch.rand(D_MODEL, generator=g) + 0.5,
            torch.randn(D_MODEL, generator=g) * 0.1, torch.randn(D_MODEL, D_FF, generator=g) * 0.2,
            torch.randn(D_FF, D_MODEL, generator=g) * 0.2]
    x, scale, bias, w1, w2 = args
    h = torch.nn.functional.layer_norm(x, (D_MODEL,), scale, bias, eps=1e-5)
    want = x + torch.nn.functional.gelu(h @ w1, approximate="tanh") @ w2
    model = mlp_block.to_model_proto()
    model.producer_name, model.producer_version = "onnxscript", onnxscript.__version__
    onnx.save(model, os.path.join(folder, "model.onnx"))
    return model, [a.numpy() for a in args], [want.numpy()]


MODELS = {  # name: (the module, its input's shape)
    "cnn": (lambda: randomize_batchnorm(Cnn()), (1, 3, 32, 32)),
    "lstm": (Lstm, (1, 10, 16)),
    "transformer_block": (transformer_block, (1, 12, 64)),
}


def export(name, folder):
    """Writes folder/model.onnx (the dynamo exporter's, or the onnxscript model) with
    test_data_set_0 holding the inputs and PyTorch's output; returns the ModelProto."""
    if name == "mlp_block_functions":
        model, inputs, outputs = export_mlp_block(folder)
    else:
        torch.manual_seed(0)
        make, shape = MODELS[name]
        module = make().eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            outputs = [module(x).numpy()]
            program = torch.onnx.export(module, (x,), dynamo=True, opset_version=OPSET)
        program.save(os.path.join(folder, "model.onnx"))
        model, inputs = onnx.load(os.path.join(folder, "model.onnx")), [x.numpy()]
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data)
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, v in enumerate(values):
            onnx.save_tensor(numpy_helper.from_array(v), os.path.join(data, "%s_%d.pb" % (kind, i)))
    return model


class DynamoExportTest(unittest.TestCase):
    tc = odlactest.Toolchain()
    flags = ["--backend=dnnl"] if os.environ.get("ODLA_BACKEND") == "dnnl" else []

    def check(self, name, producer, functions=0):
        """Exports, checks what the exporter wrote (opset, producer, local functions), then
        compiles, builds and runs it at -O0 and -O3 against PyTorch's output."""
        with tempfile.TemporaryDirectory() as work:
            folder = os.path.join(work, "model")
            os.makedirs(folder)
            model = export(name, folder)
            opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
            self.assertGreaterEqual(opset, 18)
            self.assertEqual(model.producer_name, producer)
            self.assertEqual(len(model.functions), functions)
            if producer == "pytorch":  # PyTorch 2.x's dynamo exporter, not the TorchScript one
                self.assertTrue(model.producer_version.startswith("2."), model.producer_version)
            print("%s: %s %s, opset %d, IR %d, %d nodes, %d local functions"
                  % (name, model.producer_name, model.producer_version, opset,
                     model.ir_version, len(model.graph.node), len(model.functions)))
            for level in (0, 3):
                out = os.path.join(work, "O%d" % level)
                r = self.tc.compile(os.path.join(folder, "model.onnx"), out, "-O%d" % level,
                                    "--emit-main", *self.flags)
                self.assertEqual(r.returncode, 0, r.stderr)
                exe = os.path.join(out, "run")
                self.tc.build(out, exe)
                got, want = odlactest.run_data_set(exe, os.path.join(folder, "test_data_set_0"),
                                                   os.path.join(work, "res%d" % level))
                err = odlactest.max_error(got, want, RTOL, ATOL)
                self.assertIsNone(err, "%s -O%d against PyTorch: %s" % (name, level, err))
                diff = np.abs(got[0].astype(np.float64) - want[0]).max()
                print("  -O%d: max |odlac - torch| %.2e" % (level, diff))

    def test_cnn(self):
        self.check("cnn", "pytorch")

    def test_lstm(self):
        self.check("lstm", "pytorch")

    def test_transformer_block(self):
        self.check("transformer_block", "pytorch")

    def test_onnxscript_local_functions(self):
        self.check("mlp_block_functions", "onnxscript", functions=2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
