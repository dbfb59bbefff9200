"""Code injection into what odlac writes (DESIGN §12): one case per channel through which a
model's or a user's text reaches an output. Each case compiles a model carrying a hostile
string, builds the generated C with `cc -std=c99 -pedantic -Wall -Wextra -Werror` (with
-trigraphs, GNU modes and C++ where they matter), runs it, and checks that the code an
unescaped string would have planted did not run (it would create the file MARKER) and that
the outputs are still right against numpy. JSON goes through json.loads, depfiles through a
real make (and ninja where installed); what a channel cannot carry is refused with a precise
message and leaves nothing behind."""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile  # noqa: E402

# C that creates MARKER when it runs: what a string escaping its comment or literal plants.
PAYLOAD = ('int system(const char *); __attribute__((constructor)) static void pwn(void) '
           '{ system("touch MARKER"); }')
CC_STRICT = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]


def read(path):
    with open(path) as f:
        return f.read()


def chain_model(names, producer="odlac-test", version="1", domains=(), shape=(2, 3),
                dtype=TensorProto.FLOAT):
    """x -> Add(c0) -> Add(c1) -> ... -> y. `names` holds 'input', 'output', 'consts' (one a
    node) and optionally 'mids' (the results between nodes) and 'nodes'. Returns the model and
    the constants, so that the expected output is input + sum(constants)."""
    consts = names["consts"]
    mids = names.get("mids", [f"mid{i}" for i in range(len(consts) - 1)])
    values = [names["input"], *mids, names["output"]]
    rng = np.random.default_rng(len(consts))
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in consts]
    nodes = [helper.make_node("Add", [values[i], c], [values[i + 1]],
                              name=names.get("nodes", [f"add{k}" for k in range(len(consts))])[i])
             for i, c in enumerate(consts)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(names["input"], dtype, shape)],
        [helper.make_tensor_value_info(names["output"], dtype, shape)],
        [numpy_helper.from_array(a, c) for a, c in zip(arrays, consts)])
    opsets = [helper.make_opsetid("", 13)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=opsets, producer_name=producer,
                              producer_version=version)
    return model, arrays


