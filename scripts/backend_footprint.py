"""Measures the reference backend's flash, static RAM and stack on a Cortex-M4F
(thumbv7em-none-eabi) and writes the table odlac's report reads
(compiler/target/BackendFootprintTable.inc; docs/backends.md, "Footprint table").
Run it by hand when runtime_stubs/reference or the code odlac generates changes:

    python3 scripts/backend_footprint.py [--odlac build/compiler/driver/odlac] [--jobs 2]

For each element-type configuration of the backend (every type, or ODLA_REFERENCE_ONLY_TYPES
with one ODLA_REFERENCE_WITH_<TYPE>) it compiles the backend's sources as bench/embedded.py
and examples/cortex-m do (arm-none-eabi-gcc -O2 -ffunction-sections -fdata-sections, no
threads, heap, stdio or call log) with -fcallgraph-info=su (GCC's call graph with the frames
of -fstack-usage), then links each public odla_* function alone (-Wl,-u,odla_X
-Wl,--gc-sections, newlib-nano) and reads from the linker map every input section the link
keeps beyond an empty program's: the code and data that entry pulls in, the C library's
included. Stack: each function's frame and direct calls (GCC's .ci; for the C library's and
the assembly kernels, the stack adjustments and bl of their disassembly) give the deepest
stack of its call tree without indirect calls (a; none where it recurses) and the deepest
stack at which it calls through a pointer (b; the logger hook's calls aside). What an entry's
link keeps that its direct calls do not reach is what those calls may run (the kernels whose
addresses the builders store); inside such a function, only what its own tree takes the
address of (relocations: a kernel's parts given to ref_parallel).

The generated code: the models of models/ compiled by odlac for the M4 (--no-heap, compile
mode, float32 and --quantize=int8), their NAME.c built with the same flags; a least-squares
line of its flash over the ODLA call sites the report counts (NAME.json's odla_calls), and
the most stack per call site of the generated functions alone (their compound literals)."""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(ROOT, "runtime_stubs", "reference")
INCLUDE = os.path.join(ROOT, "runtime_stubs", "include")
OUTPUT = os.path.join(ROOT, "compiler", "target", "BackendFootprintTable.inc")
TRIPLE = "thumbv7em-none-eabi"
CC = "arm-none-eabi-gcc"
CPU = ["-mthumb", "-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
BACKEND = ["-DODLA_REFERENCE_NO_THREADS", "-DODLA_REFERENCE_NO_HEAP",
           "-DODLA_REFERENCE_NO_STDIO", "-DODLA_REFERENCE_NO_CALL_LOG"]
CFLAGS = [*CPU, "-std=c99", "-O2", "-fno-short-enums", "-ffunction-sections", "-fdata-sections",
          *BACKEND, "-I", INCLUDE, "-I", REFERENCE, "-I", os.path.join(ROOT, "runtime_stubs",
                                                                          "common")]
LDFLAGS = [*CPU, "-Wl,--gc-sections", "-Wl,--no-enum-size-warning", "--specs=nano.specs",
           "--specs=nosys.specs"]
# ODLA_REFERENCE_WITH_<TYPE> (runtime_stubs/reference/ref_types.h), in the order of the
# compiler's DType names.
TYPES = ["f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
         "bool"]
MODELS = [("mlp", "", []), ("cnn", "", []), ("cnn_basic", "", []),
          ("digits", "input:1x1x8x8", []),
          ("digits", "input:1x1x8x8", ["--quantize=int8", "--calibration",
                                       os.path.join(ROOT, "models", "digits",
                                                    "test_data_set_1")]),
          ("cnn", "", ["--quantize=int8", "--calibration", os.path.join(ROOT, "models", "cnn")])]
# The backend's functions whose indirect call is the application's logger hook (odla_SetLogger),
# not a kernel: the hook's own stack is the application's to count.
LOGGER = {"ref_log", "ref_fail", "ref_report", "ref_data_error"}


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout[-3000:]}"
                           f"{r.stderr[-3000:]}")
    return r.stdout


