"""Tests of odlac as a build-system step (docs/cli.md, "Building objects and libraries"):
weights objects written through LLVM for five targets, checked byte by byte against the ONNX
initializers; an aarch64 program built with the cross compiler and run under qemu against
the host's and PyTorch's results; the reference backend's Arm kernels against its portable
ones (qemu-user and Cortex-M firmware); --emit=obj|static|shared; byte-identical outputs;
depfiles; RAM and flash budgets; two models (and two instances of one) in one program from
two threads; the installed CMake package, pkg-config files and examples/two_models; and a
model with more than 2 GB of external weights, compiled in a fraction of its size in memory.

Run a group with `test_build.py TestClass`; ctest runs each group as one test (label build)."""
import collections
import glob
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import odlactest  # noqa: E402
from elf import Elf  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from backend_footprint import kept_sections  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MODELS = os.path.join(ROOT, "models")
BUILD_DIR = os.environ["ODLAC_BUILD_DIR"]

# triple -> (ELF class, e_machine, the Debian cross compiler, qemu for Linux targets)
TARGETS = {
    "x86_64-linux-gnu": (64, 62, "x86_64-linux-gnu-gcc", None),
    "aarch64-linux-gnu": (64, 183, "aarch64-linux-gnu-gcc", "qemu-aarch64"),
    "armv7a-linux-gnueabihf": (32, 40, "arm-linux-gnueabihf-gcc", "qemu-arm"),
    "thumbv7em-none-eabi": (32, 40, "arm-none-eabi-gcc", None),
    "riscv64-linux-gnu": (64, 243, "riscv64-linux-gnu-gcc", "qemu-riscv64"),
}
SYSROOT = {"aarch64-linux-gnu": "/usr/aarch64-linux-gnu",
           "armv7a-linux-gnueabihf": "/usr/arm-linux-gnueabihf",
           "riscv64-linux-gnu": "/usr/riscv64-linux-gnu"}


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r


def install(work):
    prefix = os.path.join(work, "prefix")
    run(["cmake", "--install", BUILD_DIR, "--prefix", prefix])
    return prefix


def reference_library(triple, build_dir):
    """libodla_reference.a cross-built for a Linux triple with the backend's own CMake files
    (tests/build/cross_reference)."""
    _, _, cc, _ = TARGETS[triple]
    run(["cmake", "-S", os.path.join(HERE, "cross_reference"), "-B", build_dir,
         "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_SYSTEM_NAME=Linux",
         f"-DCMAKE_SYSTEM_PROCESSOR={triple.split('-')[0]}", f"-DCMAKE_C_COMPILER={cc}",
         *(["-DCMAKE_C_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else [])])
    run(["cmake", "--build", build_dir, "--target", "odla_reference_static", "-j2"])
    return os.path.join(build_dir, "reference", "libodla_reference.a")


def raw_inputs(model, data_set, out):
    """The data set's input_0.pb as a raw float32 file; returns (path, expected output)."""
    ds = os.path.join(MODELS, model, f"test_data_set_{data_set}")
    path = os.path.join(out, f"{model}_{data_set}.bin")
    odlactest.load(os.path.join(ds, "input_0.pb")).astype(np.float32).tofile(path)
    return path, odlactest.load(os.path.join(ds, "output_0.pb"))


def parse_depfile(text):
    """Make's reading of a one-rule depfile: (targets, prerequisites)."""
    text = text.replace("\\\n", " ")
    tokens, cur, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and text[i + 1:i + 2] in (" ", "#"):
            cur, i = cur + text[i + 1], i + 2
        elif c == "$" and text[i + 1:i + 2] == "$":
            cur, i = cur + "$", i + 2
        elif c.isspace():
            if cur:
                tokens.append(cur)
            cur, i = "", i + 1
        else:
            cur, i = cur + c, i + 1
    if cur:
        tokens.append(cur)
    end = next(k for k, t in enumerate(tokens) if t.endswith(":"))
    return tokens[:end] + [tokens[end][:-1]], tokens[end + 1:]


def close(got, want, rtol=1e-4, atol=1e-5):
    return np.allclose(got, want, rtol=rtol, atol=atol)


class Work(unittest.TestCase):
    tc = odlactest.Toolchain()

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="odlac-build-")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def odlac(self, model, out, *flags, odlac=None, check=True):
        r = subprocess.run([odlac or self.tc.odlac, model, "-o", out, *flags],
                           capture_output=True, text=True)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def run_driver(self, cmd_prefix, exe, model, tag, env=None):
        """Runs an --emit-main driver (possibly under qemu) on every data set of `model`;
        returns the outputs."""
        outs = []
        for ds in odlactest.data_sets(os.path.join(MODELS, model)):
            res = os.path.join(self.work, "res", tag, os.path.basename(ds))
            os.makedirs(res)
            run([*cmd_prefix, exe, os.path.join(ds, "input_0.pb"), "-o", res], env=env)
            got = odlactest.load(os.path.join(res, "output_0.pb"))
            want = odlactest.load(os.path.join(ds, "output_0.pb"))
            self.assertTrue(close(got, want), f"{tag} {ds}: {got} vs PyTorch {want}")
            outs.append(got)
        return outs


class ObjectTargetsTest(Work):
    """--weights=obj for every target: the ELF facts and each tensor's bytes."""

    def test_weights_objects_hold_the_initializers_for_every_target(self):
        model = os.path.join(MODELS, "mlp", "model.onnx")
        inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(model).graph.initializer}
        for triple, (bits, machine, cc, _) in TARGETS.items():
            with self.subTest(target=triple):
                out = os.path.join(self.work, triple)
                self.odlac(model, out, "-O0", "--weights=obj", f"--target={triple}")
                self.assertEqual(sorted(os.listdir(out)), [".odlac-outputs-net", "net.c", "net.h",
                                                           "net.json", "net_weights.o"])
                elf = Elf(os.path.join(out, "net_weights.o"))
                self.assertEqual((elf.bits, elf.machine, elf.type), (bits, machine, 1))
                for name, array in inits.items():
                    sym = "net_w_" + name.replace(".", "_")
                    s = elf.symbols[sym]
                    self.assertEqual(s["size"], array.nbytes, sym)
                    self.assertEqual(s["value"] % 64, 0, f"{sym} is not 64-byte aligned")
                    self.assertEqual((s["bind"], s["type"]), (1, 1))  # GLOBAL OBJECT
                    self.assertEqual(elf.section_of(sym), ".rodata")
                    self.assertEqual(elf.symbol_bytes(sym), array.tobytes(), sym)
                with open(os.path.join(out, "net.c")) as f:
                    self.assertIn("extern const float net_w_fc1_weight[2048];", f.read())
                # The target's compiler accepts it beside compiled code (ABI flags agree).
                run([cc, "-std=c99", "-O2", "-I", self.tc.include, "-c",
                     os.path.join(out, "net.c"), "-o", os.path.join(out, "code.o"),
                     *(["-mcpu=cortex-m4", "-mthumb"] if "thumb" in triple else [])])
                run([cc, "-r", "-nostdlib", "-o", os.path.join(out, "all.o"),
                     os.path.join(out, "code.o"), os.path.join(out, "net_weights.o")])
                self.assertNotIn(" U net_w_", run(["nm", os.path.join(out, "all.o")]).stdout)

    def test_weights_section_places_the_weights(self):
        out = os.path.join(self.work, "sec")
        self.odlac(os.path.join(MODELS, "cnn", "model.onnx"), out, "--weights=obj",
                   "--target=thumbv7em-none-eabi", "--weights-section=.flash_weights")
        elf = Elf(os.path.join(out, "net_weights.o"))
        weights = [n for n in elf.symbols if n.startswith("net_w_")]
        self.assertTrue(weights)
        for sym in weights:
            self.assertEqual(elf.section_of(sym), ".flash_weights")
        sec = next(s for s in elf.sections if s["name"] == ".flash_weights")
        self.assertEqual(sec["flags"] & 3, 2)  # SHF_ALLOC, not SHF_WRITE
        self.assertGreaterEqual(sec["align"], 64)
        # The same for the C arrays of --weights=c, compiled for the target.
        out = os.path.join(self.work, "sec_c")
        self.odlac(os.path.join(MODELS, "cnn", "model.onnx"), out, "--weights=c",
                   "--target=thumbv7em-none-eabi", "--weights-section=.flash_weights")
        obj = os.path.join(out, "net_weights.o")
        run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-std=c99", "-O2",
             "-I", self.tc.include, "-c", os.path.join(out, "net_weights.c"), "-o", obj])
        elf = Elf(obj)
        weights = [n for n in elf.symbols if n.startswith("net_w_")]
        self.assertTrue(weights)
        for sym in weights:
            self.assertEqual(elf.section_of(sym), ".flash_weights")

    def test_bad_targets_and_flags_are_refused_and_nothing_is_written(self):
        cnn = os.path.join(MODELS, "cnn", "model.onnx")
        out = os.path.join(self.work, "out")
        cases = [
            (["--weights=obj", "--target=mips-linux-gnu"], "odlac writes weight objects for"),
            (["--weights=obj", "--target=armeb-linux-gnueabi"], "not a little-endian ELF"),
            (["--weights=obj", "--target=x86_64-apple-darwin"], "not a little-endian ELF"),
            (["--weights-section=.flash", "--weights=bin"],
             "--weights-section needs --weights=c or --weights=obj"),
            (['--weights-section=.fl"ash'], "is not a section name"),
            (["--no-heap", "--exec-mode=interpret"], "--no-heap needs --exec-mode=compile"),
            (["--no-heap", "--weights=bin"], "--no-heap needs the weights compiled in"),
            (["--no-heap", "--backend=dnnl"], "lacks the feature static_memory"),
            (["--memory=small"], "--memory must be fast or least, got 'small'"),
            (["--memory=least", "--exec-mode=interpret"], "--memory=least needs --exec-mode=compile"),
            (["--memory=least", "--backend=dnnl"], "lacks the feature least_memory"),
            (["--emit=dll"], "--emit must be c, obj, static or shared"),
            (["--emit=shared", "--target=thumbv7em-none-eabi"], "no operating system"),
            (["--emit=obj", "--odla-prefix", os.path.join(self.work, "none")],
             "no ODLA headers"),
            (["--ram-budget=lots"], "expected a positive number of bytes"),
        ]
        for flags, message in cases:
            with self.subTest(flags=flags):
                r = self.odlac(cnn, out, *flags, check=False)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertFalse(os.path.exists(out))
                self.assertEqual([f for f in os.listdir(self.work) if f.startswith(".odlac")],
                                 [])


