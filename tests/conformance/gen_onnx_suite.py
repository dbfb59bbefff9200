#!/usr/bin/env python3
"""Writes ONNX's backend test suite of the installed onnx package (1.23 from PyPI) as test
folders that run_conformance.py reads: DIR/<suite>/<test>/model.onnx and
test_data_set_0/{input,output}_<i>.pb, plus DIR/suite.json.

Run it with the project venv's python (scripts/install-deps.sh makes it). The onnx wheel ships
no node/ data, only the Python generators of the node tests; this script runs them once:

  node               onnx.backend.test.case.node.collect_testcases(), every opset's tests
  simple             onnx.backend.test.case.model.collect_testcases(), kind 'simple'
  real               the same, kind 'real': their URLs name the wheel's data/light/ models,
                     run on the input ONNX's own runner makes for them (Runner.
                     generate_dummy_data, not random) against data/light/*_output_0.pb
  pytorch-converted  copied from the wheel's onnx/backend/test/data/
  pytorch-operator   likewise

Folders are written the way onnx/backend/test/cmd_tools.py (generate-data) writes them. The
generators draw from numpy's global generator; it is seeded once, so with the pinned onnx and
numpy the output is byte-identical from run to run. DIR is rebuilt only when suite.json says it
came from another onnx, numpy or version of this script; it is written beside DIR and renamed
into place, so an interrupted run never leaves a half suite.

suite.json: {"onnx", "numpy", "generator", "suites": {suite: [tests]}, "tolerances":
{"suite/test": {"rtol", "atol"}}}: each test's tolerances from its TestCase.
"""

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper

SUITES = ("node", "pytorch-converted", "pytorch-operator", "real", "simple")
SHIPPED = ("pytorch-converted", "pytorch-operator")  # data folders the wheel ships as they are
ONNX_DIR = os.path.dirname(os.path.abspath(onnx.__file__))
DATA_DIR = os.path.join(ONNX_DIR, "backend", "test", "data")
SEED = 0


def generator_id():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def serialize_value(value, vi):
    """One input or output as cmd_tools writes it: by the graph value's declared kind."""
    t = vi.type
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, vi.name)
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, vi.name)
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, vi.name)
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(value, vi.name)


def write_folder(folder, model, data_sets):
    os.makedirs(folder)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for i, (inputs, outputs) in enumerate(data_sets):
        set_dir = os.path.join(folder, "test_data_set_%d" % i)
        os.makedirs(set_dir)
        for kind, values, vis in (("input", inputs, model.graph.input),
                                  ("output", outputs, model.graph.output)):
            for j, value in enumerate(values):
                with open(os.path.join(set_dir, "%s_%d.pb" % (kind, j)), "wb") as f:
                    f.write(serialize_value(value, vis[j]).SerializeToString())


def real_data_set(case):
    """The light model a 'real' case names, its input and its stored expected output, the
    way onnx.backend.test.runner prepares them (use_dummy)."""
    from onnx.backend.test.runner import Runner

    prefix = "onnx/backend/test/data/light/"
    if not case.url.startswith(prefix):
        raise SystemExit("%s: url %s is not a model the wheel ships" % (case.name, case.url))
    path = os.path.join(DATA_DIR, "light", case.url[len(prefix):])
    model = onnx.load(path)
    inits = {t.name for t in model.graph.initializer}
    inputs = [Runner.generate_dummy_data(x, seed=0, name=case.model_name, random=False)
              for x in model.graph.input if x.name not in inits]
    outputs = []
    for i in range(len(model.graph.output)):
        outputs.append(numpy_helper.to_array(
            onnx.load_tensor(os.path.splitext(path)[0] + "_output_%d.pb" % i)))
    return model, [(inputs, outputs)]


def generate(out):
    from onnx.backend.test.case import model as model_cases
    from onnx.backend.test.case import node as node_cases

    np.random.seed(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own overflow warnings (Cast...)
        cases = list(node_cases.collect_testcases()) + list(model_cases.collect_testcases())
    suites = {s: [] for s in SUITES}
    tolerances = {}
    for case in cases:
        if case.kind not in suites:
            raise SystemExit("%s: unknown test kind %r" % (case.name, case.kind))
        if case.kind == "real":
            model, data_sets = real_data_set(case)
        else:
            model, data_sets = case.model, case.data_sets
        write_folder(os.path.join(out, case.kind, case.name), model, data_sets)
        suites[case.kind].append(case.name)
        tolerances["%s/%s" % (case.kind, case.name)] = {"rtol": case.rtol, "atol": case.atol}
    for suite in SHIPPED:
        src = os.path.join(DATA_DIR, suite)
        for name in sorted(os.listdir(src)):
            shutil.copytree(os.path.join(src, name), os.path.join(out, suite, name))
            suites[suite].append(name)
    return {s: sorted(names) for s, names in suites.items()}, tolerances


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="the suite folder to write (e.g. build/onnx-1.23)")
    p.add_argument("--force", action="store_true", help="rewrite it even when up to date")
    args = p.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    # Two ctest runs at once must not write the same folder: the second waits, then finds it
    # up to date.
    with open(out + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return write_suite(out, args.force)


def write_suite(out, force):
    stamp = {"onnx": onnx.__version__, "numpy": np.__version__, "generator": generator_id()}
    try:
        with open(os.path.join(out, "suite.json"), encoding="utf-8") as f:
            old = json.load(f)
        if not force and all(old.get(k) == v for k, v in stamp.items()):
            print("%s is up to date (onnx %s)" % (out, onnx.__version__))
            return 0
    except (OSError, ValueError):
        pass

    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    suites, tolerances = generate(tmp)
    stamp.update(suites=suites, tolerances=tolerances)
    with open(os.path.join(tmp, "suite.json"), "w", encoding="utf-8") as f:
        json.dump(stamp, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print("wrote %s: onnx %s, %s" % (out, onnx.__version__, ", ".join(
        "%d %s" % (len(v), s) for s, v in suites.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
