"""Interrupted and killed compiles (compiler/driver/OutputDir.cpp): SIGTERM, SIGINT and SIGHUP
while odlac writes a large model's outputs, or while the C compiler of --emit runs, leave no
.odlac-tmp-* staging folder and no output, and odlac dies of the same signal; after a SIGKILL
the next compile into the same parent removes the stale folder, but keeps the folder of a
compile still running and anything that only looks like odlac's."""
import fcntl
import os
import signal
import subprocess
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MLP = os.path.join(ROOT, "models", "mlp", "model.onnx")
WEIGHTS = 50_000_000  # floats: a 200 MB weights blob takes seconds to write
# A C compiler that says who it is and then takes its time: --emit's child stays running.
SLOW_CC = """#!/usr/bin/python3
import os, sys, time
with open(os.environ["SLOW_CC_PID"], "w") as f:
    f.write(str(os.getpid()))
time.sleep(120)
os.execvp("cc", ["cc"] + sys.argv[1:])
"""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is gone too
        return f.read().split(")")[-1].split()[0] != "Z"


def stop(pid):
    """Cleanup after a failed case: nothing it started keeps running."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class SignalCase(hostile.HostileCase):
    timeout = 300

    def setUp(self):
        super().setUp()
        self.parent = self.path("parent")
        os.makedirs(self.parent)

    def big_model(self):
        """Gather from 200 MB of weights (external data, so that the model loads fast)."""
        if not os.path.exists(self.path("big.onnx")):
            w = np.arange(WEIGHTS, dtype=np.float32)
            init = numpy_helper.from_array(w, "w")
            init.ClearField("raw_data")
            init.data_location = TensorProto.EXTERNAL
            init.external_data.add(key="location", value="big.weights")
            w.tofile(self.path("big.weights"))
            graph = helper.make_graph(
                [helper.make_node("Gather", ["w", "i"], ["y"], axis=0)], "g",
                [helper.make_tensor_value_info("i", TensorProto.INT64, [1])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])], [init])
            self.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
                      name="big.onnx")
        return self.path("big.onnx")

    def slow_emit(self, out):
        """Starts a compile whose --emit=obj compiler sleeps; returns (odlac, the compiler's
        pid) once the compiler runs."""
        cc, pid_file = self.path("slow_cc"), self.path(f"{out}.cc_pid")
        with open(cc, "w") as f:
            f.write(SLOW_CC)
        os.chmod(cc, 0o755)
        env = dict(os.environ, CC=cc, SLOW_CC_PID=pid_file)
        p = subprocess.Popen([self.tc.odlac, MLP, "-o", os.path.join(self.parent, out),
                              "--emit=obj", "--odla-prefix", os.path.dirname(self.tc.include)],
                             env=env, stderr=subprocess.PIPE)
        self.addCleanup(p.wait)
        self.addCleanup(stop, p.pid)
        self.addCleanup(p.stderr.close)
        deadline = time.time() + 60
        while not os.path.exists(pid_file) or not os.path.getsize(pid_file):
            self.assertIsNone(p.poll(), "the compile ended early")
            self.assertLess(time.time(), deadline, "the compiler never started")
            time.sleep(0.01)
        with open(pid_file) as f:
            cc_pid = int(f.read())
        self.addCleanup(stop, cc_pid)
        return p, cc_pid

    def staging(self):
        return sorted(f for f in os.listdir(self.parent) if f.startswith(".odlac-tmp-"))

    def start_big(self, out="out"):
        """Starts compiling the big model; returns the process once its staging folder exists."""
        p = subprocess.Popen([self.tc.odlac, self.big_model(), "-o",
                              os.path.join(self.parent, out), "--weights=bin"],
                             stderr=subprocess.PIPE)
        self.addCleanup(p.wait)
        self.addCleanup(stop, p.pid)
        self.addCleanup(p.stderr.close)
        prefix = f".odlac-tmp-{p.pid}-"
        deadline = time.time() + 120
        while not any(f.startswith(prefix) for f in os.listdir(self.parent)):
            if p.poll() is not None:
                self.fail(f"finished before it was interrupted: {p.stderr.read()}")
            self.assertLess(time.time(), deadline, "no staging folder appeared")
            time.sleep(0.002)
        return p

    def assertDiedOf(self, p, sig):
        p.wait(timeout=60)
        with p.stderr:
            self.assertEqual(p.returncode, -sig, p.stderr.read())


class InterruptTest(SignalCase):
    def test_sigterm_sigint_and_sighup_while_writing_a_large_model(self):
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with self.subTest(signal=sig.name):
                p = self.start_big()
                p.send_signal(sig)
                self.assertDiedOf(p, sig)
                self.assertEqual(self.staging(), [])
                self.assertNothingLeft(os.path.join(self.parent, "out"))

    def test_a_signal_while_the_c_compiler_runs_stops_it_too(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig.name):
                p, cc = self.slow_emit("lib")
                self.assertEqual(len(self.staging()), 1)
                p.send_signal(sig)
                self.assertDiedOf(p, sig)
                self.assertFalse(alive(cc), "the C compiler still runs")
                self.assertNothingLeft(os.path.join(self.parent, "lib"))
                os.unlink(self.path("lib.cc_pid"))


class StaleTest(SignalCase):
    def test_after_sigkill_the_next_compile_removes_only_stale_folders(self):
        killed = self.start_big()
        killed.kill()
        self.assertDiedOf(killed, signal.SIGKILL)
        stale = self.staging()
        self.assertEqual(len(stale), 1)
        self.assertTrue(stale[0].startswith(f".odlac-tmp-{killed.pid}-"))
        dead = killed.pid
        # What looks like odlac's but is not to be removed: another name pattern; a folder
        # whose owner is alive (pid 1); a symlink; a folder holding a folder; a folder whose
        # lock is held (as by an odlac in another PID namespace, whose pid means nothing here).
        decoys = {".odlac-tmp-foobar": "dir", ".odlac-tmp-1-abcdef": "dir",
                  f".odlac-tmp-{dead}-symlnk": "link", f".odlac-tmp-{dead}-nested": "nested",
                  f".odlac-tmp-{dead}-locked": "dir"}
        os.makedirs(self.path("elsewhere"))
        with open(self.path("elsewhere", "keep"), "w") as f:
            f.write("keep")
        for name, kind in decoys.items():
            p = os.path.join(self.parent, name)
            if kind == "link":
                os.symlink(self.path("elsewhere"), p)
                continue
            os.makedirs(os.path.join(p, "sub") if kind == "nested" else p)
            with open(os.path.join(p, "file"), "w") as f:
                f.write("x")
        lock = os.open(os.path.join(self.parent, f".odlac-tmp-{dead}-locked"), os.O_RDONLY)
        fcntl.flock(lock, fcntl.LOCK_EX)
        # A stale temporary depfile: a plain file of the name odlac gives it.
        with open(os.path.join(self.parent, f".odlac-tmp-{dead}-dep123"), "w") as f:
            f.write("x")

        running, cc = self.slow_emit("running")
        ours = [f for f in self.staging() if f.startswith(f".odlac-tmp-{running.pid}-")]
        self.assertEqual(len(ours), 1)
        r = self.odlac(MLP, "-o", os.path.join(self.parent, "next"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.staging(), sorted(ours + list(decoys)))
        with open(self.path("elsewhere", "keep")) as f:
            self.assertEqual(f.read(), "keep")
        self.assertTrue(os.listdir(os.path.join(self.parent, ours[0])))  # its files are there

        # The running compile still finishes cleanly when stopped; the locked folder goes once
        # its lock is released.
        running.terminate()
        self.assertDiedOf(running, signal.SIGTERM)
        self.assertFalse(alive(cc))
        os.close(lock)
        r = self.odlac(MLP, "-o", os.path.join(self.parent, "next2"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.staging(), sorted(set(decoys) - {f".odlac-tmp-{dead}-locked"}))


if __name__ == "__main__":
    hostile.main()