class CrossTargetTest(Work):
    """The acceptance test: an aarch64 program from --weights=obj --target=aarch64-linux-gnu,
    the generated C and the reference backend cross-compiled, run under qemu and compared
    with the host's and PyTorch's results; and --emit=static driving the cross compiler.
    ArmLinuxTest and RiscvLinuxTest run the same program for armhf and riscv64."""
    TRIPLE = "aarch64-linux-gnu"

    @classmethod
    def setUpClass(cls):
        cls.ref_build = tempfile.mkdtemp(prefix="odlac-ref-aarch64-")
        cls.ref_lib = reference_library(cls.TRIPLE, cls.ref_build)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.ref_build, ignore_errors=True)

    def qemu(self):
        return [TARGETS[self.TRIPLE][3], "-L", SYSROOT[self.TRIPLE]]

    def test_program_gives_the_hosts_results_under_qemu(self):
        cnn = os.path.join(MODELS, "cnn", "model.onnx")
        host_dir = os.path.join(self.work, "host")
        self.odlac(cnn, host_dir, "--weights=obj", "--emit-main")
        host_exe = os.path.join(host_dir, "net")
        run([self.tc.cc, "-std=c99", "-O2", "-I", self.tc.include,
             os.path.join(host_dir, "net.c"), os.path.join(host_dir, "main.c"),
             os.path.join(host_dir, "net_weights.o"), self.tc.lib, "-lm", "-o", host_exe])
        host = self.run_driver([], host_exe, "cnn", "host")

        out = os.path.join(self.work, self.TRIPLE)
        self.odlac(cnn, out, "--weights=obj", f"--target={self.TRIPLE}", "--emit-main")
        exe = os.path.join(out, "net")
        run([TARGETS[self.TRIPLE][2], "-std=c99", "-O2", "-I", self.tc.include,
             os.path.join(out, "net.c"), os.path.join(out, "main.c"),
             os.path.join(out, "net_weights.o"), self.ref_lib, "-lm", "-o", exe])
        self.assertEqual(Elf(exe).machine, TARGETS[self.TRIPLE][1])
        got = self.run_driver(self.qemu(), exe, "cnn", self.TRIPLE)
        for g, h in zip(got, host):
            self.assertTrue(close(g, h), f"{self.TRIPLE}: {g} vs host {h}")

    def test_quantized_ops_agree_with_the_definition_on_the_target(self):
        """tests/runtime/test_qlinear.c (every integer op against int64 code, packed and, in
        least-memory computations, lean) and test_quantize.c (float32 to 8 bits at the
        rounding's ties, NaN, infinities) on the target's kernels: SMLAD on armv7-a, the
        integer QLinearAdd of targets whose float64 is software, VCVTR's rounding on armv7-a
        without NEON."""
        for test in ("test_qlinear", "test_quantize"):
            with self.subTest(test=test):
                exe = os.path.join(self.work, test)
                run([TARGETS[self.TRIPLE][2], "-std=c99", "-O2", "-I", self.tc.include,
                     "-I", os.path.join(ROOT, "tests", "runtime"),
                     os.path.join(ROOT, "tests", "runtime", test + ".c"), self.ref_lib, "-lm",
                     "-lpthread", "-o", exe])
                r = subprocess.run(["timeout", "600", *self.qemu(), exe, self.work],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])

    def test_emit_static_runs_the_cross_compiler_of_the_target(self):
        prefix = install(self.work)
        out = os.path.join(self.work, "lib")
        self.odlac(os.path.join(MODELS, "cnn", "model.onnx"), out, "--weights=obj",
                   f"--target={self.TRIPLE}", "--emit=static", "--emit-main",
                   odlac=os.path.join(prefix, "bin", "odlac"))
        self.assertEqual(sorted(os.listdir(out)),
                         [".odlac-outputs-net", "libnet.a", "main.c", "net.h", "net.json"])
        cc = TARGETS[self.TRIPLE][2]
        members = run([cc.replace("-gcc", "-ar"), "t", os.path.join(out, "libnet.a")]).stdout
        self.assertEqual(members.split(), ["net_code.o", "net_weights.o"])
        for member in members.split():
            run([cc.replace("-gcc", "-ar"), "x", os.path.join(out, "libnet.a"), member], cwd=self.work)
            self.assertEqual(Elf(os.path.join(self.work, member)).machine, TARGETS[self.TRIPLE][1])
        exe = os.path.join(out, "net")
        run([cc, "-std=c99", "-I", os.path.join(prefix, "include"), os.path.join(out, "main.c"),
             "-L", out, "-lnet", self.ref_lib, "-lm", "-o", exe])
        self.run_driver(self.qemu(), exe, "cnn", "static-aarch64")


