#!/usr/bin/python3
"""Checks the project's ODLA 0.5 headers against the ODLA 0.5 reference, so the two cannot drift.

Usage: check_odla_api.py SPEC_MD INCLUDE_DIR [--cc CC] [--cxx CXX] [--no-compiler] [-v]

SPEC_MD is tests/odla_api/API-0.5.md (a verbatim copy of the shared reference);
INCLUDE_DIR is the directory that holds ODLA/ (runtime_stubs/include).

Everything expected is read from the reference, the only fact written into
this script being the ODLA 0.5 total of 229 functions (which the reference's
tables and its own stated total must both give). What is checked:
  - headers (§1.1): every listed header exists, has its include guard wrapped
    around the whole file, includes exactly the listed <ODLA/...> headers, and
    wraps its declarations in extern "C" {} under __cplusplus;
  - macros (§1.2): values as the preprocessor sees them (cc -E -dM), for
    _WIN32 and elsewhere, and the headers they live in where the reference
    says;
  - scalar typedefs (§1.3), enums (§1.4), structs, function-pointer typedefs
    and handles (§1.5): names, enum member order, struct fields, textually
    after whitespace normalisation and at type level (a C11 translation unit
    that redeclares them from the reference and static-asserts enum values and
    struct layouts);
  - functions (§1.7): each of the 229 is declared once, in its header, with the
    reference's return type and parameter list (names and const included) and
    the declaration form `extern ODLA_API_EXPORT <ret> ODLA_API_CALL name(...)`
    apart from the three listed exceptions; nothing else is declared in the
    reference headers; a C++ translation unit confirms C linkage.
Headers in INCLUDE_DIR that the reference does not list (an odlac extension
header such as ODLA/odla_ext.h) are not checked, except that they must not
declare any reference function.

Interpretations of the reference:
  - "all headers below" for odla.h means the top-level headers below it; the
    ops/ headers are reached through odla_ops.h ("umbrella for ops").
  - Include lists compare <ODLA/...> includes only; a system include (such as
    <cstddef> for C++'s NULL) is not an ODLA include.

Exit status: 0 when everything matches, 1 on any mismatch (each one printed
with file, line, item, expected and found), 2 when the reference itself cannot
be parsed or the command line is wrong.
"""

import argparse
import bisect
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The reference's own statement of the total; checked against the tables too.
EXPECTED_TOTAL_FUNCTIONS = 229

MARKERS = ('extern', 'ODLA_API_EXPORT', 'ODLA_API_CALL')


class SpecError(Exception):
    """The reference could not be parsed: a problem with API-0.5.md, not the headers."""


# --------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------

TOKEN_RE = re.compile(r'''
    (?P<ws>\s+)
  | (?P<tok>\.\.\.
           | [A-Za-z_]\w*
           | \d[\w.]*
           | "(?:\\.|[^"\\\n])*"
           | '(?:\\.|[^'\\\n])*'
           | \S)
''', re.VERBOSE)

IDENT_RE = re.compile(r'[A-Za-z_]\w*$')


def tokenize(text, base_offset=0, line_starts=None):
    """Returns [(token, line)] for C code; line is 1-based when line_starts is given."""
    out = []
    for m in TOKEN_RE.finditer(text):
        if m.lastgroup != 'tok':
            continue
        line = 0
        if line_starts is not None:
            line = bisect.bisect_right(line_starts, base_offset + m.start()) + 1
        out.append((m.group('tok'), line))
    return out


def toks(text):
    """Token strings of a fragment of C (for reference text)."""
    return tuple(t for t, _ in tokenize(text))


def is_ident(tok):
    return bool(IDENT_RE.match(tok))


def render(tokens):
    """Canonical, readable spelling of a token sequence (for messages only)."""
    tokens = list(tokens)
    out = ''
    for i, t in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if prev is None:
            out = t
            continue
        glue = (t in (',', ')', ']', ';', '*', '[') or prev in ('(', '[')
                or (prev == '*' and (t in ('*', ')') or (i > 1 and tokens[i - 2] == '(')))
                or (t == '(' and (prev == ')' or (is_ident(prev) and nxt != '*'))))
        out += t if glue else ' ' + t
    return out


def split_top(tokens, sep):
    """Splits a token list at `sep` tokens outside (), [] and {}."""
    parts, cur, depth = [], [], 0
    for t in tokens:
        if t in ('(', '[', '{'):
            depth += 1
        elif t in (')', ']', '}'):
            depth -= 1
        if t == sep and depth == 0:
            parts.append(tuple(cur))
            cur = []
        else:
            cur.append(t)
    parts.append(tuple(cur))
    return parts


def params_of(tokens):
    """Parameter list tokens (between the parentheses) -> tuple of per-parameter token tuples."""
    if not tokens:
        return ()
    return tuple(split_top(tokens, ','))


def render_params(params):
    return ', '.join(render(p) for p in params) if params else ''


# --------------------------------------------------------------------------
# The reference (API-0.5.md)
# --------------------------------------------------------------------------

class Spec:
    def __init__(self):
        self.headers = {}          # path -> dict(guard, includes(set), count or None, row)
        self.header_order = []
        self.default_form = None   # e.g. ['extern', 'ODLA_API_EXPORT', '<ret>', 'ODLA_API_CALL']
        self.form_exceptions = {}  # function -> set of markers it lacks
        self.total_stated = None
        self.functions = {}        # name -> dict(header, ret(tokens), params, form)
        self.macros = {}           # name -> dict(value, win32_value or None, header or None, note)
        self.version_number = None
        self.scalars = {}          # name -> C type (GCC/Clang spelling)
        self.scalar_header = None
        self.enums = {}            # name -> dict(members, header or None, stated_count)
        self.structs = {}          # name -> dict(fields (token tuples), header or None, body)
        self.fn_typedefs = {}      # name -> tokens of the typedef after 'typedef'
        self.handles = []


def section(text, number):
    """Body of '### <number> ...' up to the next ### / ## heading."""
    m = re.search(r'^### ' + re.escape(number) + r'\b.*$', text, re.M)
    if not m:
        raise SpecError(f'section {number} not found')
    end = re.search(r'^(##|###) ', text[m.end():], re.M)
    body = text[m.end():m.end() + end.start()] if end else text[m.end():]
    return m.group(0), body


