"""Fails when an IR op's name is spelt as a string outside the op table and the import rules.

Code that names an op uses its handle (compiler/ops/Ops.h: n->is(ops::Conv)), which does not
compile when misspelt; a string compared with an op's name would silently never match. The
op names are the X(...) entries of Ops.h. Allowed: each row's own name in its definition
(`const OpDef Conv = {"Conv", ...`, on the line or the next) in compiler/ops/, the frontend (the import rules map ONNX
names to IR ops by name), and ODLA function names that happen to equal an op's, passed to the
manifest queries (hasOp, hasRuntime, ...) or listed in the manifest's defaults.

    python3 tests/house/check_op_names.py [ROOT]
    python3 tests/house/check_op_names.py --self-test [ROOT]

--self-test checks the checker: on a copy of the tree with an op name planted in a pass and
in codegen, it must fail and name both places.
"""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ARGS = [a for a in sys.argv[1:] if a != '--self-test']
ROOT = pathlib.Path(ARGS[0] if ARGS else pathlib.Path(__file__).parents[2])
# Where a string literal names an ODLA function, not an IR op.
ODLA_NAME_CONTEXTS = [
    re.compile(r'\bhas(?:Op|Runtime|Extension)\(\s*$'),  # manifest queries
    re.compile(r'\bviews\{\s*$'),  # Target's default views
    re.compile(r'\bfn == $'),  # CheckTarget compares ODLA function names
]


def op_names():
    text = (ROOT / 'compiler/ops/Ops.h').read_text()
    return set(re.findall(r'\bX\((\w+)\)', text))


def literals(line):
    """(start, text) of each string literal in a line of C++, outside // comments."""
    i, n = 0, len(line)
    while i < n:
        if line.startswith('//', i):
            return
        if line[i] == "'":
            j = i + 1
            while j < n and line[j] != "'":
                j += 2 if line[j] == '\\' else 1
            i = j + 1
            continue
        if line[i] == '"':
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == '\\' else 1
            yield i, line[i + 1:j]
            i = j + 1
            continue
        i += 1


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp)
        for d in ('compiler', 'codegen'):
            shutil.copytree(ROOT / d, copy / d)
        planted = {'compiler/passes/FoldBatchNorm.cpp': 'static const char *kOp = "Conv";',
                   'codegen/Report.cpp': 'bool isGemm(const std::string &op) { return op == "Gemm"; }'}
        for rel, line in planted.items():
            with open(copy / rel, 'a') as f:
                f.write('\n' + line + '\n')
        r = subprocess.run([sys.executable, __file__, str(copy)], capture_output=True, text=True)
        missed = [rel for rel in planted if rel not in r.stdout]
        if r.returncode != 1 or missed:
            sys.exit(f'check_op_names --self-test: exit {r.returncode}, missed {missed}:\n{r.stdout}')
        print(f'check_op_names --self-test: the planted names were found:\n{r.stdout}')


def main():
    if '--self-test' in sys.argv:
        return self_test()
    names = op_names()
    if len(names) < 100:
        sys.exit(f'check_op_names: found only {len(names)} ops in compiler/ops/Ops.h')
    sources = [p for d in ('compiler', 'codegen') for p in (ROOT / d).rglob('*')
               if p.suffix in ('.cpp', '.h')]
    bad = []
    for path in sorted(sources):
        rel = path.relative_to(ROOT).as_posix()
        if rel == 'compiler/ops/Ops.h':
            continue
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            # A row's name opens its definition, on its line or the next.
            row = re.match(r'const OpDef (\w+) =', line) or (
                number > 1 and re.match(r'const OpDef (\w+) =', lines[number - 2]))
            for start, text in literals(line):
                if text not in names:
                    continue
                if rel.startswith('compiler/ops/') and row and row.group(1) == text:
                    continue
                if any(c.search(line[:start]) for c in ODLA_NAME_CONTEXTS):
                    continue
                bad.append(f'{rel}:{number}: "{text}" names an op: use ops::{text}')
    print(f'check_op_names: {len(sources)} files, {len(names)} op names')
    if bad:
        print('\n'.join(bad))
        sys.exit(1)


main()