class ArmLinuxTest(CrossTargetTest):
    """The CNN as a 32-bit Arm Linux program (armv7-a, hard float) under qemu-arm."""
    TRIPLE = "armv7a-linux-gnueabihf"
    test_emit_static_runs_the_cross_compiler_of_the_target = None


class RiscvLinuxTest(CrossTargetTest):
    """The CNN as a riscv64 Linux program under qemu-riscv64."""
    TRIPLE = "riscv64-linux-gnu"
    test_emit_static_runs_the_cross_compiler_of_the_target = None


class X86PortableTest(Work):
    """One reference library for every x86-64 (docs/backends.md, "Instruction sets"): the
    float32 CNN and the int8 digits CNN, linked with the build's libodla_reference.a, run on
    this machine and under qemu-x86_64 as a baseline x86-64 (qemu64: SSE2, no AVX: the
    build's code, no SIGILL) and as a Haswell (AVX2 and FMA: the AVX2 clones and kernels).
    Their results agree within rounding (FMA or not; the integer arithmetic is exact on every
    path, the float32 ops around it are not)."""
    CPUS = ["qemu64", "Haswell"]

    def program(self, model, tag, *flags):
        out = os.path.join(self.work, tag)
        self.odlac(os.path.join(MODELS, model, "model.onnx"), out, "--emit-main", "--weights=c",
                   *flags)
        exe = os.path.join(out, "net")
        self.tc.build(out, exe)
        return exe

    def outputs(self, prefix, exe, data_sets, tag):
        outs = []
        for ds in data_sets:
            res = os.path.join(self.work, "res", tag, os.path.basename(ds))
            os.makedirs(res)
            run([*prefix, exe, os.path.join(ds, "input_0.pb"), "-o", res])
            outs.append(odlactest.load(os.path.join(res, "output_0.pb")))
        return outs

    def test_library_holds_kernels_for_each_instruction_set(self):
        symbols = run(["nm", self.tc.lib]).stdout
        for name in ["ref_micro_kernel_avx512", "ref_micro_kernel_avx2", "ref_qg_tile_avx2",
                     "ref_sgemm_blocks.arch_x86_64_v4", "ref_sgemm_blocks.arch_x86_64_v3"]:
            self.assertIn(name, symbols)

    def test_float32_and_int8_run_on_a_baseline_x86_64_and_an_avx2_one(self):
        digits = os.path.join(MODELS, "digits", "test_data_set_0")  # 4 digits
        cases = [("cnn", self.program("cnn", "cnn"),
                  odlactest.data_sets(os.path.join(MODELS, "cnn"))),
                 ("digits", self.program("digits", "digits_int8", "--quantize=int8",
                                         f"--calibration={digits}", "--input-shape",
                                         "input:4x1x8x8"), [digits])]
        for model, exe, data_sets in cases:
            host = self.outputs([], exe, data_sets, f"{model}-host")
            for cpu in self.CPUS:
                got = self.outputs(["qemu-x86_64", "-cpu", cpu], exe, data_sets, f"{model}-{cpu}")
                for g, h in zip(got, host):
                    self.assertTrue(close(g, h), f"{model} on {cpu}: {g} vs host {h}")


