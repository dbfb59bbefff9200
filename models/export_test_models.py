"""Export the end-to-end test models for odlac (ONNX -> C compiler).

Writes three small models with random (fixed-seed) weights, each in ONNX's
backend-test layout:

    models/mlp/model.onnx
    models/mlp/test_data_set_{0,1}/input_0.pb, output_0.pb
    models/cnn/model.onnx
    models/cnn/test_data_set_{0,1}/input_0.pb, output_0.pb
    models/cnn_basic/model.onnx, test_data_set_{0,1}/...

Expected outputs are PyTorch's float32 outputs with the module in eval mode.

* mlp: input `input` [1,64] -> Linear(64,32) -> ReLU -> Linear(32,16) -> Tanh
  -> Linear(16,10) -> output `output` [1,10].
* cnn: input `input` [1,3,16,16] -> output `output` [1,10] (softmax
  probabilities).  Exercises Conv (bias, stride 2 + padding, grouped and
  depthwise), BatchNormalization with non-trivial statistics (exported with
  TrainingMode.PRESERVE so BN is NOT folded into the convs), ReLU, LeakyRelu,
  Sigmoid, a residual block (Add), Concat along channels, MaxPool,
  AveragePool (count_include_pad=False, so no extra Pad node),
  GlobalAveragePool, Flatten, Gemm and Softmax.  Conv/Linear weights use He
  init so that the output really depends on the input.
* cnn_basic: input `input` [1,3,32,32] -> (Conv 3x3 + BatchNormalization, not
  folded, + ReLU + MaxPool 2) twice -> Flatten -> Gemm -> output `output`
  [1,10] (raw scores): issue 16's CNN, which HALO's backends run (tests/halo).

Deterministic: fixed seeds, single thread, deterministic algorithms; running
the script twice reproduces the same files byte for byte.

Run from the repository root:

    /usr/bin/python3 models/export_test_models.py
"""

import os
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper

MODELS_DIR = os.path.dirname(os.path.abspath(__file__))
OPSET = 13

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


class BasicCNN(nn.Module):
    """The CNN of issue 16: Conv, BatchNorm, ReLU and MaxPool twice, then one Gemm; the op
    set every HALO backend (tests/halo) runs."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=True)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1, bias=True)
        self.bn2 = nn.BatchNorm2d(32)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool(torch.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


class ResidualBlock(nn.Module):
    """Conv->BN->ReLU->Conv->BN, + skip, ReLU."""

    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1, bias=True)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1, bias=True)
        self.bn2 = nn.BatchNorm2d(ch)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + x)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        # [1,3,16,16] -> [1,16,16,16]
        self.stem = nn.Conv2d(3, 16, 3, padding=1, bias=True)
        self.stem_bn = nn.BatchNorm2d(16)
        # stride 2 + padding: -> [1,16,8,8]
        self.down = nn.Conv2d(16, 16, 3, stride=2, padding=1, bias=True)
        self.down_bn = nn.BatchNorm2d(16)
        self.down_act = nn.LeakyReLU(0.1)
        # residual block: [1,16,8,8]
        self.res = ResidualBlock(16)
        # branch a: depthwise conv + sigmoid -> [1,16,8,8]
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=True)
        # branch b: 1x1 conv + relu -> [1,8,8,8]
        self.pw = nn.Conv2d(16, 8, 1, bias=True)
        # concat -> [1,24,8,8]; maxpool -> [1,24,4,4]
        self.maxpool = nn.MaxPool2d(2)
        # grouped conv (4 groups): -> [1,32,4,4]
        self.gconv = nn.Conv2d(24, 32, 3, padding=1, groups=4, bias=True)
        # avgpool -> [1,32,2,2]; global avg pool -> [1,32,1,1]
        self.avgpool = nn.AvgPool2d(2, count_include_pad=False)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.stem_bn(self.stem(x)))
        x = self.down_act(self.down_bn(self.down(x)))
        x = self.res(x)
        a = torch.sigmoid(self.dw(x))
        b = torch.relu(self.pw(x))
        x = torch.cat([a, b], dim=1)
        x = self.maxpool(x)
        x = torch.relu(self.gconv(x))
        x = self.avgpool(x)
        x = self.gap(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return torch.softmax(x, dim=1)


def kaiming_init(model):
    """He-normal weights for Conv/Linear.

    PyTorch's default init shrinks the signal at every layer, which made the
    CNN's output almost independent of its input (near-uniform softmax, same
    for every input): a weak end-to-end test.  He init keeps the activations'
    scale, so the expected outputs actually depend on the input.
    """
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")


def randomize_batchnorm(model, gen):
    """Give every BatchNorm non-trivial running stats and affine params."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(torch.rand(c, generator=gen) - 0.5)
                m.running_var.copy_(0.5 + 1.5 * torch.rand(c, generator=gen))
                m.weight.copy_(0.5 + torch.rand(c, generator=gen))
                m.bias.copy_(0.4 * torch.rand(c, generator=gen) - 0.2)


