#!/usr/bin/python3
"""Checks that an ODLA backend library defines every function the ODLA headers declare.

Usage: check_exports.py INCLUDE_DIR LIBRARY [--cc CC] [--nm NM]

The declarations come from the headers as the C compiler sees them: odla.h and the
extension header odla_ext.h are preprocessed (cc -E, so comments such as odla_common.h's
`odla_Xxx(...)` placeholder and inactive #if branches drop out), and every top-level
declaration that is not a typedef and names an odla_* function is one the library must
export. The definitions are the library's defined dynamic symbols (nm -D --defined-only).
Every missing function is printed; the exit status is 1 when any is missing, 0 otherwise.
"""

import argparse
import re
import subprocess
import sys

TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|[A-Za-z_]\w*|\S')


def declared_functions(include_dir, cc):
    source = '#include <ODLA/odla.h>\n#include <ODLA/odla_ext.h>\n'
    text = subprocess.run([cc, '-E', '-P', '-x', 'c', '-std=c99', f'-I{include_dir}', '-'],
                          input=source, capture_output=True, text=True, check=True).stdout
    names, statement, depth = set(), [], 0
    for tok in TOKEN.findall(text):
        if tok == '{':
            depth += 1
        elif tok == '}':
            depth -= 1
        elif tok == ';' and depth == 0:
            names.update(function_declared(statement))
            statement = []
            continue
        if depth == 0 and tok not in '{}':
            statement.append(tok)
    return names


def function_declared(tokens):
    """The odla_* function a top-level declaration declares: its first identifier followed by
    '(' outside parentheses (a function-pointer variable or typedef has its name inside)."""
    if not tokens or tokens[0] == 'typedef':
        return []
    depth = 0
    for i, tok in enumerate(tokens[:-1]):
        if tok == '(':
            depth += 1
        elif tok == ')':
            depth -= 1
        elif depth == 0 and tokens[i + 1] == '(' and re.fullmatch(r'[A-Za-z_]\w*', tok):
            return [tok] if tok.startswith('odla_') else []
    return []


def defined_symbols(library, nm):
    out = subprocess.run([nm, '-D', '--defined-only', library], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('include_dir')
    ap.add_argument('library')
    ap.add_argument('--cc', default='cc')
    ap.add_argument('--nm', default='nm')
    args = ap.parse_args()
    declared = declared_functions(args.include_dir, args.cc)
    if len(declared) < 229:  # ODLA 0.5 alone declares 229 functions
        print(f'found only {len(declared)} declared functions: the header parse is broken')
        return 1
    missing = sorted(declared - defined_symbols(args.library, args.nm))
    for name in missing:
        print(f'{args.library}: {name} is declared in the ODLA headers but not defined')
    print(f'{len(declared) - len(missing)} of {len(declared)} declared functions defined')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
