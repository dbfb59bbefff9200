"""odlac's benchmark: odlac on the oneDNN and reference backends against ONNX Runtime, PyTorch
and the compilers a user might pick instead (emx-onnx-cgen, IREE, Apache TVM: the peers' venv,
scripts/pypi-peers.txt), on the same models, inputs and machine, side by side in one run.

For each model (exported by models/export_zoo.py into a cache folder outside the repository)
it compiles with odlac -O3 (compile time and peak memory measured), builds the generated C
against each ODLA backend, and for each thread count times every engine in ROUNDS interleaved
rounds (odlac+dnnl and ONNX Runtime taking PAIR_TURNS alternating turns in each) of RUNS
inferences after a warm-up, reporting the median of the turn medians and the minimum latency,
the ratio to ONNX Runtime paired turn by turn (the median of the quotients), the peak resident
memory of the process (GNU time's), and the largest error against PyTorch's output. Then (unless
--no-profile) it profiles odlac+dnnl at 1 thread: the same generated C linked to the profiler
interposer (libodla_profiler, loading libodla_dnnl.so) gives each node's steady-state time (its fastest call) and FLOPs, aggregated
by op kind, with the Conv/Gemm rate against this core's peak FLOP rate, measured by
bench/peak_flops.c, and ONNX Runtime's own profiler the same way (bench/ort_run.py --profile),
so that a missed target shows whether the kernels or the time around them differ, and what
the model would take with every Conv/Gemm FLOP at that peak and its other nodes as profiled
(beyond the target, faster Conv/Gemm kernels alone cannot meet it). Writes docs/benchmarks.md
(or --out).

Run it with bench/run.sh, which installs what is missing and builds odlac first. Numbers on a
shared machine are noisy: compare engines within one run, by ratio, never across runs.

usage: /usr/bin/python3 bench/bench.py [--build DIR] [--models m1,m2] [--threads 1,2]
           [--runs N] [--rounds R] [--pair-turns P] [--engines e1,e2] [--out FILE]
           [--time-budget S]
           [--no-profile] [--profile-repeats N]"""
import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402 (bench/plot.py: the page's plot)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MODELS = ["resnet50", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0", "mobilenet_v3_large",
          "bert_encoder", "vit_b_16", "gpt2_block"]
ENGINES = ["odlac+dnnl", "odlac+reference", "onnxruntime", "pytorch", "emx-onnx-cgen", "iree",
           "tvm"]
# The compilers a user might pick instead, from the peers' venv (scripts/pypi-peers.txt): their
# failures to import a model are listed in the table, and leave the exit status alone.
PEERS = ["emx-onnx-cgen", "iree", "tvm"]
# The engines the targets compare, which take PAIR_TURNS turns in every round.
PAIR = ("odlac+dnnl", "onnxruntime")
# The latency targets (issue 21), as the largest ratio to ONNX Runtime's latency
# (paired_ratio): odlac+dnnl at every thread count, odlac+reference at 1 thread. A model
# takes its family's: MobileNetV3-Large the small CNNs', ViT-B/16 and the GPT-2 block BERT's.
TARGETS = {("resnet50", "odlac+dnnl"): 0.85, ("mobilenet_v2", "odlac+dnnl"): 0.75,
           ("squeezenet1_1", "odlac+dnnl"): 0.75, ("efficientnet_b0", "odlac+dnnl"): 0.75,
           ("mobilenet_v3_large", "odlac+dnnl"): 0.75, ("bert_encoder", "odlac+dnnl"): 0.8,
           ("vit_b_16", "odlac+dnnl"): 0.8, ("gpt2_block", "odlac+dnnl"): 0.8,
           ("resnet50", "odlac+reference"): 2.0, ("mobilenet_v2", "odlac+reference"): 3.0,
           ("squeezenet1_1", "odlac+reference"): 3.0, ("efficientnet_b0", "odlac+reference"): 3.0}
# The profile's op kinds shown per model; the rest are summed into one line.
PROFILE_TOP_OPS = 6
# The share of the measured peak a tuned convolution or GEMM reaches in practice: a missed
# target's note blames conv efficiency when lifting Conv/Gemm to it would save more time than
# removing the biggest non-GEMM op kind.
REACHABLE_PEAK = 0.8


def venv_bin(tool, venv=""):
    """A program of the project venv (onnxruntime's python) or, with venv="peers", of the peers'
    venv; scripts/install-deps.sh makes both."""
    folder = subprocess.run([os.path.join(ROOT, "scripts", "install-deps.sh"), "venv-path", venv],
                            capture_output=True, text=True, check=True).stdout.strip()
    path = os.path.join(folder, "bin", tool)
    if not os.path.exists(path):
        raise RuntimeError("%s is not installed: run scripts/install-deps.sh bench" % path)
    return path


