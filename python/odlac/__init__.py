"""odlac from Python: compile an ONNX model ahead of time and run it with NumPy arrays.

    model = odlac.compile("model.onnx", backend="dnnl", opt_level=3)
    outputs = model.run(None, {"input": x})

`compile` runs the odlac command line (``--emit=shared --weights=obj``): the model becomes a
shared library linked to the ODLA backend ``libodla_<backend>`` of odlac's install prefix,
which this module loads with ctypes. `Model.run` follows ONNX Runtime's
``InferenceSession.run``: the outputs named (None: all) for the feeds by input name, as NumPy
arrays. An input that already has the model's element type, shape and C order is passed to
the library as it is, without a copy; outputs are written straight into new arrays.
docs/python.md says more."""
import ctypes
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np

__all__ = ["compile", "Model", "TensorInfo", "CompileError"]

# odlac's IR element types (NAME.json's "type") that NumPy holds.
_NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8,
          "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
          "u32": np.uint32, "u64": np.uint64, "bool": np.bool_}


class CompileError(RuntimeError):
    """odlac refused the model (its messages are the error's text) or could not build it."""


@dataclass(frozen=True)
class TensorInfo:
    """An input or output of a compiled model, as ONNX Runtime's NodeArg describes one."""
    name: str
    type: str  # odlac's element type: "f32", "i64"...
    shape: List[int]

    @property
    def dtype(self):
        return np.dtype(_NUMPY[self.type])


def _odlac_path(odlac: Optional[str]) -> str:
    found = odlac or os.environ.get("ODLAC") or shutil.which("odlac")
    if not found or not os.path.exists(found):
        raise CompileError("odlac not found: install it, put its bin/ on PATH, or pass odlac= "
                           "(or set $ODLAC)")
    return os.path.realpath(found)


def compile(model: str, backend: str = "reference", opt_level: int = 2,
            input_shapes: Optional[Dict[str, Sequence[int]]] = None,
            odlac: Optional[str] = None, odla_prefix: Optional[str] = None,
            workdir: Optional[str] = None, flags: Sequence[str] = ()) -> "Model":
    """Compiles `model` (an .onnx path) for `backend` at -O`opt_level` and loads it.

    input_shapes pins symbolic dims ({"input": [1, 3, 224, 224]}); flags are more odlac
    options (e.g. ["--quantize=int8", "--calibration=DIR"]); odla_prefix is where
    include/ODLA and lib/libodla_* are (default: odlac's own prefix); workdir keeps the
    library and its NAME.json there (default: a temporary folder removed with the model)."""
    exe = _odlac_path(odlac)
    prefix = odla_prefix or os.path.dirname(os.path.dirname(exe))
    owned = workdir is None
    out = tempfile.mkdtemp(prefix="odlac-py-") if owned else workdir
    args = [exe, os.fspath(model), "-O%d" % int(opt_level), "--backend", backend,
            "--emit=shared", "--weights=obj", "--name", "net", "-o", out]
    if odla_prefix:
        args += ["--odla-prefix", odla_prefix]
    for name, dims in (input_shapes or {}).items():
        args += ["--input-shape", "%s:%s" % (name, "x".join(str(int(d)) for d in dims))]
    args += list(flags)
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        if owned:
            shutil.rmtree(out, ignore_errors=True)
        raise CompileError(r.stderr.strip() or "odlac failed with status %d" % r.returncode)
    return Model(out, os.path.join(prefix, "lib", "libodla_%s.so" % backend), owned)


