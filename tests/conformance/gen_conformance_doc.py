#!/usr/bin/python3
"""Regenerates docs/conformance.md from the results JSON files that run_conformance.py
writes (--results), one per run (suite set, engine, backend, -O level): pass counts per
suite set, suite and run, ONNX Runtime's counts on the same folders beside odlac's, and a
per-op support table for each node suite.

Usage: gen_conformance_doc.py RESULTS.json [RESULTS.json ...] [-o docs/conformance.md]

The output depends only on the statuses and reasons in the results (not on timings or
paths), so regenerating from the same results gives identical text.
"""

import argparse
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
STATUSES = ("pass", "rejected", "crash", "cc-error", "run-error", "mismatch", "bad-test")
SET_ORDER = ("onnx-1.23", "debian")  # the newest suite first
BACKEND_ORDER = ("reference", "dnnl")
MAX_REASONS = 4
REASON_WIDTH = 72

# What each suite set holds, for the reader.
SET_NOTES = {
    "debian": "Debian 12's `libonnx-testdata` package: the data folders of ONNX 1.12 "
              "(`/usr/share/libonnx-testdata/data/{node,pytorch-converted,pytorch-operator,"
              "simple}`). Tolerance: ONNX 1.12's, rtol = 1e-3 and atol = 1e-7 for every "
              "floating-point type.",
    "onnx-1.23": "ONNX 1.23's backend suite from the PyPI wheel (`onnx==1.23.0`, pinned in "
                 "`scripts/pypi-requirements.txt`). The wheel ships no node data, only its "
                 "generators: `tests/conformance/gen_onnx_suite.py` writes `node` (every "
                 "opset's node tests) and `simple` from them, the way ONNX's `cmd_tools.py` "
                 "does, byte-identical from run to run; `pytorch-converted` and "
                 "`pytorch-operator` are the wheel's folders as they are; `real` holds "
                 "ONNX's nine model tests (AlexNet, DenseNet-121, Inception v1 and v2, "
                 "ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512), whose URLs name the "
                 "wheel's `data/light/` models: they run on the input ONNX's own runner "
                 "makes for them against the stored `light_*_output_0.pb`, so they need no "
                 "download. Tolerance: ONNX 1.23's, each test's own (rtol = 1e-3 and "
                 "atol = 1e-7 except DenseNet-121's rtol = 2e-3), with rtol at least 2^-6 "
                 "(two bfloat16 ulps) for bfloat16 outputs, as its runner does.",
}


def load(paths):
    """Returns {suite_set: [run]}, each run a dict with label, engine, backend, level, data
    and idx ({(suite, name): test})."""
    sets = collections.defaultdict(list)
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as e:
            sys.exit("%s: %s (run `ctest -L conformance` with -DODLAC_CONFORMANCE=full and "
                     "`cmake --build build --target conformance_ort` first)" % (path, e))
        set_name = data.get("suite_set", "debian")
        flags = data.get("odlac_flags", [])
        levels = [f[2:] for f in flags if re.fullmatch(r"-O\d", f)]
        run = {"engine": data.get("engine", "odlac"), "backend": data.get("backend"),
               "level": levels[-1] if levels else "2", "data": data,
               "idx": {(t["suite"], t["name"]): t for t in data["tests"]}}
        if run["engine"] == "ort":
            run["label"] = "ONNX Runtime " + data["label"].split()[-1]
        else:
            run["label"] = "%s -O%s" % (run["backend"], run["level"])
        if any(r["label"] == run["label"] for r in sets[set_name]):
            sys.exit("%s: run '%s' of %s given twice" % (path, run["label"], set_name))
        sets[set_name].append(run)
    for runs in sets.values():
        runs.sort(key=run_order)
    return sets


def run_order(r):
    """odlac's runs by backend (reference first) and -O level, then ONNX Runtime."""
    backend = r["backend"] or ""
    rank = BACKEND_ORDER.index(backend) if backend in BACKEND_ORDER else len(BACKEND_ORDER)
    return (r["engine"] == "ort", rank, backend, r["level"])


def pct(n, total):
    return "%d/%d (%.1f%%)" % (n, total, 100.0 * n / total) if total else "–"


def cell(text):
    return text.replace("|", "\\|")