# emx-onnx-cgen's generated function, timed: argv RUNS WARMUP OUT.bin INPUT.bin...; the
# prototype (copied from the generated file), the call, the byte counts and the version are
# filled in. Prints the same JSON line as ort_run.py.
EMX_HARNESS = r"""
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
PROTOTYPE;
LOAD_PROTOTYPE
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
int main(int argc, char **argv) {
  static const size_t in_bytes[] = {IN_BYTES}, out_bytes[] = {OUT_BYTES};
  enum { NIN = sizeof in_bytes / sizeof *in_bytes, NOUT = sizeof out_bytes / sizeof *out_bytes };
  void *in[NIN], *out[NOUT];
  int runs = atoi(argv[1]), warmup = atoi(argv[2]), i;
  double *ms = malloc(sizeof(double) * (size_t)(runs > 0 ? runs : 1));
  FILE *f;
  if (argc != 4 + NIN || runs < 1 || !ms)
    return fprintf(stderr, "usage: RUNS WARMUP OUT.bin INPUT.bin x %d\n", (int)NIN), 2;
  for (i = 0; i < NIN; ++i) {
    in[i] = malloc(in_bytes[i]);
    if (!in[i] || !(f = fopen(argv[4 + i], "rb")) || fread(in[i], 1, in_bytes[i], f) != in_bytes[i])
      return fprintf(stderr, "cannot read %zu bytes of %s\n", in_bytes[i], argv[4 + i]), 1;
    fclose(f);
  }
  for (i = 0; i < NOUT; ++i)
    if (!(out[i] = calloc(1, out_bytes[i])))
      return 1;
  LOAD_CALL
  for (i = 0; i < warmup; ++i)
    CALL;
  for (i = 0; i < runs; ++i) {
    double t0 = now_ms();
    CALL;
    ms[i] = now_ms() - t0;
  }
  qsort(ms, (size_t)runs, sizeof *ms, by_value);
  if (!(f = fopen(argv[3], "wb")) || fwrite(out[0], 1, out_bytes[0], f) != out_bytes[0])
    return fprintf(stderr, "cannot write %s\n", argv[3]), 1;
  fclose(f);
  printf("{\"median_ms\": %.6f, \"min_ms\": %.6f, \"runs\": %d, \"version\": \"VERSION\"}\n",
         runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2, ms[0], runs);
  return 0;
}
"""


