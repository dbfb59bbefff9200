"""The functions the ODLA headers declare, parsed for the generators that wrap every one of
them: runtime_stubs/profiler/gen_forwarders.py (the profiler's forwarders) and
runtime_stubs/reference/gen_calls.py (the reference backend's recorded calls).

declarations(include_dir) reads every header under include_dir/ODLA and returns, sorted by
name, (return type, name, parameters with every one named, argument names, variadic)."""
import os
import re

DECL = re.compile(r"^(?P<ret>[\w\s\*]*?)\s*\b(?P<name>odla_\w+)\s*\((?P<params>.*)\)$", re.S)
QUALIFIERS = {"extern", "ODLA_API_EXPORT", "ODLA_API_CALL"}


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))


def split_params(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch in "([{"
        depth -= ch in ")]}"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def declarations(include_dir):
    """(ret, name, params text with every parameter named, argument names, variadic)."""
    found = {}
    for root, _, files in os.walk(os.path.join(include_dir, "ODLA")):
        for f in sorted(files):
            if not f.endswith(".h"):
                continue
            text = strip(open(os.path.join(root, f)).read())
            text = re.sub(r'extern\s+"C"\s*\{', " ", text)
            for stmt in text.split(";"):
                stmt = " ".join(stmt.replace("}", " ").replace("{", " ").split())
                if "typedef" in stmt or "(" not in stmt:
                    continue
                m = DECL.match(stmt)
                if not m:
                    continue
                ret = " ".join(w for w in m.group("ret").split() if w not in QUALIFIERS)
                ret = ret.replace(" *", "*").replace("*", " *").strip()
                params = split_params(m.group("params"))
                variadic = bool(params) and params[-1] == "..."
                if variadic:
                    params = params[:-1]
                if params == ["void"]:
                    params = []
                named, args = [], []
                for i, p in enumerate(params):
                    fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", p)
                    words = re.findall(r"\w+", re.sub(r"\[.*?\]", "", p))
                    words = [w for w in words if w not in ("const", "struct", "volatile")]
                    if fp:
                        arg = fp.group(1)
                    elif len(words) >= 2:
                        arg = words[-1]
                    else:  # an unnamed parameter: name it
                        arg = f"arg{i}"
                        p = f"{p} {arg}"
                    named.append(p)
                    args.append(arg)
                found[m.group("name")] = (ret, m.group("name"), ", ".join(named) or "void",
                                          args, variadic)
    return [found[k] for k in sorted(found)]