class InjectCase(hostile.HostileCase):
    """Compiles, builds and runs generated code in the scratch folder, where MARKER would
    appear if injected code ran."""

    def compile(self, model_path, *flags, out="out", name="net", status=0):
        out = self.path(out)
        r = self.odlac(model_path, "-o", out, "--name", name, "--emit-main", *flags)
        if status:
            self.assertRefused(r, status=status)
            return r
        self.assertEqual(r.returncode, 0, r.stderr)
        return out

    def build(self, out, *cflags, cc=None, exe="driver"):
        exe = os.path.join(out, exe)
        sources = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
        r = subprocess.run([cc or self.tc.cc, *CC_STRICT, "-O1", *cflags, "-I",
                            self.tc.include, *sources, self.tc.lib, "-lm", "-o", exe],
                           capture_output=True, text=True, cwd=self.work)
        self.assertEqual(r.returncode, 0, r.stderr)
        return exe

    def run_driver(self, exe, x, *args):
        """Runs the driver on input x; returns (output array, output name, stderr)."""
        inp, res = self.path("input.pb"), self.path("res")
        with open(inp, "wb") as f:
            f.write(numpy_helper.from_array(x).SerializeToString())
        r = subprocess.run([exe, inp, "-o", res, *args], capture_output=True, text=True,
                           cwd=self.work, timeout=self.timeout)
        self.assertEqual(r.returncode, 0, r.stderr)
        t = TensorProto()
        with open(os.path.join(res, "output_0.pb"), "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t), t.name, r.stderr

    def assertNotInjected(self):
        self.assertFalse(os.path.exists(self.path("MARKER")), "injected code ran")

    def assertRuns(self, out, arrays, output_name, *cflags, cc=None):
        """Builds and runs the driver; the output is input + sum(constants), and the output's
        name (the NAME macro, a C string literal) arrives unchanged."""
        exe = self.build(out, *cflags, cc=cc)
        x = np.arange(arrays[0].size, dtype=np.float32).reshape(arrays[0].shape)
        got, name, _ = self.run_driver(exe, x)
        # float32 sums of hundreds of terms, in an order the passes may change: each addition
        # may round by half an ulp of the partial sum.
        want = x.astype(np.float64) + sum(a.astype(np.float64) for a in arrays)
        partial = np.abs(x) + sum(np.abs(a) for a in arrays)
        np.testing.assert_array_less(np.abs(got - want), len(arrays) * 6e-8 * partial + 1e-6)
        self.assertEqual(name, output_name)
        self.assertNotInjected()


class BannerTest(InjectCase):
    """The banner comment of every generated file: producer name and version, opset domains,
    the model's file name and the recorded flags."""

    def test_producer_version_and_domain_cannot_close_the_banner(self):
        hostile_text = "x */ " + PAYLOAD + " /* \n#error planted ??/\n"
        model, arrays = chain_model(
            {"input": "x", "output": "y", "consts": ["c"]}, producer=hostile_text,
            version="2 */" + PAYLOAD + "/*", domains=["evil.*/" + PAYLOAD + "/*"])
        out = self.compile(self.save(model))
        for f in os.listdir(out):
            if f.endswith((".c", ".h")):
                text = read(os.path.join(out, f))
                self.assertIn("(producer x *\\/ int system", text, f)
                self.assertIn("/\\* \\x0a#error planted ?\\?/\\x0a 2 *\\/int", text, f)
                self.assertEqual(text.count("*/"), text.count("/*"), f)
        self.assertRuns(out, arrays, "y", "-trigraphs")
        # The same through the C compiler that --emit runs: the object links into a driver.
        obj_out = self.compile(self.save(model), "--emit=obj", "--odla-prefix",
                               os.path.dirname(self.tc.include), out="obj")
        self.assertTrue(os.path.exists(os.path.join(obj_out, "net.o")))
        self.assertNotInjected()

    def test_flag_values_are_escaped_in_the_banner(self):
        # --input-shape names a symbolic input whose name closes the comment; a custom-op
        # domain is recorded as given.
        name = "in */ " + PAYLOAD + " /*"
        model, arrays = chain_model({"input": name, "output": "y", "consts": ["c"]})
        model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
        out = self.compile(self.save(model), f"--input-shape={name}:2x3",
                           "--custom-op-domain=com.*/" + PAYLOAD + "/*")
        header = read(os.path.join(out, "net.h"))
        self.assertIn("--input-shape=in *\\/ int system", header)
        self.assertIn("--custom-op-domain=com.*\\/int system", header)
        self.assertRuns(out, arrays, "y")

    def test_model_file_name_reaches_neither_comment_nor_format_string(self):
        # A file name holds no '/', but a quote, '%' and a newline: the driver's usage text
        # took it raw into a printf format, where `"` ended the literal and %n wrote memory.
        model, arrays = chain_model({"input": "x", "output": "y", "consts": ["c"]})
        path = self.save(model, name='m"); system("touch MARKER"); printf("%n%s\n??\'.onnx')
        out = self.compile(path)
        exe = self.build(out, "-trigraphs")
        r = subprocess.run([exe], capture_output=True, text=True, cwd=self.work)
        self.assertEqual(r.returncode, 2)
        self.assertIn("Runs model 'm\"); system(\"touch MARKER\"); printf(\"%n%s\n??'.onnx' on",
                      r.stderr)
        self.assertNotInjected()
        self.assertRuns(out, arrays, "y", "-trigraphs")


class StringLiteralTest(InjectCase):
    """Value names become C string literals: ODLA value ids in every call and the ports'
    NAME macros in the header."""

    def test_trigraphs_and_quotes_stay_inside_the_literal(self):
        names = {"input": 'in??/");' + PAYLOAD + "//", "output": 'out??/"??=??(??)??!??<??>??-??\'',
                 "consts": ['c??/"', "c2\\"], "mids": ['m??/"); }' + PAYLOAD + "//"]}
        model, arrays = chain_model(names)
        out = self.compile(self.save(model))
        source = read(os.path.join(out, "net.c"))
        self.assertNotIn("??", source)
        for mode in (["-trigraphs"], ["-std=gnu99", "-trigraphs"], ["-std=c99"]):
            with self.subTest(mode=mode):
                self.assertRuns(out, arrays, names["output"], *mode)

    def test_a_name_longer_than_a_c99_literal_is_refused(self):
        fits, too_long = "a" * 4095, "b" * 4096
        model, arrays = chain_model({"input": fits, "output": "y", "consts": ["c"]})
        self.assertRuns(self.compile(self.save(model)), arrays, "y")
        model, _ = chain_model({"input": "x", "output": too_long, "consts": ["c"]})
        r = self.compile(self.save(model), out="long", status=1)
        self.assertIn("result '" + "b" * 32 + "...' needs 4096 characters as a C string "
                      "literal; C99 compilers accept 4095", r.stderr)
        self.assertNothingLeft(self.path("long"))


class IdentifierTest(InjectCase):
    """Value names become C identifiers: locals of NAME_build, parameters of NAME_run and the
    header's prototypes, weights symbols. None may take a generated symbol, a macro, a keyword
    or another value's identifier."""

    CLASHES = ["net_run", "net_create", "net_instance", "net_w_c", "net_build", "NET_CHECK",
               "NET_ARENA_BYTES", "NET_INPUT_0_COUNT", "NET_WEIGHTS_ALIGN", "net", "inst",
               "status", "s", "rows", "batch", "weights", "main", "status_", "t_net_run",
               "odla_value", "ODLA_SUCCESS", "odlac_tensor", "ODLAC_MAX_RANK", "EOF", "NAN",
               "errno", "stdin", "linux", "unix", "size_t", "FILE", "int64_t", "class", "int",
               "a.b", "a_b", "a-b", "a_b_2", "0", "_", "v_net_run", "t_0"]

    def names_for(self, words):
        # Input, output, then constants and the results between nodes alternating.
        return {"input": words[0], "output": words[1], "consts": words[2::2],
                "mids": words[3::2][:len(words[2::2]) - 1]}

    def check_modes(self, words, name="net"):
        names = self.names_for(words)
        model, arrays = chain_model(names)
        path = self.save(model)
        for k, flags in enumerate((["--weights=c"], ["--weights=bin"],
                                   ["--exec-mode=interpret"])):
            with self.subTest(flags=flags):
                out = self.compile(path, *flags, out=f"out{k}", name=name)
                self.assertRuns(out, arrays, names["output"])
                self.assertRuns(out, arrays, names["output"], "-std=gnu99")
                # The header's prototypes name the ports: C++ must read them too.
                cpp = self.path("use.cpp")
                with open(cpp, "w") as f:
                    f.write(f'#include "{name}.h"\nint main() {{ return 0; }}\n')
                r = subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror",
                                    "-fsyntax-only", "-I", self.tc.include, "-I", out, cpp],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)

    def test_generated_symbols_keywords_and_collisions(self):
        words = self.CLASHES
        self.check_modes(words)

    def test_a_model_prefix_starting_with_t(self):
        # cIdentifier's escape 't_' would itself be the model's prefix: it becomes 'v_'.
        self.check_modes(["t_run", "t_create", "int", "t_w_c", "T_CHECK", "t", "v_int", "x"],
                         name="t")

    def test_dynamic_batch_parameters(self):
        names = self.names_for(["batch", "rows", "inst", "rows_", "status_", "net_run_batch"])
        model, arrays = chain_model(names, shape=(1, 3))
        model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
        model.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "N"
        out = self.compile(self.save(model), "--dynamic-batch")
        self.assertRuns(out, arrays, names["output"])

    def test_every_object_like_macro_of_the_included_headers(self):
        # The macros the host's headers define where generated code includes them, in C99
        # and GNU modes; function-like macros cannot clash (a declared name is not followed
        # by '(').
        includes = {"net.c": ["stdio.h", "stdlib.h", "string.h", "math.h", "ODLA/odla.h",
                              "ODLA/odla_ext.h"],
                    "main.c": ["errno.h", "stdint.h", "stdio.h", "stdlib.h", "string.h",
                               "time.h", "sys/stat.h", "unistd.h", "ODLA/odla_common.h"]}
        macros = set()
        for std in ("c99", "gnu99"):
            for file, headers in includes.items():
                src = ("#define _POSIX_C_SOURCE 200809L\n" if file == "main.c" else "") + \
                    "".join(f"#include <{h}>\n" for h in headers)
                r = subprocess.run([self.tc.cc, f"-std={std}", "-dM", "-E", "-I",
                                    self.tc.include, "-"], input=src, capture_output=True,
                                   text=True, check=True)
                macros |= {m.group(1) for m in re.finditer(r"^#define (\w+)(?:[ \t]|$)",
                                                           r.stdout, re.M)
                           if not m.group(1).startswith("_")}
        self.assertGreater(len(macros), 200)
        words = sorted(macros)
        if len(words) % 2:
            words.append("odd_one_out")
        names = self.names_for(words)
        model, arrays = chain_model(names)
        out = self.compile(self.save(model))
        self.assertRuns(out, arrays, names["output"])
        self.assertRuns(out, arrays, names["output"], "-std=gnu99")

    def test_model_names_that_are_reserved_are_refused(self):
        model, _ = chain_model({"input": "x", "output": "y", "consts": ["c"]})
        path = self.save(model)
        for name in ("int", "EOF", "odla_net", "main", "class"):
            with self.subTest(name=name):
                r = self.odlac(path, "-o", self.path("o"), "--name", name)
                self.assertRefused(r, f"--name '{name}' is reserved in generated C")
                self.assertNothingLeft(self.path("o"))