def split_params(params):
    """A C parameter list split at its top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def run_measured(cmd, env=None, cwd=None, timeout=3600):
    """Runs cmd; returns (returncode, stdout, stderr, wall seconds, peak RSS in MB). The peak is
    GNU time's (%M) for cmd itself: the rusage of a child of this python would count the pages
    of the python it was forked from (exec keeps the old image's high-water mark)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss.name] + list(cmd),
                             stdout=out, stderr=err, env=env, cwd=cwd)
        try:
            p.wait(timeout=timeout)
        except (KeyboardInterrupt, subprocess.TimeoutExpired):
            p.kill()
            raise
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        kb = rss.read().strip().splitlines()
        peak = float(kb[-1]) / 1024.0 if kb and kb[-1].isdigit() else float("nan")
        return (p.returncode, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"), wall, peak)


def check(rc, what, stderr):
    if rc != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (what, rc, stderr.strip()[-800:]))


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def rel_error(got, want):
    """Largest |got - want| over the largest |want|: scale-aware, defined where want is 0."""
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    want = np.asarray(want, dtype=np.float64).reshape(-1)
    if got.shape != want.shape:
        return float("inf")
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.odlac = os.path.join(self.build, "compiler", "driver", "odlac")
        self.include = os.path.join(ROOT, "runtime_stubs", "include")
        self.libs = {
            "odlac+reference": (os.path.join(self.build, "runtime_stubs", "reference",
                                              "libodla_reference.a"), ["-lm"]),
            "odlac+dnnl": (os.path.join(self.build, "runtime_stubs", "dnnl", "libodla_dnnl.a"),
                           shlex.split(args.dnnl_link)),
        }
        self.profiler = os.path.join(self.build, "runtime_stubs", "profiler",
                                     "libodla_profiler.so")
        self.dnnl_shared = os.path.join(self.build, "runtime_stubs", "dnnl", "libodla_dnnl.so")
        self.work = tempfile.mkdtemp(prefix="odlac-bench-")
        self.rows = []
        self.profiles = {}  # model -> aggregated profile (profile_model)
        self.peak_gflops = None
        self.peak_bits = 0
        self.compile_rows = []
        self.versions = {}

    # -- models ---------------------------------------------------------------------------
    def export(self, models):
        cmd = [sys.executable, os.path.join(ROOT, "models", "export_zoo.py"), "--out",
               self.args.cache, "--only", ",".join(models)]
        rc, out, err, _, _ = run_measured(cmd)
        check(rc, "models/export_zoo.py", err)
        sys.stdout.write(out)

    def inputs(self, model):
        """Writes the model's inputs as raw files plus a JSON list; returns its path."""
        folder = os.path.join(self.args.cache, model, "test_data_set_0")
        spec, i = [], 0
        while os.path.exists(os.path.join(folder, "input_%d.pb" % i)):
            t = onnx.TensorProto()
            with open(os.path.join(folder, "input_%d.pb" % i), "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
            raw = os.path.join(self.work, "%s_input_%d.bin" % (model, i))
            np.ascontiguousarray(a).tofile(raw)
            spec.append({"name": t.name, "dtype": str(a.dtype), "shape": list(a.shape),
                         "file": raw})
            i += 1
        path = os.path.join(self.work, model + "_inputs.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        return path, [os.path.join(folder, "input_%d.pb" % k) for k in range(i)]

    # -- engines --------------------------------------------------------------------------
    def compile_odlac(self, model):
        """Compiles at -O3 (three times: the median compile time is reported)."""
        src = os.path.join(self.args.cache, model, "model.onnx")
        gen = os.path.join(self.work, model, "gen")
        os.makedirs(os.path.dirname(gen), exist_ok=True)
        walls, rss = [], []
        for _ in range(3):
            shutil.rmtree(gen, ignore_errors=True)
            rc, _, err, wall, peak = run_measured([self.odlac, src, "-O3", "--emit-main",
                                                  "--name", "net", "-o", gen])
            check(rc, "odlac " + model, err)
            walls.append(wall)
            rss.append(peak)
        self.compile_rows.append({"model": model, "engine": "odlac -O3 (median of 3)",
                                  "seconds": statistics.median(walls),
                                  "peak_mb": max(rss)})
        return gen

    def build_exe(self, gen, engine):
        lib, extra = self.libs[engine]
        exe = os.path.join(gen, "run_" + engine.split("+")[1])
        sources = sorted(os.path.join(gen, f) for f in os.listdir(gen) if f.endswith(".c"))
        rc, _, err, _, _ = run_measured([os.environ.get("CC", "cc"), "-std=c99", "-O2", "-I",
                                         self.include] + sources + [lib] + extra + ["-o", exe])
        check(rc, "building " + exe, err)
        return exe

    def build_emx(self, model, inputs_json, want):
        """emx-onnx-cgen's C for the model, built at -O3 with a timing harness: (the program,
        its input files). Its C runs on one thread whatever the thread count."""
        folder = os.path.join(self.work, model, "emx")
        os.makedirs(folder, exist_ok=True)
        src = os.path.join(folder, "model.c")
        rc, out, err, wall, peak = run_measured([venv_bin("emx-onnx-cgen", "peers"), "compile",
                                                 os.path.join(self.args.cache, model,
                                                              "model.onnx"),
                                                 src, "--model-name", "model"])
        # It says why it failed in the last line of its standard output.
        check(rc, "emx-onnx-cgen " + model, err.strip() or (out.strip().splitlines() or [""])[-1])
        text = open(src).read()
        m = re.search(r"^void model\((.*?)\)\s*\{", text, re.M | re.S)
        if not m:
            raise RuntimeError("emx-onnx-cgen %s: no `void model(...)` in its C" % model)
        spec = json.load(open(inputs_json))
        buffers = ["in[%d]" % i for i in range(len(spec))]
        g = onnx.load(os.path.join(self.args.cache, model, "model.onnx"), load_external_data=False)
        out_bytes = []
        for k, o in enumerate(g.graph.output):
            dims = [d.dim_value for d in o.type.tensor_type.shape.dim]
            if k == 0:
                dims = list(want.shape)
            elif not all(dims):
                raise RuntimeError("emx-onnx-cgen %s: output %s has no static shape" %
                                   (model, o.name))
            # Debian's onnx 1.12 (this script's python) has the mapping, not the helper.
            itemsize = np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[
                o.type.tensor_type.elem_type]).itemsize
            out_bytes.append(int(np.prod(dims)) * itemsize)
            buffers.append("out[%d]" % k)
        args = []
        for p in split_params(m.group(1)):
            if re.match(r"^(const\s+)?(int|int64_t|size_t)\s+\w+$", p):
                raise RuntimeError("emx-onnx-cgen %s: a symbolic dim parameter (%s)" % (model, p))
            if not buffers:
                raise RuntimeError("emx-onnx-cgen %s: more parameters than tensors" % model)
            args.append(buffers.pop(0))
        version = re.sub(r"[^0-9A-Za-z.]", "", subprocess.run(
            [venv_bin("python", "peers"), "-c",
             "import importlib.metadata as m; print(m.version('emx-onnx-cgen'))"],
            capture_output=True, text=True).stdout.strip())
        # Past --large-weight-threshold its weights go to model.bin, which model_load reads.
        load = re.search(r"^_Bool model_load\(const char \*path\)", text, re.M)
        harness = (EMX_HARNESS.replace("LOAD_PROTOTYPE", "_Bool model_load(const char *path);"
                                       if load else "")
                   .replace("LOAD_CALL", "if (!model_load(%s))\n    return 1;" %
                            json.dumps(os.path.join(folder, "model.bin")) if load else "")
                   .replace("PROTOTYPE", "void model(%s)" % m.group(1))
                   .replace("CALL", "model(%s)" % ", ".join(args))
                   .replace("IN_BYTES", ", ".join(str(os.path.getsize(t["file"])) for t in spec))
                   .replace("OUT_BYTES", ", ".join(map(str, out_bytes)))
                   .replace("VERSION", version))
        with open(os.path.join(folder, "harness.c"), "w") as f:
            f.write(harness)
        exe = os.path.join(folder, "run")
        rc, _, err, _, _ = run_measured([os.environ.get("CC", "cc"), "-std=gnu11", "-O3",
                                         "-march=native", src, os.path.join(folder, "harness.c"),
                                         "-lm", "-o", exe])
        check(rc, "building emx-onnx-cgen's C for " + model, err)
        self.compile_rows.append({"model": model, "engine": "emx-onnx-cgen", "seconds": wall,
                                  "peak_mb": peak})
        return exe, [t["file"] for t in spec]

    def build_peer(self, model, engine, inputs_json):
        """IREE's or TVM's compiled model (bench/peer_run.py compile); returns its path."""
        artifact = os.path.join(self.work, model, engine + (".vmfb" if engine == "iree" else ".so"))
        os.makedirs(os.path.dirname(artifact), exist_ok=True)
        rc, _, err, wall, peak = run_measured([venv_bin("python", "peers"),
                                               os.path.join(ROOT, "bench", "peer_run.py"),
                                               "compile", engine,
                                               os.path.join(self.args.cache, model, "model.onnx"),
                                               inputs_json, artifact])
        check(rc, engine + " " + model, err)
        self.compile_rows.append({"model": model, "engine": engine, "seconds": wall,
                                  "peak_mb": peak})
        return artifact

    def time_odlac(self, exe, pb_inputs, threads, runs, res):
        # Both ODLA backends take their default thread count from OMP_NUM_THREADS (oneDNN's
        # OpenMP, the reference backend's worker pool: docs/backends.md); threads 0: unset,
        # the backend's own default (bench/busy.py).
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        if not threads:
            del env["OMP_NUM_THREADS"]
        rc, out, err, _, peak = run_measured([exe] + pb_inputs + ["-o", res, "--repeat",
                                                                 str(runs)], env=env)
        check(rc, os.path.basename(exe), err)
        m = re.search(r"latency_ms median=([\d.]+) min=([\d.]+)", out)
        return float(m.group(1)), float(m.group(2)), peak, load_pb(os.path.join(res, "output_0.pb"))

    def time_script(self, cmd, out_bin, dtype, shape):
        rc, out, err, _, peak = run_measured(cmd)
        check(rc, os.path.basename(cmd[1]), err)
        r = json.loads(out.strip().splitlines()[-1])
        return r, peak, np.fromfile(out_bin, dtype=dtype).reshape(shape)

    def failed(self, model, engine, threads, error):
        print("  %s: FAILED: %s" % (engine, error))
        for t in threads:
            self.rows.append({"model": model, "engine": engine, "threads": t,
                              "error": str(error).splitlines()[0][:120]})

    def runs_for(self, latency_ms):
        """RUNS, fewer (at least 3) when RUNS inferences would exceed the time budget."""
        return max(3, min(self.args.runs, int(self.args.time_budget * 1000 / max(latency_ms, 1e-3))))

    def round_order(self, engines, i):
        """The engines' order in round i: odlac+dnnl and ONNX Runtime (the targets' pair)
        taking PAIR_TURNS turns each, back to back, since this machine's load changes within
        seconds; which goes first alternating between rounds; then the others, their order
        alternating too."""
        pair = [e for e in PAIR if e in engines]
        rest = [e for e in engines if e not in pair]
        if i % 2:
            pair, rest = pair[::-1], rest[::-1]
        return pair * (self.args.pair_turns if len(pair) == 2 else 1) + rest

    def bench_model(self, model):
        """Times every engine at every thread count in ROUNDS interleaved rounds: a round runs
        each engine (RUNS inferences after a warm-up, in one process; a turn), in
        round_order, so a burst of load on this shared machine lands on the engines alike
        instead of on whichever ran then. Reported: the median of an engine's turn medians,
        the minimum of its turn minimums, and (in the report) its ratio to ONNX Runtime
        paired by turn (paired_ratio)."""
        want = load_pb(os.path.join(self.args.cache, model, "test_data_set_0", "output_0.pb"))
        inputs_json, pb_inputs = self.inputs(model)
        engines = self.args.engines
        gen = self.compile_odlac(model) if any(e.startswith("odlac") for e in engines) else None
        exes = {}
        for engine in engines:
            if engine.startswith("odlac") and not os.path.exists(self.libs[engine][0]):
                print("  %s: skipped, %s is not built" % (engine, self.libs[engine][0]))
                continue
            try:
                exes[engine] = (self.build_exe(gen, engine) if engine.startswith("odlac") else
                                self.build_emx(model, inputs_json, want)
                                if engine == "emx-onnx-cgen" else
                                self.build_peer(model, engine, inputs_json) if engine in PEERS
                                else None)
            except RuntimeError as e:
                self.failed(model, engine, self.args.threads, e)
        for threads in self.args.threads:
            def timed(engine, runs):
                """(median, min, peak MB, output) of RUNS inferences of ENGINE."""
                res = os.path.join(self.work, "%s_%s_%d" % (model, engine, threads))
                if engine.startswith("odlac"):
                    return self.time_odlac(exes[engine], pb_inputs, threads, runs, res)
                out_bin = res + ".bin"
                if engine == "emx-onnx-cgen":
                    r, peak, got = self.time_script(
                        [exes[engine][0], str(runs), "1" if runs == 1 else "3", out_bin] +
                        exes[engine][1], out_bin, want.dtype, want.shape)
                    self.versions[engine] = r["version"]
                    return r["median_ms"], r["min_ms"], peak, got
                script = ([venv_bin("python"), os.path.join(ROOT, "bench", "ort_run.py"),
                           os.path.join(self.args.cache, model, "model.onnx")]
                          if engine == "onnxruntime" else
                          [venv_bin("python", "peers"), os.path.join(ROOT, "bench", "peer_run.py"),
                           "run", engine, exes[engine]]
                          if engine in PEERS else
                          [sys.executable, os.path.join(ROOT, "bench", "torch_run.py"),
                           os.path.join(self.args.cache, model, "model.pt")])
                r, peak, got = self.time_script(script + [inputs_json, str(threads), str(runs),
                                                          "1" if runs == 1 else "3", out_bin],
                                                out_bin, want.dtype, want.shape)
                self.versions[engine] = r["version"]
                return r["median_ms"], r["min_ms"], peak, got
            runs, rounds, probed = {}, {}, set()
            for engine in list(exes):
                try:
                    probe = timed(engine, 1)
                    runs[engine] = self.runs_for(probe[0])
                    rounds[engine] = []
                    if probe[0] > self.args.time_budget * 1000 and engine not in PAIR:
                        # One run longer than a round's budget (untuned TVM on a
                        # transformer: about a minute): that run is the engine's one turn,
                        # timed in round 0, instead of rounds that would take hours.
                        runs[engine] = 1
                        rounds[engine].append((0,) + probe)
                        probed.add(engine)
                except RuntimeError as e:
                    self.failed(model, engine, [threads], e)
            order = list(runs)
            for i in range(self.args.rounds if order else 0):
                for engine in self.round_order(order, i):
                    if engine not in rounds or engine in probed:
                        continue
                    try:
                        rounds[engine].append((i,) + timed(engine, runs[engine]))
                    except RuntimeError as e:
                        self.failed(model, engine, [threads], e)
                        del rounds[engine]
            for engine in order:
                if engine not in rounds:
                    continue
                rs = [r[1:] for r in rounds[engine]]
                med = statistics.median(r[0] for r in rs)
                per_round = [statistics.median(r[1] for r in rounds[engine] if r[0] == i)
                             for i in sorted({r[0] for r in rounds[engine]})]
                row = {"model": model, "engine": engine, "threads": threads, "median_ms": med,
                       "min_ms": min(r[1] for r in rs), "runs": runs[engine] * len(rs),
                       "rounds": ", ".join("%.2f" % m for m in per_round),
                       "turns": [(r[0], r[1]) for r in rounds[engine]],
                       "peak_mb": max(r[2] for r in rs),
                       "rel_err": max(rel_error(r[3], want) for r in rs)}
                self.rows.append(row)
                print("  %-16s %d thread(s): median %9.2f ms  min %9.2f ms  (%d runs; round "
                      "medians %s)  peak %7.1f MB  err %.2e" % (
                          engine, threads, med, row["min_ms"], row["runs"], row["rounds"],
                          row["peak_mb"], row["rel_err"]))
        if self.args.profile and "odlac+dnnl" in engines:
            try:
                self.profile_model(model, gen, pb_inputs, inputs_json)
            except RuntimeError as e:
                print("  profile: FAILED: %s" % e)
                self.profiles[model] = {"error": str(e).splitlines()[0][:120]}

    # -- profile --------------------------------------------------------------------------
    def measure_peak(self):
        """This core's float32 peak GFLOP/s, from bench/peak_flops.c (best of 3 runs)."""
        exe = os.path.join(self.work, "peak_flops")
        rc, _, err, _, _ = run_measured([os.environ.get("CC", "cc"), "-std=c99", "-O3",
                                         "-march=native", "-ffp-contract=fast",
                                         os.path.join(ROOT, "bench", "peak_flops.c"), "-o", exe])
        check(rc, "building bench/peak_flops.c", err)
        best = 0.0
        for _ in range(3):
            rc, out, err, _, _ = run_measured([exe])
            check(rc, "bench/peak_flops", err)
            m = re.search(r"peak_gflops=([\d.]+) vector_bits=(\d+)", out)
            best = max(best, float(m.group(1)))
            self.peak_bits = int(m.group(2))
        return best

    def profile_model(self, model, gen, pb_inputs, inputs_json):
        """Runs the -O3 program on libodla_dnnl through the profiler interposer at 1 thread and
        aggregates its trace by op kind (steady-state time: each node's fastest call); then ONNX
        Runtime the same way through its own profiler (bench/ort_run.py --profile), so that the
        page tells kernel time from the time around the kernels."""
        for lib in (self.profiler, self.dnnl_shared):
            if not os.path.exists(lib):
                raise RuntimeError("%s is not built" % lib)
        if self.peak_gflops is None:
            self.peak_gflops = self.measure_peak()
            print("single-core peak: %.1f GFLOP/s" % self.peak_gflops)
        libdir = os.path.dirname(self.profiler)
        exe = os.path.join(gen, "run_profiled")
        sources = sorted(os.path.join(gen, f) for f in os.listdir(gen) if f.endswith(".c"))
        rc, _, err, _, _ = run_measured([os.environ.get("CC", "cc"), "-std=c99", "-O2", "-I",
                                         self.include] + sources +
                                        ["-L" + libdir, "-lodla_profiler", "-Wl,-rpath," + libdir,
                                         "-lm", "-o", exe])
        check(rc, "building " + exe, err)
        trace_path = os.path.join(self.work, model + "_profile.json")
        env = dict(os.environ, OMP_NUM_THREADS="1", ODLA_PROFILER_BACKEND=self.dnnl_shared,
                   ODLA_PROFILER_OUTPUT=trace_path)
        env.pop("ODLA_PROFILER_RANGES", None)  # ranges disable fusion: times only
        rc, _, err, _, _ = run_measured([exe] + pb_inputs + [
            "-o", os.path.join(self.work, model + "_profiled"), "--repeat",
            str(self.args.profile_repeats)], env=env)
        check(rc, "profiled " + model, err)
        with open(trace_path) as f:
            trace = json.load(f)
        if trace.get("timing") != "device_profiler":
            raise RuntimeError("%s: the trace has no per-node times (timing %r)"
                               % (model, trace.get("timing")))
        ops, flop_ns, flops = {}, 0, 0
        for comp in trace["computations"]:
            for n in comp["nodes"]:
                o = ops.setdefault(n["op"], {"ns": 0, "nodes": 0, "flops": 0})
                o["ns"] += n["min_ns"]
                o["nodes"] += 1
                o["flops"] += n["flops"]
                if n["flops"]:
                    flop_ns += n["min_ns"]
                    flops += n["flops"]
        total_ns = sum(o["ns"] for o in ops.values())
        if total_ns <= 0:
            raise RuntimeError("%s: the trace has no node time" % model)
        prof = {"ops": ops, "total_ns": total_ns, "flop_ns": flop_ns, "flops": flops,
                "gflops": flops / flop_ns if flop_ns else 0.0}
        rc, out, err, _, _ = run_measured([
            venv_bin("python"), os.path.join(ROOT, "bench", "ort_run.py"), "--profile",
            os.path.join(self.args.cache, model, "model.onnx"), inputs_json, "1",
            str(self.args.profile_repeats), "1", os.path.join(self.work, model + "_ort_profile")])
        check(rc, "ONNX Runtime's profile of " + model, err)
        prof["ort"] = json.loads(out.strip().splitlines()[-1])
        self.profiles[model] = prof
        top = sorted(ops.items(), key=lambda kv: -kv[1]["ns"])[:4]
        print("  profile (odlac+dnnl, 1 thread): %.2f ms in nodes, Conv/Gemm %.1f GFLOP/s "
              "(%.0f%% of peak); top: %s" % (
                  total_ns / 1e6, prof["gflops"], 100 * prof["gflops"] / self.peak_gflops,
                  ", ".join("%s %.2f ms" % (op, o["ns"] / 1e6) for op, o in top)))
        print("  profile (onnxruntime, 1 thread): %.2f ms in nodes" % (
            prof["ort"]["total_ns"] / 1e6))

    def limit_note(self, model):
        """One line on what limits the model's odlac+dnnl time, from its profile."""
        prof = self.profiles.get(model)
        if not prof or "error" in prof:
            return "no profile"
        others = [(op, o["ns"]) for op, o in prof["ops"].items() if not o["flops"]]
        op, other_ns = max(others, key=lambda kv: kv[1]) if others else ("none", 0)
        eff = prof["gflops"] / self.peak_gflops
        headroom_ns = prof["flop_ns"] * max(0.0, 1.0 - eff / REACHABLE_PEAK)
        conv = "Conv/Gemm at %.0f%% of peak (%.0f%% of the time)" % (
            100 * eff, 100 * prof["flop_ns"] / prof["total_ns"])
        other = "biggest non-GEMM op %s (%.2f ms, %.0f%%)" % (
            op, other_ns / 1e6, 100 * other_ns / prof["total_ns"])
        note = ("low conv efficiency: %s; %s" % (conv, other) if headroom_ns > other_ns else
                "%s; %s" % (other, conv))
        return note + "; %s" % self.kernel_note(model)

    def kernel_note(self, model):
        """Both engines' time in nodes at 1 thread (their profilers) beside ONNX Runtime's
        median run: how much of its run is kernels."""
        prof = self.profiles[model]
        ort_ms = [r["median_ms"] for r in self.rows if r["model"] == model and
                  r["engine"] == "onnxruntime" and r["threads"] == 1 and "error" not in r]
        note = "nodes at 1 thread: odlac+dnnl %.2f ms, ONNX Runtime %.2f ms (%.2fx)" % (
            prof["total_ns"] / 1e6, prof["ort"]["total_ns"] / 1e6,
            prof["total_ns"] / prof["ort"]["total_ns"])
        if ort_ms:
            note += ", ONNX Runtime's median run %.2f ms" % ort_ms[0]
        return note

    def scaling_note(self, r, ort):
        """For a row above 1 thread: its speed-up over 1 thread next to ONNX Runtime's (the
        profile is taken at 1 thread, so it cannot show what threads cost); ort holds ONNX
        Runtime's turns by (model, threads)."""
        one = [x for x in self.rows if x["model"] == r["model"] and x["engine"] == r["engine"]
               and x["threads"] == 1 and "error" not in x]
        ort_one, ort_n = ort.get((r["model"], 1)), ort.get((r["model"], r["threads"]))
        if r["threads"] == 1 or not one or not ort_one or not ort_n:
            return ""
        return "; %d threads speed it up %.2fx over 1 thread, ONNX Runtime %.2fx" % (
            r["threads"], one[0]["median_ms"] / r["median_ms"],
            statistics.median(t[1] for t in ort_one) / statistics.median(t[1] for t in ort_n))

    def floor_note(self, r, target, ort):
        """What the row would take with every Conv/Gemm FLOP at this core's peak and the other
        nodes as profiled, on r's threads with no loss to threading, against ONNX Runtime's
        median run there: where even that misses the target, faster Conv/Gemm kernels alone
        cannot meet it, the other nodes must shrink too (a Winograd convolution, which needs
        fewer FLOPs, is counted at its direct ones, so its model's floor is not one)."""
        prof = self.profiles.get(r["model"])
        theirs = ort.get((r["model"], r["threads"]))
        if not prof or "error" in prof or not theirs or not self.peak_gflops:
            return ""
        floor_ms = (prof["flops"] / self.peak_gflops +
                    (prof["total_ns"] - prof["flop_ns"])) / 1e6 / r["threads"]
        ratio = floor_ms / statistics.median(t[1] for t in theirs)
        verdict = ("" if ratio <= target else " (its Winograd convolutions need fewer FLOPs: "
                   "not a floor)" if prof["gflops"] > self.peak_gflops else
                   " (beyond the target: faster Conv/Gemm kernels alone cannot meet it)")
        return "; at peak on every Conv/Gemm FLOP: %.2f ms, %.3fx ONNX Runtime's median%s" % (
            floor_ms, ratio, verdict)

    def target_status(self, r, ratio):
        """(target, met) for a timed row and its ratio to ONNX Runtime, or None where no
        target applies."""
        target = TARGETS.get((r["model"], r["engine"]))
        if target and ratio and not (r["engine"] == "odlac+reference" and r["threads"] != 1):
            return target, ratio <= target
        return None

    @staticmethod
    def paired_ratio(r, ort_turns):
        """The row's turn medians over ONNX Runtime's, paired: in each round, turn by turn
        where both took as many turns (odlac+dnnl), else the round's medians; the median of
        those quotients (None without ONNX Runtime). A shift of the machine's load hits both
        sides of each quotient."""
        if not ort_turns:
            return None
        quotients = []
        for i in sorted({t[0] for t in r["turns"]}):
            mine = [ms for j, ms in r["turns"] if j == i]
            theirs = [ms for j, ms in ort_turns if j == i]
            if not theirs:
                continue
            if len(mine) == len(theirs):
                quotients += [a / b for a, b in zip(mine, theirs)]
            else:
                quotients.append(statistics.median(mine) / statistics.median(theirs))
        return statistics.median(quotients) if quotients else None

    # -- report ---------------------------------------------------------------------------
    def machine(self):
        cpu = platform.processor() or "unknown CPU"
        try:
            with open("/proc/cpuinfo") as f:
                m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
                cpu = m.group(1).strip() if m else cpu
        except OSError:
            pass
        line = "%s, %d logical CPUs, %s" % (cpu, os.cpu_count() or 0, platform.platform())
        if self.peak_gflops:
            line += ("; single-core float32 peak %.1f GFLOP/s (%d-bit FMA, measured by "
                     "bench/peak_flops.c)" % (self.peak_gflops, self.peak_bits))
        return line

    def tool_versions(self):
        v = dict(self.versions)
        rc, out, _, _, _ = run_measured([self.odlac, "--version"])
        v["odlac"] = out.strip().replace("odlac ", "", 1) if rc == 0 else "?"
        for pkg in ("libdnnl-dev", "gcc"):
            rc, out, _, _, _ = run_measured(["dpkg-query", "-W", "-f=${Version}", pkg])
            v[pkg] = out.strip() if rc == 0 else "not installed"
        return v

    def markdown(self, command):
        lines = ["<!-- Generated by bench/bench.py; rerun it to refresh. -->", "# Benchmarks", "",
                 ("Latency of one inference at batch 1, peak resident memory of the process, "
                 "and the largest error against PyTorch's output (max |got − torch| / max |torch|), measured side by side in "
                 "one run: for each model and thread count the engines take turns in %d rounds "
                 "(in each, odlac+dnnl and ONNX Runtime alternate %d times back to back, which "
                 "goes first alternating between rounds, then the others run once), each turn a "
                 "fresh process timing the runs after a warm-up; \"median\" is the median of "
                 "the turn medians (\"rounds\" lists each round's median), \"min\" the fastest "
                 "run, \"runs\" all timed runs (an engine whose one run takes longer than a "
                 "round's time budget, %g s, is timed in that one run). "
                 "Engines: odlac -O3 with the oneDNN backend (`libodla_dnnl`) and the "
                 "portable reference backend (`libodla_reference`, its worker threads), "
                 "ONNX Runtime (the venv's onnxruntime, CPU, all graph "
                 "optimizations), PyTorch (TorchScript, inference mode) and emx-onnx-cgen "
                 "(ONNX to C; its C built with -O3 -march=native, one thread whatever the "
                 "thread count), IREE (llvm-cpu for this CPU, local-task driver) and Apache TVM "
                 "(Relax, LLVM for this CPU, untuned), these three from the peers' venv "
                 "(scripts/pypi-peers.txt; a model one cannot import is listed as failed). "
                 "\"vs ORT\" is the median of the engine's turn medians divided by ONNX "
                 "Runtime's, paired (odlac+dnnl turn by turn, the others by round), at the same "
                 "thread count, so load that shifts within the run hits both sides of each "
                 "quotient; the target column gives issue 21's goal for that ratio (odlac+dnnl "
                 "at every thread count, the portable reference backend at 1 thread)." % (
                     self.args.rounds, self.args.pair_turns, self.args.time_budget)),
                 "",
                 "- Machine: " + self.machine(),
                 "- Versions: " + ", ".join("%s %s" % kv for kv in sorted(self.tool_versions().items())),
                 "- Command: `%s`" % command, "",
                 "| model | engine | threads | median ms | min ms | vs ORT | target | rounds ms | runs | peak MB | error |",
                 "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        ort = {(r["model"], r["threads"]): r["turns"] for r in self.rows
               if r["engine"] == "onnxruntime" and "median_ms" in r}
        for r in self.rows:
            if "error" in r:
                lines.append("| %s | %s | %d | failed: %s | | | | | | | |" % (
                    r["model"], r["engine"], r["threads"], r["error"].replace("|", "/")))
                continue
            quotient = self.paired_ratio(r, ort.get((r["model"], r["threads"])))
            ratio = "%.2fx" % quotient if quotient else ""
            status = self.target_status(r, quotient)
            target_txt = ("≤ %.2fx %s" % (status[0], "met" if status[1] else "**missed**")
                          if status else "")
            lines.append("| %s | %s | %d | %.2f | %.2f | %s | %s | %s | %d | %.0f | %.1e |" % (
                r["model"], r["engine"], r["threads"], r["median_ms"], r["min_ms"], ratio,
                target_txt, r["rounds"], r["runs"], r["peak_mb"], r["rel_err"]))
        lines += ["", "![Median latency relative to ONNX Runtime, per model and thread count]"
                  "(images/benchmarks.svg)", "",
                  "(The plot is the table's \"vs ORT\" column, drawn by bench/plot.py.)"]
        lines += ["", "## Compile time", "",
                  "| model | compiler | seconds | peak MB |", "|---|---|--:|--:|"]
        for c in self.compile_rows:
            lines.append("| %s | %s | %.2f | %.0f |" % (c["model"], c["engine"], c["seconds"],
                                                       c["peak_mb"]))
        if self.profiles:
            lines += self.profile_markdown(ort)
        return "\n".join(lines) + "\n"

    def profile_markdown(self, ort):
        lines = ["", "## Where the time goes (odlac+dnnl, 1 thread)", "",
                 "The -O3 program on `libodla_dnnl` through the profiler interposer "
                 "(`libodla_profiler`, docs/backends.md), %d executions at 1 thread: each node's "
                 "steady-state time is its fastest call, summed by op kind (%% of the node "
                 "total). Conv/Gemm are the nodes with FLOPs; their rate is their FLOPs over "
                 "their time, against this core's float32 peak (machine line); a Winograd "
                 "convolution counts the direct convolution's FLOPs, so its rate is an effective "
                 "one and can pass the peak. ONNX Runtime's line under each table comes from "
                 "its own profiler (`bench/ort_run.py --profile`: a warm-up and %d runs at 1 "
                 "thread, each node's fastest, summed by op type), so a missed target's "
                 "line can say whether the kernels or the time around them differ." % (
                     self.args.profile_repeats, self.args.profile_repeats), ""]
        for model, prof in self.profiles.items():
            if "error" in prof:
                lines += ["**%s**: profile failed: %s" % (model, prof["error"]), ""]
                continue
            lines += ["**%s**: %.2f ms in nodes; Conv/Gemm %.2f GFLOP at %.1f GFLOP/s, "
                      "%.0f%% of peak" % (
                          model, prof["total_ns"] / 1e6, prof["flops"] / 1e9, prof["gflops"],
                          100 * prof["gflops"] / self.peak_gflops), "",
                      "| op | nodes | ms | share | GFLOP/s | % of peak |",
                      "|---|--:|--:|--:|--:|--:|"]
            ranked = sorted(prof["ops"].items(), key=lambda kv: -kv[1]["ns"])
            for op, o in ranked[:PROFILE_TOP_OPS]:
                rate = o["flops"] / o["ns"] if o["flops"] and o["ns"] else 0.0
                lines.append("| %s | %d | %.2f | %.1f%% | %s | %s |" % (
                    op, o["nodes"], o["ns"] / 1e6, 100 * o["ns"] / prof["total_ns"],
                    "%.1f" % rate if rate else "", "%.0f%%" % (100 * rate / self.peak_gflops)
                    if rate else ""))
            rest = ranked[PROFILE_TOP_OPS:]
            if rest:
                ns = sum(o["ns"] for _, o in rest)
                lines.append("| %d other op kinds | %d | %.2f | %.1f%% | | |" % (
                    len(rest), sum(o["nodes"] for _, o in rest), ns / 1e6,
                    100 * ns / prof["total_ns"]))
            ort_ops = sorted(prof["ort"]["ops"].items(), key=lambda kv: -kv[1]["ns"])
            lines += ["", "ONNX Runtime, the same way: %.2f ms in nodes (%s)" % (
                prof["ort"]["total_ns"] / 1e6, ", ".join(
                    "%s %d node%s %.2f ms" % (op, o["nodes"], "s" * (o["nodes"] != 1),
                                              o["ns"] / 1e6)
                    for op, o in ort_ops[:PROFILE_TOP_OPS])), ""]
        missed = []
        for r in self.rows:
            if r["engine"] != "odlac+dnnl" or "error" in r or r["model"] not in self.profiles:
                continue
            status = self.target_status(
                r, self.paired_ratio(r, ort.get((r["model"], r["threads"]))))
            if status and not status[1]:
                missed.append("- %s, %d thread(s), target ≤ %.2fx missed: %s%s%s" % (
                    r["model"], r["threads"], status[0], self.limit_note(r["model"]),
                    self.scaling_note(r, ort), self.floor_note(r, status[0], ort)))
        if missed:
            lines += ["Missed odlac+dnnl targets and what the profile says limits them:",
                      ""] + missed
        return lines


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="odlac's CMake build folder (odlac and the backend libraries)")
    ap.add_argument("--cache", default=os.environ.get(
        "ODLAC_MODEL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "odlac", "models")),
        help="where the exported models live")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=20,
                    help="timed inferences per engine, thread count and round")
    ap.add_argument("--rounds", type=int, default=5,
                    help="interleaved rounds: each runs every engine, odlac+dnnl and ONNX "
                         "Runtime back to back --pair-turns times, the others once")
    ap.add_argument("--pair-turns", type=int, default=3,
                    help="turns odlac+dnnl and ONNX Runtime take in each round, alternating")
    ap.add_argument("--time-budget", type=float, default=20.0,
                    help="seconds of timed runs per engine, thread count and round; slower "
                         "engines get fewer runs (at least 3), and one whose single run "
                         "takes longer (other than odlac+dnnl and ONNX Runtime) is timed "
                         "in that run alone")
    ap.add_argument("--dnnl-link", default="-ldnnl -lgomp -lstdc++ -lm -lpthread",
                    help="link flags libodla_dnnl needs")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--no-profile", dest="profile", action="store_false",
                    help="skip the per-op profile of odlac+dnnl (needs libodla_profiler and "
                         "the shared libodla_dnnl)")
    ap.add_argument("--profile-repeats", type=int, default=20,
                    help="executions of each engine's profiled program (the fastest call per "
                         "node counts)")
    args = ap.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    args.engines = [e for e in args.engines.split(",") if e]
    args.threads = [int(t) for t in args.threads.split(",") if t]
    unknown = [m for m in args.models if m not in MODELS] + [e for e in args.engines
                                                             if e not in ENGINES]
    if unknown:
        ap.error("unknown model or engine: %s" % ", ".join(unknown))
    if args.rounds < 1 or args.runs < 1 or args.pair_turns < 1:
        ap.error("--rounds, --runs and --pair-turns must be at least 1")
    bench = Bench(args)
    try:
        bench.export(args.models)
        for model in args.models:
            print("%s:" % model)
            bench.bench_model(model)
        for c in bench.compile_rows:
            print("%s compile %s: %.2f s, peak %.0f MB" % (c["engine"], c["model"], c["seconds"],
                                                         c["peak_mb"]))
        command = "/usr/bin/python3 bench/bench.py " + " ".join(shlex.quote(a) for a in argv)
        # bench/int8.py's section (from its marker on) stays as that script wrote it.
        old = open(args.out).read() if os.path.exists(args.out) else ""
        marker = "<!-- int8 section: generated by bench/int8.py"
        int8 = old[old.index(marker):] if marker in old else ""
        with open(args.out, "w") as f:
            f.write(bench.markdown(command.strip()) + ("\n" + int8 if int8 else ""))
        print("wrote " + args.out)
        plot.main([args.out, os.path.join(os.path.dirname(args.out), "images", "benchmarks.svg")])
    finally:
        if not args.keep:
            shutil.rmtree(bench.work, ignore_errors=True)
    failed = [r for r in bench.rows if "error" in r and r["engine"] not in PEERS] + [
        p for p in bench.profiles.values() if "error" in p]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