def resolve_short_header(spec, stem):
    """'common' / 'compute.h' / 'control_flow' -> the one listed header it names."""
    stem = stem.strip().strip('`')
    if stem.endswith('.h'):
        stem = stem[:-2]
    cands = [h for h in spec.header_order
             if os.path.basename(h) in (f'{stem}.h', f'odla_{stem}.h', f'odla_ops_{stem}.h')]
    if len(cands) != 1:
        raise SpecError(f'cannot resolve header name "{stem}" (candidates: {cands})')
    return cands[0]


def bullets(body):
    """Top-level markdown bullets of a section, continuation lines joined."""
    out = []
    for line in body.splitlines():
        if line.startswith('- '):
            out.append(line[2:])
        elif line.startswith('  ') and out and line.strip():
            out[-1] += ' ' + line.strip()
    return out


def parse_header_table(spec, text):
    _, body = section(text, '1.1')
    rows = [l for l in body.splitlines() if l.startswith('| `')]
    raw = []
    for row in rows:
        cells = [c.strip() for c in row.strip().strip('|').split('|')]
        if len(cells) != 4:
            raise SpecError(f'§1.1: cannot parse row: {row}')
        path = cells[0].strip('`')
        guard = re.search(r'`(_\w+_H_)`', cells[1])
        if not guard:
            raise SpecError(f'§1.1: no include guard in row for {path}')
        spec.header_order.append(path)
        raw.append((path, guard.group(1), cells[2], cells[3]))
    for i, (path, guard, inc, content) in enumerate(raw):
        if inc == 'none':
            includes = set()
        elif inc == 'all headers below':
            # Top-level headers below this row; ops/ headers come via odla_ops.h.
            includes = {h for h in spec.header_order[i + 1:] if '/' not in h}
        elif re.fullmatch(r'all `ops/\*\.h`', inc):
            includes = {h for h in spec.header_order if h.startswith('ops/')}
        else:
            includes = {resolve_short_header(spec, w) for w in inc.split(',')}
        count = None
        m = re.search(r'\((\d+)(?: fns)?\)\s*$', content)
        if m:
            count = int(m.group(1))
        elif 'no declarations' in content or 'umbrella' in content:
            count = 0
        spec.headers[path] = {'guard': guard, 'includes': includes, 'count': count,
                              'row': content}
    m = re.search(r'There are (\d+) declared functions in total', body)
    if not m:
        raise SpecError('§1.1: total number of functions not stated')
    spec.total_stated = int(m.group(1))
    m = re.search(r'has the form `([^`]*)`', body)
    if not m:
        raise SpecError('§1.1: declaration form not stated')
    form = m.group(1).split()
    name_at = [i for i, w in enumerate(form) if w.startswith('odla_')]
    spec.default_form = form[:name_at[0]]
    if '<ret>' not in spec.default_form:
        raise SpecError(f'§1.1: unexpected declaration form {m.group(1)}')
    m = re.search(r'exceptions are these (\w+):\s*\n((?:- .*\n?)+)', body)
    if not m:
        raise SpecError('§1.1: list of declaration-form exceptions not found')
    stated = {'one': 1, 'two': 2, 'three': 3, 'four': 4, 'five': 5}.get(m.group(1))
    for line in m.group(2).splitlines():
        name = re.search(r'`(odla_\w+)`', line).group(1)
        lacks = set()
        if 'plain declaration' in line:
            lacks = set(MARKERS)
        else:
            frag = re.search(r'\bno\b([^.]*)', line)
            frag = frag.group(1) if frag else ''
            if re.search(r'\bextern\b', frag):
                lacks.add('extern')
            if re.search(r'\bexport\b|ODLA_API_EXPORT', frag):
                lacks.add('ODLA_API_EXPORT')
            if re.search(r'\bcall\b|ODLA_API_CALL', frag):
                lacks.add('ODLA_API_CALL')
        if not lacks:
            raise SpecError(f'§1.1: cannot tell what exception lacks: {line}')
        spec.form_exceptions[name] = lacks
    if stated is not None and stated != len(spec.form_exceptions):
        raise SpecError(f'§1.1: says {stated} exceptions, lists {len(spec.form_exceptions)}')


def parse_macros(spec, text):
    _, body = section(text, '1.2')
    for b in bullets(body):
        where = re.search(r'\((?:both |all )?in (\S+?\.h)\)', b)
        header = resolve_short_header(spec, where.group(1)) if where else None
        found = []
        for name, value in re.findall(r'`([A-Z_][A-Z0-9_]*) (\d+)`', b):
            found.append((name, value, None, None))
        for name, value in re.findall(r'`(\w+)` is defined as `([^`]+)`', b):
            note = 'only when not already defined' if 'not already defined' in b else None
            found.append((name, value, None, note))
        for name, value, plat in re.findall(r'`(\w+)`: `([^`]+)` on `(\w+)`, otherwise empty', b):
            found.append((name, '', (plat, value), None))
        for name, value, win, note in found:
            spec.macros[name] = {'value': value, 'platform': win, 'header': header,
                                 'note': note}
        m = re.search(r'gives (\d+)', b)
        if m and 'ODLA_VERSION_NUMBER' in b:
            spec.version_number = int(m.group(1))
    if not spec.macros:
        raise SpecError('§1.2: no macros found')


def parse_scalars(spec, text):
    heading, body = section(text, '1.3')
    m = re.search(r'\((odla_\w+\.h)\)', heading)
    spec.scalar_header = m.group(1) if m else None
    if spec.scalar_header not in spec.headers:
        raise SpecError(f'§1.3: header {spec.scalar_header} not listed in §1.1')
    same_underlying = 'same underlying integer types' in body
    for b in bullets(body):
        for base, first, rest in re.findall(r'`(odla_q?u?int)(\d+)((?:/\d+)*)`', b):
            for bits in [first] + [r for r in rest.split('/') if r]:
                kind = base[len('odla_'):]
                if kind.startswith('q'):
                    if not same_underlying:
                        raise SpecError('§1.3: underlying type of quantized integers unclear')
                    kind = kind[1:]
                spec.scalars[f'{base}{bits}'] = f'__{kind.upper()}{bits}_TYPE__'
        for a, c, bits in re.findall(
                r'`(odla_\w+)` and `(odla_\w+)` are both an? (\d+)-bit unsigned integer', b):
            spec.scalars[a] = spec.scalars[c] = f'__UINT{bits}_TYPE__'
        for name, ctype in re.findall(r'`(odla_\w+)` is `([^`]+)`', b):
            spec.scalars[name] = ctype
        for name in re.findall(r'`(odla_\w+)`', b):
            if name not in spec.scalars and not re.fullmatch(r'odla_q?u?int\d+', name):
                raise SpecError(f'§1.3: no type found for {name}')


