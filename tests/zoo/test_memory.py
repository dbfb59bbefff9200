"""The activation arena of models exported from PyTorch against a simple lower bound (label
zoo; issue 4): at -O3 the arena the reference backend plans must be within 1.15x of the
largest sum, over one op, of that op's non-constant operand and result bytes; with
--memory=least (no kernel scratch beside the tensors; issue 24) within 1.2x on every model.

The bound is recomputed here from the -O3 IR that odlac prints (types of graph inputs and of
node results, names of constants), independently of odlac's own figure, which must agree;
the arena is read from the generated header's macro and must equal the report's.

Cache: $ODLAC_MODEL_CACHE or ~/.cache/odlac/models (export_zoo.py's default); missing models
are exported first. Run under Debian's /usr/bin/python3 (torch, onnx, numpy)."""
import json
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_zoo import ensure_exported  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import odlactest  # noqa: E402

MAX_RATIO, LEAST_MAX_RATIO = 1.15, 1.2
BYTES = {"f64": 8, "i64": 8, "u64": 8, "f32": 4, "i32": 4, "u32": 4, "f16": 2, "bf16": 2,
         "i16": 2, "u16": 2, "i8": 1, "u8": 1, "bool": 1}
NAME = r'%(?:"(?:[^"\\]|\\.)*"|[^\s,():]+)'
TYPE = r'(\w+)\[([\d,]*)\]'


def type_bytes(dtype, dims):
    n = 1
    for d in filter(None, dims.split(",")):
        n *= int(d)
    return n * BYTES[dtype]


def lower_bound(ir):
    """The bound of issue 4 from odlac's text IR: for each node, the bytes of its distinct
    non-constant operands and of its results; the largest such sum."""
    sizes, consts, bound = {}, set(), 0
    lines = ir.splitlines()
    for name, dtype, dims in re.findall(rf'({NAME}): {TYPE}', lines[0]):  # graph inputs
        sizes[name] = type_bytes(dtype, dims)
    for line in lines[1:]:
        m = re.match(rf'\s*const ({NAME}):', line)
        if m:
            consts.add(m.group(1))
            continue
        # %r = Op(%a, %b) {attributes} : type   (attribute values name no values)
        m = re.match(rf'\s*(\(?{NAME}(?:, {NAME})*\)?) = \w+\((.*) : ([^:]*)$', line)
        if not m:
            continue
        results = re.findall(NAME, m.group(1))
        types = re.findall(TYPE, m.group(3))
        if len(types) != len(results):
            raise AssertionError(f"cannot read the result types of: {line}")
        for r, (dtype, dims) in zip(results, types):
            sizes[r] = type_bytes(dtype, dims)
        live = {v for v in re.findall(NAME, m.group(2)) if v not in consts} | set(results)
        bound = max(bound, sum(sizes[v] for v in live))
    return bound


class ArenaTest(unittest.TestCase):
    tc = odlactest.Toolchain()

    def check_arena(self, name, *flags, max_ratio=MAX_RATIO):
        model = os.path.join(ensure_exported(name), "model.onnx")
        with tempfile.TemporaryDirectory() as work:
            r = self.tc.compile(model, work, "-O3", "--print-ir", *flags)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(work, "net.json")) as f:
                report = json.load(f)
            with open(os.path.join(work, "net.h")) as f:
                macro = int(re.search(r"#define NET_ARENA_BYTES (\d+)", f.read()).group(1))
        bound = lower_bound(r.stdout[r.stdout.index("graph @"):])
        arena = report["arena_bytes"]
        print(f"{name} {' '.join(flags)}: arena {arena} bytes, lower bound {bound} bytes, "
              f"ratio {arena / bound:.3f}")
        self.assertEqual(macro, arena, "the header's arena macro and the report disagree")
        self.assertEqual(report["arena_lower_bound_bytes"], bound)
        self.assertAlmostEqual(report["arena_over_bound"], arena / bound, places=3)
        self.assertLessEqual(arena, max_ratio * bound)

    def test_resnet50(self):
        self.check_arena("resnet50")

    def test_mobilenet_v2(self):
        self.check_arena("mobilenet_v2")

    def test_bert_encoder(self):
        self.check_arena("bert_encoder")

    def test_least_memory_on_every_model(self):
        for name in ("resnet50", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0",
                     "bert_encoder"):
            with self.subTest(model=name):
                self.check_arena(name, "--memory=least", max_ratio=LEAST_MAX_RATIO)


if __name__ == "__main__":
    unittest.main()