class WeightsTest(InjectCase):
    """Constant names in the weights file's comments, and the weights symbols."""

    def test_constant_names_in_weights_comments(self):
        names = {"input": "x", "output": "y", "consts": ["w */ " + PAYLOAD + " /*", "w\n#x"],
                 "mids": ["m"]}
        model, arrays = chain_model(names)
        out = self.compile(self.save(model), "--weights=c")
        weights = read(os.path.join(out, "net_weights.c"))
        self.assertIn("/* w *\\/ int system", weights)
        self.assertIn("/* w\\x0a#x: f32[2,3] */", weights)
        self.assertRuns(out, arrays, "y")


class DepfileTest(InjectCase):
    """-MD depfiles name the model, its external data and the outputs, as make reads them."""

    def external_model(self, location, model_name="m.onnx"):
        model, arrays = chain_model({"input": "x", "output": "y", "consts": ["c"]})
        init = model.graph.initializer[0]
        with open(self.path(location), "wb") as f:
            f.write(init.raw_data or np.asarray(init.float_data, np.float32).tobytes())
        del init.float_data[:]
        init.ClearField("raw_data")
        init.data_location = TensorProto.EXTERNAL
        init.external_data.add(key="location", value=location)
        return self.save(model, name=model_name), arrays

    def make(self, target, depfile):
        """make with a rule for `target` (written as make reads it) and `depfile` included."""
        shutil.copy(depfile, self.path("deps.d"))
        with open(self.path("Makefile"), "w") as f:
            f.write(f"all: {target}\n{target}:\n\t@echo REBUILT\ninclude deps.d\n")
        return subprocess.run(["make", "-C", self.work], capture_output=True, text=True)

    def test_make_reads_back_spaces_hashes_dollars_and_colons(self):
        location = "w $x #y:z $$.bin"
        model, arrays = self.external_model(location)
        out = self.compile(model, "-MD", out="o u:t#1")
        depfile = os.path.join(out, "net.d")
        text = read(depfile)
        self.assertIn("w\\ $$x\\ \\#y\\:z\\ $$$$.bin", text)
        target = re.sub(r"([ #:])", r"\\\1", os.path.join(out, "net.h"))
        r = self.make(target, depfile)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("REBUILT", r.stdout)  # every prerequisite found, all up to date
        os.utime(self.path(location), (2**31, 2**31))
        r = self.make(target, depfile)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("REBUILT", r.stdout)  # make watches the external data file itself
        if shutil.which("ninja"):
            # ninja reads the same prerequisites: a rule whose depfile lists them for `dep`.
            with open(self.path("dep.d"), "w") as f:
                f.write("dep: \\\n" + text.split(": \\\n", 1)[1])
            with open(self.path("build.ninja"), "w") as f:
                f.write("rule r\n  command = touch dep\n  depfile = dep.d\n  deps = gcc\n"
                        "build dep: r\n")
            subprocess.run(["ninja", "-C", self.work], capture_output=True, check=True)
            deps = subprocess.run(["ninja", "-C", self.work, "-t", "deps"], capture_output=True,
                                  text=True, check=True).stdout
            self.assertIn("    " + self.path(location) + "\n", deps)
            self.assertIn("    " + model + "\n", deps)
        self.assertRuns(out, arrays, "y")

    def test_a_newline_in_an_external_data_name_is_refused(self):
        # Import refuses the location before any output (tests/hostile/test_sizes.py has the
        # other control characters); the depfile check stays for paths from the command line.
        model, _ = self.external_model("w\nall:\n\ttouch MARKER\n.bin")
        r = self.compile(model, "-MD", out="o", status=1)
        self.assertIn("external data 'w\\x0aall:\\x0a\\x09touch MARKER\\x0a.bin': the location "
                      "contains a control character", r.stderr)
        self.assertNothingLeft(self.path("o"))

    def test_make_syntax_is_refused(self):
        for location, char in (("$(shell touch MARKER).bin", "("), ("a;touch MARKER.bin", ";"),
                               ("w*.bin", "*"), ("w\\.bin", "\\"), ("a%b.bin", "%")):
            with self.subTest(location=location):
                model, _ = self.external_model(location)
                r = self.compile(model, "-MD", out="o", status=1)
                self.assertIn(f"it holds a character that make or ninja reads as syntax "
                              f"('{char}' at byte", r.stderr)
                self.assertNothingLeft(self.path("o"))
        # make reads "SHELL=..." as the first prerequisite as a variable that runs recipes.
        model, _ = self.external_model("w.bin", model_name="SHELL=evil.onnx")
        r = self.compile(model, "-MD", out="o", status=1)
        self.assertIn("('=' at byte", r.stderr)
        self.assertNothingLeft(self.path("o"))
        self.assertNotInjected()


