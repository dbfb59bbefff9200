"""The MLPerf Tiny models (bench/tiny_models.py) and the digits CNN as bare-metal firmware on
QEMU's Cortex-M4F, M7 and M55 boards: instructions per inference, RAM and flash per model,
precision and core, written to docs/embedded.md beside MLPerf Tiny's published figures and
TFLite Micro's arena for the same architectures (bench/tflm_arena.py, run in the venv that
scripts/install-deps.sh bench makes). A measurement, not a test:

    PY bench/embedded.py [--cores m4,m7,m55] [--models kws,ic,vww,ad,digits] [--runs 3]

PY is scripts/install-deps.sh's venv (PyTorch exports the models). Each model is compiled
with odlac --no-heap --memory=least --weights=c (and, for int8, --quantize=int8 over 8 random
calibration inputs), built with the example firmware's board files (examples/cortex-m) and
the reference backend's sources (no threads, heap, stdio or call log), run under
qemu-system-arm -icount shift=0, and its outputs checked against the same program on the
host. Instructions are counted by SysTick in QEMU's virtual time (1 ns per instruction with
-icount shift=0): a proxy for cycles, not cycles."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLE = os.path.join(ROOT, "examples", "cortex-m")
REFERENCE = os.path.join(ROOT, "runtime_stubs", "reference")
INCLUDE = os.path.join(ROOT, "runtime_stubs", "include")
sys.path.insert(0, HERE)
import tiny_models  # noqa: E402

CORES = {  # name: (board, flags, linker script)
    "m4": ("mps2-an386", ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"], "mps2.ld"),
    "m7": ("mps2-an500", ["-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16"], "mps2.ld"),
    "m55": ("mps3-an547", ["-mcpu=cortex-m55", "-mfloat-abi=hard"], "mps3-an547.ld"),
}
BACKEND = ["-DODLA_REFERENCE_NO_THREADS", "-DODLA_REFERENCE_NO_HEAP",
           "-DODLA_REFERENCE_NO_STDIO", "-DODLA_REFERENCE_NO_CALL_LOG"]
# MLPerf Tiny v1.0 inference results on a Cortex-M4 (NUCLEO-L4R5ZI, 120 MHz), int8 models:
# milliseconds, and cycles at 120 MHz; the reference is TFLite Micro with CMSIS-NN, the best
# the fastest entry (STM32Cube.AI 9.0 or Plumerai).
PUBLISHED = {"kws": (181.9, 43.2), "vww": (600.6, 88.9), "ic": (704.2, 165.1), "ad": (10.05, 4.05)}
TASKS = {"kws": "keyword spotting, DS-CNN, 49x10 MFCC", "ic": "image classification, ResNet-8, "
         "32x32x3", "vww": "visual wake words, MobileNetV1 0.25, 96x96x3",
         "ad": "anomaly detection, FC autoencoder, 640", "digits": "digits CNN (models/digits), 8x8"}

APP = r"""/* The benchmark's firmware application for one model: NAME_create_in over a static buffer,
 * RUNS inferences on one pseudo-random input, the instructions of each, the memory and stack
 * used, and the first outputs (times 1e6) for the host's comparison. */
#include "board.h"
#include "@NAME@.h"

static unsigned char memory[@UPPER@_MEMORY_BYTES];
static float input[@UPPER@_INPUT_0_COUNT], output[@UPPER@_OUTPUT_0_COUNT];

static void show(const char *text, long long value, const char *rest) {
  board_write(text);
  board_write_int(value);
  board_write(rest);
}

