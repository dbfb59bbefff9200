#!/usr/bin/python3
"""The sanitize build's conformance subset (test conformance.sanitize, docs/testing.md): for
every ONNX op type in the test data, the smallest test folder that uses it, so that each import
rule and reference kernel the suite reaches runs at least once under ASan+UBSan, in a tenth of
the whole suite's time. Runs run_conformance.py on those folders with the arguments given.

Usage: sanitize_subset.py [run_conformance.py arguments...]"""
import os
import re
import sys

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_conformance  # noqa: E402


def subset(data_root, suites):
    """'suite/name' keys: per op type, the folder with the smallest model that uses it."""
    smallest = {}
    for suite in suites:
        root = os.path.join(data_root, suite)
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name, "model.onnx")
            try:
                ops = {n.op_type for n in onnx.load(path).graph.node}
            except Exception:  # no model, or one libonnx cannot read: the full suite's business
                continue
            size = os.path.getsize(path)
            for op in ops:
                if op not in smallest or size < smallest[op][0]:
                    smallest[op] = (size, suite + "/" + name)
    return sorted({key for _, key in smallest.values()})


def main(argv):
    args = run_conformance.parse_args(argv)
    keys = subset(args.data, args.suites)
    print("conformance subset: %d folders, the smallest for each of the op types" % len(keys))
    return run_conformance.main(argv + ["--filter", "^(%s)$" % "|".join(map(re.escape, keys))])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
