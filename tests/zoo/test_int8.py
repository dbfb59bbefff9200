"""Quantized inference (label zoo; issue 18): QDQ models written by ONNX Runtime's own
quantize_static (static post-training quantization, per-channel int8 weights, calibrated on a
few inputs), compiled by odlac at -O3 and run on the backend under test, against ONNX
Runtime's int8 outputs for the same QDQ model on the same inputs.

odlac folds each DequantizeLinear -> Conv/Gemm/MatMul -> QuantizeLinear into its integer-only
products (fold-quantize-dequantize), as ONNX Runtime fuses them into its integer kernels; both
then compute the same int32 sums and may differ by one step where their requantizations round
a tie differently, and by what such a step becomes through the later layers. The test checks,
per model: every float product is folded (the -O3 IR has no float Conv, Gemm or MatMul left),
the top-1 class agrees with ONNX Runtime's on (nearly) every input, and the outputs differ by
at most a few output quantization steps.

Quantization: tests/tools/ortquant.py (quant_pre_process, then quantize_static). Models:
models/digits (the trained CNN, on its 360 held-out images), models/cnn (random
weights and inputs), and ResNet-50 and MobileNetV2 from the model cache (export_zoo.py), on
random inputs. Run with the project venv's python (onnx, onnxruntime, numpy); the environment
as test_zoo.py's (ODLAC, ODLA_LIB, ODLA_INCLUDE)."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import odlactest  # noqa: E402
from ortquant import quantize  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CACHE = os.environ.get("ODLAC_MODEL_CACHE",
                       os.path.join(os.path.expanduser("~"), ".cache", "odlac", "models"))
RNG = np.random.default_rng(18)


def digits(split):
    """The digits' held-out (360) or training (1437) images [n, 1, 8, 8] (raw pixels 0..16)
    and their labels."""
    with open(os.path.join(ROOT, "models", "digits", split + ".csv")) as f:
        rows = list(csv.reader(f))[1:]
    labels = np.array([int(r[0]) for r in rows])
    images = np.array([[float(p) for p in r[1:]] for r in rows], np.float32)
    return images.reshape(-1, 1, 8, 8), labels


def zoo_model(name):
    """A model of the cache, exported by models/export_zoo.py (Debian's python, which has the
    torchvision it needs) when missing."""
    folder = os.path.join(CACHE, name)
    path = os.path.join(folder, "model.onnx")
    if not os.path.exists(path):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_zoo.py"),
                        "--out", CACHE, "--only", name], check=True, capture_output=True)
    return path


def output_scale(model):
    """The scale of the DequantizeLinear that produces the graph's first output."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    out = model.graph.output[0].name
    for n in model.graph.node:
        if n.output[0] == out and n.op_type == "DequantizeLinear":
            return float(inits[n.input[1]])
    raise AssertionError("the quantized model's output is not a DequantizeLinear's")