class CortexMTest(Work):
    """examples/cortex-m: the digits classifier as bare-metal firmware (arm-none-eabi-gcc,
    newlib, the reference backend's sources without threads, heap, stdio or call log; odlac
    --no-heap) on QEMU's Cortex-M4F (mps2-an386), M7 (mps2-an500) and M55 (mps3-an547)
    boards: it classifies the held-out digits as the same program built for the host does,
    digit by digit (all 360 on the M4F: the host's 97.50%), with no call of malloc, calloc,
    realloc or free (no_heap.c ends the run with status 4 at one), within the memory the
    generated header states, without stdio or kernels of other element types linked, its
    messages through ODLA's logger hook, and prints its instructions per inference (QEMU
    -icount). odlac's report (digits.json) against the linked firmware (its map) and the stack
    it used, float32 on each board and int8 on the M4F (FOOTPRINT)."""
    EXAMPLE = os.path.join(ROOT, "examples", "cortex-m")
    BOARDS = (("mps2-an386", 360), ("mps2-an500", 40), ("mps3-an547", 40))

    @staticmethod
    def classes(output):
        return [line for line in output.splitlines() if line.startswith("class ")]

    # The report's figures against the firmware's (docs/backends.md, "Footprint table"):
    # the backend's objects and the generated code within 15% of what the link
    # holds of them (the table is measured on the M4F; the M7 and M55 build the same C), the
    # weights within 1%, and the stack an upper bound of the one the run used, less the
    # application's frames (main, the reset handler), and at most 4 times it (the bound
    # counts every path of each call tree: error messages, interpret mode).
    FOOTPRINT = {"code": 0.15, "weights": 0.01, "stack_over": 4.0}

    def firmware(self, board, count, flags="", name=None):
        out = os.path.join(self.work, name or board)
        firmware = os.path.join(out, "firmware.elf")
        run(["make", "-C", self.EXAMPLE, f"BOARD={board}", f"OUT={out}", f"FIRMWARE={firmware}",
             f"COUNT={count}", f"ODLAC={self.tc.odlac}", f"ODLA_INCLUDE={self.tc.include}",
             f"ODLAC_FLAGS={flags}", "EXTRA_CFLAGS=-fstack-usage"])
        elf = Elf(firmware)
        self.assertEqual(elf.machine, TARGETS["thumbv7em-none-eabi"][1])
        # No stdio (ODLA_REFERENCE_NO_STDIO) and no kernel of a type the model lacks
        # (digits_reference.h: float32 only).
        self.assertEqual([s for s in elf.symbols if "printf" in s and not s.startswith("ref_")],
                         [])
        self.assertIn("ref_maxpool_run_f32", elf.symbols)
        self.assertNotIn("ref_maxpool_run_f16", elf.symbols)
        r = run(["timeout", "600", "qemu-system-arm", "-M", board, "-nographic",
                 "-monitor", "none", "-icount", "shift=0",
                 "-semihosting-config", "enable=on,target=native", "-kernel", firmware])
        return out, r.stdout

    def host(self, out):
        host = os.path.join(out, "host")
        run([self.tc.cc, "-std=c99", "-O2", "-I", self.tc.include, "-I", out,
             "-I", os.path.join(out, "digits"), os.path.join(self.EXAMPLE, "classify.c"),
             os.path.join(self.EXAMPLE, "board_host.c"),
             os.path.join(out, "digits", "digits.c"),
             os.path.join(out, "digits", "digits_weights.c"), self.tc.lib, "-lm", "-o", host])
        return run([host]).stdout

    def test_digits_firmware_classifies_as_the_host_without_a_heap(self):
        for board, count in self.BOARDS:
            with self.subTest(board=board):
                out, got = self.firmware(board, count)
                self.assertNotIn("heap call", got)
                # Too little memory: ODLA_MEM_ERROR, the backend's message through the logger
                # hook (formatted without stdio), and the memory usable again after.
                self.assertIn("with too little memory: odla_status 4", got)
                self.assertIn("odla: CreateConstant: out of memory", got)
                self.assertEqual(len(self.classes(got)), count, got[-2000:])
                self.assertEqual(self.classes(got), self.classes(self.host(out)))
                used = re.search(r"memory used: (\d+) of (\d+) bytes", got)
                self.assertTrue(used and 0 < int(used.group(1)) <= int(used.group(2)), got[-500:])
                insns = re.search(r"instructions per inference: (\d+) \(least\)", got)
                self.assertTrue(insns and 100000 < int(insns.group(1)) < 10000000, got[-500:])
                if count == 360:
                    self.assertIn("accuracy: 351/360", got)
                self.check_footprint(out, got)

    def test_int8_report_figures_match_the_firmware(self):
        calibration = os.path.join(self.work, "calibration")
        rng = np.random.default_rng(1)
        for k in range(8):
            os.makedirs(os.path.join(calibration, f"test_data_set_{k}"))
            with open(os.path.join(calibration, f"test_data_set_{k}", "input_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(rng.random((1, 1, 8, 8), dtype=np.float32) * 16,
                                                "input").SerializeToString())
        out, got = self.firmware("mps2-an386", 40, f"--quantize=int8 --calibration={calibration}",
                                 name="int8")
        self.assertNotIn("heap call", got)
        self.assertEqual(len(self.classes(got)), 40, got[-2000:])
        self.check_footprint(out, got)

    def check_footprint(self, out, got):
        with open(os.path.join(out, "digits", "digits.json")) as f:
            report = json.load(f)
        reference = {f[:-2] + ".o" for f in os.listdir(os.path.join(ROOT, "runtime_stubs",
                                                                     "reference"))
                     if f.endswith(".c")}
        linked = collections.Counter()
        for (source, _), (size, flash, _) in kept_sections(
                os.path.join(out, "firmware.map")).items():
            part = ("backend" if source in reference else
                    {"digits.o": "generated code", "digits_weights.o": "weights"}.get(source))
            if flash and part:
                linked[part] += size
        frames = 0
        for obj, fn in (("classify", "main"), ("startup", "Reset_Handler")):
            with open(os.path.join(out, "obj", obj + ".su")) as f:
                frames += int(re.search(rf":{fn}\t(\d+)", f.read()).group(1))
        stack = int(re.search(r"stack used: (\d+) bytes", got).group(1)) - frames
        estimate = report["flash"]
        print(f"{out}: flash {report['flash_bytes']}, RAM {report['ram_bytes']}: " + ", ".join(
            f"{part} {estimate[part]} (linked {linked[part]})" for part in linked) +
            f", stack {report['ram']['stack']} (used {stack} beyond main)", file=sys.stderr)
        for part, tolerance in (("backend", "code"), ("generated code", "code"),
                                ("weights", "weights")):
            self.assertLessEqual(abs(estimate[part] - linked[part]),
                                 self.FOOTPRINT[tolerance] * linked[part], (part, estimate, linked))
        self.assertGreaterEqual(report["ram"]["stack"], stack)
        self.assertLessEqual(report["ram"]["stack"], self.FOOTPRINT["stack_over"] * stack)
        self.assertEqual(report["ram_bytes"], sum(report["ram"].values()))
        self.assertEqual(report["flash_bytes"], sum(estimate.values()))


