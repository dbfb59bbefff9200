#!/usr/bin/python3
"""Makes the seed corpora and dictionaries of the fuzz targets (tests/fuzz/README.md) from
the ONNX test models: the models in models/ and every test folder of Debian's
libonnx-testdata.

Usage: make_seeds.py OUT --odlac ODLAC --lib LIBODLA_REFERENCE_A --include DIR [--cc CC]

Writes, each file named by its content's SHA-1 as libFuzzer names corpus files:
  OUT/import/  the models (model.onnx files);
  OUT/tensor/  their test inputs and outputs (TensorProto files, and as .npy files those
               NumPy can hold);
  OUT/load/    for models/ and a small test model per ONNX op type: the stored executable,
               the stored computation and the constants array libodla_reference makes of each
               (odlac --exec-mode=load, then seed_store.c with the generated net_store.c);
  OUT/import.dict, OUT/load.dict  libFuzzer dictionaries: ONNX's op, attribute and domain
               names (from libonnx's schemas), the stored formats' magics and op names.
Only regular files up to --max-bytes go in, so that each run of a target stays fast."""
import argparse
import concurrent.futures
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = "/usr/share/libonnx-testdata/data"
SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple")


def test_folders():
    folders = sorted(glob.glob(os.path.join(REPO, "models", "*", "")))
    for suite in SUITES:
        folders += sorted(glob.glob(os.path.join(DATA, suite, "*", "")))
    return [f.rstrip("/") for f in folders if os.path.isfile(os.path.join(f, "model.onnx"))]


def add_bytes(out_dir, data, max_bytes):
    """Writes `data` into out_dir under its SHA-1; returns whether it went in."""
    if len(data) > max_bytes:
        return False
    with open(os.path.join(out_dir, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)
    return True


def add(out_dir, path, max_bytes):
    """The same for a regular file's contents."""
    if not os.path.isfile(path) or os.path.getsize(path) > max_bytes:
        return False
    with open(path, "rb") as f:
        return add_bytes(out_dir, f.read(), max_bytes)


def store_seeds(folder, work, args):
    """Compiles one model for load mode and stores what the reference backend makes of it.
    Returns the stored files (none when odlac refuses the model)."""
    gen = os.path.join(work, "gen")
    r = subprocess.run([args.odlac, os.path.join(folder, "model.onnx"), "-o", gen,
                        "--exec-mode=load", "--weights=c"], capture_output=True)
    if r.returncode != 0:
        return []
    exe = os.path.join(work, "seed_store")
    sources = [os.path.join(gen, "net_store.c"), os.path.join(gen, "net_weights.c"),
               os.path.join(HERE, "seed_store.c")]
    subprocess.run([args.cc, "-std=c99", "-O1", "-I", args.include, "-I", gen, *sources, args.lib,
                    "-Wl,--wrap=odla_DestroyComputation", "-lm", "-lpthread", "-o", exe],
                   check=True)
    prefix = os.path.join(work, "seed")
    subprocess.run([exe, prefix], capture_output=True)
    return [prefix + ext for ext in (".odlx", ".odlc", ".odlk") if os.path.exists(prefix + ext)]


def load_folders(folders, max_bytes):
    """models/, and of the test models small enough to store (their weights go in each
    file), the first that uses each op type: every kernel's parameters once."""
    import onnx
    chosen, ops = [], set()
    for f in folders:
        path = os.path.join(f, "model.onnx")
        if f.startswith(REPO):
            chosen.append(f)
        elif os.path.getsize(path) <= max_bytes:
            try:
                types = {n.op_type for n in onnx.load(path).graph.node}
            except Exception:  # a test model libonnx cannot read: odlac's business, not here
                continue
            if not types <= ops:
                chosen.append(f)
                ops |= types
    return chosen


def write_dict(path, words):
    with open(path, "w", encoding="ascii") as f:
        for w in sorted(set(words)):
            if re.fullmatch(r"[\x20-\x7e]+", w):
                f.write('"%s"\n' % w.replace("\\", "\\\\").replace('"', '\\"'))


def npy_of(pb):
    """The tensor of a TensorProto file as a .npy file (the drivers' other input format), or
    None where NumPy has no dtype for it (strings, bfloat16...)."""
    import io
    import numpy as np
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(pb, "rb") as f:
        t.ParseFromString(f.read())
    try:
        a = numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 (a type this onnx cannot convert)
        return None
    if a.dtype.kind not in "biuf":
        return None
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def onnx_words():
    import onnx.defs
    words = {"ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training", "com.microsoft"}
    for schema in onnx.defs.get_all_schemas_with_history():
        words.add(schema.name)
        words.update(schema.attributes.keys())
    return words


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--odlac", required=True, help="odlac of a normal build")
    p.add_argument("--lib", required=True, help="libodla_reference.a of the same build")
    p.add_argument("--include", required=True, help="the folder holding ODLA/odla.h")
    p.add_argument("--cc", default=os.environ.get("CC", "cc"))
    p.add_argument("--max-bytes", type=int, default=64 * 1024)
    args = p.parse_args(argv)
    for sub in ("import", "tensor", "load"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)

    folders = test_folders()
    counts = {"import": 0, "tensor": 0, "load": 0}
    for folder in folders:
        counts["import"] += add(os.path.join(args.out, "import"),
                                os.path.join(folder, "model.onnx"), args.max_bytes)
        for pb in sorted(glob.glob(os.path.join(folder, "test_data_set_*", "*.pb"))):
            counts["tensor"] += add(os.path.join(args.out, "tensor"), pb, args.max_bytes)
            npy = npy_of(pb)
            if npy:
                counts["tensor"] += add_bytes(os.path.join(args.out, "tensor"), npy,
                                              args.max_bytes)

    def stored(folder):
        """(the stored files' paths, net_store.c) of one model, in a scratch folder."""
        work = tempfile.mkdtemp(prefix="odlac-seed-")
        try:
            paths = store_seeds(folder, work, args)
            source = open(os.path.join(work, "gen", "net_store.c")).read() if paths else ""
            return [open(p, "rb").read() for p in paths], source
        finally:
            shutil.rmtree(work, ignore_errors=True)

    ops = set()
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for images, source in pool.map(stored, load_folders(folders, args.max_bytes // 4)):
            for data in images:
                counts["load"] += add_bytes(os.path.join(args.out, "load"), data, args.max_bytes)
            ops.update(re.findall(r"\bodla_(?:Ext)?([A-Z]\w*)\(", source))

    write_dict(os.path.join(args.out, "import.dict"), onnx_words())
    write_dict(os.path.join(args.out, "load.dict"), ops | {"ODLAREFX", "ODLAREFC", "ODLAREFK"})
    print("make_seeds: %d models, %d tensors, %d stored images in %s"
          % (counts["import"], counts["tensor"], counts["load"], args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