int main(void) {
  @NAME@_instance *net = 0;
  unsigned state = 12345u;
  long long i, used;
  int counting = board_start(), status;
  uint64_t least = 0;
  for (i = 0; i < (long long)sizeof memory; ++i)
    memory[i] = 0xA5;
  for (i = 0; i < @UPPER@_INPUT_0_COUNT; ++i) {
    state = state * 1103515245u + 12345u;
    input[i] = (float)((state >> 8) & 0xFFFF) / 32768.0f - 1.0f;
  }
  if ((status = @NAME@_create_in(memory, sizeof memory, &net)) != 0) {
    show("create failed: ", status, "\n");
    return 1;
  }
  for (i = 0; i < @RUNS@; ++i) {
    uint64_t start = board_cycles(), spent;
    if ((status = @NAME@_run(net, input, output)) != 0) {
      show("run failed: ", status, "\n");
      return 1;
    }
    spent = board_cycles() - start;
    if (i == 0 || spent < least)
      least = spent;
  }
  for (used = (long long)sizeof memory; used > 0 && memory[used - 1] == 0xA5; --used) {
  }
  show("memory ", used, "");
  show(" of ", (long long)sizeof memory, "\n");
  show("stack ", board_stack_used(), "\n");
  if (counting)
    show("instructions ", (long long)least, "\n");
  for (i = 0; i < 8 && i < @UPPER@_OUTPUT_0_COUNT; ++i) {
    float v = output[i] * 1e6f;
    show("output ", (long long)(v < 0 ? v - 0.5f : v + 0.5f), "\n");
  }
  @NAME@_destroy(net);
  return 0;
}
"""


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout[-2000:]}"
                           f"{r.stderr[-2000:]}")
    return r


def calibration(folder, shape, count=8):
    rng = np.random.default_rng(1)
    for k in range(count):
        d = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        t = numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), "input")
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(t.SerializeToString())
    return folder


def compile_model(odlac, model, shape, name, precision, work):
    out = os.path.join(work, f"{name}_{precision}")
    flags = ["--no-heap", "--memory=least", "--weights=c", "--target=thumbv7em-none-eabi",
             "--name", name, "--input-shape", "input:" + "x".join(map(str, shape))]
    if precision == "int8":
        flags += ["--quantize=int8", "--calibration",
                  calibration(os.path.join(work, f"{name}_calib"), shape)]
    run([odlac, model, *flags, "-o", out])
    with open(os.path.join(out, "app.c"), "w") as f:
        f.write(APP.replace("@NAME@", name).replace("@UPPER@", name.upper())
                .replace("@RUNS@", str(ARGS.runs)))
    header = open(os.path.join(out, name + ".h")).read()
    weights, arena = (int(re.search(rf"_{what}_BYTES (\d+)", header).group(1))
                      for what in ("WEIGHTS", "ARENA"))
    return out, weights, arena


def outputs(text):
    return np.array([int(v) for v in re.findall(r"^output (-?\d+)", text, re.M)], dtype=float)


def host_outputs(out, name, host_lib):
    exe = os.path.join(out, "host")
    run(["cc", "-std=c99", "-O2", "-I", INCLUDE, "-I", EXAMPLE, "-I", out,
         os.path.join(out, "app.c"), os.path.join(EXAMPLE, "board_host.c"),
         os.path.join(out, name + ".c"), os.path.join(out, name + "_weights.c"), host_lib,
         f"-Wl,-rpath,{os.path.dirname(host_lib)}", "-lm", "-o", exe])
    return outputs(run([exe]).stdout)


def cflags(core, config=None):
    """`config`: the model's NAME_reference.h (its element types), or None."""
    extra = ["-I", os.path.dirname(config),
             f'-DODLA_REFERENCE_CONFIG="{os.path.basename(config)}"'] if config else []
    return ["-mthumb", *CORES[core][1], "-std=c99", "-O2", "-fno-short-enums",
            "-ffunction-sections", "-fdata-sections", *BACKEND, "-I", INCLUDE, "-I", REFERENCE,
            "-I", os.path.join(REFERENCE, "..", "common"), "-I", EXAMPLE, *extra]


BUILT = {}  # (core, the config's text): objects


def backend_objects(core, config, work):
    """The reference backend and the board files, compiled two at a time, once per core and
    set of element types."""
    key = (core, open(config).read().split("*/", 1)[1])
    if key in BUILT:
        return BUILT[key]
    folder = os.path.join(work, f"backend_{core}_{len(BUILT)}")
    os.makedirs(folder, exist_ok=True)
    sources = [*(os.path.join(EXAMPLE, f) for f in ("startup.c", "board_cortexm.c", "no_heap.c")),
               *(os.path.join(REFERENCE, f) for f in sorted(os.listdir(REFERENCE))
                 if f.endswith(".c"))]
    objects, pending = [], []
    for src in sources:
        obj = os.path.join(folder, os.path.basename(src)[:-2] + ".o")
        objects.append(obj)
        pending.append(subprocess.Popen(["arm-none-eabi-gcc", *cflags(core, config), "-c", src,
                                         "-o", obj]))
        if len(pending) == 2:
            [q.wait() for q in pending]
            pending = []
    if any(q.wait() for q in pending) or not all(os.path.exists(o) for o in objects):
        raise RuntimeError("compiling the reference backend for " + core + " failed")
    BUILT[key] = objects
    return objects