def parse_enums(spec, text):
    _, body = section(text, '1.4')
    for b in bullets(body):
        m = re.match(r'`(odla_\w+)`\s*(?:\(([^)]*)\))?:\s*(.*)$', b)
        if not m:
            raise SpecError(f'§1.4: cannot parse bullet: {b[:80]}')
        name, annot, rest = m.groups()
        header = resolve_short_header(spec, annot.split(';')[0]) if annot else None
        count = re.search(r'\((\d+)(?: members)?\)', rest)
        stated = int(count.group(1)) if count else None
        plain = rest
        while True:  # parentheticals may hold commas: drop them first
            stripped = re.sub(r'\s*\([^()]*\)', '', plain)
            if stripped == plain:
                break
            plain = stripped
        plain = re.split(r'\.(?:\s|$)', plain, maxsplit=1)[0]
        members = [x.strip() for x in plain.split(',') if x.strip()]
        if any(x.startswith('_') for x in members):
            p = re.search(r'prefix is `(\w+)`|carry the `(\w+)` prefix', rest)
            if not p:
                raise SpecError(f'§1.4: {name}: abbreviated members but no prefix stated')
            prefix = (p.group(1) or p.group(2)).rstrip('_')
            members = [prefix + x if x.startswith('_') else x for x in members]
        for x in members:
            if not IDENT_RE.match(x):
                raise SpecError(f'§1.4: {name}: cannot parse member "{x}"')
        if stated is not None and stated != len(members):
            raise SpecError(f'§1.4: {name}: says {stated} members, lists {len(members)}')
        spec.enums[name] = {'members': members, 'header': header}


def parse_structs(spec, text):
    _, body = section(text, '1.5')
    for name, annot, fields in re.findall(r'`(odla_\w+)`(?:\s*\(([^)]*)\))?:\s*`\{(.*?)\}`',
                                          body):
        header = resolve_short_header(spec, annot) if annot else None
        parts = [p for p in split_top(list(toks(fields)), ';') if p]
        spec.structs[name] = {'fields': tuple(parts), 'header': header, 'body': fields.strip()}
    for name, decl in re.findall(r'`(odla_\w+)`:\s*`typedef ([^`]*)`', body):
        t = list(toks(decl))
        for i in range(len(t) - 2):
            if t[i:i + 3] == ['(', '*', ')']:
                t[i + 1:i + 2] = ['*', name]
                break
        else:
            raise SpecError(f'§1.5: {name}: cannot place the name in "typedef {decl}"')
        spec.fn_typedefs[name] = tuple(t)
    m = re.search(r'Opaque handles, each a `typedef struct _odla_X\* odla_X`:(.*)', body)
    if not m:
        raise SpecError('§1.5: list of opaque handles not found')
    spec.handles = re.findall(r'`(odla_\w+)`', m.group(1))
    if not spec.structs or not spec.handles:
        raise SpecError('§1.5: no structs or handles found')


def parse_functions(spec, text):
    m = re.search(r'^### 1\.7\b.*$', text, re.M)
    if not m:
        raise SpecError('section 1.7 not found')
    body = text[m.end():]
    end = re.search(r'^(## |---)', body, re.M)
    body = body[:end.start()] if end else body
    header = None
    rows = {}
    for line in body.splitlines():
        h = re.match(r'#### `([^`]+)` \((\d+) functions?\)', line)
        if h:
            header = h.group(1)
            if header not in spec.headers:
                raise SpecError(f'§1.7: table for {header}, which §1.1 does not list')
            rows[header] = [int(h.group(2)), 0]
            continue
        r = re.match(r'\|\s*\d+\s*\|\s*`(\w+)`\s*\|\s*`([^`]+)`\s*\|(.*)\|\s*$', line)
        if not r:
            continue
        if header is None:
            raise SpecError(f'§1.7: function row before any header: {line}')
        name, ret, params = r.group(1), r.group(2), r.group(3).strip()
        if name in spec.functions:
            raise SpecError(f'§1.7: {name} listed twice')
        ptoks = list(toks(params))
        if ptoks[:1] == ['('] and ptoks[-1:] == [')']:
            ptoks = ptoks[1:-1]
        form = [x for x in spec.default_form if x not in spec.form_exceptions.get(name, ())]
        spec.functions[name] = {'header': header, 'ret': toks(ret),
                                'params': params_of(ptoks), 'form': form}
        rows[header][1] += 1
    for h, (stated, listed) in rows.items():
        if stated != listed:
            raise SpecError(f'§1.7: {h} says {stated} functions, lists {listed}')
        c = spec.headers[h]['count']
        if c is not None and c != listed:
            raise SpecError(f'§1.1 says {h} has {c} functions, §1.7 lists {listed}')
    for name in spec.form_exceptions:
        if name not in spec.functions:
            raise SpecError(f'§1.1: exception {name} is not in §1.7')
    n = len(spec.functions)
    if n != spec.total_stated or n != EXPECTED_TOTAL_FUNCTIONS:
        raise SpecError(f'§1.7 lists {n} functions; §1.1 states {spec.total_stated}; '
                        f'ODLA 0.5 has {EXPECTED_TOTAL_FUNCTIONS}')


def parse_spec(path):
    text = open(path, encoding='utf-8').read()
    spec = Spec()
    parse_header_table(spec, text)
    parse_macros(spec, text)
    parse_scalars(spec, text)
    parse_enums(spec, text)
    parse_structs(spec, text)
    parse_functions(spec, text)
    return spec


# --------------------------------------------------------------------------
# The headers, as written (raw text)
# --------------------------------------------------------------------------