def save_tensor(arr, name, path):
    t = numpy_helper.from_array(np.ascontiguousarray(arr), name=name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def export(model, name, example, inputs, training_mode):
    out_dir = os.path.join(MODELS_DIR, name)
    os.makedirs(out_dir, exist_ok=True)
    model_path = os.path.join(out_dir, "model.onnx")
    model.eval()
    with warnings.catch_warnings():
        # PRESERVE + constant folding warns about models in *training* mode;
        # ours are in eval mode, so the warning does not apply.
        warnings.filterwarnings("ignore", message=".*constant folding.*")
        torch.onnx.export(
            model,
            example,
            model_path,
            input_names=["input"],
            output_names=["output"],
            opset_version=OPSET,
            do_constant_folding=True,
            training=training_mode,
        )
    m = onnx.load(model_path)
    onnx.checker.check_model(m)
    in_name = m.graph.input[0].name
    out_name = m.graph.output[0].name
    assert in_name == "input" and out_name == "output", (in_name, out_name)

    ops = [n.op_type for n in m.graph.node]
    print(f"{name}: {os.path.getsize(model_path)} bytes, {len(ops)} nodes")
    print(f"  node op types (in order): {ops}")
    print(f"  distinct op types: {sorted(set(ops))}")

    for i, x in enumerate(inputs):
        ds = os.path.join(out_dir, f"test_data_set_{i}")
        os.makedirs(ds, exist_ok=True)
        with torch.no_grad():
            y = model(x)
        save_tensor(x.numpy().astype(np.float32), in_name,
                    os.path.join(ds, "input_0.pb"))
        save_tensor(y.numpy().astype(np.float32), out_name,
                    os.path.join(ds, "output_0.pb"))
        print(f"  {ds[len(MODELS_DIR) + 1:]}: input {list(x.shape)}, "
              f"output {list(y.shape)} = "
              f"{np.array2string(y.numpy().ravel(), precision=4)}")
    return set(ops)


def initialized(cls, batchnorm_seed):
    """A CNN in eval mode: built after seeding torch with 0, He-initialized, with BatchNorm
    statistics drawn from `batchnorm_seed`."""
    torch.manual_seed(0)
    model = cls()
    kaiming_init(model)
    randomize_batchnorm(model, torch.Generator().manual_seed(batchnorm_seed))
    model.eval()
    return model


def main():
    # ---- MLP ----
    torch.manual_seed(0)
    mlp = MLP().eval()
    gen = torch.Generator().manual_seed(1)
    mlp_inputs = [torch.randn(1, 64, generator=gen) for _ in range(2)]
    export(mlp, "mlp", mlp_inputs[0], mlp_inputs,
           torch.onnx.TrainingMode.EVAL)

    # ---- CNN ----
    cnn = initialized(SmallCNN, 2)
    gen = torch.Generator().manual_seed(3)
    # N(0,1) pixels plus a random per-channel offset, so the two data sets
    # differ in more than pixel noise (which global pooling averages away).
    cnn_inputs = [torch.randn(1, 3, 16, 16, generator=gen)
                  + torch.randn(1, 3, 1, 1, generator=gen) for _ in range(2)]
    # PRESERVE (with the module in eval mode) keeps BatchNormalization nodes
    # instead of folding them into the preceding Conv.
    ops = export(cnn, "cnn", cnn_inputs[0], cnn_inputs,
                 torch.onnx.TrainingMode.PRESERVE)
    required = {"BatchNormalization", "Conv", "Add", "MaxPool",
                "AveragePool", "GlobalAveragePool", "Gemm", "Softmax",
                "Concat", "Relu", "LeakyRelu", "Sigmoid", "Flatten"}
    missing = required - ops
    assert not missing, f"cnn is missing op types: {sorted(missing)}"
    assert "Pad" not in ops, "AvgPool2d should not export a Pad node"
    print("cnn: all required op types present")

    # ---- basic CNN (Conv + BN + ReLU + MaxPool + Gemm) ----
    basic = initialized(BasicCNN, 4)
    gen = torch.Generator().manual_seed(5)
    basic_inputs = [torch.randn(1, 3, 32, 32, generator=gen) for _ in range(2)]
    ops = export(basic, "cnn_basic", basic_inputs[0], basic_inputs,
                 torch.onnx.TrainingMode.PRESERVE)
    assert ops == {"Conv", "BatchNormalization", "Relu", "MaxPool", "Flatten", "Gemm"}, ops


if __name__ == "__main__":
    main()