def config_flags(config):
    return [] if config == "all" else ["-DODLA_REFERENCE_ONLY_TYPES",
                                       f"-DODLA_REFERENCE_WITH_{config.upper()}"]


def compile_backend(config, work, pool):
    folder = os.path.join(work, config)
    os.makedirs(folder)
    sources = sorted(f for f in os.listdir(REFERENCE) if f.endswith(".c"))
    list(pool.map(lambda f: run([CC, *CFLAGS, *config_flags(config), "-fcallgraph-info=su", "-c", os.path.join(REFERENCE, f),
                                 "-o", os.path.join(folder, f[:-2] + ".o")], cwd=folder),
                  sources))
    return folder, [os.path.join(folder, f[:-2] + ".o") for f in sources]


# One input section a link keeps: `.text.ref_pool` and its size, then the file it came from.
SECTION = re.compile(r"^ (\.[\w.$]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+) (\S.*)$")
BEFORE = re.compile(r"^\s+0x([0-9a-f]+) \(size before relaxing\)$")


def kept_sections(map_path):
    """{(file, section): (bytes, in flash, in RAM)} of the link's memory map. A section name
    too long for its line continues on the next; merged strings count their size before the
    linker merges them."""
    with open(map_path) as f:
        lines = f.read().split("Linker script and memory map", 1)[1].splitlines()
    kept, pending, last = {}, None, None
    for line in lines:
        if pending and line.startswith("                0x"):
            line, pending = " " + pending + " " + line.strip(), None
        elif re.fullmatch(r" \.[\w.$]+", line):
            pending = line.strip()
            continue
        m = SECTION.match(line)
        if m:
            name, size, source = m.group(1), int(m.group(2), 16), m.group(3).strip()
            if size and not name.startswith((".debug", ".comment", ".ARM.attributes")):
                last = (os.path.basename(source), name)
                kept[last] = size
            continue
        b = BEFORE.match(line)
        if b and last and ".str" in last[1]:
            kept[last] = max(kept[last], int(b.group(1), 16))
    return {k: (size, not k[1].startswith(".bss"), k[1].startswith((".bss", ".data")))
            for k, size in kept.items()}


def function_of(key):
    """The function a kept code section holds: (object, name), or None."""
    obj, section = key
    return (obj, section[len(".text."):]) if section.startswith(".text.") else None