class Model:
    """A compiled model loaded from its folder (libnet.so and net.json)."""

    def __init__(self, folder: str, backend_library: str, owns_folder: bool = False):
        self._folder, self._owns = folder, owns_folder
        with open(os.path.join(folder, "net.json"), encoding="utf-8") as f:
            report = json.load(f)
        self._inputs = [TensorInfo(t["name"], t["type"], list(t["shape"]))
                        for t in report["inputs"]]
        # --dynamic-batch: the rows the shapes hold; net_run_batch runs any number.
        self._rows = report.get("dynamic_batch_rows")
        self._outputs = [TensorInfo(t["name"], t["type"], list(t["shape"]))
                         for t in report["outputs"]]
        for t in self._inputs + self._outputs:
            if t.type not in _NUMPY:
                raise CompileError("%s '%s' is %s, which NumPy does not hold"
                                   % ("input" if t in self._inputs else "output", t.name, t.type))
        # The backend first, global: libnet.so names it as a needed library by its soname.
        self._backend = ctypes.CDLL(backend_library, mode=ctypes.RTLD_GLOBAL)
        self._lib = ctypes.CDLL(os.path.join(folder, "libnet.so"))
        self._lib.net_create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self._lib.net_create.restype = ctypes.c_int
        self._lib.net_destroy.argtypes = [ctypes.c_void_p]
        self._lib.net_destroy.restype = None
        ports = [ctypes.c_void_p] * (len(self._inputs) + len(self._outputs))
        if self._rows:
            self._run = self._lib.net_run_batch
            self._run.argtypes = [ctypes.c_void_p, ctypes.c_int] + ports
        else:
            self._run = self._lib.net_run
            self._run.argtypes = [ctypes.c_void_p] + ports
        self._run.restype = ctypes.c_int
        self._inst = ctypes.c_void_p()
        status = self._lib.net_create(ctypes.byref(self._inst))
        if status != 0:
            raise RuntimeError("net_create failed with odla_status %d" % status)

    def get_inputs(self) -> List[TensorInfo]:
        return list(self._inputs)

    def get_outputs(self) -> List[TensorInfo]:
        return list(self._outputs)

    @property
    def dynamic_batch(self) -> bool:
        """Compiled with --dynamic-batch: the leading dim of every input and output is a
        batch of any number of rows (the shapes above hold the rows it was planned for)."""
        return bool(self._rows)

    def run(self, output_names: Optional[Sequence[str]],
            feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
        """The outputs named (None: every output, in order) for `feeds`, one array per graph
        input by name, of the input's shape (a different element type is converted)."""
        if self._inst is None:
            raise RuntimeError("the model was closed")
        unknown = set(feeds) - {t.name for t in self._inputs}
        if unknown:
            raise KeyError("no input named %s; inputs: %s"
                           % (", ".join(sorted(unknown)), [t.name for t in self._inputs]))
        args, keep, rows = [self._inst], [], None
        for t in self._inputs:
            if t.name not in feeds:
                raise KeyError("input '%s' is not fed" % t.name)
            a = np.ascontiguousarray(feeds[t.name], dtype=t.dtype)
            want = list(t.shape)
            if self._rows and a.ndim == len(want) and a.ndim and a.shape[0] >= 1:
                rows = a.shape[0] if rows is None else rows
                want[0] = rows  # every input has the same rows
            if list(a.shape) != want:
                raise ValueError("input '%s' must have shape %s, got %s"
                                 % (t.name, ["rows"] + want[1:] if self._rows else want,
                                    list(a.shape)))
            keep.append(a)
            args.append(a.ctypes.data_as(ctypes.c_void_p))
        if self._rows:
            if rows > 2**31 - 1:
                raise ValueError("%d rows: net_run_batch takes at most 2^31 - 1" % rows)
            args.insert(1, rows)
        outs = [np.empty(([rows] + t.shape[1:]) if self._rows else t.shape, dtype=t.dtype)
                for t in self._outputs]
        args += [o.ctypes.data_as(ctypes.c_void_p) for o in outs]
        status = self._run(*args)
        if status != 0:
            raise RuntimeError("net_run failed with odla_status %d (the backend's messages "
                               "say why)" % status)
        if output_names is None:
            return outs
        by_name = {t.name: o for t, o in zip(self._outputs, outs)}
        missing = [n for n in output_names if n not in by_name]
        if missing:
            raise KeyError("no output named %s; outputs: %s"
                           % (", ".join(missing), [t.name for t in self._outputs]))
        return [by_name[n] for n in output_names]

    def close(self) -> None:
        """Destroys the instance and removes the temporary folder compile made."""
        if getattr(self, "_inst", None) is not None and self._inst.value:
            self._lib.net_destroy(self._inst)
        self._inst = None
        if getattr(self, "_owns", False):
            shutil.rmtree(self._folder, ignore_errors=True)
            self._owns = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
