"""Hostile ONNX local functions (frontend/Functions.cpp): a function that calls itself, a
call tree that would expand to billions of nodes from a few hundred bytes, and a call with an
attribute the function does not declare are refused with the call named, in bounded time,
leaving nothing behind."""
from hostile import HostileCase, main

from onnx import TensorProto, helper

DOMAIN = "pkg.hostile"


def model_with(functions, call_attrs=None):
    """y = F0(x) over float[4], with the given FunctionProtos."""
    node = helper.make_node("F0", ["x"], ["y"], name="entry", domain=DOMAIN, **(call_attrs or {}))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    return helper.make_model(graph, functions=functions, ir_version=8,
                             opset_imports=[helper.make_opsetid("", 18),
                                            helper.make_opsetid(DOMAIN, 1)])


def function(name, nodes, attributes=()):
    return helper.make_function(DOMAIN, name, ["a"], ["out"], nodes,
                                [helper.make_opsetid("", 18)], list(attributes))


def call(name, inputs, outputs):
    return helper.make_node(name, inputs, outputs, domain=DOMAIN)


class LocalFunctions(HostileCase):
    timeout = 60  # the bound must stop these long before

    def refused(self, model, *fragments):
        out = self.path("out")
        r = self.odlac(self.save(model), "-o", out)
        self.assertRefused(r, *fragments)
        self.assertNothingLeft(out)

    def test_recursion(self):
        self.refused(model_with([function("F0", [call("F0", ["a"], ["out"])])]),
                     "node 'entry' (call of local function 'pkg.hostile.F0'): calls nest more "
                     "than 64 deep")

    def test_call_bomb(self):
        # F_i calls F_{i+1} twice, 40 levels: 2^40 Relu nodes if nothing stopped it.
        fs = [function("F%d" % i, [call("F%d" % (i + 1), ["a"], ["t"]),
                                   call("F%d" % (i + 1), ["t"], ["out"])]) for i in range(40)]
        fs.append(function("F40", [helper.make_node("Relu", ["a"], ["out"])]))
        self.refused(model_with(fs),
                     "node 'entry': local functions expand to more than 1048576 nodes")

    def test_undeclared_attribute(self):
        self.refused(model_with([function("F0", [helper.make_node("Relu", ["a"], ["out"])])],
                                {"alpha": 1.0}),
                     "node 'entry' (call of local function 'pkg.hostile.F0'): attribute 'alpha' "
                     "is not one of the function's attributes")


if __name__ == "__main__":
    main()