class ReportTest(InjectCase):
    """NAME.json is valid UTF-8 JSON whatever the producer and file names hold."""

    def test_control_characters_and_invalid_utf8(self):
        producer = "p\"\\\x00\x01\x1b[2J\x7f\u202e\u2028é" + "Z" * 4
        model, _ = chain_model({"input": "x", "output": "y", "consts": ["c"]}, producer=producer)
        # Invalid UTF-8 in a proto2 string: patch the serialized bytes (same length).
        data = model.SerializeToString().replace(b"ZZZZ", b"\xff\xc0\xe2\x82")
        name = os.fsencode(self.work) + b"/m\x1b\xfe\n.onnx"
        with open(name, "wb") as f:
            f.write(data)
        r = subprocess.run([self.tc.odlac, name, "-o", self.path("out"), "--report"],
                           capture_output=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"\x1b", r.stdout)
        with open(self.path("out", "net.json"), "rb") as f:
            raw = f.read()
        report = json.loads(raw.decode("utf-8", errors="strict"))
        self.assertEqual(report["producer"],
                         "p\"\\\x00\x01\x1b[2J\x7f\u202e\u2028é\ufffd\ufffd\ufffd\ufffd 1")
        self.assertEqual(report["model"], "m\x1b\ufffd\n.onnx")
        self.assertNotIn(b"\x1b", raw)
        self.assertNotIn("\u202e".encode(), raw)