class ArmKernelsTest(unittest.TestCase):
    """The reference backend's Arm kernels (runtime_stubs/reference/qgemm.c: SMLAD, Helium,
    NEON) against its portable ones and the int64 definition: tests/runtime/test_qgemm.c
    cross-compiled with -Werror for armv7-a with NEON (Thumb-2), armv7-a with only the DSP
    extension (in the Arm instruction set: the C loops that Thumb-2 builds take in assembly) and
    aarch64 (run under qemu-user), and as firmware (examples/cortex-m's start-up, newlib's
    semihosting stdio) for the Cortex-M4 (DSP) and the Cortex-M55 (Helium) under
    qemu-system-arm. Each build must hold the kernel its target selects. Then the whole
    reference backend with tests/runtime/test_qlinear.c for armv7-a in Thumb-2 under qemu-arm:
    the integer convolutions' code around those kernels (wide blocks of 8 pixels, depthwise
    convolutions over byte planes) against the test's naive loops, which only Thumb-2 builds
    run."""
    REFERENCE = os.path.join(ROOT, "runtime_stubs", "reference")
    EXAMPLE = os.path.join(ROOT, "examples", "cortex-m")
    SOURCES = [os.path.join(ROOT, "tests", "runtime", "test_qgemm.c"),
               os.path.join(REFERENCE, "qgemm.c")]
    LINUX = {  # name: (compiler, flags, qemu, sysroot, the tile kernel)
        "armv7-a+neon": ("arm-linux-gnueabihf-gcc", ["-march=armv7-a+simd", "-mfpu=neon"],
                         "qemu-arm", "/usr/arm-linux-gnueabihf", "ref_qg_tile_neon"),
        "armv7-a+dsp": ("arm-linux-gnueabihf-gcc",
                        ["-march=armv7-a", "-mfpu=vfpv3-d16", "-marm"], "qemu-arm",
                        "/usr/arm-linux-gnueabihf", "ref_qg_tile_dsp"),
        "aarch64": ("aarch64-linux-gnu-gcc", [], "qemu-aarch64", "/usr/aarch64-linux-gnu",
                    "ref_qg_tile_neon"),
    }
    BOARDS = {  # board: (flags, linker script, the tile kernel)
        "mps2-an386": (["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"], "mps2.ld",
                       "ref_qg_tile_dsp"),
        "mps3-an547": (["-mcpu=cortex-m55", "-mfloat-abi=hard"], "mps3-an547.ld",
                       "ref_qg_tile_mve"),
    }
    AGREE = "qgemm: every case agrees with the int64 definition"

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="odlac-arm-")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def assert_kernel(self, exe, kernel, nm):
        self.assertIn(kernel, run([nm, exe]).stdout.split(), f"{exe} lacks {kernel}")

    def test_linux_kernels_agree_with_the_portable_ones(self):
        for name, (cc, flags, qemu, sysroot, kernel) in self.LINUX.items():
            with self.subTest(target=name):
                exe = os.path.join(self.work, name)
                run([cc, *flags, "-std=c99", "-O3", "-fno-trapping-math", "-Wall", "-Wextra",
                     "-Werror", "-I", self.REFERENCE, *self.SOURCES, "-lm", "-o", exe])
                self.assert_kernel(exe, kernel, cc.replace("-gcc", "-nm"))
                self.assertIn(self.AGREE, run(["timeout", "120", qemu, "-L", sysroot, exe]).stdout)

    def test_thumb2_backend_passes_the_integer_products_test(self):
        cc, flags, qemu, sysroot, _ = self.LINUX["armv7-a+neon"]
        stubs = os.path.join(ROOT, "runtime_stubs")
        flags = [*flags, "-mthumb", "-std=c99", "-O2", "-I", os.path.join(stubs, "include"),
                 "-I", self.REFERENCE, "-I", os.path.join(stubs, "common")]
        sources = sorted(os.path.join(self.REFERENCE, f) for f in os.listdir(self.REFERENCE)
                         if f.endswith(".c"))
        objects = [os.path.join(self.work, os.path.basename(f)[:-2] + ".o") for f in sources]
        pending = []
        for src, obj in zip(sources, objects):  # two at a time
            pending.append(subprocess.Popen([cc, *flags, "-c", src, "-o", obj]))
            if len(pending) == 2:
                self.assertFalse(any(q.wait() for q in pending), "compiling the backend")
                pending = []
        self.assertFalse(any(q.wait() for q in pending), "compiling the backend")
        exe = os.path.join(self.work, "test_qlinear")
        run([cc, *flags, "-I", os.path.join(ROOT, "tests", "runtime"),
             os.path.join(ROOT, "tests", "runtime", "test_qlinear.c"), *objects, "-lm",
             "-lpthread", "-o", exe])
        for asm in ("ref_qg_lean_rows8_u8_t2", "ref_qg_dw3_u8_s1_t2"):
            self.assert_kernel(exe, asm, cc.replace("-gcc", "-nm"))
        scratch = os.path.join(self.work, "scratch")
        os.makedirs(scratch)
        r = subprocess.run(["timeout", "600", qemu, "-L", sysroot, exe, scratch],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])

    def test_cortex_m_kernels_agree_with_the_portable_ones(self):
        for board, (flags, script, kernel) in self.BOARDS.items():
            with self.subTest(board=board):
                cc = ["arm-none-eabi-gcc", "-mthumb", *flags, "-std=c99", "-O2"]
                objects = [os.path.join(self.work, f"{board}_{i}.o") for i in range(2)]
                for src, obj in zip(self.SOURCES, objects):  # the test's main as test_main
                    run([*cc, "-Wall", "-Wextra", "-Werror", "-I", self.REFERENCE,
                         "-Dmain=test_main", "-c", src, "-o", obj])
                elf = os.path.join(self.work, board + ".elf")
                run([*cc, os.path.join(HERE, "firmware_main.c"),
                     *(os.path.join(self.EXAMPLE, f) for f in ("startup.c", "board_cortexm.c")),
                     *objects, "-T", os.path.join(self.EXAMPLE, script), "-nostartfiles",
                     "--specs=rdimon.specs", "-Wl,--defsym=end=__bss_end", "-lm", "-o", elf])
                self.assert_kernel(elf, kernel, "arm-none-eabi-nm")
                for asm in ("ref_qg_lean_pairs_t2", "ref_qg_lean_one4_t2",  # Thumb-2
                            "ref_qg_lean_rows8_u8_t2", "ref_qg_dw3_u8_s1_t2",
                            "ref_qg_dw3_u8_s2_t2"):
                    self.assert_kernel(elf, asm, "arm-none-eabi-nm")
                r = run(["timeout", "120", "qemu-system-arm", "-M", board, "-nographic",
                         "-monitor", "none", "-semihosting-config", "enable=on,target=native",
                         "-kernel", elf])
                self.assertIn(self.AGREE, r.stdout)