def short_reason(t):
    """A failure reason with the test-specific details (numbers, data set, source
    positions) removed, so that equal causes group together."""
    status, reason = t["status"], t["reason"]
    if status == "mismatch":
        return "mismatch"
    reason = re.sub(r"^test_data_set_\d+:? ", "", reason)
    reason = re.sub(r"graph (input|output) '[^']*'", r"graph \1", reason)
    reason = re.sub(r" \([^()]*\)$", "", reason)  # trailing parenthetical detail
    reason = re.sub(r"^\S+\.c:\d+(:\d+)?: ", "", reason)  # compiler positions
    text = "%s: %s" % (status, reason) if reason else status
    if len(text) > REASON_WIDTH:
        text = text[:REASON_WIDTH - 1].rstrip() + "…"
    return text


def reasons_summary(tests):
    counts = collections.Counter(short_reason(t) for t in tests if t["status"] != "pass")
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = ["%s (×%d)" % (r, n) if n > 1 else r for r, n in ordered[:MAX_REASONS]]
    if len(ordered) > MAX_REASONS:
        parts.append("+%d more" % (len(ordered) - MAX_REASONS))
    return "; ".join(parts)


def merged_reasons(runs, keys):
    """The failure reasons of odlac's runs over keys: once when every run fails alike,
    else per run."""
    per_run = []
    for r in runs:
        why = reasons_summary([r["idx"][k] for k in keys if k in r["idx"]])
        if why:
            per_run.append((r["label"], why))
    if not per_run:
        return ""
    if len(per_run) == len(runs) and len({w for _, w in per_run}) == 1:
        return per_run[0][1]
    return " / ".join("%s: %s" % lw for lw in per_run)


def tested_ops(t):
    """The op types a node test exercises: the ops of its main graph (not those inside Loop,
    Scan or If bodies), less the Constant nodes that only feed them (a model made of
    Constant alone tests Constant)."""
    ops = [o for o in t.get("op_types", []) if o != "Constant"]
    return ops or list(t.get("op_types", []))


def is_expanded(name):
    return name.endswith("_expanded") or "_expanded_" in name


def set_title(runs):
    return runs[0]["data"].get("suite_title", "Debian's libonnx-testdata (ONNX 1.12)")


def set_suites(runs):
    suites = []
    for r in runs:
        for s in r["data"].get("all_suites", r["data"].get("suites", [])):
            if s not in suites:
                suites.append(s)
    return suites


def render_set(w, set_name, runs):
    odlac = [r for r in runs if r["engine"] == "odlac"]
    keys = sorted(set().union(*(set(r["idx"]) for r in runs)))
    labels = [r["label"] for r in runs]
    w("## %s" % set_title(runs))
    w("")
    w(SET_NOTES.get(set_name, ""))
    for r in runs:
        d = r["data"]
        if d.get("filter") or sorted(d.get("suites", [])) != sorted(set_suites(runs)):
            w("")
            w("Note: the '%s' results come from a partial run (suites %s, filter %s)."
              % (r["label"], ",".join(d.get("suites", [])), d.get("filter")))
    w("")

    w("### Pass counts")
    w("")
    w("| suite | folders | " + " | ".join(labels) + " |")
    w("|---|--:|" + "--:|" * len(runs))
    for suite in set_suites(runs) + ["all"]:
        in_suite = [k for k in keys if suite in ("all", k[0])]
        row = []
        for r in runs:
            ts = [r["idx"][k] for k in in_suite if k in r["idx"]]
            row.append(pct(sum(t["status"] == "pass" for t in ts), len(ts)))
        label = "**all**" if suite == "all" else suite
        w("| %s | %d | %s |" % (label, len(in_suite), " | ".join(row)))
    w("")

    w("### Tests by status")
    w("")
    w("| status | " + " | ".join(labels) + " |")
    w("|---|" + "--:|" * len(runs))
    for status in STATUSES:
        counts = [sum(t["status"] == status for t in r["idx"].values()) for r in runs]
        if any(counts):
            w("| %s | %s |" % (status, " | ".join(str(c) for c in counts)))
    w("")

    others = [k for k in keys if k[0] != "node"
              and any(k in r["idx"] and r["idx"][k]["status"] != "pass" for r in odlac)]
    if others:
        w("### Failures outside the node suite")
        w("")
        w("| folder | odlac's reason |")
        w("|---|---|")
        for k in others:
            w("| %s/%s | %s |" % (k[0], k[1], cell(merged_reasons(odlac, [k]))))
        w("")

    per_op = collections.defaultdict(set)
    for k in keys:
        if k[0] != "node" or is_expanded(k[1]):
            continue
        for r in runs:
            if k in r["idx"]:
                for op in tested_ops(r["idx"][k]):
                    per_op[op].add(k)
    if not per_op:
        return
    w("### Ops in the node suite")
    w("")
    w("One row per ONNX op type in the `node` tests: the tests that pass in each run. A "
      "test counts for each op type of its main graph (not for ops inside Loop, Scan or If "
      "bodies, nor for Constant nodes that only feed the op under test). Tests named "
      "`*_expanded`, which spell an op's function body out in other ops, are counted in the "
      "suite totals above but not here. Status, over odlac's runs: supported (every test "
      "passes in every run), partial (some pass), unsupported (none pass); the failure "
      "reasons are odlac's, once when every run fails alike.")
    w("")
    w("| op | tests | " + " | ".join(labels) + " | status | failure reasons |")
    w("|---|--:|" + "--:|" * len(runs) + "---|---|")
    for op in sorted(per_op, key=lambda o: (o.count("."), o.lower(), o)):
        tests = sorted(per_op[op])
        row = "| %s | %d |" % (cell(op), len(tests))
        passes = []
        for r in runs:
            ts = [r["idx"][k] for k in tests if k in r["idx"]]
            passed = sum(t["status"] == "pass" for t in ts)
            row += " %d/%d |" % (passed, len(ts))
            if r["engine"] == "odlac":
                passes.append((passed, len(ts)))
        status = ("supported" if all(p == n for p, n in passes) else
                  "partial" if any(p for p, _ in passes) else "unsupported")
        w(row + " %s | %s |" % (status, cell(merged_reasons(odlac, tests))))
    w("")


