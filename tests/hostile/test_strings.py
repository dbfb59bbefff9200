"""String tensors from strangers (DESIGN §12): string initializers, string attributes and
string input files whose bytes would break generated C (quotes, backslashes, comment ends,
trigraphs, newlines, format directives, a planted constructor) compile to code that builds
under -std=c99 -pedantic -Werror -trigraphs and computes the right strings; what odlac's
strings cannot hold (a NUL byte), a stored executable with string constants, a regular
expression outside the supported RE2 subset and a data-dependent shape the model does not
declare are refused with a precise message and leave nothing behind."""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile  # noqa: E402

PAYLOAD = ('int system(const char *); __attribute__((constructor)) static void pwn(void) '
           '{ system("touch MARKER"); }')
# Every way out of a C string literal or comment, and what printf would expand.
EVIL = ['a"b', 'back\\slash', '*/ ' + PAYLOAD + ' /*', '??/', 'line\nbreak', '%s%n',
        '\u00e9\u202e', '" ' + PAYLOAD + ' "']
CC_STRICT = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-trigraphs"]


def strings(values, name):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.STRING
    t.dims.extend([len(values)])
    t.string_data.extend(v.encode("utf-8") if isinstance(v, str) else v for v in values)
    return t


def concat_model(initializer):
    """y = StringConcat(x, c), c a string initializer of len(EVIL) elements."""
    n = len(initializer.string_data)
    graph = helper.make_graph(
        [helper.make_node("StringConcat", ["x", initializer.name], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [n])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, [n])], [initializer])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


class StringsCase(hostile.HostileCase):

    def build_and_run(self, model, inputs, *flags):
        out = self.path("out")
        r = self.odlac(self.save(model), "-o", out, "--emit-main", *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        sources = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
        exe = os.path.join(out, "driver")
        b = subprocess.run([self.tc.cc, *CC_STRICT, "-I", self.tc.include, *sources, self.tc.lib,
                            "-lm", "-o", exe], capture_output=True, text=True, cwd=self.work)
        self.assertEqual(b.returncode, 0, b.stderr)
        files = []
        for i, t in enumerate(inputs):
            files.append(self.path(f"input_{i}.pb"))
            with open(files[-1], "wb") as f:
                f.write(t.SerializeToString())
        res = self.path("res")
        r = subprocess.run([exe, *files, "-o", res], capture_output=True, cwd=self.work,
                           timeout=self.timeout)
        self.assertFalse(os.path.exists(self.path("MARKER")), "injected code ran")
        return r, res

    def output(self, res, i=0):
        t = TensorProto()
        with open(os.path.join(res, f"output_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        return [s.decode("utf-8") for s in t.string_data]

    def test_string_initializer_compiles_to_the_same_strings(self):
        xs = [f"x{i}" for i in range(len(EVIL))]
        r, res = self.build_and_run(concat_model(strings(EVIL, "c */ " + PAYLOAD)),
                                    [strings(xs, "x")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.output(res), [x + e for x, e in zip(xs, EVIL)])
        # The blob and object weights modes hold no string: they stay literals in net.c.
        for mode in ("bin", "obj"):
            out = self.path("out_" + mode)
            r = self.odlac(self.save(concat_model(strings(EVIL, "c"))), "-o", out,
                           "--weights=" + mode)
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_hostile_stopwords_and_labels_are_literals_too(self):
        words = ["Monday"] + EVIL
        node = helper.make_node("StringNormalizer", ["x"], ["y"], stopwords=EVIL,
                                case_change_action="UPPER", is_case_sensitive=1)
        graph = helper.make_graph(
            [node, helper.make_node("LabelEncoder", ["y"], ["z"], domain="ai.onnx.ml",
                                    keys_strings=["MONDAY"], values_strings=[EVIL[2]],
                                    default_string=EVIL[0])], "g",
            [helper.make_tensor_value_info("x", TensorProto.STRING, [len(words)])],
            [helper.make_tensor_value_info("z", TensorProto.STRING, [1])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20),
                                                        helper.make_opsetid("ai.onnx.ml", 4)])
        model.graph.value_info.extend(
            [helper.make_tensor_value_info("y", TensorProto.STRING, [1])])
        r, res = self.build_and_run(model, [strings(words, "x")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.output(res), [EVIL[2]])

    def test_more_elements_kept_than_declared_fail_at_run_time(self):
        node = helper.make_node("StringNormalizer", ["x"], ["y"], stopwords=["a"])
        graph = helper.make_graph(
            [node], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, [3])],
            [helper.make_tensor_value_info("y", TensorProto.STRING, [1])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        r, _ = self.build_and_run(model, [strings(["b", "c", "a"], "x")])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"net_run failed", r.stderr)

    def test_nul_bytes_are_refused(self):
        self.refused(concat_model(strings([b"a\x00b"], "c")), "tensor 'c'",
                     "string_data[0] holds a NUL byte")
        node = helper.make_node("StringNormalizer", ["x"], ["y"], stopwords=[b"a\x00"])
        graph = helper.make_graph(
            [node], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, [1])],
            [helper.make_tensor_value_info("y", TensorProto.STRING, [1])])
        self.refused(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]),
                     "stopwords[0] holds a NUL byte")

    def test_driver_refuses_a_nul_byte_in_an_input_file(self):
        r, res = self.build_and_run(concat_model(strings(["s"], "c")),
                                    [strings([b"a\x00b"], "x")])
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"string_data[0] holds a NUL byte", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(res, "output_0.pb")))

    def test_string_constants_cannot_be_stored(self):
        self.refused(concat_model(strings(["s"], "c")), "constant 'c' holds strings",
                     "--exec-mode=compile", flags=("--exec-mode=load",))

    def test_unsupported_regular_expressions_are_refused(self):
        for pattern, why in (("(?i)abc", "flags and named groups"),
                             ("\\pL+", "this escape"), ("[[:alpha:]]", "POSIX classes"),
                             ("a{2000}", "above 1000"), ("(a", "no closing ')'"),
                             ("[\u00e9]", "non-ASCII class members"), ("a**", "repetition of")):
            node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern)
            graph = helper.make_graph(
                [node], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, [1])],
                [helper.make_tensor_value_info("y", TensorProto.BOOL, [1])])
            with self.subTest(pattern=pattern):
                self.refused(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]),
                             "ExtRegexFullMatch", why)

    def test_undeclared_split_width_is_refused(self):
        node = helper.make_node("StringSplit", ["x"], ["y", "n"], delimiter=",")
        graph = helper.make_graph(
            [node], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
            [helper.make_tensor_value_info("y", TensorProto.STRING, None),
             helper.make_tensor_value_info("n", TensorProto.INT64, [2])])
        self.refused(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]),
                     "known only at run time", "output 'y'")


if __name__ == "__main__":
    hostile.main()