class Int8Test(unittest.TestCase):
    tc = odlactest.Toolchain()

    def compile(self, qdq, work, shape, flags=()):
        """Compiles the QDQ model at -O3 with `flags` for input shape `shape`; returns the driver
        and the IR."""
        out = os.path.join(work, "out")
        name = onnx.load(qdq).graph.input[0].name
        pin = ["--input-shape", name + ":" + "x".join(map(str, shape)), *flags]
        r = self.tc.compile(qdq, out, "-O3", "--emit-main", *pin)
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = os.path.join(out, "run")
        self.tc.build(out, exe)
        ir = subprocess.run([self.tc.odlac, qdq, "-O3", "--print-ir", *pin], capture_output=True,
                            text=True, check=True).stdout
        return exe, ir

    def run_driver(self, exe, xs, work, k):
        """Runs the driver on the inputs `xs` (an array, or a list of one per graph input);
        returns the first output."""
        xs = xs if isinstance(xs, list) else [xs]
        data = os.path.join(work, f"set{k}")
        odlactest.write_data_set(data, xs)
        res = os.path.join(work, f"res{k}")
        os.makedirs(res)
        r = subprocess.run([exe] + [os.path.join(data, f"input_{i}.pb") for i in range(len(xs))] +
                           ["-o", res], capture_output=True, text=True, cwd=os.path.dirname(exe))
        self.assertEqual(r.returncode, 0, r.stderr)
        return odlactest.load(os.path.join(res, "output_0.pb"))

    def check(self, label, model_path, calibration, inputs, max_steps, min_agree, labels=None,
              qoperator=False, flags=()):
        """Quantizes with ORT (QDQ, or the QOperator format), compiles with odlac (and `flags`),
        runs both on `inputs` (a list of batches) and compares: top-1 agreement at least
        `min_agree`, at most `max_steps` output steps."""
        with tempfile.TemporaryDirectory() as work:
            qdq = os.path.join(work, "model.qdq.onnx")
            quantize(model_path, qdq, calibration, qoperator)
            qmodel = onnx.load(qdq)
            step = output_scale(qmodel)
            sess = ort.InferenceSession(qdq, providers=["CPUExecutionProvider"])
            exe, ir = self.compile(qdq, work, inputs[0].shape, flags)
            float_products = [line for line in ir.splitlines()
                              if any(f"= {op}(" in line for op in ("Conv", "Gemm", "MatMul",
                                                                   "FusedConv", "FusedGemm"))]
            self.assertEqual(float_products, [], f"{label}: float products left in the -O3 IR")
            folded = sum("= QLinearConv(" in l or "= QLinearMatMul(" in l for l in ir.splitlines())
            if "--memory=least" in flags:  # FC layers as 1 x 1 convolutions (matmul-rows-as-conv)
                self.assertNotIn("= QLinearMatMul(", ir, f"{label}: a MatMul left")
            got, want = [], []
            for k, x in enumerate(inputs):
                want.append(sess.run(None, {sess.get_inputs()[0].name: x})[0])
                got.append(self.run_driver(exe, x, work, k))
        got, want = np.concatenate(got), np.concatenate(want)
        self.assertEqual(got.shape, want.shape)
        steps = np.abs(got.astype(np.float64) - want) / step
        agree = float(np.mean(got.argmax(1) == want.argmax(1)))
        line = (f"{label}: {folded} integer products, {len(got)} inputs, top-1 agreement with "
                f"ORT int8 {100 * agree:.1f}%, max |odlac - ORT| {steps.max():.0f} output steps "
                f"(mean {steps.mean():.3f})")
        if labels is not None:
            line += (f", accuracy odlac {100 * np.mean(got.argmax(1) == labels):.2f}% "
                     f"ORT {100 * np.mean(want.argmax(1) == labels):.2f}%")
        print(line)
        self.assertGreaterEqual(agree, min_agree, line)
        self.assertLessEqual(steps.max(), max_steps, line)

    def test_digits(self):
        """Also in a least-memory computation (a microcontroller's): kernels read in place by
        the lean kernels, the FC layers 1 x 1 convolutions of one-pixel maps (360 of them)."""
        images, labels = digits("heldout")
        model = os.path.join(ROOT, "models", "digits", "model.onnx")
        for flags in ((), ("--memory=least",)):
            self.check(" ".join(("digits",) + flags), model,
                       [images[i:i + 8] for i in range(0, 64, 8)], [images], max_steps=2,
                       min_agree=1.0, labels=labels, flags=flags)

    def test_digits_quantized_by_odlac(self):
        """odlac --quantize=int8 calibrated on the digits' training images (4 sets of 360):
        held-out accuracy within 0.5 points of float32's 97.50%, with each calibration
        method."""
        model = os.path.join(ROOT, "models", "digits", "model.onnx")
        train, _ = digits("train")
        heldout, labels = digits("heldout")
        n = len(heldout)
        with tempfile.TemporaryDirectory() as work:
            calib = os.path.join(work, "calib")
            for k, start in enumerate((0, n, 2 * n, len(train) - n)):
                odlactest.write_data_set(os.path.join(calib, f"test_data_set_{k}"),
                                         [train[start:start + n]])
            for method in ("minmax", "percentile", "entropy"):
                out = os.path.join(work, method)
                r = self.tc.compile(model, out, "-O3", "--emit-main", "--quantize=int8",
                                    f"--calibration={calib}", f"--calibration-method={method}",
                                    f"--input-shape=input:{n}x1x8x8")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("int8 against float32 on 4 calibration input sets", r.stderr)
                exe = os.path.join(out, "run")
                self.tc.build(out, exe)
                got = self.run_driver(exe, heldout, work, method)
                accuracy = 100 * float(np.mean(got.argmax(1) == labels))
                print(f"digits --quantize=int8 --calibration-method={method}: held-out accuracy "
                      f"{accuracy:.2f}% (float32 97.50%); {r.stderr.strip()}")
                self.assertGreaterEqual(accuracy, 97.0, method)

    def test_cnn(self):
        inputs = [RNG.standard_normal((1, 3, 16, 16)).astype(np.float32) for _ in range(24)]
        for qoperator in (False, True):
            self.check("cnn" + (" QOperator" if qoperator else ""),
                       os.path.join(ROOT, "models", "cnn", "model.onnx"), inputs[:8], inputs[8:],
                       max_steps=3, min_agree=1.0, qoperator=qoperator)

    def test_digits_qoperator(self):
        images, labels = digits("heldout")
        self.check("digits QOperator", os.path.join(ROOT, "models", "digits", "model.onnx"),
                   [images[i:i + 8] for i in range(0, 64, 8)], [images], max_steps=2,
                   min_agree=1.0, labels=labels, qoperator=True)

    def imagenet(self, name, count, qoperator=False):
        inputs = [RNG.standard_normal((1, 3, 224, 224)).astype(np.float32) for _ in range(count)]
        calibration = [RNG.standard_normal((1, 3, 224, 224)).astype(np.float32) for _ in range(4)]
        self.check(name + (" QOperator" if qoperator else ""), zoo_model(name), calibration,
                   inputs, max_steps=3, min_agree=0.98, qoperator=qoperator)

    def test_resnet50(self):
        self.imagenet("resnet50", int(os.environ.get("ODLAC_INT8_INPUTS", "100")))

    def test_mobilenet_v2(self):
        self.imagenet("mobilenet_v2", int(os.environ.get("ODLAC_INT8_INPUTS", "100")))

    def test_resnet50_quantized_by_odlac(self):
        """odlac --quantize=int8 of the float ResNet-50, calibrated on the inputs ORT's
        quantize_static calibrates on: the top class agrees with ORT's int8 model and with the
        float model."""
        src = zoo_model("resnet50")
        calibration = [RNG.standard_normal((1, 3, 224, 224)).astype(np.float32) for _ in range(4)]
        inputs = [RNG.standard_normal((1, 3, 224, 224)).astype(np.float32) for _ in range(20)]
        with tempfile.TemporaryDirectory() as work:
            calib = os.path.join(work, "calib")
            for k, x in enumerate(calibration):
                odlactest.write_data_set(os.path.join(calib, f"test_data_set_{k}"), [x])
            qdq = os.path.join(work, "model.qdq.onnx")
            quantize(src, qdq, calibration)
            out = os.path.join(work, "own")
            r = self.tc.compile(src, out, "-O3", "--emit-main", "--quantize=int8",
                                f"--calibration={calib}")
            self.assertEqual(r.returncode, 0, r.stderr)
            # Every convolution and the classifier run in integers, as in ORT's QDQ model, and
            # so do the last residual sum and the global pool after it (a QLinearAdd, and a
            # depthwise QLinearConv by ones).
            emitted = "".join(open(os.path.join(out, f)).read()
                              for f in os.listdir(out) if f.endswith(".c"))
            graph = onnx.load(src).graph.node
            convs = sum(n.op_type == "Conv" for n in graph)
            pools = sum(n.op_type == "GlobalAveragePool" for n in graph)
            self.assertEqual(emitted.count("odla_ExtQLinearConv("), convs + pools)
            self.assertEqual(emitted.count("odla_ExtQLinearAdd("),
                             sum(n.op_type == "Add" for n in graph))
            self.assertNotIn("odla_Add(", emitted)
            self.assertEqual(emitted.count("odla_ExtQLinearMatMul("), 1)
            exe = os.path.join(out, "run")
            self.tc.build(out, exe)
            ort_q = ort.InferenceSession(qdq, providers=["CPUExecutionProvider"])
            ort_f = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
            with_ort = with_float = 0
            for k, x in enumerate(inputs):
                top = self.run_driver(exe, x, work, k).argmax()
                with_ort += top == ort_q.run(None, {"input": x})[0].argmax()
                with_float += top == ort_f.run(None, {"input": x})[0].argmax()
        line = (f"resnet50 --quantize=int8: top-1 agrees with ORT's int8 on {with_ort}/20, with "
                f"float32 on {with_float}/20; {r.stderr.strip()}")
        print(line)
        self.assertGreaterEqual(min(with_ort, with_float), 19, line)

    def test_resnet50_qoperator(self):
        self.imagenet("resnet50", 10, qoperator=True)


    def test_bert_encoder(self):
        """The BERT-base encoder (12 layers, sequence 128) on random token ids: its hidden
        states have no class to compare, so the check is the output steps by which odlac and
        ONNX Runtime differ (a step of one layer's requantization grows through the 11 after
        it) and each one's error against the float model (PyTorch's output)."""
        folder = os.path.join(CACHE, "bert_encoder")
        zoo_model("bert_encoder")

        def feed():
            ids = RNG.integers(0, 30522, (1, 128)).astype(np.int64)
            mask = np.ones((1, 128), np.int64)
            mask[0, 100:] = 0
            return {"input_ids": ids, "attention_mask": mask}
        data = os.path.join(folder, "test_data_set_0")
        inputs = [odlactest.load(os.path.join(data, f"input_{i}.pb")) for i in range(2)]
        want_float = odlactest.load(os.path.join(data, "output_0.pb"))
        with tempfile.TemporaryDirectory() as work:
            qdq = os.path.join(work, "model.qdq.onnx")
            quantize(os.path.join(folder, "model.onnx"), qdq, [feed() for _ in range(4)])
            step = output_scale(onnx.load(qdq))
            sess = ort.InferenceSession(qdq, providers=["CPUExecutionProvider"])
            exe, ir = self.compile(qdq, work, inputs[0].shape)
            folded = sum("= QLinearMatMul(" in line for line in ir.splitlines())
            self.assertEqual(folded, 96, "every Gemm and MatMul an integer product")
            want = sess.run(None, dict(zip(("input_ids", "attention_mask"), inputs)))[0]
            got = self.run_driver(exe, inputs, work, 0)
        steps = np.abs(got.astype(np.float64) - want) / step
        err_odlac = np.abs(got - want_float).max()
        err_ort = np.abs(want - want_float).max()
        line = (f"bert_encoder: {folded} integer products, |odlac - ORT int8| max {steps.max():.0f}"
                f" output steps, mean {steps.mean():.2f}; max |int8 - float32|: odlac "
                f"{err_odlac:.3f}, ORT {err_ort:.3f} (max |float32| {np.abs(want_float).max():.2f})")
        print(line)
        self.assertLessEqual(steps.mean(), 1.5, line)
        self.assertLessEqual(steps.max(), 12, line)
        self.assertLessEqual(err_odlac, 1.25 * err_ort, line)


if __name__ == "__main__":
    unittest.main(verbosity=2)
