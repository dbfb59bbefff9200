"""The generated C on HALO's own ODLA backends (issue 16; label halo; README.md here).

--build: configures and builds tests/halo/backends (HALO's dnnl, dnnl-interpreter, eigen and
xnnpack backends from HALO_ODLA_DIR) into HALO_BUILD_DIR.

--backend NAME (halo-dnnl, halo-dnnl-interpreter, halo-eigen, halo-xnnpack): compiles each
model of MODELS with odlac --backend=NAME and nothing else, builds the C with its driver
against HALO's headers and the backend's library, runs every data set and checks the outputs
against the same model on the reference backend (odlac's own, ODLA_LIB) and against the data
set's PyTorch outputs; a model the manifest does not claim must be refused at compile time
with the reason the table gives. Then every ONNX node test (Debian's libonnx-testdata)
through tests/conformance/run_conformance.py: each one odlac accepts for the backend must
pass (a failure means the manifest claims too much), each one it refuses must be refused
cleanly; KNOWN_FAILURES lists the few a manifest cannot express, and tests the reference
backend fails too (tests/conformance/xfail_reference.txt) are odlac's, not the backend's.

Skipped (exit 77) when HALO_ODLA_DIR is not set or holds no ODLA/platforms: a fresh clone
without HALO's sources; and --backend halo-dnnl and halo-dnnl-interpreter on a CPU without
AVX-512 (F, BW, DQ, VL): HALO's oneDNN backend is built for it, as HALO builds it (its code
without AVX-512 is the SYCL GPU build's, with assert(0) kernels), and would die of SIGILL.
Run under Debian's /usr/bin/python3 (onnx, numpy, torch)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
import odlactest  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "zoo"))
from test_zoo import TORCH_ATOL, TORCH_RTOL, ensure_exported  # noqa: E402

SKIP = 77
HALO_DIR = os.environ.get("HALO_ODLA_DIR", "")
BUILD_DIR = os.environ.get("HALO_BUILD_DIR", "")
NODE_TESTS = "/usr/share/libonnx-testdata/data/node"

# The library each backend's manifest names (runtime_stubs/halo/*.txt: library).
LIBRARIES = {"halo-dnnl": "odla_halo_dnnl", "halo-dnnl-interpreter": "odla_halo_dnnl_interpreter",
             "halo-eigen": "odla_halo_eigen", "halo-xnnpack": "odla_halo_xnnpack"}

# Against the reference backend: the largest difference over the largest reference value
# (summation orders differ, so elementwise relative error near zero says nothing).
REF_RTOL = {"halo-dnnl": 1e-5, "halo-dnnl-interpreter": 1e-5, "halo-eigen": 1e-5,
            "halo-xnnpack": 1e-5}

# ONNX node tests a backend accepts and gets wrong for a reason no manifest can express (the
# values in a tensor at run time, a kernel's accuracy); each must still fail, so that the
# list only shrinks. Everything else a manifest claims must pass.
KNOWN_FAILURES = {
    "halo-dnnl": {
        "test_gather_negative_indices": "negative indices are not wrapped (a value of the data)",
        "test_log_example": "oneDNN's eltwise_log gives 2.9e-6 for log(1), beyond ONNX's atol",
        # odlac resolves the sequence If to odla_Select(cond of rank 0, x[5], y[5]) (the
        # reference backend passes it); HALO's Select broadcasts a rank-0 bool condition wrong.
        "test_if_seq": "odla_Select with a rank-0 condition: 4 of 5 elements from the wrong side",
    },
}
KNOWN_FAILURES["halo-dnnl-interpreter"] = KNOWN_FAILURES["halo-dnnl"]

RUN = None  # runs: no refusal expected
# model -> (where it is, -O levels tried, per backend: RUN or a substring of the refusal)
MODELS = {
    # Issue 16's two models: the MLP (Gemm, Relu, Tanh) and the CNN (Conv, BN, Relu, MaxPool,
    # Gemm); -O0 keeps the BatchNormalization that -O2 folds.
    "mlp": ("models", ("-O2",), {
        "halo-eigen": "runs odla_Relu only with input.rank=4",
        "halo-xnnpack": "runs odla_Relu only with input.rank=4"}),
    "cnn_basic": ("models", ("-O0", "-O2"), {}),
    # Grouped and depthwise convolutions, average pools, Concat on channels, Softmax.
    "cnn": ("models", ("-O2",), {
        "halo-eigen": "runs odla_Conv only with group=1",
        "halo-xnnpack": "runs odla_Concat only with axis=3"}),
    "resnet18": ("zoo", ("-O2",), {}),
    "transformer_block": ("zoo", ("-O2",), {
        "halo-eigen": "lacks odla_Erf",
        "halo-xnnpack": "lacks odla_Erf"}),
}


def model_folder(name, where):
    return os.path.join(ROOT, "models", name) if where == "models" else ensure_exported(name)


def library(backend):
    return os.path.join(BUILD_DIR, "lib%s.so" % LIBRARIES[backend])


def build_backends():
    """Configures and builds tests/halo/backends; returns the exit status."""
    cmake = os.environ.get("CMAKE_COMMAND", "cmake")
    launcher = []
    if subprocess.run(["sh", "-c", "command -v ccache"], capture_output=True).returncode == 0:
        launcher = ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    for cmd in ([cmake, "-S", os.path.join(HERE, "backends"), "-B", BUILD_DIR,
                 "-DHALO_ODLA_DIR=" + HALO_DIR, *launcher],
                [cmake, "--build", BUILD_DIR, "-j2"]):
        r = subprocess.run(cmd)
        if r.returncode != 0:
            return r.returncode
    return 0


def relative_error(got, want):
    scale = max(float(np.max(np.abs(want.astype(np.float64)))), 1e-30)
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / scale


class HaloTest(unittest.TestCase):
    backend = None
    tc = None

    def build_halo(self, out):
        """Builds a generated folder against HALO's headers and the backend's library, with
        odlactest's flags but -pedantic: HALO's odla_value.h has an anonymous union (C11)."""
        exe = os.path.join(out, "run")
        lib = library(self.backend)
        sources = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
        subprocess.run([self.tc.cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
                        "-I", os.path.join(HALO_DIR, "ODLA", "include"), *sources, lib,
                        "-Wl,-rpath," + os.path.dirname(lib), "-lm", "-o", exe], check=True)
        return exe

    def reference_outputs(self, model, work, data_sets):
        out = os.path.join(work, "reference")
        r = self.tc.compile(model, out, "--emit-main")
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = os.path.join(out, "run")
        self.tc.build(out, exe)
        return [odlactest.run_data_set(exe, ds, os.path.join(work, "ref_" + os.path.basename(ds)))
                for ds in data_sets]

    def check_model(self, name):
        where, levels, refusals = MODELS[name]
        folder = model_folder(name, where)
        model = os.path.join(folder, "model.onnx")
        data_sets = odlactest.data_sets(folder)
        with tempfile.TemporaryDirectory() as work:
            refusal = refusals.get(self.backend, RUN)
            reference = None if refusal else self.reference_outputs(model, work, data_sets)
            for level in levels:
                with self.subTest(model=name, level=level):
                    out = os.path.join(work, "halo" + level)
                    r = self.tc.compile(model, out, "--backend=" + self.backend, level,
                                        "--emit-main")
                    if refusal:
                        self.assertEqual(r.returncode, 1, "odlac accepted what the manifest "
                                         "must refuse")
                        self.assertIn(refusal, r.stderr)
                        self.assertFalse(os.path.exists(out), "a refused compile left output")
                        continue
                    self.assertEqual(r.returncode, 0, r.stderr)
                    exe = self.build_halo(out)
                    for ds, (ref, want) in zip(data_sets, reference):
                        got, _ = odlactest.run_data_set(
                            exe, ds, os.path.join(work, level + "_" + os.path.basename(ds)))
                        for i, (g, rf, w) in enumerate(zip(got, ref, want)):
                            self.assertEqual((g.dtype, g.shape), (rf.dtype, rf.shape))
                            err = relative_error(g, rf)
                            print("%s %s %s %s output %d: %.2e of the reference backend's "
                                  "largest value" % (self.backend, name, level,
                                                     os.path.basename(ds), i, err))
                            self.assertLessEqual(err, REF_RTOL[self.backend],
                                                 "%s output %d against the reference backend"
                                                 % (os.path.basename(ds), i))
                            self.assertTrue(np.allclose(g, w, rtol=TORCH_RTOL, atol=TORCH_ATOL),
                                            "%s output %d against PyTorch (tests/zoo's tolerance): max abs error %.3g"
                                            % (os.path.basename(ds), i,
                                               np.max(np.abs(g - w))))

    def test_mlp(self):
        self.check_model("mlp")

    def test_cnn_basic(self):
        self.check_model("cnn_basic")

    def test_cnn(self):
        self.check_model("cnn")

    def test_resnet18(self):
        self.check_model("resnet18")

    def test_transformer_block(self):
        self.check_model("transformer_block")

    @unittest.skipUnless(os.path.isdir(NODE_TESTS), "no libonnx-testdata")
    def test_node_tests(self):
        """Every ONNX node test odlac accepts for the backend passes; the rest are refused."""
        lib = library(self.backend)
        with tempfile.TemporaryDirectory() as work:
            results = os.path.join(work, "results.json")
            subprocess.run([sys.executable, os.path.join(ROOT, "tests", "conformance",
                                                         "run_conformance.py"),
                            "--odlac", self.tc.odlac, "--odlac-flag=--backend=" + self.backend,
                            "--backend", self.backend, "--backend-lib", lib,
                            "--link-extra", "-Wl,-rpath,%s -lm" % os.path.dirname(lib),
                            "--include", os.path.join(HALO_DIR, "ODLA", "include"),
                            "--suites", "node", "--xfail", os.path.join(work, "none.txt"),
                            "--jobs", "2", "--results", results], capture_output=True)
            with open(results, encoding="utf-8") as f:
                tests = json.load(f)["tests"]
        # Tests the reference backend fails too are odlac's (or the test's), not the backend's.
        odlacs = set()
        with open(os.path.join(ROOT, "tests", "conformance", "xfail_reference.txt"),
                  encoding="utf-8") as f:
            for line in f:
                if line.startswith("node/"):
                    odlacs.add(line.split(":", 1)[0][len("node/"):])
        known = KNOWN_FAILURES.get(self.backend, {})
        status = {}
        for t in tests:
            status.setdefault(t["status"], []).append(t)
        print("%s on ONNX's node tests: %s" % (self.backend, ", ".join(
            "%d %s" % (len(v), k) for k, v in sorted(status.items()))))
        failed = [t for t in tests if t["status"] not in ("pass", "rejected")
                  and t["name"] not in odlacs and t["name"] not in known]
        self.assertEqual("\n".join("%s: %s: %s" % (t["name"], t["status"], t["reason"])
                                   for t in failed), "", "node tests the manifest claims fail")
        fixed = [t["name"] for t in tests if t["status"] in ("pass", "rejected")
                 and t["name"] in known]
        self.assertEqual(fixed, [], "known failures that no longer fail: drop them")
        self.assertGreater(len(status.get("pass", [])), 0, "the manifest claims no node test")


# What HALO's oneDNN backend is compiled for (tests/halo/backends/CMakeLists.txt, dnnl_flags).
AVX512_FLAGS = ("avx512f", "avx512bw", "avx512dq", "avx512vl")


def missing_cpu_flags(flags):
    """The flags of `flags` that /proc/cpuinfo does not list for this CPU."""
    try:
        with open("/proc/cpuinfo") as f:
            have = next((line.split(":", 1)[1].split() for line in f
                         if line.startswith("flags")), [])
    except OSError:
        return list(flags)
    return [f for f in flags if f not in have]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="store_true", help="build HALO's backends")
    ap.add_argument("--backend", choices=sorted(LIBRARIES), help="test one backend")
    args, rest = ap.parse_known_args()
    if not HALO_DIR or not os.path.isdir(os.path.join(HALO_DIR, "ODLA", "platforms")):
        print("skipped: HALO's ODLA sources are not here (HALO_ODLA_DIR='%s'; configure with "
              "-DHALO_ODLA_DIR=/path/to/halo-odla, the folder holding ODLA/platforms)" % HALO_DIR)
        return SKIP
    if args.build:
        return build_backends()
    if not args.backend:
        ap.error("--build or --backend NAME")
    if not os.path.exists(library(args.backend)):
        print("%s is missing: run the halo.build test first" % library(args.backend))
        return 1
    missing = missing_cpu_flags(AVX512_FLAGS) if args.backend.startswith("halo-dnnl") else []
    if missing:
        print("skipped: %s is HALO's oneDNN backend, built for AVX-512 as HALO builds it, and "
              "this CPU lacks %s: its programs would die of SIGILL" %
              (library(args.backend), ", ".join(missing)))
        return SKIP
    HaloTest.backend = args.backend
    HaloTest.tc = odlactest.Toolchain()
    prog = unittest.main(argv=[sys.argv[0], "-v", *rest], exit=False)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