def render(sets, sources):
    out = []
    w = out.append
    w("<!-- Generated by tests/conformance/gen_conformance_doc.py; do not edit by hand. -->")
    w("# ONNX conformance")
    w("")
    w("Generated by `tests/conformance/gen_conformance_doc.py %s` from the results that "
      "`tests/conformance/run_conformance.py --results` writes; the build target "
      "`conformance_doc` (`cmake --build build --target conformance_doc`) reruns it on "
      "the results of `ctest -L conformance` (configured with `-DODLAC_CONFORMANCE=full`) "
      "and of the target `conformance_ort`. Do not edit this page by hand."
      % " ".join(sources))
    w("")
    w("Every test folder of two suites is compiled by odlac, built against the backend, run "
      "on each of its data sets and compared with that suite's tolerance: |got − expected| "
      "≤ atol + rtol·|expected|; integers, bools and strings must be equal; NaNs, shapes "
      "and element types must match. Tests that cannot pass yet are listed with a reason in "
      "`tests/conformance/xfail_*.txt` (see `tests/conformance/README.md`). The ONNX Runtime "
      "column is the same runner on the same folders with ONNX Runtime (from PyPI, CPU, one "
      "thread) in odlac's place: a model it refuses to load counts as rejected. For odlac the "
      "runner flattens sequence and optional inputs and outputs of tensors into one tensor "
      "file per element (--sequence-length, --optional-absent); for ONNX Runtime it runs "
      "tensors only, so folders with sequences or optionals count as bad-test there, as do "
      "maps for every engine.")
    w("")
    w("Statuses: pass; rejected: refused at compile (or load) time with an error (an "
      "unsupported op, type or attribute); crash: odlac died or hung; cc-error: the "
      "generated C did not build; run-error: the built program failed; mismatch: wrong "
      "numbers, shape or type; bad-test: the test folder cannot be used as it is.")
    w("")
    w("## Summary")
    w("")
    names = [s for s in SET_ORDER if s in sets] + sorted(s for s in sets if s not in SET_ORDER)
    labels = []
    for r in sorted((r for s in names for r in sets[s]), key=run_order):
        if r["label"] not in labels:
            labels.append(r["label"])
    w("| suite set | folders | " + " | ".join(labels) + " |")
    w("|---|--:|" + "--:|" * len(labels))
    for s in names:
        runs = {r["label"]: r for r in sets[s]}
        keys = set().union(*(set(r["idx"]) for r in sets[s]))
        row = []
        for label in labels:
            r = runs.get(label)
            row.append(pct(sum(t["status"] == "pass" for t in r["idx"].values()),
                           len(r["idx"])) if r else "–")
        w("| %s | %d | %s |" % (set_title(sets[s]), len(keys), " | ".join(row)))
    w("")
    for s in names:
        render_set(w, s, sets[s])
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="results JSON files, one per run")
    p.add_argument("-o", "--output", default=os.path.join(REPO, "docs", "conformance.md"),
                   help="the page to write")
    args = p.parse_args(argv)
    sets = load(args.results)
    text = render(sets, sorted(os.path.basename(r) for r in args.results))
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s" % args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