def firmware(out, name, core, work):
    board, _, script = CORES[core]
    objects = backend_objects(core, os.path.join(out, name + "_reference.h"), work)
    elf = os.path.join(out, f"{core}.elf")
    sources = [os.path.join(out, "app.c"), os.path.join(out, name + ".c"),
               os.path.join(out, name + "_weights.c")]
    run(["arm-none-eabi-gcc", *cflags(core), "-I", out, *sources, *objects,
         "-T", os.path.join(EXAMPLE, script), "-Wl,--gc-sections", "-Wl,--no-enum-size-warning",
         "--specs=nano.specs", "--specs=nosys.specs", "-lm", "-o", elf])
    text, data, bss = map(int, run(["arm-none-eabi-size", elf]).stdout.splitlines()[1].split()[:3])
    r = run(["timeout", "1800", "qemu-system-arm", "-M", board, "-nographic", "-monitor", "none",
             "-icount", "shift=0", "-semihosting-config", "enable=on,target=native",
             "-kernel", elf])
    if "heap call" in r.stdout:
        raise RuntimeError(f"{name} on {core}: {r.stdout}")
    got = {k: int(v) for k, v in re.findall(r"^(memory|stack|instructions) (\d+)", r.stdout, re.M)}
    stated = int(re.search(r"memory \d+ of (\d+)", r.stdout).group(1))
    return {"text": text, "data": data, "bss": bss, "stated": stated, **got,
            "outputs": outputs(r.stdout)}


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cores", default="m4,m7,m55")
    p.add_argument("--models", default="kws,ic,vww,ad,digits")
    p.add_argument("--precisions", default="float32,int8")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--odlac", default=os.path.join(ROOT, "build", "compiler", "driver", "odlac"))
    p.add_argument("--host-lib", default=os.path.join(ROOT, "build", "runtime_stubs", "reference",
                                                      "libodla_reference.so"))
    p.add_argument("-o", "--output", default=os.path.join(ROOT, "docs", "embedded.md"))
    ARGS = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="odlac-embedded-") as work:
        for name in ARGS.models.split(","):
            if name == "digits":
                model, shape = os.path.join(ROOT, "models", "digits", "model.onnx"), (1, 1, 8, 8)
            else:
                model, shape = tiny_models.export(name, work)
            for precision in ARGS.precisions.split(","):
                out, weights, arena = compile_model(ARGS.odlac, model, shape, name, precision, work)
                want = host_outputs(out, name, ARGS.host_lib)
                for core in ARGS.cores.split(","):
                    m = dict(firmware(out, name, core, work), arena=arena)
                    worst = float(np.max(np.abs(m["outputs"] - want))) if len(want) else 0.0
                    rows.append((name, precision, core, weights, m, worst))
                    print(f"{name:6} {precision:7} {core:3}: {m.get('instructions', 0) / 1e6:8.3f} M "
                          f"instructions, memory {m['memory']} of {m['stated']} B, stack "
                          f"{m['stack']} B, text {m['text']} B (weights {weights}), outputs "
                          f"within {worst / 1e6:.2g} of the host's", flush=True)
    write(rows, {name: tflm_arena(name) for name in ARGS.models.split(",") if name in PUBLISHED})


def tflm_arena(name):
    """TFLite Micro's arena for the model (bench/tflm_arena.py in the TFLite Micro venv):
    bytes in all, of tensors (the head) and of persistent structures (the tail)."""
    python = os.path.join(run([os.path.join(ROOT, "scripts", "install-deps.sh"), "venv-path",
                               "tflm"]).stdout.strip(), "bin", "python")
    if not os.path.exists(python):
        raise RuntimeError(f"{python} is missing: run scripts/install-deps.sh bench")
    r = run([python, os.path.join(HERE, "tflm_arena.py"), name])
    text = r.stdout + r.stderr  # TFLite Micro's own print goes to stderr
    found = re.findall(r"Arena allocation (total|head|tail) (\d+) bytes", text)
    return {k: int(v) for k, v in found}