def backend_graph(folder, objects):
    """Frames and direct calls of the backend's functions from GCC's .ci files (its call graph
    with each function's stack usage, as -fstack-usage reports it): {(object, name): frame},
    {(object, name): [callee titles]}, the set that call indirectly, and {global: object}."""
    frames, calls, indirect, globals_ = {}, {}, set(), {}
    for obj in objects:
        base = os.path.basename(obj)
        with open(os.path.join(folder, base[:-2] + ".ci")) as f:
            text = f.read()
        for m in re.finditer(r'node: \{ title: "([^"]*)" label: "[^"]*\\n(\d+) bytes \(([^)]*)\)"',
                             text):
            if m.group(3).split(",")[0] != "static":
                raise RuntimeError(f"{m.group(1)}: a {m.group(3)} frame, which this table cannot "
                                   "bound")
            frames[(base, m.group(1).rsplit(":", 1)[-1])] = int(m.group(2))
        for m in re.finditer(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"', text):
            source = (base, m.group(1).rsplit(":", 1)[-1])
            if m.group(2) == "__indirect_call":
                if source[1].split(".")[0] not in LOGGER:
                    indirect.add(source)
            else:
                calls.setdefault(source, []).append(m.group(2))
        for line in run(["arm-none-eabi-nm", "-g", "--defined-only", obj]).splitlines():
            kind, name = line.split()[1:3]
            if kind in "TW":
                globals_[name] = base
    return frames, calls, indirect, globals_


CALLS = {"R_ARM_THM_CALL", "R_ARM_THM_JUMP24", "R_ARM_THM_JUMP19", "R_ARM_CALL", "R_ARM_JUMP24"}


def address_taken(objects, frames, globals_):
    """{function: the functions whose addresses its code takes}, from the objects'
    relocations other than calls, directly or through the constant tables it reads (a table of
    kernels); functions are (object, name)."""
    refs = {}  # (object, section) -> [(object, symbol or section name)]
    for obj in objects:
        base, section = os.path.basename(obj), None
        for line in run(["arm-none-eabi-readelf", "-rW", obj]).splitlines():
            if m := re.match(r"Relocation section '\.rel(\.[^']+)'", line):
                section = (base, m.group(1))
                refs.setdefault(section, [])
            elif section and (f := line.split()) and len(f) >= 5 and f[2].startswith("R_ARM_") \
                    and f[2] not in CALLS:
                refs[section].append((base, f[4]))
    by_suffix = {}
    for obj, sec in refs:
        by_suffix.setdefault(sec.rsplit(".", 1)[-1], []).append((obj, sec))

    def function(obj, name):
        name = name[len(".text."):] if name.startswith(".text.") else name
        if (obj, name) in frames:
            return (obj, name)
        return (globals_[name], name) if name in globals_ else None

    taken = {}
    for (obj, sec) in refs:
        if not sec.startswith(".text."):
            continue
        found, seen, todo = set(), set(), [(obj, sec)]
        while todo:
            node = todo.pop()
            for o, name in refs.get(node, ()):
                if f := function(o, name):
                    found.add(f)
                    continue
                for data in by_suffix.get(name.rsplit(".", 1)[-1], ()):
                    if data not in seen and not data[1].startswith(".text."):
                        seen.add(data)
                        todo.append(data)
        taken[(obj, sec[len(".text."):])] = found
    return taken


# Instructions that move the stack pointer down, in a function's disassembly.
PUSH = re.compile(r"\t(?:push(?:\.w)?|stmdb(?:\.w)?\tsp!,)\s*\{([^}]*)\}")
VPUSH = re.compile(r"\tvpush\s*\{([^}]*)\}")
SUBSP = re.compile(r"\tsub(?:\.w|w)?\tsp, (?:sp, )?#(\d+)")
PREINDEX = re.compile(r"\tstr[a-z.]*\t[^\[]*\[sp, #-(\d+)\]!")
BRANCH = re.compile(r"\t(?:bl|b\.w|b)\t[0-9a-f]+ <([^>+]+)>")


def registers(text, width):
    n = 0
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-")
            n += int(hi[1:]) - int(lo[1:]) + 1
        elif part:
            n += 1
    return n * width


def library_graph(elf):
    """Frames and calls of every function of a linked ELF, from its disassembly: the sum of
    the stack adjustments a function makes (an upper bound of its frame where none is in a
    loop), and the functions it branches to with bl or as a tail call."""
    frames, calls, current = {}, {}, None
    for line in run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", elf]).splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            current = m.group(1)
            frames[current], calls[current] = 0, set()
            continue
        if current is None:
            continue
        if p := PUSH.search(line):
            frames[current] += registers(p.group(1), 4)
        elif p := VPUSH.search(line):
            frames[current] += registers(p.group(1), 8 if "d" in p.group(1) else 4)
        elif p := SUBSP.search(line):
            frames[current] += int(p.group(1))
        elif p := PREINDEX.search(line):
            frames[current] += int(p.group(1))
        if (b := BRANCH.search(line)) and b.group(1) != current:
            calls[current].add(b.group(1))
    return frames, calls


class Stack:
    """a(f), b(f) over one configuration's call graph. Functions are (object, name) for the
    backend's and (None, name) for the C library's."""

    def __init__(self, backend, library, taken):
        self.frames, calls, self.indirect, self.globals = backend
        self.taken = taken
        self.lib_frames, self.lib_calls = library
        self.calls = {f: [self.resolve(f[0], t) for t in ts] for f, ts in calls.items()}
        self.memo, self.active, self.levels = {}, set(), {}

    def resolve(self, obj, title):
        if ":" in title:  # a static function of the same file
            return (obj, title.rsplit(":", 1)[1])
        if title in self.globals:
            return (self.globals[title], title)
        return (None, title)

    # Functions without GCC's figures, the C library's and the backend's in assembly, are read
    # from the disassembly.
    def callees(self, f):
        if f not in self.frames:
            return [self.resolve(None, t) for t in sorted(self.lib_calls.get(f[1], ()))]
        return self.calls.get(f, [])

    def frame(self, f):
        return self.frames[f] if f in self.frames else self.lib_frames.get(f[1], 0)

    def ab(self, f):
        """(a, b); a is None where the tree recurses (no bound)."""
        if f in self.memo:
            return self.memo[f]
        if f in self.active:
            return (None, -1)
        self.active.add(f)
        kids = [self.ab(c) for c in self.callees(f)]
        self.active.discard(f)
        frame = self.frame(f)
        if any(k[0] is None for k in kids):
            self.memo[f] = (None, -1)
            return self.memo[f]
        a = frame + max([k[0] for k in kids], default=0)
        bs = [k[1] for k in kids if k[1] >= 0] + ([0] if f in self.indirect else [])
        self.memo[f] = (a, frame + max(bs) if bs else -1)
        return self.memo[f]

    def level(self, k, active=frozenset()):
        """The deepest stack of running k through a pointer: its tree, or where its tree makes
        an indirect call, that call running the deepest of the functions whose addresses the
        tree takes (a kernel's parts given to ref_parallel). None where that recurses or the
        tree recurses."""
        if k in self.levels:
            return self.levels[k]
        a, b = self.ab(k)
        if a is None or k in active:
            return None
        deepest = 0
        if b >= 0:
            taken = set().union(*(self.taken.get(g, set()) for g in self.closure(k)))
            for t in sorted(taken):
                level = self.level(t, active | {k})
                if level is None:
                    self.levels[k] = None
                    return None
                deepest = max(deepest, level)
        self.levels[k] = max(a, b + deepest) if b >= 0 else a
        return self.levels[k]

    def closure(self, f):
        seen, todo = set(), [f]
        while todo:
            g = todo.pop()
            if g not in seen:
                seen.add(g)
                todo.extend(self.callees(g))
        return seen


def link(objects, folder, tag, undefined):
    """Links an empty program (folder/../main.o) with the objects, keeping `undefined`."""
    out = os.path.join(folder, tag)
    run([CC, *LDFLAGS, os.path.join(folder, "..", "main.o"), *objects,
         *(f"-Wl,-u,{u}" for u in undefined), f"-Wl,-Map={out}.map", "-lm", "-o", out + ".elf"])
    return out


def measure_config(config, work, pool):
    folder, objects = compile_backend(config, work, pool)
    backend = backend_graph(folder, objects)
    entries = sorted(n for n in backend[3] if n.startswith("odla_"))
    empty = kept_sections(link(objects, folder, "empty", []) + ".map")
    whole = link(objects, folder, "whole", entries)
    stack = Stack(backend, library_graph(whole + ".elf"),
                  address_taken(objects, backend[0], backend[3]))
    maps = pool.map(lambda e: kept_sections(link(objects, folder, e, [e]) + ".map"), entries)
    result = {}
    for entry, kept in zip(entries, maps):
        pulled = {k: v for k, v in kept.items() if k not in empty}
        functions = {f for k in pulled if (f := function_of(k))}
        direct = stack.closure((backend[3][entry], entry))
        # What the entry keeps that its direct calls do not reach: run through pointers.
        targets = sorted(f for f in functions if f not in direct and f[0] is not None)
        result[entry] = dict(sections=pulled, stack=stack.ab((backend[3][entry], entry)),
                             targets={t: stack.level(t) for t in targets})
        os.remove(os.path.join(folder, entry + ".elf"))
    print(f"{config}: {len(entries)} entries", file=sys.stderr, flush=True)
    return entries, result


def generated_code(odlac, work):
    """(call sites, flash bytes, stack bytes of the generated functions alone) of each sample
    model's NAME.c."""
    samples = []
    for k, (model, shape, flags) in enumerate(MODELS):
        out = os.path.join(work, f"model{k}")
        run([odlac, os.path.join(ROOT, "models", model, "model.onnx"), "-o", out, "--no-heap",
             "--memory=least", "--weights=c", f"--target={TRIPLE}", "--name", "net",
             *(["--input-shape", shape] if shape else []), *flags])
        with open(os.path.join(out, "net.json")) as f:
            sites = sum(json.load(f)["odla_calls"].values())
        obj = os.path.join(out, "net.o")
        run([CC, *CFLAGS, "-I", out, "-fstack-usage", "-fcallgraph-info=su",
             f'-DODLA_REFERENCE_CONFIG="net_reference.h"', "-c", os.path.join(out, "net.c"),
             "-o", obj], cwd=out)
        size = sum(int(line.split()[1]) for line in run(["arm-none-eabi-size", "-A", obj])
                   .splitlines()[2:] if line.startswith((".text", ".rodata", ".data")))
        frames = {}
        with open(os.path.join(out, "net.su")) as f:
            for line in f:
                where, frame, _ = line.split("\t")
                frames[where.rsplit(":", 1)[1]] = int(frame)
        edges = collections.defaultdict(set)
        with open(os.path.join(out, "net.ci")) as f:
            for m in re.finditer(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"', f.read()):
                edges[m.group(1).rsplit(":", 1)[-1]].add(m.group(2).rsplit(":", 1)[-1])

        def depth(fn, seen=()):
            if fn not in frames or fn in seen:
                return 0
            return frames[fn] + max((depth(c, seen + (fn,)) for c in edges[fn]), default=0)
        samples.append((sites, size, max(depth(fn) for fn in frames)))
    return samples


def fit(samples):
    """Least squares bytes = fixed + per_call * sites."""
    n = len(samples)
    sx = sum(s[0] for s in samples)
    sy = sum(s[1] for s in samples)
    sxx = sum(s[0] * s[0] for s in samples)
    sxy = sum(s[0] * s[1] for s in samples)
    per_call = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return round((sy - per_call * sx) / n), round(per_call)


def write(path, configs, measured, samples, odlac):
    """The table, each symbol once, each list of symbols once."""
    symbols, symbol_ids, names, name_ids = [], {}, [], {}
    lists, list_ids = [], {}

    def symbol(key, value, level):
        if key not in name_ids:
            name_ids[key] = len(names)
            names.append(key)
        size, flash, ram = value
        row = (name_ids[key], size if flash else 0, size if ram else 0,
               -1 if level is None else level)
        if row not in symbol_ids:
            symbol_ids[row] = len(symbols)
            symbols.append(row)
        return symbol_ids[row]

    def intern(ids, pool):
        """A list as a list of `pool` (this configuration's) that it holds, and the rest: the
        largest already written, or a new one, what it shares with the list it overlaps most
        (the backend's common code, once)."""
        ids = frozenset(ids)
        if ids not in list_ids:
            base = max((x for x in pool if x < ids), key=len, default=frozenset())
            shared = max((x & ids for x in pool), key=len, default=frozenset())
            if len(shared) > len(base) + 16 and shared != ids:
                base = frozenset(shared)
                intern(base, pool)
            rest = sorted(ids - base)
            list_ids[ids] = sum(len(x[2]) + 2 for x in lists)
            lists.append((ids, list_ids[base] + 1 if base else 0, rest))
        pool.add(ids)
        return list_ids[ids]

    entries = sorted(set().union(*(set(measured[c][0]) for c in configs)))
    rows, pools = [], {c: set() for c in configs}
    for entry in entries:
        cells = []
        for c in configs:
            m = measured[c][1].get(entry)
            if m is None:
                cells.append("{kAbsent, kAbsent, 0, -1}")
                continue
            ids, targets = [], []
            for key, value in m["sections"].items():
                f = function_of(key)
                ids.append(symbol(key, value, m["targets"].get(f, 0)))
                if f in m["targets"]:
                    targets.append(ids[-1])
            a, b = m["stack"]
            cells.append(f"{{{intern(ids, pools[c])}, {intern(targets, pools[c])}, "
                         f"{-1 if a is None else a}, {b}}}")
        rows.append(f'    {{"{entry}", {{{", ".join(cells)}}}}},')
    fixed, per_call = fit(samples)
    stack = max((s[2] + s[0] - 1) // s[0] for s in samples)
    gcc = run([CC, "--version"]).splitlines()[0]
    version = run([odlac, "--version"]).strip()
    flat = [x for _, base, rest in lists for x in (base, len(rest), *rest)]
    flags = " ".join(x for x in CFLAGS if x.startswith("-m") or x.startswith("-O")
                     or x.startswith("-f") or x.startswith("-D"))
    lines = [
        "// The reference backend's footprint on thumbv7em-none-eabi (Cortex-M4F): generated by",
        "// scripts/backend_footprint.py; do not edit, rerun it when runtime_stubs/reference or",
        "// the code odlac generates changes. Included by BackendFootprint.cpp, which says what",
        "// each figure means.",
        f"// Measured with {gcc} ({flags}, newlib-nano) and {version}.",
        "",
        f'static const char kTriple[] = "{TRIPLE}";',
        f'static const char kCompiler[] = "{gcc}";',
        "static const char *const kConfigs[] = {" + ", ".join(f'"{c}"' for c in configs) + "};",
        "",
        "// NAME.c's flash = fixed + per call site (a least-squares line); the stack of its",
        "// functions alone at most so much per call site (the most of any model). Measured on",
        "// models/ (call sites, flash, stack): " + "; ".join(
            f"{s[0]} {s[1]} {s[2]}" for s in samples) + ".",
        f"static const CodeFit kCodeFit = {{{fixed}, {per_call}, {stack}}};",
        "",
        "// Each input section a link keeps, as object:section.",
        "static const char *const kNames[] = {",
        *(f'    "{obj}:{sec}",' for obj, sec in names),
        "};",
        "// name, flash bytes, RAM bytes, the deepest stack of running it through a pointer.",
        "static const Symbol kSymbols[] = {",
        *(f"    {{{n}, {fl}, {ram}, {level}}}," for n, fl, ram, level in symbols),
        "};",
        "// Lists of indices into kSymbols: each is 1 + the offset of a list it extends (0: none),",
        "// the number of indices it adds, and those.",
        "static const uint32_t kLists[] = {",
        *("    " + ", ".join(map(str, flat[i:i + 16])) + "," for i in range(0, len(flat), 16)),
        "};",
        "// Per configuration: what the entry links, what of it may run through pointers, and the",
        "// stack of its own call tree (a) and at its deepest indirect call (b).",
        "static const Entry kEntries[] = {",
        *rows,
        "};",
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {path}: {len(entries)} entries, {len(symbols)} symbols, {len(flat)} list "
          f"words; generated code {fixed} + {per_call} per call site, stack {stack} per call site",
          file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--odlac", default=os.path.join(ROOT, "build", "compiler", "driver", "odlac"))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--configs", default=",".join(["all", *TYPES]))
    p.add_argument("-o", "--output", default=OUTPUT)
    args = p.parse_args()
    configs = args.configs.split(",")
    with tempfile.TemporaryDirectory(prefix="odlac-footprint-") as work, \
            ThreadPoolExecutor(args.jobs) as pool:
        with open(os.path.join(work, "main.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        run([CC, *CPU, "-O2", "-c", os.path.join(work, "main.c"), "-o",
             os.path.join(work, "main.o")])
        samples = generated_code(args.odlac, work)
        measured = {c: measure_config(c, work, pool) for c in configs}
    write(args.output, configs, measured, samples, args.odlac)


if __name__ == "__main__":
    main()
