#!/usr/bin/python3
"""ONNX conformance runner: compiles every ONNX backend test with odlac, builds it against an
ODLA backend, runs every data set and compares the outputs with ONNX's tolerances.

Three suite sets: Debian's libonnx-testdata (ONNX 1.12; run it with Debian's /usr/bin/python3),
ONNX 1.23's suite from PyPI (folders written by gen_onnx_suite.py; run it with the project
venv's python) and random single-op cases checked by ONNX Runtime and ONNX's reference (written
by gen_random_suite.py; the venv's python too). With --engine ort the same folders run through ONNX Runtime instead, for
comparison. See README.md beside this file for the commands, the statuses and the
expected-failure list format.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# ONNX's backend-test tolerance (onnx/backend/test/runner: assert_similar_outputs); a test
# of ONNX 1.23 may set its own (suite.json, e.g. real/test_densenet121).
RTOL = 1e-3
ATOL = 1e-7

# One entry per suite set. data: the folder holding one subfolder per suite; suites: those
# run by default; xfail: the expected-failure list beside this script; bfloat16_rtol: the
# rtol floor for bfloat16 outputs (ONNX 1.23's runner allows two bfloat16 ulps, 2**-6; 1.12's
# has one rtol for every type); onnx: the onnx release the folders must come from (checked
# against suite.json), None for Debian's, which has no suite.json.
SuiteSet = collections.namedtuple("SuiteSet", "title data suites xfail bfloat16_rtol onnx")
SUITE_SETS = {
    "debian": SuiteSet("Debian's libonnx-testdata (ONNX 1.12)", "/usr/share/libonnx-testdata/data",
                       ("node", "pytorch-converted", "pytorch-operator", "simple"),
                       "xfail_{backend}.txt", None, None),
    "onnx-1.23": SuiteSet("ONNX 1.23 (PyPI wheel)", os.path.join(REPO, "build", "onnx-1.23"),
                          ("node", "pytorch-converted", "pytorch-operator", "real", "simple"),
                          "xfail_onnx-1.23_{backend}.txt", 2.0 ** -6, "1.23"),
    "random": SuiteSet("random single-op cases (gen_random_suite.py)",
                       os.path.join(REPO, "build", "random-ops"), ("node",),
                       "xfail_random_{backend}.txt", None, "1.23"),
}

# Statuses, in the order the summary prints them. Every status except "pass" is a failure.
STATUSES = ("pass", "rejected", "crash", "cc-error", "run-error", "mismatch", "bad-test")

# Element types compared with a tolerance, and as complex numbers; every other one (integers
# of any width, bool, string) must match exactly. By name, so that onnx 1.12, which lacks the
# newer types, reads the table too.
FLOAT_TYPES = {"FLOAT", "DOUBLE", "FLOAT16", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
               "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0", "FLOAT4E2M1", "FLOAT6E2M3",
               "FLOAT6E3M2"}
COMPLEX_TYPES = {"COMPLEX64", "COMPLEX128"}

XFAIL_HEADER = """\
# Expected failures of {title} on the '{backend}' ODLA backend.
# Read by tests/conformance/run_conformance.py --suite-set {suite_set} --backend {backend},
# at every -O level.
#
# Format: one line per test, `suite/test_name: reason`, sorted; '#' starts a comment line.
# Rules:
#   - a test that fails and is not listed fails the run (a regression or a new test);
#   - a listed test that passes also fails the run ("unexpected pass"): delete its line,
#     the list must only shrink;
#   - a crash of odlac fails the run even when the test is listed.
# Regenerate with `run_conformance.py ... --update-xfail`. A reason that starts with a
# status (rejected:, crash:, cc-error:, run-error:, mismatch:, bad-test:) is written by the
# runner and refreshed on update; any other reason is hand-written and kept for as long as
# the test still fails.
"""


# ----------------------------------------------------------------------------------------
# Running one command with a deadline


def _child_setup():
    # No core files from crashing compilers or drivers.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_cmd(cmd, timeout, cwd=None):
    """Runs cmd in its own process group; returns (returncode or None on timeout, output)."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=_child_setup)
    try:
        out, _ = proc.communicate(timeout=max(timeout, 0.1))
    except subprocess.TimeoutExpired:
        # Kill the whole group we started (cc spawns cc1/as/ld).
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
        return None, out.decode("utf-8", "replace")
    return proc.returncode, out.decode("utf-8", "replace")


def describe_exit(rc):
    if rc is None:
        return "timeout"
    if rc < 0:
        try:
            return "killed by " + signal.Signals(-rc).name
        except ValueError:
            return "killed by signal %d" % -rc
    return "exit status %d" % rc


# ----------------------------------------------------------------------------------------
# Reading a test folder