def write(rows, tflm):
    lines = [
        "# odlac on microcontrollers: instructions, RAM and flash per inference",
        "",
        "Written by `PY bench/embedded.py` (PY: `scripts/install-deps.sh venv-path`/bin/python):",
        "the four MLPerf Tiny reference architectures (`bench/tiny_models.py`: PyTorch, random",
        "weights and batch-norm statistics, seed 0) and the digits CNN, compiled by odlac with",
        "`--no-heap --memory=least --weights=c` (int8: `--quantize=int8` over 8 random",
        "calibration inputs), built with arm-none-eabi-gcc -O2 and newlib with the reference",
        "backend's sources (no threads, heap, stdio or call log; only the model's element",
        "types: NAME_reference.h) and the board files of",
        "[examples/cortex-m](../examples/cortex-m/README.md), run on QEMU's "
        + ", ".join(f"{CORES[c][0]} ({c.upper()})" for c in ARGS.cores.split(",")) + " boards.",
        "",
        f"- **Instructions**: the fewest of {ARGS.runs} inferences on one input, counted by "
        "SysTick under",
        "  `qemu-system-arm -icount shift=0` (QEMU advances virtual time 1 ns per instruction;",
        "  the firmware calibrates ticks against a loop of a known count). Instructions are a",
        "  proxy for cycles: a Cortex-M4 runs about 1.1-1.5 cycles per instruction on such code",
        "  with zero-wait memory, more from flash with wait states.",
        "- **RAM**: bytes of the `--no-heap` buffer the run wrote (instance, activation arena and",
        "  the backend's structures; painted before, scanned after), plus the stack it reached",
        "  (the bottom 64 KiB of the stack painted; >= where it reached the bottom); in",
        "  parentheses the buffer's size as the generated header states it.",
        "- **Flash**: the firmware's text and initialized data (`arm-none-eabi-size`): weights,",
        "  the code of the model, the backend and newlib's libm and start-up, and the",
        "  application; `code` is that less the weights.",
        "- `odlac --report --target=thumbv7em-none-eabi` states RAM (with a bound of the stack)",
        "  and flash before anything is built, from measurements of the backend",
        "  ([backends.md](backends.md#footprint-table)); `build.CortexMTest` checks them against",
        "  the firmware.",
        "- Every run's outputs equal the same program's on the host within the figure given",
        "  (output units).",
        "",
        "| model | precision | core | instructions / inference | RAM: buffer + stack (stated) | flash (code) | vs host |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, precision, core, weights, m, worst in rows:
        code = m["text"] + m["data"] - weights
        lines.append(
            f"| {name} | {precision} | {core.upper()} | {m.get('instructions', 0) / 1e6:.2f} M | "
            f"{m['memory'] / 1024:.1f} + {'>= ' if m['stack'] >= 65536 else ''}"
            f"{m['stack'] / 1024:.1f} KiB ({m['stated'] / 1024:.1f}) | "
            f"{(m['text'] + m['data']) / 1024:.0f} KiB ({code / 1024:.0f}) | "
            f"{worst / 1e6:.1g} |")
    lines += [
        "",
        "MLPerf Tiny v1.0 inference results on a Cortex-M4 (NUCLEO-L4R5ZI at 120 MHz, int8",
        "models), for comparison with the M4 rows: cycles are the published milliseconds at",
        "120 MHz; TFLite Micro's framework code is about 10 KB of flash.",
        "",
        "| model | task | TFLite Micro + CMSIS-NN | best entry (STM32Cube.AI 9.0, Plumerai) | odlac M4 int8 | odlac M4 float32 |",
        "|---|---|---|---|---|---|",
    ]
    m4 = {(n, p): m for n, p, c, _, m, _ in rows if c == "m4"}
    for name, (ref, best) in PUBLISHED.items():
        cell = lambda p: (f"{m4[(name, p)]['instructions'] / 1e6:.2f} M instructions"  # noqa: E731
                          if (name, p) in m4 and "instructions" in m4[(name, p)] else "not run")
        lines.append(f"| {name} | {TASKS[name]} | {ref} ms ({ref * 0.12:.1f} M cycles) | {best} ms "
                     f"({best * 0.12:.2f} M cycles) | {cell('int8')} | {cell('float32')} |")
    lines += [
        "",
        "What these figures do not show: the published entries run trained int8 models on a",
        "real board (cycles, flash wait states); odlac's run random-weight models under QEMU",
        "(instructions). Every convolution, Gemm and average pool of the int8 rows runs in",
        "integers, on the reference backend's lean kernels of least-memory computations",
        "(docs/quantization.md): the int8 weights read in place from flash, im2col blocks of 8",
        "pixels (4 where fewer are left) built in place and multiplied by SMLAD after SXTB16",
        "splits 4 weight bytes into pairs, a kernel row over the 8 pixels in Thumb-2 assembly",
        "(27 instructions for 32 multiply-adds; on the M55 too: Helium serves only the packed",
        "kernels), each row's uint8 outputs requantized in registers as it ends; 3 x 3 depthwise",
        "channels over uint8 maps read as bytes (UXTB16 pairs, the zero point folded into the",
        "bias), summed by SMLAD from the bias, each output requantized as it is made; a Gemm of",
        "one row runs as the 1 x 1 convolution of a map of one pixel (odlac's",
        "matmul-rows-as-conv), four kernel rows of K bytes against its column; exact integer",
        "requantization (SMMLA: the product's high word plus the rounding and the zero point, one",
        "shift, SSAT or USAT, where no sum can fall on a tie) and integer QLinearAdd; the float32",
        "rows run portable C99, which GCC auto-vectorizes for Helium on the M55. RAM is the",
        "activation arena plus the backend's structures (with their blocks' headers: a constant",
        "40 bytes and 8 a dim of its shape, an argument or a result 64 and 8 a dim; each node",
        "one block of 80 bytes, 4 an operand or result and its parameters, which the int8",
        "products and QLinearAdd keep packed (about 90 of a convolution's 384 bytes); the",
        "planner's lists go to the arena's room while it compiles: docs/backends.md): for these",
        "small models the structures are from a fifth (IC) to four fifths (AD) of it. A",
        "convolution whose result has its input's shape writes over its input where the input",
        "dies there (docs/quantization.md): a depthwise or 1 x 1 one over what it has copied, a",
        "3 x 3 one a row at a time from a copy of the input rows its windows still read, so that",
        "a residual block's second convolution (IC) and the keyword spotter's depthwise and",
        "pointwise ones hold one map and not two.",
        "",
        "RAM against TFLite Micro's arena for the same architectures in int8, measured by",
        "`bench/tflm_arena.py`: Keras twins of the models (random weights), converted by",
        "TensorFlow's converter with full-integer quantization, loaded by the tflite-micro",
        "interpreter (PyPI), whose recording allocator reports the arena: tensors (its planner's",
        "activations) plus persistent structures (per-channel requantization data, tensor and",
        "node records). That interpreter is TFLite Micro's x86-64 build: its persistent",
        "structures hold 8-byte pointers (a 32-bit core's are smaller), and its reference",
        "kernels ask for no scratch (CMSIS-NN's convolutions take an im2col buffer from the",
        "arena). odlac's figure is the M4 int8 row's buffer (the bytes the run wrote; the size",
        "the header states is larger, measured on the 64-bit host): its activation arena",
        "(odlac's plan) plus the instance and the backend's structures; odlac keeps the",
        "requantization data in flash.",
        "",
        "| model | TFLite Micro arena: tensors + persistent | odlac M4 int8 buffer: activation arena + structures | odlac / TFLite Micro |",
        "|---|---|---|---|",
    ]
    for name, t in tflm.items():
        m = m4.get((name, "int8"))
        ours = (f"{m['memory']:,} B: {m['arena']:,} + {m['memory'] - m['arena']:,}" if m
                else "not run")
        ratio = f"{m['memory'] / t['total']:.2f}" if m else ""
        lines.append(f"| {name} | {t['total']:,} B: {t['head']:,} + {t['tail']:,} | {ours} | "
                     f"{ratio} |")
    lines.append("")
    with open(ARGS.output, "w") as f:
        f.write("\n".join(lines))
    print("wrote", ARGS.output)


if __name__ == "__main__":
    main()
