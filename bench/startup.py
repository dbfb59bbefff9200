"""Start-up and latency of the three execution modes (odlac --exec-mode) on the reference
backend, side by side: compile (build and compile the graph in NAME_create), load
(NAME_create loads the executable NAME_store wrote) and interpret (each run executes the ops
as it calls them). For each model it compiles the three programs with --emit-main, writes
the stored executable once (--store), runs each program RUNS times on the model's first data
set, and prints the medians of each mode's NAME_create time, first run (which pays for
paging in a mapped executable's weights) and later runs' latency. It also
checks that the three modes' outputs are bit-identical and match the data set's expected
outputs (from PyTorch) within 1e-3 relative, 1e-4 absolute.

usage: /usr/bin/python3 bench/startup.py --build DIR [--models m1,m2] [--runs N]
  DIR is a CMake build folder with odlac and libodla_reference built. Models are folders
  with model.onnx and test_data_set_0/: names in models/ or in ~/.cache/odlac/models
  (models/export_zoo.py), default: cnn and resnet50 when exported."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools"))
import odlactest  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ZOO = os.path.expanduser("~/.cache/odlac/models")
MODES = ("compile", "load", "interpret")


def model_dir(name):
    for base in (os.path.join(ROOT, "models"), ZOO):
        if os.path.isfile(os.path.join(base, name, "model.onnx")):
            return os.path.join(base, name)
    sys.exit(f"startup.py: no model '{name}' in models/ or {ZOO}")


def run_program(exe, inputs, outdir, *extra):
    r = subprocess.run([exe, *extra, "--repeat", "1", *inputs, "-o", outdir],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"startup.py: {exe} failed: {r.stderr.strip()}")
    m = re.search(r"startup_ms create=([0-9.]+) first_run=([0-9.]+)", r.stdout)
    latency = float(re.search(r"latency_ms median=([0-9.]+)", r.stdout).group(1))
    return float(m.group(1)), float(m.group(2)), latency


def bench_model(name, build, runs, work):
    mdir = model_dir(name)
    ds = os.path.join(mdir, "test_data_set_0")
    inputs = sorted(os.path.join(ds, f) for f in os.listdir(ds) if f.startswith("input_"))
    odlac = os.path.join(build, "compiler", "driver", "odlac")
    lib = os.path.join(build, "runtime_stubs", "reference", "libodla_reference.a")
    results, outputs = {}, {}
    os.makedirs(os.path.join(work, name))
    for mode in MODES:
        out = os.path.join(work, name, mode)
        r = subprocess.run([odlac, os.path.join(mdir, "model.onnx"), "-o", out, "--emit-main",
                            f"--exec-mode={mode}"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"startup.py: odlac failed on {name} ({mode}): {r.stderr.strip()}")
        exe = os.path.join(out, "run")
        sources = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
        subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-O2", "-I",
                        os.path.join(ROOT, "runtime_stubs", "include"), *sources, lib, "-lm",
                        "-o", exe], check=True)
        res = os.path.join(work, name, mode + "_out")
        if mode == "load":
            run_program(exe, inputs, res, "--store")
        samples = [run_program(exe, inputs, res) for _ in range(runs)]
        results[mode] = tuple(statistics.median(s[k] for s in samples) for k in range(3))
        outputs[mode] = res
    for mode in MODES[1:]:
        for f in sorted(os.listdir(outputs["compile"])):
            with open(os.path.join(outputs["compile"], f), "rb") as a, \
                    open(os.path.join(outputs[mode], f), "rb") as b:
                if a.read() != b.read():
                    sys.exit(f"startup.py: {name}: {mode} mode's {f} differs from compile mode's")
    got, want = odlactest.run_data_set(os.path.join(work, name, "compile", "run"), ds,
                                       os.path.join(work, name, "check"))
    err = odlactest.max_error(got, want, 1e-3, 1e-4)
    if err is not None:
        sys.exit(f"startup.py: {name}: outputs differ from the data set: {err}")
    size = os.path.getsize(os.path.join(work, name, "load", "net.odlx"))
    return results, size


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--models", default=None)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    models = args.models.split(",") if args.models else \
        ["cnn"] + (["resnet50"] if os.path.isdir(os.path.join(ZOO, "resnet50")) else [])
    print(f"{'model':<12} {'mode':<10} {'create ms':>10} {'1st run ms':>11} {'run ms':>10}"
          f"   (median of {args.runs} processes)")
    with tempfile.TemporaryDirectory() as work:
        for name in models:
            results, size = bench_model(name, os.path.abspath(args.build), args.runs, work)
            for mode in MODES:
                create, first, latency = results[mode]
                print(f"{name:<12} {mode:<10} {create:>10.3f} {first:>11.3f} {latency:>10.3f}")
            print(f"{name:<12} stored executable {size} bytes; load/compile start-up "
                  f"{results['load'][0] / results['compile'][0]:.3g}x; outputs bit-identical")


if __name__ == "__main__":
    main()