class LibrariesTest(Work):
    """--emit on the host, determinism, depfiles, budgets, several models in one program."""

    def test_emit_obj_static_and_shared_link_and_match_pytorch(self):
        prefix = install(self.work)
        odlac = os.path.join(prefix, "bin", "odlac")
        inc, libdir = os.path.join(prefix, "include"), os.path.join(prefix, "lib")
        for emit, artifact in (("obj", "net.o"), ("static", "libnet.a"), ("shared", "libnet.so")):
            with self.subTest(emit=emit):
                out = os.path.join(self.work, emit)
                self.odlac(os.path.join(MODELS, "cnn", "model.onnx"), out, f"--emit={emit}",
                           "--weights=obj", "--emit-main", odlac=odlac)
                self.assertEqual(sorted(os.listdir(out)), sorted(
                    [".odlac-outputs-net", artifact, "main.c", "net.h", "net.json"]))
                exe = os.path.join(out, "net")
                main = os.path.join(out, "main.c")
                if emit == "obj":
                    run([self.tc.cc, "-I", inc, main, os.path.join(out, artifact),
                         os.path.join(libdir, "libodla_reference.a"), "-lm", "-o", exe])
                elif emit == "static":
                    run([self.tc.cc, "-I", inc, main, "-L", out, "-lnet",
                         os.path.join(libdir, "libodla_reference.a"), "-lm", "-o", exe])
                else:
                    needed = run(["readelf", "-d", os.path.join(out, artifact)]).stdout
                    self.assertIn("[libodla_reference.so]", needed)
                    run([self.tc.cc, "-I", inc, main, "-L", out, "-lnet",
                         f"-Wl,-rpath,{out}", f"-Wl,-rpath-link,{libdir}", "-o", exe])
                # libnet.so needs libodla_reference.so, found like any library it links.
                self.run_driver([], exe, "cnn", emit,
                                env=dict(os.environ, LD_LIBRARY_PATH=libdir))

    def test_outputs_are_byte_identical_whatever_the_folder(self):
        cnn = os.path.join(MODELS, "cnn", "model.onnx")
        prefix = install(self.work)
        odlac = os.path.join(prefix, "bin", "odlac")
        for k, flags in enumerate((["--weights=obj"],
                                   ["--weights=obj", "--target=thumbv7em-none-eabi"],
                                   ["--weights=c", "--emit=static"],
                                   ["--weights=obj", "--emit=shared"],
                                   ["--weights=bin", "--emit=obj"])):
            with self.subTest(flags=flags):
                dirs = [os.path.join(self.work, f"case{k}-{i}", f"out{i}") for i in range(2)]
                for d in dirs:
                    os.makedirs(os.path.dirname(d))
                    self.odlac(cnn, d, *flags, odlac=odlac)
                names = sorted(os.listdir(dirs[0]))
                self.assertEqual(names, sorted(os.listdir(dirs[1])))
                for n in names:
                    with open(os.path.join(dirs[0], n), "rb") as a, \
                            open(os.path.join(dirs[1], n), "rb") as b:
                        self.assertEqual(a.read(), b.read(), n)

    def test_depfile_names_the_model_its_external_data_and_the_manifest(self):
        model_dir = os.path.join(self.work, "model dir")
        os.makedirs(model_dir)
        model = os.path.join(model_dir, "mlp.onnx")
        onnx.save_model(onnx.load(os.path.join(MODELS, "mlp", "model.onnx")), model,
                        save_as_external_data=True, all_tensors_to_one_file=True,
                        location="mlp.weights", size_threshold=0)
        manifest = os.path.join(ROOT, "runtime_stubs", "reference", "manifest.txt")
        out = os.path.join(self.work, "out")
        self.odlac(model, out, "--weights=obj", "--backend-manifest", manifest, "-MD")
        with open(os.path.join(out, "net.d")) as f:
            targets, deps = parse_depfile(f.read())
        self.assertEqual(sorted(targets),
                         sorted(os.path.join(out, n) for n in
                                ("net.h", "net.c", "net_weights.o", "net.json")))
        self.assertEqual(deps, [model, os.path.join(model_dir, "mlp.weights"), manifest])
        # -MF puts it elsewhere; the generated files do not depend on asking for it.
        mf = os.path.join(self.work, "deps", "m.d")
        os.makedirs(os.path.dirname(mf))
        out2 = os.path.join(self.work, "out2")
        self.odlac(model, out2, "--weights=obj", "--backend-manifest", manifest, "-MF", mf)
        self.assertTrue(os.path.exists(mf))
        self.assertFalse(os.path.exists(os.path.join(out2, "net.d")))
        for n in ("net.h", "net.c", "net_weights.o"):
            with open(os.path.join(out, n), "rb") as a, open(os.path.join(out2, n), "rb") as b:
                self.assertEqual(a.read(), b.read(), n)

    def test_ram_and_flash_budgets_report_the_figures(self):
        cnn = os.path.join(MODELS, "cnn", "model.onnx")
        ok = os.path.join(self.work, "ok")
        self.odlac(cnn, ok, "--weights=c")
        macros = {}
        with open(os.path.join(ok, "net.h")) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[0] == "#define":
                    macros[parts[1]] = parts[2]
        arena, weights = int(macros["NET_ARENA_BYTES"]), int(macros["NET_WEIGHTS_BYTES"])
        self.assertGreater(arena, 0)
        out = os.path.join(self.work, "out")
        r = self.odlac(cnn, out, "--weights=c", f"--ram-budget={arena - 1}", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"--ram-budget={arena - 1}: RAM per instance {arena} bytes (activation arena "
                      f"{arena}; not counted: the stack and the backend's static data: no "
                      "footprint table for the host", r.stderr)
        self.assertIn("), 1 bytes over", r.stderr)
        self.assertFalse(os.path.exists(out))
        # A weights blob is loaded into RAM too.
        r = self.odlac(cnn, out, "--weights=bin", f"--ram-budget={arena}", check=False)
        self.assertIn(f"activation arena {arena} + weights blob {weights}", r.stderr)
        r = self.odlac(cnn, out, "--weights=c", f"--flash-budget={weights}", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr, rf"--flash-budget={weights}: flash \d+ bytes \(weights "
                                   rf"{weights} \+ generated code \(512 \+ 256 per node\) \d+; "
                                   "not counted: the backend library")
        self.odlac(cnn, out, "--weights=obj", f"--ram-budget={arena}", "--flash-budget=1M")
        self.assertTrue(os.path.exists(os.path.join(out, "net_weights.o")))
        # --no-heap: the budget is all of an instance's memory, as the header states it.
        heap = os.path.join(self.work, "noheap")
        self.odlac(cnn, heap, "--no-heap")
        with open(os.path.join(heap, "net.h")) as f:
            memory = int(re.search(r"#define NET_MEMORY_BYTES (\d+)", f.read()).group(1))
        self.assertGreater(memory, arena)
        r = self.odlac(cnn, os.path.join(self.work, "nh2"), "--no-heap",
                       f"--ram-budget={memory - 1}", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"RAM per instance {memory} bytes (--no-heap memory {memory};", r.stderr)
        r = self.odlac(cnn, os.path.join(self.work, "nh3"), "--no-heap", "--report", check=False)
        self.assertIn(f"--no-heap memory per instance {memory} bytes", r.stdout)
        # On the M4F, the table's figures: each part named, the stack among them.
        m4 = ["--no-heap", "--target=thumbv7em-none-eabi", "--weights=c"]
        r = self.odlac(cnn, os.path.join(self.work, "m4"), *m4, "--report")
        ram = re.search(r"RAM per instance (\d+) bytes \(--no-heap memory (\d+) \+ backend "
                        r"static data (\d+) \+ stack (\d+)\)", r.stdout)
        flash = re.search(r"flash (\d+) bytes \(weights (\d+) \+ generated code (\d+) \+ "
                          r"backend (\d+) \+ C library (\d+)\)", r.stdout)
        self.assertTrue(ram and flash, r.stdout)
        self.assertEqual(int(ram.group(2)), memory)
        for figure in (ram, flash):
            self.assertEqual(int(figure.group(1)), sum(map(int, figure.groups()[1:])))
        r = self.odlac(cnn, os.path.join(self.work, "m4b"), *m4, f"--ram-budget={memory}",
                       f"--flash-budget={weights}", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"--ram-budget={memory}: RAM per instance {ram.group(1)} bytes (--no-heap "
                      f"memory {memory} + backend static data {ram.group(3)} + stack "
                      f"{ram.group(4)}), {int(ram.group(1)) - memory} bytes over", r.stderr)
        self.assertIn(f"--flash-budget={weights}: flash {flash.group(1)} bytes (weights {weights} "
                      f"+ generated code {flash.group(3)} + backend {flash.group(4)} + C library "
                      f"{flash.group(5)}), {int(flash.group(1)) - weights} bytes over", r.stderr)

    def test_two_models_and_two_instances_run_from_two_threads(self):
        models = os.path.join(self.work, "models")
        self.odlac(os.path.join(MODELS, "cnn", "model.onnx"), models, "--name", "cnn",
                   "--weights=obj")
        self.odlac(os.path.join(MODELS, "mlp", "model.onnx"), models, "--name", "mlp",
                   "--weights=c")
        exe = os.path.join(self.work, "threads")
        run([self.tc.cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror",
             "-I", self.tc.include, "-I", models, os.path.join(HERE, "threads_two_models.c"),
             *sorted(glob.glob(os.path.join(models, "*.c"))),
             os.path.join(models, "cnn_weights.o"), self.tc.lib, "-lm", "-lpthread",
             "-o", exe])
        args, expected = [], {}
        for t in range(2):
            for m in ("cnn", "mlp"):
                path, want = raw_inputs(m, t, self.work)
                args.append(path)
                expected[f"{m}_{t}"] = want
        res = os.path.join(self.work, "res")
        os.makedirs(res)
        run([exe, *args, res])
        for key, want in expected.items():
            got = np.fromfile(os.path.join(res, key + ".bin"), np.float32).reshape(want.shape)
            self.assertTrue(close(got, want), f"{key}: {got} vs PyTorch {want}")


