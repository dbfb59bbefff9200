"""The four MLPerf Tiny reference architectures in PyTorch, with random weights (seed 0; batch
norms with random statistics, as a trained model has), exported to ONNX at batch 1:
  kws  DS-CNN keyword spotting on 49 x 10 MFCC (the "small" DS-CNN: 64 channels)
  ic   ResNet-8 image classification on 32 x 32 x 3 (CIFAR-10)
  vww  MobileNetV1, width 0.25, visual wake words on 96 x 96 x 3
  ad   the fully connected autoencoder for anomaly detection on 640 features
Used by bench/embedded.py: python tiny_models.py OUT_DIR writes OUT_DIR/<name>.onnx."""
import os
import sys

import torch
from torch import nn


def bn_relu(c, dims=2):
    return [nn.BatchNorm2d(c) if dims == 2 else nn.BatchNorm1d(c), nn.ReLU()]


class KWS(nn.Module):
    def __init__(self, c=64, classes=12):
        super().__init__()
        layers = [nn.Conv2d(1, c, (10, 4), stride=2, padding=(5, 1)), *bn_relu(c)]
        for _ in range(4):
            layers += [nn.Conv2d(c, c, 3, padding=1, groups=c), *bn_relu(c),
                       nn.Conv2d(c, c, 1), *bn_relu(c)]
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return torch.softmax(self.fc(self.features(x)), 1)


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), *bn_relu(cout),
                                  nn.Conv2d(cout, cout, 3, 1, 1), nn.BatchNorm2d(cout))
        self.short = nn.Identity() if stride == 1 and cin == cout else nn.Conv2d(cin, cout, 1,
                                                                                  stride)

    def forward(self, x):
        return torch.relu(self.body(x) + self.short(x))


class IC(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), *bn_relu(16), Block(16, 16, 1),
                                 Block(16, 32, 2), Block(32, 64, 2), nn.AdaptiveAvgPool2d(1),
                                 nn.Flatten(), nn.Linear(64, 10))

    def forward(self, x):
        return torch.softmax(self.net(x), 1)


class VWW(nn.Module):
    def __init__(self, alpha=0.25):
        super().__init__()
        c = lambda n: int(n * alpha)  # noqa: E731
        layers = [nn.Conv2d(3, c(32), 3, 2, 1), *bn_relu(c(32))]
        cin = c(32)
        for cout, stride in ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
                             (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2),
                             (1024, 1)):
            layers += [nn.Conv2d(cin, cin, 3, stride, 1, groups=cin), *bn_relu(cin),
                       nn.Conv2d(cin, c(cout), 1), *bn_relu(c(cout))]
            cin = c(cout)
        self.net = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Linear(cin, 2))

    def forward(self, x):
        return torch.softmax(self.net(x), 1)


class AD(nn.Module):
    def __init__(self, n=640, hidden=128, code=8):
        super().__init__()
        sizes = [n, hidden, hidden, hidden, hidden, code, hidden, hidden, hidden, hidden]
        layers = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [nn.Linear(a, b), *bn_relu(b, dims=1)]
        self.net = nn.Sequential(*layers, nn.Linear(hidden, n))

    def forward(self, x):
        return self.net(x)


MODELS = {"kws": (KWS, (1, 1, 49, 10)), "ic": (IC, (1, 3, 32, 32)),
          "vww": (VWW, (1, 3, 96, 96)), "ad": (AD, (1, 640))}


def export(name, out_dir):
    torch.manual_seed(0)
    cls, shape = MODELS[name]
    model = cls()
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
    model.eval()
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, torch.randn(*shape), path, input_names=["input"],
                      output_names=["output"], opset_version=13, dynamo=False)
    return path, shape


if __name__ == "__main__":
    os.makedirs(sys.argv[1], exist_ok=True)
    for name in MODELS:
        print(export(name, sys.argv[1])[0])
