"""Hostile manifests (--backend-manifest) with the keys HALO's backends need: runtime, types,
value_ids, views and limit. Each malformed line is refused with the manifest's line and the
rule; a limit naming what a call does not have is refused when a call meets it; a manifest
lacking the functions of a mode, or a model needing more integer ids than a backend takes,
is refused at compile time. Never a crash, never an output folder."""
import os
import sys

from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile  # noqa: E402

HEAD = "backend tiny\nlibrary odla_tiny\nmodes compile interpret\nops *\n"


def relu_chain(n):
    """x [2,3] -> n Relus -> y: n + 2 value ids."""
    nodes = [helper.make_node("Relu", ["x" if i == 0 else "t%d" % (i - 1)],
                              ["y" if i == n - 1 else "t%d" % i]) for i in range(n)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def conv(kernel_is_constant):
    """x [1,1,4,4] conv w [1,1,3,3] -> y, w an initializer or a graph input."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [1, 1, 3, 3], [0.5] * 9)
    info = lambda n, dims: helper.make_tensor_value_info(n, TensorProto.FLOAT, dims)  # noqa
    inputs = [info("x", [1, 1, 4, 4])] + ([] if kernel_is_constant else [info("w", [1, 1, 3, 3])])
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"])], "g", inputs,
                          [info("y", [1, 1, 2, 2])], [w] if kernel_is_constant else [])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


class HaloManifestTest(hostile.HostileCase):
    def compile(self, manifest_text, *flags, model=None):
        manifest = self.path("m.txt")
        with open(manifest, "w") as f:
            f.write(HEAD + manifest_text)
        out = self.path("out")
        r = self.odlac(self.save(model or relu_chain(1)), "-o", out,
                       "--backend-manifest=" + manifest, *flags)
        return r, out

    def test_malformed_lines(self):
        for text, message in (
                ("limit Relu\n", "limit takes a function, at least one condition"),
                ("limit Relu input.rank=4 when\n", "after 'when', at least one guard"),
                ("limit Relu rank4\n", "limit condition 'rank4' must read SUBJECT=VALUE"),
                ("limit Relu input.rank=\n", "must read SUBJECT=VALUE"),
                ("limit Relu input.rank=4||2\n", "has an empty alternative"),
                ("types float33\n", "'float33' is no element type"),
                ("value_ids integers 1\n", "value_ids takes 'strings' or 'integers N' (N >= 2)"),
                ("value_ids integers 99999999999\n", "value_ids takes"),
                ("value_ids symbols\n", "value_ids takes")):
            with self.subTest(line=text.strip()):
                r, out = self.compile(text)
                self.assertRefused(r, message, "m.txt")
                self.assertNothingLeft(out)

    def test_limit_on_what_the_call_lacks(self):
        for text, message in (
                ("limit Relu weights.rank=4\n", "'weights' is no parameter of odla_Relu"),
                ("limit Relu input.colour=4\n", "'colour' is no property of a value"),
                ("limit Relu rounding=floor\n", "'rounding' applies to pooling calls")):
            with self.subTest(line=text.strip()):
                r, out = self.compile(text)
                self.assertRefused(r, "has a limit it cannot apply", message)
                self.assertNothingLeft(out)

    def test_limit_broken(self):
        r, out = self.compile("limit Relu input.rank=4\n")
        self.assertRefused(r, "backend 'tiny' runs odla_Relu only with input.rank=4",
                           "node 'y' (Relu) with input.rank 2")
        self.assertNothingLeft(out)

    def test_limit_on_constants(self):
        r, out = self.compile("limit Conv kernel.constant=1\n", model=conv(False))
        self.assertRefused(r, "runs odla_Conv only with kernel.constant=1",
                           "node 'y' (Conv) with kernel.constant 0")
        self.assertNothingLeft(out)
        r, out = self.compile("limit Conv kernel.constant=1\n", model=conv(True))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_types(self):
        r, out = self.compile("types int8\n")
        self.assertRefused(r, "takes values of int8 only", "not float32")
        self.assertNothingLeft(out)

    def test_runtime_lacks_a_mode(self):
        r, out = self.compile("runtime CreateValue SetValueData\n", "--exec-mode=interpret")
        self.assertRefused(r, "cannot run --exec-mode=interpret: its manifest lacks "
                              "odla_CreateConstant")
        self.assertNothingLeft(out)

    def test_too_many_integer_ids(self):
        r, out = self.compile("value_ids integers 8\n", model=relu_chain(7))  # 8 ids
        self.assertRefused(r, "takes the value ids 1 to 7", "the model needs 8")
        self.assertNothingLeft(out)
        r, out = self.compile("value_ids integers 9\n", model=relu_chain(7))
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    hostile.main()