def model_op_types(model):
    """(op types of the main graph, op types found only in subgraphs such as Loop or If
    bodies), each sorted; ops of a non-default domain are prefixed with it."""
    top, nested = set(), set()

    def walk(graph, into):
        for node in graph.node:
            dom = node.domain
            into.add(node.op_type if dom in ("", "ai.onnx") else dom + "." + node.op_type)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g, nested)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        walk(g, nested)

    walk(model.graph, top)
    return sorted(top), sorted(nested - top)


def numbered(folder, prefix, suffix=""):
    """Files or folders named prefix<N>suffix in folder, sorted by N."""
    found = []
    pat = re.compile(re.escape(prefix) + r"(\d+)" + re.escape(suffix) + "$")
    for entry in os.listdir(folder):
        m = pat.match(entry)
        if m:
            found.append((int(m.group(1)), os.path.join(folder, entry)))
    return [p for _, p in sorted(found)]


class BadTest(Exception):
    pass


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor


def graph_inputs(model):
    """The graph inputs the caller feeds: those without an initializer."""
    init = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in init]


def value_kind(type_proto):
    """'tensor', 'sequence' or 'optional' (what odlac takes: a sequence or an optional of
    tensors, flattened into tensors, see flatten_value); None for any other kind."""
    which = type_proto.WhichOneof("value")
    if which in ("tensor_type", None):
        return "tensor"
    if which == "sequence_type":
        return "sequence" if value_kind(type_proto.sequence_type.elem_type) == "tensor" else None
    if which == "optional_type":
        inner = value_kind(type_proto.optional_type.elem_type)
        return "optional" if inner in ("tensor", "sequence") else None
    return None


def check_value_kinds(model, structured=True):
    """Raises BadTest when a graph input or output is of a kind the engine's driver cannot
    read or write: odlac's reads and writes TensorProto files, and the runner flattens
    sequences and optionals of tensors into them (structured); ONNX Runtime's runs tensors
    only. Returns (inputs' kinds, outputs' kinds)."""
    kinds = ([], [])
    for kind, values, out in (("input", graph_inputs(model), kinds[0]),
                              ("output", model.graph.output, kinds[1])):
        for i, v in enumerate(values):
            k = value_kind(v.type)
            if k is None or (k != "tensor" and not structured):
                raise BadTest("%s_%d.pb holds a %s value (%s), not a TensorProto"
                              % (kind, i, v.type.WhichOneof("value").replace("_type", ""),
                                 v.name))
            out.append(k)
    return kinds


def read_value(path, kind):
    """A test data file: a TensorProto, SequenceProto or OptionalProto by `kind`."""
    proto = {"tensor": onnx.TensorProto, "sequence": onnx.SequenceProto,
             "optional": onnx.OptionalProto}[kind]()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return proto


def flatten_value(proto):
    """The tensors of a test data value in the order odlac flattens it (docs/cli.md,
    --sequence-length): a tensor itself; a sequence's elements; an optional's value, none
    when absent."""
    if isinstance(proto, onnx.TensorProto):
        return [proto]
    if isinstance(proto, onnx.SequenceProto):
        if proto.elem_type != onnx.SequenceProto.TENSOR:
            raise BadTest("a sequence of a kind other than tensors")
        return list(proto.tensor_values)
    held = optional_value(proto)
    return [] if held is None else flatten_value(held)


def optional_value(proto):
    """What an OptionalProto holds (a TensorProto or a SequenceProto); None when absent."""
    field = {onnx.OptionalProto.TENSOR: "tensor_value",
             onnx.OptionalProto.SEQUENCE: "sequence_value"}.get(proto.elem_type)
    if field is None or not proto.HasField(field):
        if proto.elem_type in (onnx.OptionalProto.UNDEFINED, onnx.OptionalProto.TENSOR,
                               onnx.OptionalProto.SEQUENCE):
            return None
        raise BadTest("an optional of a kind other than a tensor or a sequence")
    return getattr(proto, field)


def static_shape(type_proto):
    """Whether a tensor type declares every dim."""
    tt = type_proto.tensor_type
    return tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim)


def data_flags(model, test_dir, kinds):
    """odlac's flags for what the model leaves to the data, from test_data_set_0: the
    lengths of sequence inputs, the optional inputs absent there, and the shapes of tensors
    (inputs or their elements) whose declared shape is not static."""
    flags = []
    sets = numbered(test_dir, "test_data_set_")
    if not sets:
        return flags
    files = numbered(sets[0], "input_", ".pb")
    for i, (v, kind) in enumerate(zip(graph_inputs(model), kinds)):
        if i >= len(files) or (kind == "tensor" and static_shape(v.type)):
            continue
        proto = read_value(files[i], kind)
        elem_type = v.type
        if kind == "optional":
            elem_type = v.type.optional_type.elem_type
            proto = optional_value(proto)
            if proto is None:
                flags.append("--optional-absent=" + v.name)
                continue
        names = [v.name]
        if isinstance(proto, onnx.SequenceProto):
            elem_type = elem_type.sequence_type.elem_type
            names = ["%s.%d" % (v.name, k) for k in range(len(proto.tensor_values))]
            flags.append("--sequence-length=%s=%d" % (v.name, len(names)))
        static = static_shape(elem_type)
        for name, t in zip(names, flatten_value(proto)):
            if not static and len(t.dims) > 0:
                flags.append("--input-shape=%s:%s" % (name, "x".join(str(d) for d in t.dims)))
    return flags