class TerminalTest(InjectCase):
    """--print-ir, --print-memory-plan, --report and error messages: a name can neither add
    lines nor send control sequences to the terminal."""

    def test_names_are_shown_escaped(self):
        evil = "v\n  %forged = Relu(%x) : f32[2,3]\x1b[2J\u202e"
        model, _ = chain_model({"input": "x", "output": "y", "consts": ["c", "d"],
                                "mids": [evil]})
        path = self.save(model)
        r = self.odlac(path, "--print-ir", "--print-memory-plan", "--report")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("\x1b", r.stdout)
        self.assertNotIn("\u202e", r.stdout)
        self.assertNotIn("\n  %forged", r.stdout)
        self.assertIn('%"v\\x0a  %forged = Relu(%x) : f32[2,3]\\x1b[2J\\xe2\\x80\\xae" = Add',
                      r.stdout)
        self.assertIn("  v\\x0a  %forged = Relu(%x) : f32[2,3]\\x1b[2J\\xe2\\x80\\xae\n",
                      r.stdout)  # the memory plan's value column
        # An error naming the node.
        bad = helper.make_model(helper.make_graph(
            [helper.make_node("NoSuchOp", ["x"], ["y"], name="n\x1b]0;pwned\x07")], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])]),
            opset_imports=[helper.make_opsetid("", 13)])
        r = self.odlac(self.save(bad, name="bad.onnx"), "-o", self.path("o"))
        self.assertRefused(r, "n\\x1b]0;pwned\\x07")
        self.assertNotIn("\x1b", r.stderr)


