"""Shared helpers for odlac's Python tests: compile a model with odlac, build the generated C
against an ODLA backend, run the generated driver on ONNX test data, compare outputs.
Run under Debian's /usr/bin/python3 (onnx, numpy)."""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper


class Toolchain:
    """Where odlac and a backend are, from the environment CMake sets for tests."""

    def __init__(self):
        self.odlac = os.environ["ODLAC"]
        self.lib = os.environ["ODLA_LIB"]  # the backend library to link (static or shared)
        self.include = os.environ["ODLA_INCLUDE"]
        self.cc = os.environ.get("CC", "cc")

    def compile(self, model, out, *flags, name="net"):
        """Runs odlac; returns the CompletedProcess (check .returncode, .stderr)."""
        return subprocess.run([self.odlac, model, "-o", out, "--name", name, *flags],
                              capture_output=True, text=True)

    def build(self, out, exe, *cflags):
        sources = sorted(glob.glob(os.path.join(out, "*.c")))
        subprocess.run([self.cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror",
                        "-I", self.include, *cflags, *sources, self.lib, "-lm", "-o", exe],
                       check=True)


def install_package(build_dir, work):
    """odlac installed from `build_dir` into WORK/prefix, and the Python package installed with
    this interpreter's pip into WORK/site from a copy of python/ (so that nothing is written
    into the source tree), WORK/site put first on sys.path; returns (odlac's path, site)."""
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    prefix = os.path.join(work, "prefix")
    subprocess.run(["cmake", "--install", build_dir, "--prefix", prefix], check=True,
                   capture_output=True)
    source, site = os.path.join(work, "python"), os.path.join(work, "site")
    shutil.copytree(os.path.join(root, "python"), source)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", site, source], check=True)
    sys.path.insert(0, site)
    return os.path.join(prefix, "bin", "odlac"), site


def run_npy(exe, work, x):
    """Runs an --emit-main driver on array x (written as WORK/x.npy) with -o WORK/y --npy;
    returns (CompletedProcess, output 0 or None when the run failed)."""
    np.save(os.path.join(work, "x.npy"), x)
    r = subprocess.run([exe, os.path.join(work, "x.npy"), "-o", os.path.join(work, "y"), "--npy"],
                       capture_output=True, text=True)
    return r, np.load(os.path.join(work, "y", "output_0.npy")) if r.returncode == 0 else None


def write_test_folder(root, name, model, cases, encode=None):
    """A test folder in ONNX's layout, root/node/name/{model.onnx, test_data_set_<k>/
    {input,output}_<i>.pb}, for the conformance runner: `cases` is [(inputs, outputs)], one
    value per graph input (initializers excluded) and output, each written by
    encode(value, name) -> a TensorProto (the default), SequenceProto or OptionalProto."""
    encode = encode or (lambda v, n: numpy_helper.from_array(np.asarray(v), n))
    folder = os.path.join(root, "node", name)
    os.makedirs(folder)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    initializers = {i.name for i in model.graph.initializer}
    for k, (ins, outs) in enumerate(cases):
        data = os.path.join(folder, "test_data_set_%d" % k)
        os.makedirs(data)
        for kind, values, infos in (("input", ins, model.graph.input),
                                    ("output", outs, model.graph.output)):
            names = [v.name for v in infos if v.name not in initializers]
            for i, (n, v) in enumerate(zip(names, values)):
                with open(os.path.join(data, "%s_%d.pb" % (kind, i)), "wb") as f:
                    f.write(encode(v, n).SerializeToString())


def write_data_set(folder, inputs):
    """A data set folder holding input_<i>.pb for each array of `inputs` (no outputs): the
    layout of odlac's --calibration sets."""
    os.makedirs(folder)
    for i, x in enumerate(inputs):
        with open(os.path.join(folder, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(x)).SerializeToString())


def data_sets(model_dir):
    return sorted(glob.glob(os.path.join(model_dir, "test_data_set_*")))


def load(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


def run_data_set(exe, data_set, result_dir, cwd=None):
    """Runs a generated driver on one ONNX test data set; returns (outputs, expected)."""
    inputs = sorted(glob.glob(os.path.join(data_set, "input_*.pb")),
                    key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    os.makedirs(result_dir, exist_ok=True)
    r = subprocess.run([exe, *inputs, "-o", result_dir], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{exe} failed with status {r.returncode}: {r.stderr.strip()}")
    expected = sorted(glob.glob(os.path.join(data_set, "output_*.pb")),
                      key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    got = [load(os.path.join(result_dir, f"output_{i}.pb")) for i in range(len(expected))]
    return got, [load(p) for p in expected]


def max_error(got, want, rtol, atol):
    """Returns None when every output matches within |a-b| <= atol + rtol*|b|, else a
    description of the first mismatch."""
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"output {i}: got {g.dtype}{list(g.shape)}, want {w.dtype}{list(w.shape)}"
        if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
            err = np.abs(g.astype(np.float64) - w.astype(np.float64))
            return f"output {i}: max abs error {err.max():.3g}"
    return None