def bfloat16_positions(model):
    """The graph inputs and outputs declared bfloat16, as two sets of positions. ONNX's
    test generator (1.12) stores bfloat16 data as uint16 tensors holding the same bits;
    these positions are re-tagged before use (see retag_bfloat16)."""
    init = {t.name for t in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in init]
    bf16 = onnx.TensorProto.BFLOAT16
    return ({i for i, v in enumerate(inputs) if v.type.tensor_type.elem_type == bf16},
            {i for i, v in enumerate(model.graph.output)
             if v.type.tensor_type.elem_type == bf16})


def retag_bfloat16(tensor):
    """A uint16 TensorProto that stands for bfloat16 (same 16-bit patterns, same storage
    fields) becomes a bfloat16 one; anything else is returned unchanged."""
    if tensor.data_type == onnx.TensorProto.UINT16:
        tensor.data_type = onnx.TensorProto.BFLOAT16
    return tensor


def read_data_sets(test_dir, in_kinds, out_kinds, bf16=(set(), set()), work=None):
    """Returns [(set_name, [input paths], [expected TensorProto])] or raises BadTest.
    Inputs declared bfloat16 but stored as uint16 are rewritten, re-tagged, under work; so
    are the tensors of sequence and optional inputs, one file each, and expected sequences
    and optionals are flattened likewise (flatten_value)."""
    sets = []
    for set_dir in numbered(test_dir, "test_data_set_"):
        ins = numbered(set_dir, "input_", ".pb")
        outs = numbered(set_dir, "output_", ".pb")
        name = os.path.basename(set_dir)
        if len(ins) != len(in_kinds):
            raise BadTest("%s has %d input files, the model has %d graph inputs"
                          % (name, len(ins), len(in_kinds)))
        if len(outs) != len(out_kinds):
            raise BadTest("%s has %d output files, the model has %d graph outputs"
                          % (name, len(outs), len(out_kinds)))
        for i in sorted(bf16[0]):
            t = read_tensor(ins[i])
            if t.data_type == onnx.TensorProto.UINT16:
                fixed = os.path.join(work, "%s_input_%d.pb" % (name, i))
                with open(fixed, "wb") as f:
                    f.write(retag_bfloat16(t).SerializeToString())
                ins[i] = fixed
        flat_ins = []
        for i, (path, kind) in enumerate(zip(ins, in_kinds)):
            if kind == "tensor":
                flat_ins.append(path)
                continue
            for k, t in enumerate(flatten_value(read_value(path, kind))):
                part = os.path.join(work, "%s_input_%d_%d.pb" % (name, i, k))
                with open(part, "wb") as f:
                    f.write(t.SerializeToString())
                flat_ins.append(part)
        expected = []
        for j, (p, kind) in enumerate(zip(outs, out_kinds)):
            try:
                for t in flatten_value(read_value(p, kind)):
                    if j in bf16[1] and kind == "tensor":
                        retag_bfloat16(t)
                    numpy_helper.to_array(t)
                    expected.append(t)
            except BadTest:
                raise
            except Exception as e:  # any decode problem makes the folder unusable
                raise BadTest("%s/%s: cannot read as %s: %s"
                              % (name, os.path.basename(p), kind, str(e).splitlines()[0][:80]))
        sets.append((name, flat_ins, expected))
    if not sets:
        raise BadTest("no test_data_set_* folder")
    return sets


# ----------------------------------------------------------------------------------------
# Comparing outputs


def dtype_name(data_type):
    try:
        return onnx.TensorProto.DataType.Name(data_type).lower()
    except ValueError:
        return "type %d" % data_type