class EmitTest(InjectCase):
    """--emit runs the C compiler with an argument vector, never through a shell."""

    def test_shell_syntax_in_paths_is_data(self):
        model, arrays = chain_model({"input": "x", "output": "y", "consts": ["c"]})
        folder = self.path("$(touch MARKER);`touch MARKER` 'x")
        os.makedirs(folder)
        path = self.save(model, name=os.path.join(os.path.basename(folder), "m $(id).onnx"))
        # Headers under that folder too, so that its name reaches the compiler's -I argument.
        prefix = os.path.join(folder, "prefix")
        shutil.copytree(self.tc.include, os.path.join(prefix, "include"))
        for emit in ("obj", "static"):
            with self.subTest(emit=emit):
                out = self.compile(path, f"--emit={emit}", "--odla-prefix", prefix,
                                   out=os.path.join(folder, f"out {emit}"))
                self.assertTrue(os.path.exists(os.path.join(
                    out, "net.o" if emit == "obj" else "libnet.a")))
                self.assertNotInjected()
        out = os.path.join(folder, "out obj")
        exe = self.path("linked")
        r = subprocess.run([self.tc.cc, "-I", self.tc.include, "-I", out,
                            os.path.join(out, "main.c"), os.path.join(out, "net.o"),
                            self.tc.lib, "-lm", "-o", exe], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        x = np.ones((2, 3), np.float32)
        got, _, _ = self.run_driver(exe, x)
        np.testing.assert_allclose(got, x + arrays[0], rtol=1e-6)
        self.assertNotInjected()


if __name__ == "__main__":
    hostile.main()
