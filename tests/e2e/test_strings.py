"""String ops beyond what ONNX's backend tests hold, against independent references: Python's
re.fullmatch (ASCII mode, which agrees with RE2 on the subset odla_ext_string.h lists) for
RegexFullMatch, str.lower/str.upper for StringNormalizer's case mapping (the letters whose
pair keeps its UTF-8 length), str.split for StringSplit, a dict for LabelEncoder, numpy for Binarizer. Each model
is compiled, built with -Werror and run through the generated driver on the reference
backend."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import odlactest  # noqa: E402


def strings(values, name, dims=None):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.STRING
    t.dims.extend(dims if dims is not None else [len(values)])
    t.string_data.extend(v.encode("utf-8") for v in values)
    return t


class StringOps(unittest.TestCase):
    tc = odlactest.Toolchain()

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="odlac-strings-")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def run_model(self, nodes, inputs, outputs, value_info=(), ml=False):
        """Compiles the one-graph model, runs it on `inputs` (TensorProtos); returns the
        outputs as TensorProtos."""
        graph = helper.make_graph(
            nodes, "g", [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                         for t in inputs], outputs)
        graph.value_info.extend(value_info)
        opsets = [helper.make_opsetid("", 20)] + ([helper.make_opsetid("ai.onnx.ml", 4)]
                                                  if ml else [])
        model = helper.make_model(graph, opset_imports=opsets)
        path, out = os.path.join(self.work, "m.onnx"), os.path.join(self.work, "out")
        shutil.rmtree(out, ignore_errors=True)
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        r = self.tc.compile(path, out, "--emit-main")
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = os.path.join(out, "driver")
        self.tc.build(out, exe)
        files = []
        for i, t in enumerate(inputs):
            files.append(os.path.join(self.work, f"input_{i}.pb"))
            with open(files[-1], "wb") as f:
                f.write(t.SerializeToString())
        res = os.path.join(self.work, "res")
        r = subprocess.run([exe, *files, "-o", res], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = []
        for i in range(len(outputs)):
            t = TensorProto()
            with open(os.path.join(res, f"output_{i}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            got.append(t)
        return got

    def test_regex_full_match_agrees_with_python(self):
        texts = ["", "a", "ab", "abab", "aab", "abc", "www.x.com", "www.x.co", "a.b", "a-b_c",
                 "hello world", "x@y.com", "123", "12a", "\u00e9t\u00e9", "a\nb", "(", "aaa",
                 "aaaa", "ba", "_", " ", "\t", "A1"]
        patterns = [r"a*", r"(ab)+", r"a?b", r"a{2,3}", r"a{2}", r"a{1,}", r"[a-c]+",
                    r"[^a-c]*", r"\d+", r"\D+", r"\w+", r"\W*", r"\s", r"\S+", r".*",
                    r"a|ab|abc", r"(?:a|b)*c?", r"www\.[\w.-]+\.\bcom\b", r"\bx\b.*",
                    r"^a.*$", r"\Aa+\z", r"[\w.]+@\w+\.com", r"a\.b", r"\(", r"...",
                    r"\u00e9?t\u00e9?".encode().decode("unicode_escape"), r"a.b",
                    r"(a*)*", r"[-_a]+", r"a+?", r"[]a]+", r"a\B\w*"]
        nodes = [helper.make_node("RegexFullMatch", ["x"], [f"y{i}"], pattern=p)
                 for i, p in enumerate(patterns)]
        outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.BOOL, [len(texts)])
                for i in range(len(patterns))]
        got = self.run_model(nodes, [strings(texts, "x")], outs)
        for p, t in zip(patterns, got):
            want = [re.fullmatch(p.replace(r"\z", r"\Z"), s, re.ASCII) is not None
                    for s in texts]
            self.assertEqual(list(numpy_helper.to_array(t)), want, p)

    def test_case_mapping_agrees_with_python(self):
        # ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic letters that keep their length.
        letters = ("AbZz\u00c0\u00e9\u00de\u00fe\u0100\u0101\u0139\u013a\u017d\u017e"
                   "\u0391\u03b1\u03a9\u03c9\u0410\u044f\u0401\u0451")
        texts = [letters, "Stra\u00dfe", "mixed \u0178 \u00ff \u00b5", "", "plain 123"]
        for action, fn in (("LOWER", str.lower), ("UPPER", str.upper)):
            with self.subTest(action=action):
                node = helper.make_node("StringNormalizer", ["x"], ["y"],
                                        case_change_action=action)
                got = self.run_model([node], [strings(texts, "x")],
                                     [helper.make_tensor_value_info("y", TensorProto.STRING,
                                                                    [len(texts)])])
                want = [fn(texts[0]), texts[1].lower() if action == "LOWER" else "STRA\u00dfE",
                        "mixed \u0178 \u00ff \u00b5" if action == "LOWER" else
                        "MIXED \u0178 \u00ff \u00b5", "", fn("plain 123")]
                self.assertEqual([s.decode() for s in got[0].string_data], want)

    def test_case_insensitive_stopwords(self):
        node = helper.make_node("StringNormalizer", ["x"], ["y"], stopwords=["\u00c9T\u00c9", "b"],
                                case_change_action="NONE", is_case_sensitive=0)
        texts = ["\u00e9t\u00e9", "a", "B", "c"]
        got = self.run_model([node], [strings(texts, "x")],
                             [helper.make_tensor_value_info("y", TensorProto.STRING, [2])])
        self.assertEqual([s.decode() for s in got[0].string_data], ["a", "c"])

    def test_split_agrees_with_python(self):
        texts = ["a,b,,c", ",", "", "abc", "a,,", ",a"]
        for maxsplit in (-1, 0, 1, 2):
            with self.subTest(maxsplit=maxsplit):
                parts = [s.split(",", maxsplit) if maxsplit >= 0 else s.split(",")
                         for s in texts]
                width = max(len(p) for p in parts)
                attrs = {"delimiter": ","}
                if maxsplit >= 0:
                    attrs["maxsplit"] = maxsplit
                node = helper.make_node("StringSplit", ["x"], ["y", "n"], **attrs)
                got = self.run_model(
                    [node], [strings(texts, "x")],
                    [helper.make_tensor_value_info("y", TensorProto.STRING, [len(texts), width]),
                     helper.make_tensor_value_info("n", TensorProto.INT64, [len(texts)])])
                flat = [s.decode() for s in got[0].string_data]
                want = [p + [""] * (width - len(p)) for p in parts]
                self.assertEqual(flat, [s for row in want for s in row])
                self.assertEqual(list(numpy_helper.to_array(got[1])), [len(p) for p in parts])

    def test_label_encoder_float_keys_to_strings(self):
        keys = [1.5, float("nan"), -0.0, 7.0]
        values = ["one and a half", "not a number", "zero", "seven"]
        node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml",
                                keys_floats=keys, values_strings=values, default_string="?")
        x = np.array([7.0, np.nan, 0.0, 2.0, 1.5], dtype=np.float32)
        got = self.run_model([node], [numpy_helper.from_array(x, "x")],
                             [helper.make_tensor_value_info("y", TensorProto.STRING, [5])],
                             ml=True)
        self.assertEqual([s.decode() for s in got[0].string_data],
                         ["seven", "not a number", "zero", "?", "one and a half"])

    def test_binarizer_integer_data_with_fractional_thresholds(self):
        # For integer x, x > threshold is x > floor(threshold): -0.5 keeps 0 (truncating the
        # threshold to 0 would drop it); numpy compares in double.
        x = np.array([-3, -1, 0, 1, 2, 3], dtype=np.int64)
        for threshold in (-0.5, 2.5, -1.0, 1e30):
            node = helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml",
                                    threshold=threshold)
            got = self.run_model([node], [numpy_helper.from_array(x, "x")],
                                 [helper.make_tensor_value_info("y", TensorProto.INT64, [6])],
                                 ml=True)
            np.testing.assert_array_equal(numpy_helper.to_array(got[0]),
                                          (x.astype(np.float64) > threshold).astype(np.int64),
                                          err_msg=f"threshold {threshold}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
