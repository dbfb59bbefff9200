#!/usr/bin/env python3
"""odlac verify over ONNX 1.23's node tests (test conformance.verify): every STEP-th folder
that the reference backend passes (not in its expected-failure list) is verified on its own
test inputs with the installed odlac (`cmake --install` into a temporary prefix), twice:
against ONNX Runtime, and, with --dnnl-xfail, the oneDNN backend's -O3 build against the
reference backend's evaluation of the model. Against ONNX Runtime a mismatch fails the test
unless `ort_differs.txt` lists the folder with the reason (there ONNX Runtime's output differs
from ONNX's own expected output, which odlac matches: the conformance runs check that); a
listed folder that agrees fails it too, so that the list stays true. Against the reference
backend every mismatch fails it. Folders ONNX Runtime cannot load or run, and models odlac
compiles only with flags (symbolic dims, sequences), are counted, not failures.

Usage: verify_sweep.py --suite DIR --build-dir BUILD --python VENV_PYTHON --xfail FILE
                       --ort-differs FILE [--dnnl-xfail FILE] [--step N]"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile


def listed(path):
    """The folders a list names, each line 'folder: reason' ('#' lines are comments)."""
    with open(path) as f:
        return {l.split(":")[0].strip() for l in f if l.strip() and not l.startswith("#")}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for a in ("--suite", "--build-dir", "--python", "--xfail", "--ort-differs"):
        p.add_argument(a, required=True)
    p.add_argument("--dnnl-xfail", help="the dnnl backend's expected failures: verify its "
                   "builds against the reference backend too")
    p.add_argument("--step", type=int, default=15)
    args = p.parse_args(argv)
    work = tempfile.mkdtemp(prefix="odlac-verify-sweep-")
    try:
        prefix = os.path.join(work, "prefix")
        subprocess.run(["cmake", "--install", args.build_dir, "--prefix", prefix], check=True,
                       capture_output=True)
        env = dict(os.environ, ODLAC_CACHE_DIR=os.path.join(work, "cache"),
                   ODLAC_PYTHON=args.python)
        skip, differs = listed(args.xfail), listed(args.ort_differs)
        folders = sorted("node/" + d for d in os.listdir(os.path.join(args.suite, "node")))
        folders = [f for f in folders[::args.step] if f not in skip]

        def verify(folder, options=(), against="onnxruntime"):
            d = os.path.join(args.suite, folder)
            r = subprocess.run([os.path.join(prefix, "bin", "odlac"), "verify", *options,
                                os.path.join(d, "model.onnx"), "--against", against,
                                "--inputs", d], capture_output=True, text=True, env=env)
            if r.returncode == 0:
                return folder, "agrees", ""
            if "outputs differ" in r.stdout:
                return folder, "differs", r.stdout.strip().splitlines()[-2]
            return folder, "not run", (r.stderr.strip().splitlines() or [""])[-1][:160]

        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            results = list(pool.map(verify, folders))
        bad = []
        for folder, verdict, detail in results:
            if verdict == "differs" and folder not in differs:
                bad.append(f"{folder}: differs from ONNX Runtime: {detail}")
            if verdict == "agrees" and folder in differs:
                bad.append(f"{folder}: agrees with ONNX Runtime now: drop it from "
                           f"{os.path.basename(args.ort_differs)}")
        counts = {v: sum(r[1] == v for r in results) for v in ("agrees", "differs", "not run")}
        print(f"odlac verify against ONNX Runtime on {len(results)} ONNX 1.23 node tests "
              f"(every {args.step}th passing one): {counts['agrees']} agree, {counts['differs']} "
              f"differ (listed: ONNX Runtime differs from ONNX's expected output), "
              f"{counts['not run']} not run (ONNX Runtime cannot load or run them, or they need "
              f"flags)")
        for folder, verdict, detail in results:
            if verdict != "agrees":
                print(f"  {folder}: {verdict}: {detail}")
        if args.dnnl_xfail:
            skip_dnnl = listed(args.dnnl_xfail)
            on_dnnl = [f for f in folders if f not in skip_dnnl]
            with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                dnnl = list(pool.map(lambda f: verify(f, ("--backend", "dnnl", "-O3"),
                                                      "reference"), on_dnnl))
            counts = {v: sum(r[1] == v for r in dnnl) for v in ("agrees", "differs", "not run")}
            print(f"odlac verify --backend dnnl -O3 against the reference backend on "
                  f"{len(dnnl)} of them: {counts['agrees']} agree, {counts['differs']} differ, "
                  f"{counts['not run']} not run")
            for folder, verdict, detail in dnnl:
                if verdict != "agrees":
                    print(f"  {folder}: {verdict}: {detail}")
                if verdict == "differs":
                    bad.append(f"{folder}: the dnnl build differs from the reference backend: "
                               f"{detail}")
        for b in bad:
            print("FAIL", b)
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
