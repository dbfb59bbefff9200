"""Compiled models behind a serving system: Triton Inference Server and Ray Serve.

    # A Triton repository from `odlac export-triton model.onnx -o repo --max-batch 8`, served
    # by the tritonserver that PyPI's nvidia-pytriton ships, on 127.0.0.1:
    with odlac.serve.TritonServer("repo") as server:
        print(server.http_url)               # "127.0.0.1:PORT"; tritonclient.http talks to it

    # Ray Serve: replicas of a compiled model folder (export-triton's REPO/NAME/1, or
    # odlac.compile's workdir with its backend library), requests batched:
    app = odlac.serve.deployment("repo/model/1", num_replicas=2, max_batch_size=8)
    ray.serve.run(app)                       # POST {"inputs": {name: nested lists}} to it

docs/serving.md says more. Neither Triton nor Ray is a dependency of the package: each is
imported (or found) when used."""
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Optional, Sequence

import numpy as np

from . import Model

__all__ = ["TritonServer", "deployment", "backend_library_of"]


def backend_library_of(model_dir: str) -> str:
    """The ODLA backend library export-triton copied into a version folder."""
    found = sorted(glob.glob(os.path.join(model_dir, "libodla_*.so")))
    if len(found) != 1:
        raise FileNotFoundError("%s: expected one libodla_*.so (found %d); pass "
                                "backend_library=" % (model_dir, len(found)))
    return found[0]


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class TritonServer:
    """The tritonserver of PyPI's nvidia-pytriton on a model repository, listening on `host`
    only (HTTP and gRPC on free ports unless given; metrics off), started by `start` or `with`.

    Triton's Python backend runs each model instance in a stub process that embeds this
    Python's version (the stub nvidia-pytriton ships for it, linked to the system's
    libpython3.X) and, this interpreter's folder first on its PATH, takes its prefix and
    site-packages (a venv's too): NumPy, and onnxruntime for an ONNX Runtime model, come
    from here.

    Triton does not start a stub again that died (a crash, a kill, the OOM killer): requests
    routed to it fail. With `supervise` (the default) the server runs with explicit model
    control, and a thread watching the stubs unloads and loads again a model whose stub is
    gone (`restarts` lists them); requests in that second fail and a client retries them."""

    def __init__(self, repository: str, host: str = "127.0.0.1", http_port: int = 0,
                 grpc_port: int = 0, log_file: Optional[str] = None,
                 extra_args: Sequence[str] = (), startup_timeout: float = 180.0,
                 supervise: bool = True):
        self.repository = os.path.abspath(repository)
        self.host = host
        self.http_port = http_port or _free_port(host)
        self.grpc_port = grpc_port or _free_port(host)
        self.log_file = log_file
        self.extra_args = list(extra_args)
        self.startup_timeout = startup_timeout
        self.supervise = supervise
        self.restarts = []  # (time.monotonic(), model name) of each reload after a lost stub
        self.process = None
        self._backends = None
        self._log = None
        self._watch = None
        self._stopping = threading.Event()

    @property
    def http_url(self) -> str:
        return "%s:%d" % (self.host, self.http_port)

    @property
    def grpc_url(self) -> str:
        return "%s:%d" % (self.host, self.grpc_port)

    @staticmethod
    def _installation():
        try:
            import pytriton
        except ImportError as e:
            raise RuntimeError("Triton Inference Server not found: pip install "
                               "nvidia-pytriton (it ships tritonserver)") from e
        root = os.path.join(os.path.dirname(pytriton.__file__), "tritonserver")
        stub = os.path.join(root, "python_backend_stubs", "%d.%d" % sys.version_info[:2],
                            "triton_python_backend_stub")
        if not os.path.exists(stub):
            raise RuntimeError("nvidia-pytriton has no Python backend stub for Python %d.%d"
                               % sys.version_info[:2])
        return os.path.join(root, "bin", "tritonserver"), os.path.join(root, "backends"), stub

    def start(self) -> "TritonServer":
        exe, backends, stub = self._installation()
        # The Python backend with the stub of this Python's version (as pytriton arranges it).
        self._backends = tempfile.mkdtemp(prefix="odlac-triton-")
        python = os.path.join(self._backends, "python")
        os.mkdir(python)
        for f in os.listdir(os.path.join(backends, "python")):
            if not f.startswith("__"):
                os.symlink(os.path.join(backends, "python", f), os.path.join(python, f))
        os.symlink(stub, os.path.join(python, "triton_python_backend_stub"))
        # The stub's embedded Python takes its prefix from the first python3 on PATH (a venv's
        # pyvenv.cfg included): this interpreter's, so its packages are the stub's.
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
        self._log = open(self.log_file or os.devnull, "ab")
        self.process = subprocess.Popen(
            [exe, "--model-repository", self.repository, "--backend-directory", self._backends,
             "--http-address", self.host, "--http-port", str(self.http_port),
             "--grpc-address", self.host, "--grpc-port", str(self.grpc_port),
             "--allow-metrics", "false", "--exit-on-error", "true", "--exit-timeout-secs", "10"]
            + (["--model-control-mode", "explicit", "--load-model", "*"] if self.supervise else [])
            + self.extra_args,
            stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError("tritonserver exited with status %s while starting%s"
                                   % (self.process.returncode, self._log_tail()))
            if self.ready():
                if self.supervise:
                    self._stopping.clear()
                    self._watch = threading.Thread(target=self._supervise, daemon=True)
                    self._watch.start()
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError("tritonserver not ready after %.0f s" % self.startup_timeout)
            time.sleep(0.2)

    def _log_tail(self) -> str:
        if not self.log_file:
            return " (pass log_file= to see its log)"
        try:
            with open(self.log_file, errors="replace") as f:
                lines = f.readlines()
        except OSError:
            return ""
        # Triton's error lines (glog's "E<date>") and the last lines.
        errors = [line for line in lines if line[:1] == "E" and line[1:5].isdigit()]
        return "; its errors and last lines:\n" + "".join(errors[-10:] + lines[-3:])

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen("http://%s/v2/health/ready" % self.http_url,
                                        timeout=2) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _post(self, path: str) -> None:
        request = urllib.request.Request("http://%s%s" % (self.http_url, path), data=b"{}",
                                         method="POST")
        with urllib.request.urlopen(request, timeout=300):
            pass

    def _supervise(self) -> None:
        known = self.stubs()
        retired = set()  # stubs of a reloaded model's old instances: they exit on their own
        while not self._stopping.wait(0.25):
            now = self.stubs()
            lost = {model for pid, model in known.items() if pid not in now}
            for model in sorted(lost):
                retired |= {pid for pid, m in now.items() if m == model}
                try:
                    self._post("/v2/repository/models/%s/unload" % urllib.parse.quote(model))
                    self._post("/v2/repository/models/%s/load" % urllib.parse.quote(model))
                    self.restarts.append((time.monotonic(), model))
                except (urllib.error.URLError, OSError):
                    if self._stopping.is_set():
                        return
            now = self.stubs() if lost else now
            retired &= set(now)
            known = {pid: model for pid, model in now.items() if pid not in retired}

    def stub_pids(self):
        """The process ids of the Python backend's stubs (one per model instance)."""
        return sorted(self.stubs())

    def stubs(self):
        """The Python backend's stub processes: {pid: model name}."""
        pids = {}
        for entry in os.listdir("/proc"):
            try:
                with open("/proc/%s/stat" % entry) as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    command = f.read().split(b"\0")
            except (OSError, ValueError, IndexError):
                continue
            # The stub's arguments start with the model's REPO/NAME/VERSION/model.py.
            if (parent == self.process.pid and len(command) > 1
                    and command[0].endswith(b"triton_python_backend_stub")):
                model_py = os.fsdecode(command[1])
                pids[int(entry)] = os.path.basename(os.path.dirname(os.path.dirname(model_py)))
        return pids

    def stop(self) -> None:
        self._stopping.set()
        if self._watch is not None:
            self._watch.join()
            self._watch = None
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._backends:
            shutil.rmtree(self._backends, ignore_errors=True)
            self._backends = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _split_runs(model: Model, feeds_list):
    """Each request's outputs, or the exception its feeds raise: one run for every request's
    rows when the model takes a dynamic batch, a run per request otherwise."""
    results = [None] * len(feeds_list)
    good = []
    names = [t.name for t in model.get_inputs()]
    for i, feeds in enumerate(feeds_list):
        try:
            if set(feeds) != set(names):
                raise KeyError("inputs %s expected, got %s" % (names, sorted(feeds)))
            if not model.dynamic_batch:
                results[i] = model.run(None, feeds)
                continue
            rows = {np.shape(feeds[n])[0] if np.ndim(feeds[n]) else -1 for n in names}
            if len(rows) != 1 or -1 in rows:
                raise ValueError("every input needs the same leading batch dim")
            good.append((i, rows.pop()))
        except (KeyError, ValueError, RuntimeError) as e:
            results[i] = e
    if good:
        try:
            joined = {n: np.concatenate([np.asarray(feeds_list[i][n]) for i, _ in good])
                      for n in names}
            outs = model.run(None, joined)
            start = 0
            for i, rows in good:
                results[i] = [o[start:start + rows] for o in outs]
                start += rows
        except (KeyError, ValueError, RuntimeError) as e:
            for i, _ in good:  # one bad request fails the run: run each alone
                try:
                    results[i] = model.run(None, feeds_list[i])
                except (KeyError, ValueError, RuntimeError) as each:
                    results[i] = each
    return results


def deployment(model_dir: str, backend_library: Optional[str] = None, *, name: str = "odlac",
               num_replicas: int = 2, max_batch_size: int = 8,
               batch_wait_timeout_s: float = 0.005, ray_actor_options: Optional[dict] = None):
    """A Ray Serve application running the compiled model of `model_dir` (libnet.so and
    net.json) in `num_replicas` replicas, each with its own instance; requests are gathered
    into batches of up to `max_batch_size` (serve.batch), run as one batch where the model
    was compiled with --dynamic-batch. HTTP: POST {"inputs": {name: nested lists}} answers
    {"outputs": {name: nested lists}} (status 400 with {"error": ...} for bad inputs); a
    deployment handle's `infer.remote({name: array})` returns the list of output arrays."""
    from ray import serve
    from starlette.responses import JSONResponse

    library = backend_library or backend_library_of(model_dir)

    @serve.deployment(name=name, num_replicas=num_replicas,
                      ray_actor_options=ray_actor_options or {"num_cpus": 1})
    class OdlacModel:
        def __init__(self, folder, lib):
            self.model = Model(folder, lib)
            self.types = {t.name: t.dtype for t in self.model.get_inputs()}
            self.outputs = [t.name for t in self.model.get_outputs()]

        @serve.batch(max_batch_size=max_batch_size, batch_wait_timeout_s=batch_wait_timeout_s)
        async def _batched(self, feeds_list):
            return _split_runs(self.model, feeds_list)

        async def infer(self, feeds):
            result = await self._batched(feeds)
            if isinstance(result, Exception):
                raise result
            return result

        async def __call__(self, request):
            try:
                body = await request.json()
                feeds = {n: np.asarray(v, dtype=self.types.get(n, np.float32))
                         for n, v in body["inputs"].items()}
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                return JSONResponse({"error": "bad request: %s" % e}, status_code=400)
            result = await self._batched(feeds)
            if isinstance(result, Exception):
                return JSONResponse({"error": str(result)}, status_code=400)
            return {"outputs": {n: o.tolist() for n, o in zip(self.outputs, result)}}

    return OdlacModel.bind(os.path.abspath(model_dir), os.path.abspath(library))
