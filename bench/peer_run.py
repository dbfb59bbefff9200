"""Compiles and times the compilers of the peers' venv that run through Python, IREE and Apache
TVM, for bench/bench.py. Run with the peers' venv python (scripts/install-deps.sh venv-path
peers), which has iree-base-compiler, iree-base-runtime and apache-tvm (scripts/pypi-peers.txt).

usage: peer_run.py compile ENGINE MODEL.onnx INPUTS.json ARTIFACT
       peer_run.py run ENGINE ARTIFACT INPUTS.json THREADS RUNS WARMUP OUT.bin
ENGINE: iree (iree-import-onnx, then iree-compile for the llvm-cpu backend tuned for this CPU;
run by the local-task driver with THREADS workers) or tvm (the Relax ONNX frontend, built at
opt level 3 for LLVM on this CPU, untuned; run by the Relax VM with TVM_NUM_THREADS=THREADS).
INPUTS.json and OUT.bin as ort_run.py's. `compile` prints {"seconds"}, `run` the same JSON line as
ort_run.py: {"median_ms", "min_ms", "runs", "version"}; a call's time includes copying its output
to the host, as ORT's does."""
import json
import os
import re
import subprocess
import sys
import time

import numpy as np


def load_inputs(inputs_json):
    with open(inputs_json) as f:
        spec = json.load(f)
    return spec, [np.fromfile(t["file"], dtype=t["dtype"]).reshape(t["shape"]) for t in spec]


def tool(name):
    return os.path.join(os.path.dirname(sys.executable), name)


def compile_iree(model, artifact):
    mlir = artifact + ".mlir"
    for cmd in ([tool("iree-import-onnx"), model, "-o", mlir],
                [tool("iree-compile"), mlir, "--iree-hal-target-device=local",
                 "--iree-hal-local-target-device-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=host", "-o", artifact]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:  # its first diagnostic, and the ONNX op it could not lower
            errors = [line[line.index("error:"):] for line in r.stderr.splitlines()
                      if "error:" in line]
            op = re.search(r'name = "(onnx\.\w+)"', r.stderr)
            sys.exit("%s failed%s: %s" % (os.path.basename(cmd[0]),
                                          " on " + op.group(1) if op else "",
                                          (errors[0] if errors else r.stderr.strip())[-600:]))
    os.remove(mlir)


def compile_tvm(model, inputs_json, artifact):
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
    spec, _ = load_inputs(inputs_json)
    mod = from_onnx(onnx.load(model), shape_dict={t["name"]: t["shape"] for t in spec},
                    dtype_dict={t["name"]: t["dtype"] for t in spec})
    target = tvm.target.Target({"kind": "llvm",
                                "mcpu": tvm.target.codegen.llvm_get_system_cpu()})
    with tvm.transform.PassContext(opt_level=3):
        ex = relax.build(mod, target)
    ex.export_library(artifact)


def runner_iree(artifact, threads):
    import iree.runtime as rt
    rt.flags.parse_flags("--task_topology_max_group_count=%d" % threads)
    ctx = rt.SystemContext(config=rt.Config("local-task"))
    with open(artifact, "rb") as f:
        vm = rt.VmModule.copy_buffer(ctx.instance, f.read())
    ctx.add_vm_module(vm)
    # The model's function (the importer names it after the graph), not its $async twin.
    name = next(n for n in vm.function_names if not n.startswith("__") and "$" not in n)
    fn = ctx.modules[vm.name][name]

    def args(inputs):
        return [rt.asdevicearray(ctx.config.device, x) for x in inputs]

    def call(on_device):
        out = fn(*on_device)
        return (out[0] if isinstance(out, (list, tuple)) else out).to_host()
    from importlib.metadata import version
    return args, call, version("iree-base-runtime")


def runner_tvm(artifact, threads):
    os.environ["TVM_NUM_THREADS"] = str(threads)
    import tvm
    from tvm import relax
    vm = relax.VirtualMachine(tvm.runtime.load_module(artifact), tvm.cpu())
    fn = vm["main"]

    def args(inputs):
        return [tvm.runtime.tensor(x) for x in inputs]

    def call(on_device):
        out = fn(*on_device)
        return (out[0] if isinstance(out, (list, tuple, tvm.ir.Array)) else out).numpy()
    return args, call, tvm.__version__


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "compile":
        engine, model, inputs_json, artifact = sys.argv[2:6]
        t0 = time.perf_counter()
        if engine == "iree":
            compile_iree(model, artifact)
        elif engine == "tvm":
            compile_tvm(model, inputs_json, artifact)
        else:
            sys.exit("unknown engine " + engine)
        print(json.dumps({"seconds": time.perf_counter() - t0}))
        return
    if len(sys.argv) != 9 or sys.argv[1] != "run":
        sys.exit(__doc__)
    engine, artifact, inputs_json, threads, runs, warmup, out_path = sys.argv[2:9]
    if engine == "tvm":  # before TVM's runtime starts its pool
        os.environ["TVM_NUM_THREADS"] = threads
    args, call, version = (runner_iree if engine == "iree" else runner_tvm)(artifact,
                                                                           int(threads))
    inputs = args(load_inputs(inputs_json)[1])  # on the engine's device once, as ORT's feed
    out = None
    for _ in range(int(warmup)):
        out = call(inputs)
    ms = []
    for _ in range(int(runs)):
        t0 = time.perf_counter()
        out = call(inputs)
        ms.append((time.perf_counter() - t0) * 1e3)
    np.ascontiguousarray(out).tofile(out_path)
    print(json.dumps({"median_ms": float(np.median(ms)), "min_ms": min(ms), "runs": len(ms),
                      "version": version}))


if __name__ == "__main__":
    main()
