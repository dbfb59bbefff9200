"""Golden test of emitted C (STYLE 7): compiles tests/golden/tiny with odlac, compares every
generated file with the checked-in copy under tiny/expected/, then builds the C with gcc and
clang under -std=c99 -pedantic -Wall -Wextra -Werror, runs it, and checks the output against
the numpy reference in tiny/test_data_set_0 (written by make_tiny.py).

Usage: check_golden.py --odlac BIN --lib LIBODLA_REFERENCE_A --include DIR [--update]
--update rewrites the expected files after a deliberate change to the generated code."""
import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "tiny")
EXPECTED = os.path.join(MODEL, "expected")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--odlac", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--update", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="odlac-golden-")
    try:
        out = os.path.join(work, "out")
        subprocess.run([args.odlac, os.path.join(MODEL, "model.onnx"), "--name", "tiny",
                        "--emit-main", "-o", out], check=True)
        failures = 0
        if args.update:
            shutil.rmtree(EXPECTED, ignore_errors=True)
            shutil.copytree(out, EXPECTED, ignore=shutil.ignore_patterns(".odlac-outputs-tiny"))
            print("updated", EXPECTED)
        # (.odlac-outputs-tiny, the list of what the compile wrote, is not generated code)
        names = (set(os.listdir(out)) | set(os.listdir(EXPECTED))) - {".odlac-outputs-tiny"}
        for name in sorted(names):
            got_path, want_path = os.path.join(out, name), os.path.join(EXPECTED, name)
            if not os.path.exists(got_path) or not os.path.exists(want_path):
                print(f"FAIL {name}: present in only one of generated/expected")
                failures += 1
                continue
            got, want = open(got_path).read(), open(want_path).read()
            if got != want:
                failures += 1
                print(f"FAIL {name} differs from the golden copy:")
                sys.stdout.writelines(difflib.unified_diff(
                    want.splitlines(True), got.splitlines(True), "expected/" + name,
                    "generated/" + name, n=2))
        expected = numpy_helper.to_array(
            onnx.load_tensor(os.path.join(MODEL, "test_data_set_0", "output_0.pb")))
        for cc in ("gcc", "clang"):
            if not shutil.which(cc):
                print(f"skip {cc}: not installed")
                continue
            exe = os.path.join(work, "tiny_" + cc)
            sources = [os.path.join(out, f) for f in sorted(os.listdir(out)) if f.endswith(".c")]
            subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2",
                            "-I", args.include, *sources, args.lib, "-lm", "-o", exe], check=True)
            res = os.path.join(work, "res_" + cc)
            os.makedirs(res)
            subprocess.run([exe, os.path.join(MODEL, "test_data_set_0", "input_0.pb"), "-o", res],
                           check=True)
            got = numpy_helper.to_array(onnx.load_tensor(os.path.join(res, "output_0.pb")))
            err = float(np.max(np.abs(got - expected)))
            ok = got.shape == expected.shape and np.allclose(got, expected, rtol=1e-5, atol=1e-6)
            print(f"{'ok  ' if ok else 'FAIL'} {cc}: built with -Werror, max abs error {err:.3g}")
            failures += not ok
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