def compare(got_t, want_t, rtol, atol):
    """Returns (ok, reason, max_abs_err, max_rel_err)."""
    if got_t.data_type != want_t.data_type:
        return (False, "dtype %s, expected %s" % (dtype_name(got_t.data_type),
                                                  dtype_name(want_t.data_type)), None, None)
    got = numpy_helper.to_array(got_t)
    want = numpy_helper.to_array(want_t)
    if got.shape != want.shape:
        return (False, "shape %s, expected %s" % (list(got.shape), list(want.shape)),
                None, None)
    if got.size == 0:
        return True, "", 0.0, 0.0
    type_name = dtype_name(want_t.data_type).upper()
    if type_name not in FLOAT_TYPES | COMPLEX_TYPES:
        # Integers (4-bit and 2-bit ones are ml_dtypes types under onnx 1.23), bools,
        # strings: exact.
        if type_name == "STRING":
            bad, err, why = int(np.count_nonzero(got != want)), None, "strings"
        else:
            if want.dtype.kind == "V":  # ml_dtypes' int4, uint4, int2, uint2
                got, want = got.astype(np.int64), want.astype(np.int64)
            bad = int(np.count_nonzero(got != want))
            err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
            why = "max abs err %.3g" % err
        if bad:
            return (False, "%d/%d elements differ, %s (exact match required)"
                    % (bad, want.size, why), err, None)
        return True, "", 0.0, 0.0
    is_complex = type_name in COMPLEX_TYPES
    g = got.astype(np.complex128 if is_complex else np.float64)
    w = want.astype(np.complex128 if is_complex else np.float64)
    gnan, wnan = np.isnan(g), np.isnan(w)
    if is_complex:
        gnan, wnan = gnan | np.isnan(g.imag), wnan | np.isnan(w.imag)
    if np.any(gnan != wnan):
        return (False, "NaN pattern differs at %d/%d positions"
                % (int(np.count_nonzero(gnan != wnan)), w.size), None, None)
    finite = np.isfinite(w) & np.isfinite(g)
    # Infinities must match exactly (same position and sign).
    inf_bad = ~finite & ~wnan & (g != w)
    if np.any(inf_bad):
        return (False, "infinities differ at %d/%d positions"
                % (int(np.count_nonzero(inf_bad)), w.size), None, None)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        diff = np.where(finite, np.abs(g - w), 0.0)
        rel = np.where(finite & (w != 0), diff / np.abs(np.where(w == 0, 1, w)), 0.0)
    tol = atol + rtol * np.abs(w)
    bad = finite & (diff > tol)
    max_abs = float(diff.max())
    max_rel = float(rel.max())
    if np.any(bad):
        return (False, "%d/%d elements off, max abs err %.3g, max rel err %.3g"
                % (int(np.count_nonzero(bad)), w.size, max_abs, max_rel), max_abs, max_rel)
    return True, "", max_abs, max_rel


def tolerance(cfg, suite, name, data_type):
    """(rtol, atol) for one output: the test's own (suite.json) or ONNX's default, with the
    suite set's floor for bfloat16."""
    tol = cfg["tolerances"].get(suite + "/" + name, {})
    rtol, atol = tol.get("rtol", RTOL), tol.get("atol", ATOL)
    if cfg["bfloat16_rtol"] and data_type == onnx.TensorProto.BFLOAT16:
        rtol = max(rtol, cfg["bfloat16_rtol"])
    return rtol, atol


# ----------------------------------------------------------------------------------------
# One test

ERROR_PREFIX = "odlac: error: "
NODE_LABEL = re.compile(r"^node (?:#\d+|'.*?') \(([^,()]+), opset \d+\): ")


def rejection_reason(output, test_dir):
    """odlac's first error line, made stable: no node label (index/name, opset), no
    absolute paths, no trailing hint after '; '."""
    lines = [l for l in output.splitlines() if l.startswith(ERROR_PREFIX)]
    if not lines:
        return None
    msg = lines[0][len(ERROR_PREFIX):].replace(test_dir + "/", "")
    m = NODE_LABEL.match(msg)
    if m:
        op = m.group(1)
        msg = msg[m.end():]
        if not re.search(r"\b%s\b" % re.escape(op.split(".")[-1]), msg):
            msg = op + ": " + msg
    return msg.split("; ")[0].strip()


def first_line(output, strip=(), want=None):
    """First line of a tool's output (or the first containing want), paths stripped."""
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    if want:
        picked = [l for l in lines if want in l]
        lines = picked or lines
    line = lines[0] if lines else "(no output)"
    for s in strip:
        line = line.replace(s + "/", "").replace(s, ".")
    return line[:200]


def compile_odlac(cfg, model_path, test_dir, work, deadline):
    """Step 1 for odlac: compile the model to C. Returns (failure or None, gen folder).
    Crashes are checked first: they are never acceptable."""
    gen = os.path.join(work, "gen")
    rc, out = run_cmd([cfg["odlac"], model_path, "-o", gen, "--emit-main", "--name", "net"]
                      + cfg["odlac_flags"] + cfg.get("data_flags", []),
                      deadline - time.monotonic())
    if rc is None:
        return ("crash", "odlac timeout after %d s" % cfg["timeout"]), None
    if rc not in (0, 1):
        why = "odlac " + describe_exit(rc)
        if out.strip():
            why += ": " + first_line(out, (test_dir, work))
        return ("crash", why), None
    if rc == 1:
        reason = rejection_reason(out, test_dir)
        # The contract: exit 1 comes with an error message and leaves no output folder.
        if reason is None:
            return ("crash", "odlac exit status 1 without an 'odlac: error:' line"), None
        if os.path.exists(gen):
            return ("crash", "odlac rejected the model but left its output folder: "
                    + reason), None
        return ("rejected", reason), None
    return None, gen


