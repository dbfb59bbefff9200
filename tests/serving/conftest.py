"""What tests/serving shares: odlac installed from the build (ODLAC_BUILD_DIR), the Python
package installed from the source tree beside it, export-triton, and the reference backend's
answers that every served answer is checked against."""
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
import odlactest  # noqa: E402
DIGITS = os.path.join(ROOT, "models", "digits", "model.onnx")  # input [N, 1, 8, 8]
MLP = os.path.join(ROOT, "models", "mlp", "model.onnx")  # input [1, 64], no batch dim


class Odlac:
    def __init__(self, build_dir, work):
        self.work = work
        self.exe, site = odlactest.install_package(build_dir, str(work))
        # Ray's replicas find the package through PYTHONPATH (Triton's stubs import the copy
        # export-triton puts beside model.py).
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [site] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
        os.environ["ODLAC"] = self.exe
        import odlac
        import odlac.serve
        assert odlac.__file__.startswith(site)
        self.module = odlac
        self.backend = ("dnnl" if os.path.isdir(os.path.join(build_dir, "runtime_stubs", "dnnl"))
                        else "reference")
        self._references = {}

    def export(self, model, repo, *flags):
        """odlac export-triton; returns (exit status, stderr)."""
        r = subprocess.run([self.exe, "export-triton", str(model), "-o", str(repo)] + list(flags),
                           capture_output=True, text=True)
        return r.returncode, r.stderr

    def reference(self, model, feeds):
        """The reference backend's outputs for `feeds`: the model compiled at -O0 for their
        shapes (net_run; the served models' batches go through net_run_batch)."""
        shapes = {n: list(np.shape(x)) for n, x in feeds.items()}
        key = (model, repr(sorted(shapes.items())))
        if key not in self._references:
            self._references[key] = self.module.compile(model, backend="reference", opt_level=0,
                                                        input_shapes=shapes)
        return self._references[key].run(None, feeds)


@pytest.fixture(scope="session")
def odlac(tmp_path_factory):
    build_dir = os.environ.get("ODLAC_BUILD_DIR")
    if not build_dir:
        pytest.skip("ODLAC_BUILD_DIR not set")
    return Odlac(build_dir, tmp_path_factory.mktemp("serving"))


def digits_inputs(count, seed):
    """`count` batches of digit-sized images (pixels 0-16, as the model's digits): every
    other one a single row (Triton joins those), the others 1 to 5 rows."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(0, 16, size=(int(rng.integers(1, 6)), 1, 8, 8)).astype(np.float32)
            if i % 2 else rng.uniform(0, 16, size=(1, 1, 8, 8)).astype(np.float32)
            for i in range(count)]


def check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