class CMakePackageTest(Work):
    """The installed package: pkg-config files, find_package(odlac) and odlac_add_model, in
    examples/two_models, built with plain cmake."""

    def test_pkg_config_files_build_a_model(self):
        prefix = install(self.work)
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
        flags = run(["pkg-config", "--cflags", "--libs", "odla_reference"], env=env).stdout.split()
        self.assertIn("-lodla_reference", flags)
        static = run(["pkg-config", "--static", "--libs", "odla_reference"], env=env).stdout
        self.assertIn("-lm", static.split())
        out = os.path.join(self.work, "out")
        self.odlac(os.path.join(MODELS, "cnn", "model.onnx"), out, "--emit-main",
                   odlac=os.path.join(prefix, "bin", "odlac"))
        exe = os.path.join(out, "net")
        run([self.tc.cc, "-std=c99", *sorted(glob.glob(os.path.join(out, "*.c"))), *flags,
             "-lm", "-o", exe])
        self.run_driver([], exe, "cnn", "pkg-config",
                        env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib")))

    def test_examples_project_builds_from_the_installed_package(self):
        prefix = install(self.work)
        for f in ("lib/cmake/odlac/odlacConfig.cmake", "lib/cmake/odlac/odlacConfigVersion.cmake",
                  "lib/cmake/odlac/OdlacAddModel.cmake", "lib/pkgconfig/odla_reference.pc"):
            self.assertTrue(os.path.exists(os.path.join(prefix, f)), f)
        # The models are copied so that the test can touch one and watch only it rebuild.
        models = os.path.join(self.work, "models")
        for m in ("digits", "mlp"):
            shutil.copytree(os.path.join(MODELS, m), os.path.join(models, m))
        build = os.path.join(self.work, "build")
        run(["cmake", "-S", os.path.join(ROOT, "examples", "two_models"), "-B", build,
             f"-DCMAKE_PREFIX_PATH={prefix}", f"-DODLAC_MODELS_DIR={models}"])
        first = run(["cmake", "--build", build]).stdout
        self.assertIn("odlac: compiling", first)
        digits_in, digits_want = raw_inputs("digits", 1, self.work)
        mlp_in, mlp_want = raw_inputs("mlp", 0, self.work)
        res = os.path.join(self.work, "res")
        os.makedirs(res)
        r = run([os.path.join(build, "two_models"), digits_in, mlp_in, res])
        digits = np.fromfile(os.path.join(res, "digits_output.bin"), np.float32)
        mlp = np.fromfile(os.path.join(res, "mlp_output.bin"), np.float32)
        self.assertTrue(close(digits, digits_want.ravel()), f"{digits} vs {digits_want}")
        self.assertTrue(close(mlp, mlp_want.ravel()), f"{mlp} vs {mlp_want}")
        self.assertIn(f"digits: class {int(np.argmax(digits_want))}", r.stdout)
        # Nothing changed: odlac does not run again. A touched model recompiles only itself.
        self.assertNotIn("odlac: compiling", run(["cmake", "--build", build]).stdout)
        os.utime(os.path.join(models, "mlp", "model.onnx"))
        again = run(["cmake", "--build", build]).stdout
        self.assertIn("into mlp", again)
        self.assertNotIn("into digits", again)


    def test_backend_option_links_the_chosen_backend(self):
        """BACKEND dnnl: cnn and mlp on libodla_dnnl, from two threads (threads_two_models.c);
        an unknown backend fails at configure time, naming the installed ones."""
        prefix = install(self.work)
        project = os.path.join(self.work, "project")
        os.makedirs(project)
        cnn, mlp = (os.path.join(MODELS, m, "model.onnx") for m in ("cnn", "mlp"))
        with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
            f.write(f"""cmake_minimum_required(VERSION 3.20)
project(backend_choice LANGUAGES C)
find_package(odlac REQUIRED)
find_package(Threads REQUIRED)
odlac_add_model(cnn_model MODEL "{cnn}" NAME cnn BACKEND ${{BACKEND}} OPTIONS --weights=c -O3)
odlac_add_model(mlp_model MODEL "{mlp}" NAME mlp BACKEND ${{BACKEND}})
add_executable(threads "{os.path.join(HERE, 'threads_two_models.c')}")
target_link_libraries(threads PRIVATE cnn_model mlp_model Threads::Threads)
""")
        build = os.path.join(self.work, "build")
        r = subprocess.run(["cmake", "-S", project, "-B", build + "-nope",
                            f"-DCMAKE_PREFIX_PATH={prefix}", "-DBACKEND=nope"],
                           capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("backend 'nope' is not installed", r.stderr)
        self.assertRegex(r.stderr.replace("\n", " "), r"installed:.*reference")
        run(["cmake", "-S", project, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}",
             "-DBACKEND=dnnl"])
        run(["cmake", "--build", build])
        needed = run(["readelf", "-d", os.path.join(build, "threads")]).stdout
        self.assertIn("[libodla_dnnl.so]", needed)
        args, expected = [], {}
        for t in range(2):
            for m in ("cnn", "mlp"):
                path, want = raw_inputs(m, t, self.work)
                args.append(path)
                expected[f"{m}_{t}"] = want
        res = os.path.join(self.work, "res")
        os.makedirs(res)
        run([os.path.join(build, "threads"), *args, res])
        for key, want in expected.items():
            got = np.fromfile(os.path.join(res, key + ".bin"), np.float32).reshape(want.shape)
            self.assertTrue(close(got, want), f"dnnl {key}: {got} vs PyTorch {want}")


class LargeWeightsTest(Work):
    """A model whose external data is 2.2 GB (a sparse file with known rows) compiles to a
    weights object and to a weights blob; odlac's peak memory stays a small fraction of the
    weights either way (the mapped pages are dropped as they are read and written)."""

    ROWS, COLS = 8_600_000, 64  # 2.2 GB of float32

    # Runs odlac and prints its status and peak resident memory (KiB), from a small process:
    # a child forked from this test's large one would count the test's memory as its own
    # until it execs.
    MEASURE = ("import os, sys\n"
               "pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)\n"
               "_, status, usage = os.wait4(pid, 0)\n"
               "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n")

    def compile(self, model, out, *flags):
        """Compiles; returns odlac's peak resident memory in bytes."""
        start = time.monotonic()
        r = subprocess.run([sys.executable, "-c", self.MEASURE, self.tc.odlac, model, "-o", out]
                           + list(flags), capture_output=True, text=True)
        seconds = time.monotonic() - start
        status, kib = r.stdout.split()
        self.assertEqual(int(status), 0, r.stderr)
        peak = int(kib) * 1024
        print(f"\n{os.path.basename(model)} {' '.join(flags)}: {seconds:.1f} s, odlac peak "
              f"RSS {peak / 2**20:.0f} MiB", file=sys.stderr)
        return peak

    def test_over_2gb_of_external_weights_stream_into_the_object(self):
        nbytes = self.ROWS * self.COLS * 4
        data = os.path.join(self.work, "table.bin")
        marked = {0: 1.5, 1_234_567: -2.25, self.ROWS - 1: 3.0}
        with open(data, "wb") as f:
            f.truncate(nbytes)
            for row, v in marked.items():
                f.seek(row * self.COLS * 4)
                f.write((np.arange(self.COLS, dtype=np.float32) * v).tobytes())
        table = TensorProto()
        table.name, table.data_type = "table", TensorProto.FLOAT
        table.dims.extend([self.ROWS, self.COLS])
        table.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "table.bin"), ("offset", "0"), ("length", str(nbytes))):
            e = table.external_data.add()
            e.key, e.value = k, v
        graph = helper.make_graph(
            [helper.make_node("Gather", ["table", "ids"], ["rows"], axis=0)], "lookup",
            [helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
            [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [3, self.COLS])],
            initializer=[table])
        model = os.path.join(self.work, "lookup.onnx")
        with open(model, "wb") as f:
            f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
                    .SerializeToString())
        out = os.path.join(self.work, "out")
        self.assertLess(self.compile(model, out, "--weights=obj", "-MD"), nbytes // 8)
        elf = Elf(os.path.join(out, "net_weights.o"))
        sym = "net_w_table"
        self.assertEqual(elf.symbols[sym]["size"], nbytes)
        row = self.COLS * 4
        for r, v in marked.items():
            self.assertEqual(elf.symbol_bytes(sym, r * row, row),
                             (np.arange(self.COLS, dtype=np.float32) * v).tobytes(), f"row {r}")
        self.assertEqual(elf.symbol_bytes(sym, 5 * row, row), bytes(row))
        with open(os.path.join(out, "net.d")) as f:
            self.assertIn(data, f.read())
        shutil.rmtree(out)
        # The blob (the default for weights this large): its 64-byte header, then the table.
        self.assertLess(self.compile(model, out, "--weights=bin"), nbytes // 8)
        blob = os.path.join(out, "net.weights.bin")
        self.assertEqual(os.path.getsize(blob), 64 + nbytes)
        with open(blob, "rb") as f:
            self.assertEqual(f.read(8), b"ODLACWB1")
            for r, v in marked.items():
                f.seek(64 + r * row)
                self.assertEqual(f.read(row), (np.arange(self.COLS, dtype=np.float32) * v)
                                 .tobytes(), f"row {r}")
            f.seek(64 + 5 * row)
            self.assertEqual(f.read(row), bytes(row))

    def test_inline_weights_folded_and_written_stay_near_their_size(self):
        """300 MB of inline weights in 30 layers, each behind a Transpose that constant folding
        replaces (as PyTorch exports Linear layers): the parsed model's bytes move into the IR,
        each replaced original is freed as its layer folds, the blob is written from the
        folded constants: peak memory within 1.3x the weights + 100 MB (it was over 2x)."""
        layers, n = 30, 1600
        nodes, inits, x = [], [], "x"
        for i in range(layers):
            w = (np.arange(n * n, dtype=np.float32).reshape(n, n) + i) % 251
            inits.append(numpy_helper.from_array(w, f"w{i}"))
            nodes += [helper.make_node("Transpose", [f"w{i}"], [f"wt{i}"], perm=[1, 0]),
                      helper.make_node("MatMul", [x, f"wt{i}"], [f"y{i}"])]
            x = f"y{i}"
        graph = helper.make_graph(
            nodes, "linears", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
            [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, n])], initializer=inits)
        model = os.path.join(self.work, "linears.onnx")
        with open(model, "wb") as f:
            f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
                    .SerializeToString())
        del graph, inits
        out = os.path.join(self.work, "out")
        weights = layers * n * n * 4
        peak = self.compile(model, out, "--weights=bin", "-O2")
        self.assertLess(peak, 1.3 * weights + (100 << 20))
        self.assertEqual(os.path.getsize(os.path.join(out, "net.weights.bin")), 64 + weights)
        with open(os.path.join(out, "net.weights.bin"), "rb") as f:
            for i in (0, layers - 1):  # the folded W_i^T, in layer order
                w = (np.arange(n * n, dtype=np.float32).reshape(n, n) + i) % 251
                f.seek(64 + i * n * n * 4)
                self.assertEqual(f.read(n * 4 * 3), w.T[:3].tobytes(), f"layer {i}")

if __name__ == "__main__":
    unittest.main(verbosity=2)