def strip_comments(text):
    """Blanks out comments, keeping newlines (so line numbers stay) and string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


class Decl:
    def __init__(self, kind, name, line, tokens, **kw):
        self.kind, self.name, self.line, self.tokens = kind, name, line, tokens
        self.__dict__.update(kw)


def parse_statements(tokens, path, errors):
    """Splits [(tok, line)] into declarations. Returns (decls, extern_c_blocks)."""
    # Locate extern "C" { ... } blocks and make them transparent.
    skip = set()
    blocks = []
    i = 0
    while i < len(tokens):
        if [t for t, _ in tokens[i:i + 3]] == ['extern', '"C"', '{']:
            depth, j = 0, i + 2
            while j < len(tokens):
                if tokens[j][0] == '{':
                    depth += 1
                elif tokens[j][0] == '}':
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= len(tokens):
                errors.append(f'{path}:{tokens[i][1]}: extern "C" block is not closed')
                break
            blocks.append((i, j, tokens[i][1], tokens[j][1]))
            skip.update((i, i + 1, i + 2, j))
            i += 3
            continue
        i += 1
    decls = []
    cur = []
    depth = 0
    for idx, (t, line) in enumerate(tokens):
        if idx in skip:
            continue
        if t in ('{', '(', '['):
            depth += 1
        elif t in ('}', ')', ']'):
            depth -= 1
        if t == ';' and depth == 0:
            if cur:
                decls.append(classify(cur, path, errors,
                                      any(a < cur[0][2] < b for a, b, _, _ in blocks)))
            cur = []
            continue
        cur.append((t, line, idx))
    if cur:
        errors.append(f'{path}:{cur[0][1]}: declaration without a terminating ";": '
                      f'{render([t for t, _, _ in cur])[:80]}')
    return [d for d in decls if d], blocks


def classify(stmt, path, errors, in_extern_c):
    t = [x[0] for x in stmt]
    line = stmt[0][1]
    if t[0] == 'typedef':
        body = t[1:]
        if '{' in body and body[0] in ('enum', 'struct', 'union'):
            name = body[-1]
            lb = body.index('{')
            rb = len(body) - 1 - body[::-1].index('}')
            inner = body[lb + 1:rb]
            if body[0] == 'enum':
                # Values are checked at type level (static asserts), so only names here.
                members = [part[0] for part in split_top(inner, ',') if part]
                return Decl('enum', name, line, tuple(t), members=members,
                            in_extern_c=in_extern_c)
            fields = tuple(tuple(x for x in p if x != '__extension__')
                           for p in split_top(inner, ';') if p)
            fields = tuple(f for f in fields if f)
            return Decl('struct', name, line, tuple(t), fields=fields, in_extern_c=in_extern_c)
        if len(body) == 4 and body[0] == 'struct' and body[2] == '*':
            return Decl('handle', body[3], line, tuple(t), tag=body[1], in_extern_c=in_extern_c)
        # Function-pointer typedef `R (*name)(...)`, or a plain `T name`.
        for i in range(len(body) - 2):
            if body[i] == '(' and body[i + 1] == '*' and is_ident(body[i + 2]):
                return Decl('fntypedef', body[i + 2], line, tuple(t), type=tuple(body),
                            in_extern_c=in_extern_c)
        return Decl('typedef', body[-1], line, tuple(t), type=tuple(body[:-1]),
                    in_extern_c=in_extern_c)
    # Function declaration: the first identifier followed by '(' at depth 0.
    for k in range(len(t) - 1):
        if is_ident(t[k]) and t[k + 1] == '(' and t[k] not in ('__attribute__', '__declspec'):
            depth, j = 0, k + 1
            while j < len(t):
                depth += t[j] == '('
                depth -= t[j] == ')'
                if depth == 0:
                    break
                j += 1
            return Decl('function', t[k], stmt[k][1], tuple(t), prefix=tuple(t[:k]),
                        params=params_of(t[k + 2:j]), trailing=tuple(t[j + 1:]),
                        in_extern_c=in_extern_c)
    return Decl('other', None, line, tuple(t), in_extern_c=in_extern_c)


class Header:
    """One header file as written: directives, declarations, extern "C" blocks."""

    def __init__(self, root, rel, errors):
        self.rel = rel
        self.path = os.path.join(root, 'ODLA', rel)
        raw = open(self.path, encoding='utf-8').read()
        code = strip_comments(raw)
        self.directives = []   # (line, text)
        lines = code.split('\n')
        clean = []
        i = 0
        while i < len(lines):
            if lines[i].lstrip().startswith('#'):
                start = i
                text = lines[i]
                while text.endswith('\\') and i + 1 < len(lines):
                    i += 1
                    text = text[:-1] + ' ' + lines[i]
                self.directives.append((start + 1, ' '.join(text.strip()[1:].split())))
                clean.extend([''] * (i - start + 1))
            else:
                clean.append(lines[i])
            i += 1
        self.code = '\n'.join(clean)
        line_starts = [m.end() for m in re.finditer(r'\n', self.code)]
        tokens = tokenize(self.code, 0, line_starts)
        self.first_code_line = tokens[0][1] if tokens else None
        self.last_code_line = tokens[-1][1] if tokens else None
        self.decls, self.extern_c = parse_statements(tokens, rel, errors)
        self.comment_free = code


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

class Checker:
    def __init__(self, spec, root, args):
        self.spec, self.root, self.args = spec, root, args
        self.errors = []
        self.notes = []
        self.counts = {}
        self.found = {}

    def err(self, msg):
        self.errors.append(msg)

    # -- files, guards, includes, extern "C" --------------------------------

    def load_headers(self):
        odla_dir = os.path.join(self.root, 'ODLA')
        if not os.path.isdir(odla_dir):
            self.err(f'{odla_dir}: no ODLA/ directory')
            return {}, {}
        found = []
        for dirpath, _, files in os.walk(odla_dir):
            for f in files:
                if f.endswith('.h'):
                    found.append(os.path.relpath(os.path.join(dirpath, f), odla_dir))
        listed, others = {}, {}
        for rel in sorted(found):
            h = Header(self.root, rel.replace(os.sep, '/'), self.errors)
            (listed if h.rel in self.spec.headers else others)[h.rel] = h
        for rel in self.spec.header_order:
            if rel not in listed:
                self.err(f'ODLA/{rel}: missing (listed in §1.1)')
        for rel in others:
            self.notes.append(f'ODLA/{rel}: not an ODLA 0.5 header; checked only for '
                              f'redeclared ODLA 0.5 functions')
        return listed, others

    def check_structure(self, headers):
        for rel, h in headers.items():
            want = self.spec.headers[rel]
            d = h.directives
            guard = want['guard']
            m0 = re.fullmatch(r'ifndef (\w+)|if !\s*defined\s*\(?\s*(\w+)\s*\)?', d[0][1]) \
                if d else None
            found = (m0.group(1) or m0.group(2)) if m0 else None
            if found != guard:
                self.err(f'ODLA/{rel}:{d[0][0] if d else 1}: include guard: expected '
                         f'"#ifndef {guard}" as the first directive, found '
                         f'"#{d[0][1] if d else "(no directives)"}"')
            elif len(d) < 2 or d[1][1] != f'define {guard}':
                self.err(f'ODLA/{rel}: include guard: expected "#define {guard}" right after '
                         f'"#ifndef {guard}", found "#{d[1][1] if len(d) > 1 else ""}"')
            else:
                if h.first_code_line is not None and h.first_code_line < d[0][0]:
                    self.err(f'ODLA/{rel}:{h.first_code_line}: code before the include guard')
                if not d[-1][1].startswith('endif'):
                    self.err(f'ODLA/{rel}:{d[-1][0]}: include guard: the last directive '
                             f'should be "#endif", found "#{d[-1][1]}"')
                elif h.last_code_line is not None and h.last_code_line > d[-1][0]:
                    self.err(f'ODLA/{rel}:{h.last_code_line}: code after the include guard')
            includes = []
            for line, text in d:
                m = re.fullmatch(r'include\s*([<"])(.*)[>"]', text)
                if not m:
                    continue
                target = m.group(2)
                if m.group(1) == '"' and 'odla' in target.lower():
                    self.err(f'ODLA/{rel}:{line}: #include "{target}": ODLA headers are '
                             f'included as <ODLA/...>')
                if target.startswith('ODLA/'):
                    includes.append(target[len('ODLA/'):])
            got, exp = set(includes), want['includes']
            for x in sorted(exp - got):
                self.err(f'ODLA/{rel}: includes: missing #include <ODLA/{x}> '
                         f'(§1.1: "{self.spec_includes_text(rel)}")')
            for x in sorted(got - exp):
                self.err(f'ODLA/{rel}: includes: unexpected #include <ODLA/{x}> '
                         f'(§1.1: "{self.spec_includes_text(rel)}")')
            for x in sorted({x for x in includes if includes.count(x) > 1}):
                self.err(f'ODLA/{rel}: includes: <ODLA/{x}> included more than once')
            # extern "C" under __cplusplus, once, around every declaration.
            cf = h.comment_free
            opens = re.findall(r'#\s*if(?:def\s+__cplusplus|\s+defined\s*\(?\s*__cplusplus'
                               r'\s*\)?)[ \t]*\n\s*extern\s+"C"\s*\{[ \t]*\n\s*#\s*endif', cf)
            closes = re.findall(r'#\s*if(?:def\s+__cplusplus|\s+defined\s*\(?\s*__cplusplus'
                                r'\s*\)?)[ \t]*\n\s*\}[ \t]*\n\s*#\s*endif', cf)
            if len(opens) != 1 or len(closes) != 1 or len(h.extern_c) != 1:
                self.err(f'ODLA/{rel}: expected exactly one extern "C" {{ ... }} block, opened '
                         f'and closed under #ifdef __cplusplus (found {len(opens)} opening, '
                         f'{len(closes)} closing)')
            for decl in h.decls:
                if not decl.in_extern_c and decl.kind in ('function', 'other'):
                    self.err(f'ODLA/{rel}:{decl.line}: {decl.name or render(decl.tokens)[:60]}'
                             f': declared outside the extern "C" block')
        self.counts['headers'] = len(headers)

    def spec_includes_text(self, rel):
        inc = sorted(self.spec.headers[rel]['includes'])
        return ', '.join(inc) if inc else 'none'

    # -- functions ----------------------------------------------------------

    def check_functions(self, headers, others):
        seen = {}
        for rel, h in headers.items():
            for d in h.decls:
                if d.kind == 'other':
                    self.err(f'ODLA/{rel}:{d.line}: unrecognised declaration: '
                             f'{render(d.tokens)[:100]}')
                if d.kind != 'function':
                    continue
                where = f'ODLA/{rel}:{d.line}: {d.name}'
                if d.name in seen:
                    self.err(f'{where}: declared again (first in ODLA/{seen[d.name]})')
                    continue
                seen[d.name] = f'{rel}:{d.line}'
                want = self.spec.functions.get(d.name)
                if want is None:
                    self.err(f'{where}: extra function, not in ODLA 0.5 '
                             f'(extensions belong in a separate header)')
                    continue
                if want['header'] != rel:
                    self.err(f'{where}: wrong header: expected ODLA/{want["header"]}, '
                             f'found ODLA/{rel}')
                form, ret = [], []
                for t in d.prefix:
                    if t in MARKERS:
                        form.append(t)
                    else:
                        ret.append(t)
                        if not form or form[-1] != '<ret>':
                            form.append('<ret>')
                if form != want['form']:
                    self.err(f'{where}: declaration form: expected '
                             f'"{" ".join(want["form"])} {d.name}(...)", found '
                             f'"{" ".join(form)} {d.name}(...)"')
                if tuple(ret) != want['ret']:
                    self.err(f'{where}: return type: expected "{render(want["ret"])}", '
                             f'found "{render(ret)}"')
                if d.params != want['params']:
                    self.err(f'{where}: parameters: {self.param_diff(want["params"], d.params)}'
                             f'\n    expected ({render_params(want["params"])})'
                             f'\n    found    ({render_params(d.params)})')
                if d.trailing:
                    self.err(f'{where}: unexpected tokens after the parameter list: '
                             f'{render(d.trailing)}')
        for name, want in self.spec.functions.items():
            if name not in seen:
                self.err(f'ODLA/{want["header"]}: {name}: missing '
                         f'({render(want["ret"])} {name}({render_params(want["params"])}))')
        for rel, h in others.items():
            for d in h.decls:
                if d.kind == 'function' and d.name in self.spec.functions:
                    self.err(f'ODLA/{rel}:{d.line}: {d.name}: ODLA 0.5 function declared in '
                             f'a header that ODLA 0.5 does not list (it belongs in '
                             f'ODLA/{self.spec.functions[d.name]["header"]} only)')
        self.counts['functions'] = len([n for n in seen if n in self.spec.functions])
        # Functions found as written; the compiler checks look only at these, so a
        # missing function is reported once, above.
        self.found = {n: seen[n].split(':')[0] for n in seen if n in self.spec.functions}

    @staticmethod
    def param_diff(want, got):
        if len(want) != len(got):
            return f'expected {len(want)} parameters, found {len(got)}'
        diffs = [f'#{i + 1} expected "{render(w)}", found "{render(g)}"'
                 for i, (w, g) in enumerate(zip(want, got)) if w != g]
        return '; '.join(diffs)

    # -- types --------------------------------------------------------------

    def check_types(self, headers):
        spec = self.spec
        defs = {}   # name -> [(rel, decl)]
        for rel, h in headers.items():
            for d in h.decls:
                if d.kind in ('enum', 'struct', 'handle', 'fntypedef', 'typedef'):
                    defs.setdefault(d.name, []).append((rel, d))
        known = (set(spec.enums) | set(spec.structs) | set(spec.handles) |
                 set(spec.fn_typedefs) | set(spec.scalars))
        for name, where in sorted(defs.items()):
            rels = sorted({r for r, _ in where})
            if name not in known:
                self.err(f'ODLA/{rels[0]}:{where[0][1].line}: {name}: extra typedef, not in '
                         f'ODLA 0.5 (extensions belong in a separate header)')
            elif len(rels) > 1:
                self.err(f'{name}: defined in several headers: '
                         f'{", ".join("ODLA/" + r for r in rels)}')

        def one(name, kind, header):
            where = defs.get(name, [])
            if not where:
                self.err(f'{name}: missing {kind}' +
                         (f' (expected in ODLA/{header})' if header else ''))
                return None, None
            rel, d = where[0]
            if header and rel != header:
                self.err(f'ODLA/{rel}:{d.line}: {name}: wrong header: expected ODLA/{header}, '
                         f'found ODLA/{rel}')
            return rel, d

        members = 0
        for name, want in spec.enums.items():
            rel, d = one(name, 'enum', want['header'])
            if d is None:
                continue
            if d.kind != 'enum':
                self.err(f'ODLA/{rel}:{d.line}: {name}: expected an enum typedef')
                continue
            members += len(want['members'])
            if d.members != want['members']:
                self.err(f'ODLA/{rel}:{d.line}: enum {name}: members differ: '
                         f'{self.list_diff(want["members"], d.members)}'
                         f'\n    expected {", ".join(want["members"])}'
                         f'\n    found    {", ".join(d.members)}')
        self.counts['enums'] = (len(spec.enums), members)

        for name, want in spec.structs.items():
            rel, d = one(name, 'struct', want['header'])
            if d is None:
                continue
            if d.kind != 'struct':
                self.err(f'ODLA/{rel}:{d.line}: {name}: expected a struct typedef')
            elif d.fields != want['fields']:
                wanted = [render(f) for f in want['fields']]
                found = [render(f) for f in d.fields]
                self.err(f'ODLA/{rel}:{d.line}: struct {name}: fields differ: '
                         f'{self.list_diff(wanted, found)}'
                         f'\n    expected {{ {"; ".join(render(f) for f in want["fields"])}; }}'
                         f'\n    found    {{ {"; ".join(render(f) for f in d.fields)}; }}')
        self.counts['structs'] = len(spec.structs)

        for name, want in spec.fn_typedefs.items():
            rel, d = one(name, 'function-pointer typedef', None)
            if d is None:
                continue
            if d.kind != 'fntypedef' or d.type != want:
                self.err(f'ODLA/{rel}:{d.line}: {name}: expected "typedef {render(want)}", '
                         f'found "{render(d.tokens)}"')
        self.counts['fn_typedefs'] = len(spec.fn_typedefs)

        for name in spec.handles:
            rel, d = one(name, 'handle', None)
            if d is None:
                continue
            if d.kind != 'handle' or d.tag != '_' + name:
                self.err(f'ODLA/{rel}:{d.line}: {name}: expected "typedef struct _{name}* '
                         f'{name}", found "{render(d.tokens)}"')
        extra = sorted(n for n, w in defs.items() if w[0][1].kind == 'handle'
                       and n not in spec.handles and n in known)
        for n in extra:
            self.err(f'{n}: declared as an opaque handle, but ODLA 0.5 does not list it as one')
        self.counts['handles'] = len(spec.handles)

        for name in spec.scalars:
            one(name, 'scalar typedef', spec.scalar_header)
        self.counts['scalars'] = len(spec.scalars)

    @staticmethod
    def list_diff(want, got):
        missing = [x for x in want if x not in got]
        extra = [x for x in got if x not in want]
        parts = []
        if missing:
            parts.append('missing ' + ', '.join(missing))
        if extra:
            parts.append('unexpected ' + ', '.join(extra))
        if not parts:
            for i, (w, g) in enumerate(zip(want, got)):
                if w != g:
                    parts.append(f'order differs from position {i}: expected {w}, found {g}')
                    break
        return '; '.join(parts)

    # -- macros (textual side) ----------------------------------------------

    def check_macro_locations(self, headers):
        defined = {}
        guards = {w['guard'] for w in self.spec.headers.values()}
        for rel, h in headers.items():
            d = h.directives
            if len(d) > 1 and d[0][1].startswith('ifndef ') and d[1][1] == 'define ' + d[0][1][7:]:
                guards.add(d[0][1][7:])  # a wrong guard is reported once, as a guard
            for line, text in h.directives:
                m = re.match(r'define\s+(\w+)', text)
                if m and m.group(1) not in guards:
                    defined.setdefault(m.group(1), {}).setdefault(rel, line)
        for name, where in sorted(defined.items()):
            if name not in self.spec.macros:
                rel, line = next(iter(where.items()))
                self.err(f'ODLA/{rel}:{line}: {name}: extra macro, not in ODLA 0.5 '
                         f'(extensions belong in a separate header)')
            elif len(where) > 1:
                self.err(f'{name}: defined in several headers: '
                         f'{", ".join("ODLA/" + r for r in sorted(where))}')
        for name, want in self.spec.macros.items():
            where = defined.get(name, {})
            if not where:
                self.err(f'{name}: macro not defined in any ODLA 0.5 header')
            elif want['header'] and want['header'] not in where:
                self.err(f'{name}: wrong header: expected ODLA/{want["header"]}, found '
                         f'{", ".join("ODLA/" + r for r in sorted(where))}')
        self.counts['macros'] = len(self.spec.macros)

    # -- compiler-based checks ------------------------------------------------

    def run(self, cmd, src):
        try:
            p = subprocess.run(cmd, input=src, capture_output=True, text=True, timeout=120)
        except OSError as e:
            return 127, str(e)
        return p.returncode, p.stdout + p.stderr

    def compiler_messages(self, out, tmpdir, limit=8):
        keep = []
        for line in out.splitlines():
            if re.search(r'\b(error|note|warning):', line) or line.startswith('In file'):
                keep.append(line.replace(tmpdir + os.sep, '').replace(self.root + os.sep, ''))
        keep = keep or out.strip().splitlines()[-5:]
        if len(keep) > limit:
            keep = keep[:limit] + [f'... ({len(keep) - limit} more lines)']
        return keep

    def check_with_compiler(self, tmpdir):
        cc, cxx, inc = self.args.cc, self.args.cxx, self.root
        spec = self.spec
        # 1. Every listed header compiles on its own, in strict C99 and in C++17.
        jobs = []
        for rel in spec.header_order:
            if not os.path.exists(os.path.join(inc, 'ODLA', rel)):
                continue
            src = f'#include <ODLA/{rel}>\n'
            jobs.append((rel, 'C99', [cc, '-std=c99', '-pedantic', '-Wall', '-Wextra', '-Werror',
                                      '-fsyntax-only', '-I', inc, '-x', 'c', '-'], src))
            jobs.append((rel, 'C++17', [cxx, '-std=c++17', '-Wall', '-Wextra', '-Werror',
                                        '-fsyntax-only', '-I', inc, '-x', 'c++', '-'], src))
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(lambda j: (j, self.run(j[2], j[3])), jobs))
        umbrella_ok, umbrella_cxx_ok = True, True
        for (rel, lang, _, _), (rc, out) in results:
            if rc == 0:
                continue
            umbrella_ok = umbrella_ok and not (rel == 'odla.h' and lang == 'C99')
            umbrella_cxx_ok = umbrella_cxx_ok and not (rel == 'odla.h' and lang == 'C++17')
            culprits = sorted(set(re.findall(r'^(?:.*[/\\])?ODLA[/\\](\S+?):\d+:\d+: error',
                                             out, re.M)))
            if culprits and rel not in culprits:
                # Only an included header is at fault; that header's own entry shows why.
                self.err(f'ODLA/{rel}: does not compile on its own as {lang}, because of '
                         f'errors in {", ".join("ODLA/" + c for c in culprits)}')
                continue
            msgs = '\n    '.join(self.compiler_messages(out, tmpdir))
            self.err(f'ODLA/{rel}: does not compile on its own as {lang} '
                     f'(-Wall -Wextra -Werror):\n    {msgs}')
        self.counts['standalone'] = len(jobs)
        if not umbrella_ok:
            return  # the remaining checks all start from #include <ODLA/odla.h> in C

        # 2. Macro values as the preprocessor sees them.
        for plat, defs in ((None, []), ('_WIN32', ['-D_WIN32'])):
            rc, out = self.run([cc, '-std=c99', '-E', '-dM', '-I', inc] + defs + ['-x', 'c', '-'],
                               '#include <ODLA/odla.h>\n')
            if rc != 0:
                self.err(f'cc -E -dM {" ".join(defs)} failed:\n{out}')
                continue
            got = {}
            for line in out.splitlines():
                m = re.match(r'#define (\w+)(?:\s(.*))?$', line)
                if m:
                    got[m.group(1)] = (m.group(2) or '').strip()
            for name, want in spec.macros.items():
                value = want['value']
                if want['platform']:
                    value = want['platform'][1] if plat == want['platform'][0] else ''
                elif plat:
                    continue
                where = f' (with {plat} defined)' if plat else ''
                if name not in got:
                    self.err(f'{name}: not defined after #include <ODLA/odla.h>{where}')
                elif toks(got[name]) != toks(value):
                    self.err(f'{name}: value{where}: expected "{value}", found "{got[name]}"')

        # 3. The preprocessed view declares the same functions in the same files.
        rc, out = self.run([cc, '-std=c99', '-E', '-I', inc, '-x', 'c', '-'],
                           '#include <ODLA/odla.h>\n')
        if rc == 0:
            self.check_preprocessed(out)
        else:
            self.err(f'cc -E <ODLA/odla.h> failed:\n{out}')

        # 4. Type level: redeclare everything from the reference in C11.
        rc, out = self.run([cc, '-std=c11', '-fsyntax-only', '-I', inc, '-x', 'c', '-'],
                           self.type_level_tu())
        if rc != 0:
            msgs = '\n    '.join(self.compiler_messages(out, tmpdir))
            self.err(f'type-level check (the reference redeclared in C11 after '
                     f'#include <ODLA/odla.h>) failed:\n    {msgs}')

        # 5. C linkage: in C++, every function is referenced by its unmangled name.
        if not umbrella_cxx_ok:
            return  # <ODLA/odla.h> does not compile as C++; reported above
        obj = os.path.join(tmpdir, 'odla_api_linkage.o')
        rc, out = self.run([cxx, '-std=c++17', '-c', '-o', obj, '-I', inc, '-x', 'c++', '-'],
                           self.linkage_tu())
        nm = shutil.which('nm')
        if rc != 0:
            msgs = '\n    '.join(self.compiler_messages(out, tmpdir))
            self.err(f'C++ linkage check failed to compile:\n    {msgs}')
        elif not nm:
            self.notes.append('nm not found: C linkage checked only textually')
        else:
            p = subprocess.run([nm, '-u', obj], capture_output=True, text=True)
            syms = set()
            for line in p.stdout.splitlines():
                s = line.split()[-1] if line.split() else ''
                syms.add(s[1:] if s.startswith('_odla_') else s)
            mangled = ' '.join(syms)
            for name in sorted(self.found):
                if name not in syms:
                    how = 'C++ linkage (name is mangled)' if name in mangled else 'no symbol'
                    self.err(f'{name}: not declared with C linkage in C++: {how}')
            self.counts['linkage'] = True

    def check_preprocessed(self, out):
        """Functions after cc -E must match the raw-text view (none #if-hidden or macro-made)."""
        inc_odla = os.path.join(self.root, 'ODLA') + os.sep
        current = None
        chunks = {}
        for line in out.splitlines():
            m = re.match(r'# \d+ "([^"]*)"', line)
            if m:
                f = os.path.normpath(m.group(1))
                current = f[len(inc_odla):].replace(os.sep, '/') \
                    if f.startswith(inc_odla) else None
                continue
            if current is not None:
                chunks.setdefault(current, []).append(line)
        errors = []
        pre = {}
        for rel, lines in chunks.items():
            for d in parse_statements(tokenize('\n'.join(lines)), rel, errors)[0]:
                if d.kind == 'function':
                    pre[d.name] = rel
        for name, rel in self.found.items():
            if name not in pre:
                self.err(f'ODLA/{rel}: {name}: written in the header but gone after '
                         f'preprocessing <ODLA/odla.h> (inside a false #if, or the header '
                         f'is not reachable from odla.h)')
            elif pre[name] != rel:
                self.err(f'{name}: written in ODLA/{rel} but, after preprocessing, '
                         f'declared in ODLA/{pre[name]}')
        for name, rel in pre.items():
            if name not in self.spec.functions and rel in self.spec.headers:
                self.err(f'ODLA/{rel}: {name}: extra function after preprocessing '
                         f'(declared through a macro?)')

    def type_level_tu(self):
        spec = self.spec
        out = ['/* Generated by check_odla_api.py: the ODLA 0.5 reference, redeclared. */',
               '#include <ODLA/odla.h>', '#include <stddef.h>', '']
        for name, ctype in spec.scalars.items():
            out.append(f'typedef {ctype} {name};')
        for name in spec.handles:
            out.append(f'typedef struct _{name}* {name};')
        for name, t in spec.fn_typedefs.items():
            out.append(f'typedef {render(t)};')
        for name, want in spec.enums.items():
            for i, m in enumerate(want['members']):
                out.append(f'_Static_assert({m} == {i}, "{name}: {m} must be {i}");')
        for name, want in spec.structs.items():
            s = f'odla_api_spec_{name}'
            out.append(f'struct {s} {{ {want["body"]} }};')
            out.append(f'_Static_assert(sizeof(struct {s}) == sizeof({name}), '
                       f'"{name}: size differs from the reference layout");')
            out.append(f'_Static_assert(_Alignof(struct {s}) == _Alignof({name}), '
                       f'"{name}: alignment differs from the reference layout");')
            for field in self.field_names(want['fields']):
                out.append(f'_Static_assert(offsetof(struct {s}, {field}) == '
                           f'offsetof({name}, {field}), '
                           f'"{name}: offset of {field} differs from the reference layout");')
        for name, want in spec.functions.items():
            out.append(f'extern {render(want["ret"])} {name}({render_params(want["params"])});')
        if spec.version_number is not None:
            out += [f'#if ODLA_VERSION_NUMBER != {spec.version_number}',
                    f'#error "ODLA_VERSION_NUMBER is not {spec.version_number}"', '#endif']
        return '\n'.join(out) + '\n'

    @classmethod
    def field_names(cls, fields):
        names = []
        for f in fields:
            f = list(f)
            if f and f[0] in ('union', 'struct') and '{' in f:
                inner = f[f.index('{') + 1:len(f) - 1 - f[::-1].index('}')]
                names += cls.field_names([p for p in split_top(inner, ';') if p])
                continue
            for i in range(len(f) - 2):
                if f[i] == '(' and f[i + 1] == '*':
                    names.append(f[i + 2])
                    break
            else:
                cut = f.index('[') if '[' in f else len(f)
                names.append(f[cut - 1])
        return names

    def linkage_tu(self):
        names = sorted(self.found)
        out = ['// Generated by check_odla_api.py: references every ODLA 0.5 function from C++.',
               '#include <ODLA/odla.h>',
               'void odla_api_linkage_refs(void (**out)());',
               'void odla_api_linkage_refs(void (**out)()) {']
        for i, n in enumerate(names):
            out.append(f'  out[{i}] = reinterpret_cast<void (*)()>(&{n});')
        out.append('}')
        return '\n'.join(out) + '\n'

    # -- driver -------------------------------------------------------------

    def check(self):
        headers, others = self.load_headers()
        self.check_structure(headers)
        self.check_functions(headers, others)
        self.check_types(headers)
        self.check_macro_locations(headers)
        if not self.args.no_compiler:
            with tempfile.TemporaryDirectory(prefix='odla_api_') as tmp:
                self.check_with_compiler(tmp)


def find_tool(explicit, names):
    if explicit:
        return explicit
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('spec', help='API-0.5.md')
    ap.add_argument('include_dir', help='directory holding ODLA/')
    ap.add_argument('--cc', help='C compiler (GCC or Clang); default gcc, cc or clang')
    ap.add_argument('--cxx', help='C++ compiler (GCC or Clang); default g++, c++ or clang++')
    ap.add_argument('--no-compiler', action='store_true',
                    help='textual checks only (no preprocessor, type-level or linkage checks)')
    ap.add_argument('-v', '--verbose', action='store_true', help='print notes as well')
    args = ap.parse_args()
    if not args.no_compiler:
        args.cc = find_tool(args.cc, ('gcc', 'cc', 'clang'))
        args.cxx = find_tool(args.cxx, ('g++', 'c++', 'clang++'))
        if not args.cc or not args.cxx:
            print('check_odla_api: no C/C++ compiler found; pass --cc/--cxx or --no-compiler',
                  file=sys.stderr)
            return 2
    try:
        spec = parse_spec(args.spec)
    except (SpecError, OSError) as e:
        print(f'check_odla_api: cannot read the reference {args.spec}: {e}', file=sys.stderr)
        return 2
    checker = Checker(spec, os.path.abspath(args.include_dir), args)
    checker.check()
    if args.verbose or checker.errors:
        for n in checker.notes:
            print(f'note: {n}')
    for e in checker.errors:
        print(e)
    c = checker.counts
    enums, members = c.get('enums', (0, 0))
    summary = (f'{c.get("functions", 0)}/{len(spec.functions)} functions in '
               f'{c.get("headers", 0)}/{len(spec.headers)} headers '
               f'(guards, includes, extern "C"), {enums} enums ({members} members), '
               f'{c.get("structs", 0)} structs, {c.get("handles", 0)} handles, '
               f'{c.get("fn_typedefs", 0)} function-pointer typedefs, '
               f'{c.get("scalars", 0)} scalar typedefs, {c.get("macros", 0)} macros')
    if args.no_compiler:
        summary += '; compiler checks skipped (--no-compiler)'
    else:
        summary += (f'; {c.get("standalone", 0)} standalone compiles, macro values, '
                    f'type-level redeclaration, C linkage')
    if checker.errors:
        print(f'check_odla_api: FAILED, {len(checker.errors)} mismatch(es). Checked {summary}.')
        return 1
    print(f'check_odla_api: OK. Checked {summary}.')
    return 0


if __name__ == '__main__':
    sys.exit(main())