def build_odlac(cfg, gen, work, deadline):
    """Step 3 for odlac: build the generated C with its driver against the backend.
    Returns (failure or None, run_set(inputs, out_dir, timeout) -> (rc, output))."""
    sources = sorted(os.path.join(gen, f) for f in os.listdir(gen) if f.endswith(".c"))
    exe = os.path.join(gen, "run")
    rc, out = run_cmd([cfg["cc"]] + cfg["cflags"] + ["-I", cfg["include"]] + sources
                      + [cfg["backend_lib"]] + cfg["link_extra"] + ["-o", exe],
                      deadline - time.monotonic())
    if rc != 0:
        return ("cc-error", "timeout" if rc is None
                else first_line(out, (gen, work), want="error")), None
    return None, lambda inputs, out_dir, timeout: run_cmd([exe] + inputs + ["-o", out_dir],
                                                           timeout)


def in_child(fn, args, timeout):
    """Calls fn(*args) -> (code, message) in a forked child, so that ONNX Runtime crashing
    or hanging fails one test, not the runner; the child inherits the imported modules.
    Returns (exit status, or -signal, or None on timeout; the message)."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the runner
        code = 70
        try:
            os.close(rfd)
            code, msg = fn(*args)
            os.write(wfd, msg.encode("utf-8", "replace"))
        finally:
            os._exit(code)
    os.close(wfd)
    end = time.monotonic() + max(timeout, 0.1)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(rfd)
            return None, ""
        time.sleep(0.01)
    with os.fdopen(rfd, "rb") as f:
        msg = f.read().decode("utf-8", "replace")
    rc = os.waitstatus_to_exitcode(status)
    return rc, ("ort: error: " + msg) if msg else ""


def load_ort(cfg, model_path, test_dir, work, deadline):
    """Step 1 for ONNX Runtime: create a session. Returns (failure or None,
    run_set(inputs, out_dir, timeout) -> (rc, output))."""
    import ort_run  # imported by main() before the pool forks its workers

    rc, out = in_child(ort_run.check, (model_path,), deadline - time.monotonic())
    if rc == ort_run.REFUSED:
        return ("rejected", out.replace("ort: error: session: ", "")
                .replace(test_dir + "/", "")), None
    if rc != 0:
        why = "onnxruntime " + describe_exit(rc)
        if out:
            why += ": " + first_line(out, (test_dir, work))
        return ("crash", why), None
    return None, lambda inputs, out_dir, timeout: in_child(
        ort_run.run, (model_path, inputs, out_dir), timeout)


def run_test(cfg, suite, name):
    """Compiles (or loads), builds, runs and checks one test folder. Returns its result."""
    start = time.monotonic()
    deadline = start + cfg["timeout"]
    test_dir = os.path.join(cfg["data_root"], suite, name)
    work = os.path.join(cfg["work"], suite, name)
    res = {"suite": suite, "name": name, "status": None, "reason": "",
           "max_abs_err": None, "max_rel_err": None, "op_types": [], "subgraph_op_types": []}

    def done(status, reason="", **extra):
        res.update(status=status, reason=reason, **extra)
        res["seconds"] = round(time.monotonic() - start, 2)
        if not cfg["keep"]:
            shutil.rmtree(work, ignore_errors=True)
        return res

    model_path = os.path.join(test_dir, "model.onnx")
    model = None
    if not os.path.isfile(model_path):
        return done("bad-test", "no model.onnx")
    try:
        model = onnx.load(model_path, load_external_data=False)
        res["op_types"], res["subgraph_op_types"] = model_op_types(model)
    except Exception as e:
        model_error = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
    else:
        model_error = None

    # 1. The engine takes the model or refuses it; odlac learns from the test data what the
    # model leaves open: symbolic dims of inputs, lengths of sequence inputs, which optional
    # inputs are absent (data_flags).
    os.makedirs(work, exist_ok=True)
    odlac = cfg["engine"] == "odlac"
    kinds = None
    if model is not None:
        try:
            kinds = check_value_kinds(model, structured=odlac)
            if odlac:
                cfg = dict(cfg, data_flags=data_flags(model, test_dir, kinds[0]))
        except BadTest as e:
            kinds = e
        except Exception as e:
            kinds = BadTest("test data: %s" % (str(e).splitlines()[0][:120] if str(e) else
                                                type(e).__name__))
    failure, made = (compile_odlac if odlac else load_ort)(cfg, model_path, test_dir, work,
                                                            deadline)
    if failure:
        return done(*failure)

    # 2. The test data (only once the engine took the model).
    if model is None:
        return done("bad-test", "model.onnx: " + model_error)
    try:
        if isinstance(kinds, BadTest):
            raise kinds
        sets = read_data_sets(test_dir, kinds[0], kinds[1], bfloat16_positions(model), work)
    except BadTest as e:
        return done("bad-test", str(e))

    # 3. odlac: build the generated C with its driver against the backend.
    run_set = made
    if odlac:
        failure, run_set = build_odlac(cfg, made, work, deadline)
        if failure:
            return done(*failure)

    # 4. Run every data set and compare every output.
    max_abs, max_rel = 0.0, 0.0
    for set_name, inputs, expected in sets:
        out_dir = os.path.join(work, "res_" + set_name)
        os.makedirs(out_dir, exist_ok=True)
        rc, out = run_set(inputs, out_dir, deadline - time.monotonic())
        if rc != 0:
            why = describe_exit(rc)
            if rc is not None and out.strip():
                why += ": " + first_line(out, (test_dir, out_dir, work))
            return done("run-error", "%s: %s" % (set_name, why))
        written = len(numbered(out_dir, "output_", ".pb"))
        if written != len(expected):
            return done("mismatch", "%s: the driver wrote %d outputs, the test data has %d "
                        "tensors (sequences and optionals flattened)"
                        % (set_name, written, len(expected)))
        for i, want in enumerate(expected):
            path = os.path.join(out_dir, "output_%d.pb" % i)
            if not os.path.isfile(path):
                return done("run-error", "%s: the driver wrote no output_%d.pb" % (set_name, i))
            try:
                got = read_tensor(path)
                numpy_helper.to_array(got)
            except Exception:
                return done("run-error", "%s: output_%d.pb is not a valid TensorProto"
                            % (set_name, i))
            rtol, atol = tolerance(cfg, suite, name, want.data_type)
            ok, why, a, r = compare(got, want, rtol, atol)
            if not ok:
                return done("mismatch", "%s output_%d: %s" % (set_name, i, why),
                            max_abs_err=a, max_rel_err=r)
            max_abs, max_rel = max(max_abs, a), max(max_rel, r)
    return done("pass", max_abs_err=max_abs, max_rel_err=max_rel)


def run_test_safe(cfg, suite, name):
    # A bug in the runner itself must not take the pool down; report it as a run problem.
    try:
        return run_test(cfg, suite, name)
    except Exception as e:
        return {"suite": suite, "name": name, "status": "bad-test",
                "reason": "runner error: %s: %s" % (type(e).__name__, e),
                "max_abs_err": None, "max_rel_err": None, "op_types": [],
                "subgraph_op_types": [], "seconds": 0}


# ----------------------------------------------------------------------------------------
# Expected-failure list


def read_xfail(path):
    """Returns ({'suite/name': reason}, header comment lines). Exits on a malformed line."""
    entries, header, in_header = {}, [], True
    if not os.path.exists(path):
        return entries, header
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if in_header and line.startswith("#"):
                header.append(line)
                continue
            in_header = False
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, reason = line.partition(": ")
            if not sep or "/" not in key or " " in key:
                sys.exit("%s:%d: expected 'suite/test_name: reason', got %r"
                         % (path, lineno, line))
            if key in entries:
                sys.exit("%s:%d: %s is listed twice" % (path, lineno, key))
            entries[key] = reason.strip()
    return entries, header


def auto_reason(r):
    return "%s: %s" % (r["status"], r["reason"]) if r["reason"] else r["status"]


def is_auto_reason(reason):
    return any(reason == s or reason.startswith(s + ":") for s in STATUSES)


def write_xfail(path, old, header, results, in_scope):
    """Rewrites the list: tests in scope get this run's failures (hand-written reasons of
    still-failing tests are kept); entries out of scope (other suites, --filter) stay."""
    entries = {k: v for k, v in old.items() if not in_scope(k)}
    for r in results:
        if r["status"] == "pass":
            continue
        key = r["suite"] + "/" + r["name"]
        prev = old.get(key)
        entries[key] = prev if prev and not is_auto_reason(prev) else auto_reason(r)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n\n")
        for key in sorted(entries):
            f.write("%s: %s\n" % (key, entries[key]))
    return len(entries)


# ----------------------------------------------------------------------------------------
# Driver


def parse_args(argv):
    cores = os.cpu_count() or 1
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--suite-set", default="debian", choices=sorted(SUITE_SETS),
                   help="which tests: Debian's libonnx-testdata or ONNX 1.23's suite (written "
                        "by gen_onnx_suite.py); picks the default --data, --suites and "
                        "--xfail and the tolerance rules")
    p.add_argument("--engine", default="odlac", choices=("odlac", "ort"),
                   help="odlac: compile, build against --backend-lib and run; ort: run the "
                        "same folders through ONNX Runtime (onnxruntime of this python), "
                        "for comparison: no expected-failure list, exit 0 unless a run broke")
    p.add_argument("--odlac", default=os.path.join(REPO, "build/compiler/driver/odlac"),
                   help="the odlac executable")
    p.add_argument("--odlac-flag", action="append", default=[], dest="odlac_flags",
                   help="extra odlac flag, e.g. -O3 (repeatable)")
    p.add_argument("--backend", default="reference",
                   help="backend name: labels the results, picks the expected-failure list")
    p.add_argument("--backend-lib",
                   default=os.path.join(REPO, "build/runtime_stubs/reference/libodla_reference.a"),
                   help="the ODLA backend library to link")
    p.add_argument("--link-extra", default="-lm",
                   help="extra link flags, space-separated (e.g. '-lm -ldnnl')")
    p.add_argument("--include", default=os.path.join(REPO, "runtime_stubs/include"),
                   help="the folder holding ODLA/odla.h")
    p.add_argument("--cc", default=os.environ.get("CC", "cc"), help="C compiler")
    p.add_argument("--cflags", default="-std=c99 -O0",
                   help="flags for the generated C (the kernels live in the backend library, "
                        "so optimizing the glue buys nothing)")
    p.add_argument("--jobs", "-j", type=int, default=cores, help="tests run in parallel")
    p.add_argument("--suites", help="comma-separated suites under --data (default: every "
                                    "suite of the suite set)")
    p.add_argument("--data", help="the folder holding the suites (default: the suite set's)")
    p.add_argument("--filter", help="only tests whose 'suite/name' matches this regex")
    p.add_argument("--timeout", type=int, default=60,
                   help="seconds per test for odlac, cc and all runs together")
    p.add_argument("--work", help="scratch folder (default: a temporary folder)")
    p.add_argument("--keep", action="store_true",
                   help="keep the scratch folder (generated C, binaries, outputs)")
    p.add_argument("--results", help="write per-test results to this JSON file")
    p.add_argument("--failures", help="write one line per failing test (suite/name: status: "
                                      "reason) to this file")
    p.add_argument("--xfail", help="expected-failure list (default: the suite set's, beside "
                                   "this script)")
    p.add_argument("--update-xfail", action="store_true",
                   help="rewrite the expected-failure list from this run's failures")
    p.add_argument("--verbose", "-v", action="store_true", help="one line per test")
    args = p.parse_args(argv)
    sset = SUITE_SETS[args.suite_set]
    args.data = args.data or sset.data
    args.suites = [s for s in (args.suites or ",".join(sset.suites)).split(",") if s]
    for s in args.suites:
        if s not in sset.suites:
            p.error("unknown suite %r of suite set %s (known: %s)"
                    % (s, args.suite_set, ", ".join(sset.suites)))
    if args.xfail is None:
        args.xfail = os.path.join(HERE, sset.xfail.format(backend=args.backend))
    if args.engine == "ort" and args.update_xfail:
        p.error("--update-xfail: ONNX Runtime runs have no expected-failure list")
    needed = [("--data", args.data)]
    if args.engine == "odlac":
        needed += [("--odlac", args.odlac), ("--backend-lib", args.backend_lib),
                   ("--include", args.include)]
    for what, path in needed:
        if not os.path.exists(path):
            p.error("%s %s does not exist" % (what, path))
    args.suite_info = read_suite_info(p, args.data, sset)
    return args


def read_suite_info(p, data, sset):
    """suite.json of a generated suite ({} for Debian's): checks that the folders come from
    the onnx release the suite set names."""
    if sset.onnx is None:
        return {}
    path = os.path.join(data, "suite.json")
    try:
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
    except (OSError, ValueError) as e:
        p.error("%s: %s (write the suite with gen_onnx_suite.py)" % (path, e))
    if not str(info.get("onnx", "")).startswith(sset.onnx + "."):
        p.error("%s: the folders come from onnx %s, the suite set is onnx %s"
                % (path, info.get("onnx"), sset.onnx))
    return info


def collect_tests(args):
    flt = re.compile(args.filter) if args.filter else None
    tests = []
    for suite in args.suites:
        root = os.path.join(args.data, suite)
        for name in sorted(os.listdir(root)):
            if not os.path.isdir(os.path.join(root, name)):
                continue
            if flt and not flt.search(suite + "/" + name):
                continue
            tests.append((suite, name))
    return tests


def test_cost(args, suite, name):
    try:
        return os.path.getsize(os.path.join(args.data, suite, name, "model.onnx"))
    except OSError:
        return 0


def engine_label(args):
    """What ran the tests, for the summary and the results: 'odlac -O3 on reference' or
    'onnxruntime 1.31.1'."""
    if args.engine == "ort":
        import onnxruntime

        return "onnxruntime " + onnxruntime.__version__
    flags = " ".join(args.odlac_flags)
    return "odlac %son %s" % (flags + " " if flags else "", args.backend)


def main(argv):
    args = parse_args(argv)
    tests = collect_tests(args)
    if not tests:
        sys.exit("no test matches")
    odlac = args.engine == "odlac"
    xfail, header = read_xfail(args.xfail) if odlac else ({}, [])
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="odlac-conf-")
    os.makedirs(work, exist_ok=True)
    sset = SUITE_SETS[args.suite_set]
    cfg = {"engine": args.engine, "odlac": os.path.abspath(args.odlac),
           "odlac_flags": args.odlac_flags, "backend_lib": os.path.abspath(args.backend_lib),
           "link_extra": args.link_extra.split(), "include": os.path.abspath(args.include),
           "cc": args.cc, "cflags": args.cflags.split(),
           "data_root": os.path.abspath(args.data), "work": work, "keep": args.keep,
           "timeout": args.timeout, "tolerances": args.suite_info.get("tolerances", {}),
           "bfloat16_rtol": sset.bfloat16_rtol}
    label = engine_label(args)
    if not odlac:
        sys.path.insert(0, HERE)
        import ort_run  # noqa: F401 (once here, inherited by every worker and child)

    t0 = time.monotonic()
    # Big models first, so the slowest tests do not form the tail of the run.
    order = sorted(tests, key=lambda t: -test_cost(args, *t))
    results = []
    try:
        with concurrent.futures.ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
            futures = [pool.submit(run_test_safe, cfg, s, n) for s, n in order]
            for fut in concurrent.futures.as_completed(futures):
                r = fut.result()
                results.append(r)
                if args.verbose:
                    print("%-9s %s/%s %s" % (r["status"], r["suite"], r["name"], r["reason"]),
                          flush=True)
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)
    wall = time.monotonic() - t0
    results.sort(key=lambda r: (r["suite"], r["name"]))

    # Judge against the expected-failure list (odlac only: ONNX Runtime's runs are a
    # yardstick, not a test).
    ran = {r["suite"] + "/" + r["name"] for r in results}
    unexpected_fail, unexpected_pass, crashes = [], [], []
    for r in results:
        key = r["suite"] + "/" + r["name"]
        r["expected_failure"] = key in xfail
        if not odlac:
            continue
        if r["status"] == "crash":
            crashes.append(r)
        elif r["status"] == "pass" and key in xfail:
            unexpected_pass.append(r)
        elif r["status"] != "pass" and key not in xfail:
            unexpected_fail.append(r)

    if args.results:
        with open(args.results, "w", encoding="utf-8") as f:
            json.dump({"suite_set": args.suite_set, "suite_title": sset.title,
                       "onnx": args.suite_info.get("onnx"), "engine": args.engine,
                       "label": label, "backend": args.backend if odlac else None,
                       "odlac_flags": args.odlac_flags if odlac else [],
                       "rtol": RTOL, "atol": ATOL, "suites": args.suites,
                       "all_suites": list(sset.suites), "filter": args.filter,
                       "wall_seconds": round(wall, 1), "jobs": args.jobs, "tests": results},
                      f, indent=1)
            f.write("\n")
    if args.failures:
        with open(args.failures, "w", encoding="utf-8") as f:
            f.write("# %s, %s: every failing folder with its first error line\n"
                    % (sset.title, label))
            for r in results:
                if r["status"] != "pass":
                    f.write("%s/%s: %s\n" % (r["suite"], r["name"], auto_reason(r)))

    # Summary.
    print("%s, %s: %d tests in %.1f s (%d jobs)"
          % (sset.title, label, len(results), wall, args.jobs))
    shown = [s for s in STATUSES if s == "pass" or any(r["status"] == s for r in results)]
    print("  %-18s %6s " % ("suite", "total") + " ".join("%9s" % s for s in shown))
    for suite in args.suites + ["all"]:
        rs = [r for r in results if suite in ("all", r["suite"])]
        print("  %-18s %6d " % (suite, len(rs)) + " ".join(
            "%9d" % sum(r["status"] == s for r in rs) for s in shown))
    passed = sum(r["status"] == "pass" for r in results)
    print("  passed %d/%d folders (%.1f%%)" % (passed, len(results),
                                               100.0 * passed / len(results)))
    if not odlac:
        return 0

    if args.update_xfail:
        unexpected_fail, unexpected_pass = [], []  # the list is being rewritten from them
    for title, rs in (("crashes of odlac (never acceptable, listed or not)", crashes),
                      ("unexpected failures (not in %s)" % os.path.basename(args.xfail),
                       unexpected_fail),
                      ("unexpected passes (delete their lines from %s)"
                       % os.path.basename(args.xfail), unexpected_pass)):
        if rs:
            print("%s: %d" % (title, len(rs)))
            for r in rs:
                print("  %s/%s: %s" % (r["suite"], r["name"], auto_reason(r)))

    if args.update_xfail:
        flt = re.compile(args.filter) if args.filter else None

        def in_scope(key):
            suite = key.split("/", 1)[0]
            return suite in args.suites and (flt is None or flt.search(key) is not None)

        if not header:
            header = XFAIL_HEADER.format(title=sset.title, backend=args.backend,
                                         suite_set=args.suite_set).rstrip("\n").split("\n")
        n = write_xfail(args.xfail, xfail, header, results, in_scope)
        print("wrote %s: %d expected failures" % (args.xfail, n))
        return 1 if crashes else 0

    stale = sorted(k for k in xfail if k not in ran and k.split("/", 1)[0] in args.suites
                   and not args.filter
                   and not os.path.isdir(os.path.join(args.data, k)))
    for k in stale:
        print("note: %s is listed but no such test folder exists" % k)

    failed = bool(crashes or unexpected_fail or unexpected_pass)
    print("FAILED" if failed else "OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
