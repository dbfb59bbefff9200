"""The Python package (python/, docs/python.md) under pytest: installed with pip from the
source tree beside an installed odlac, it compiles models and runs them; outputs against
PyTorch (a CNN built and exported by it), ONNX Runtime and the models' own test data, on the reference and oneDNN backends; inputs are used without a copy
when they already fit; errors are precise.

Run: ODLAC_BUILD_DIR=build VENV/bin/python -m pytest tests/python (ctest: python.api)."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper, TensorProto

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
import odlactest  # noqa: E402


@pytest.fixture(scope="module")
def odlac(tmp_path_factory):
    """The package installed with pip (a copy of python/, so that the build writes nothing
    into the source tree), and an installed odlac it drives."""
    build_dir = os.environ.get("ODLAC_BUILD_DIR")
    if not build_dir:
        pytest.skip("ODLAC_BUILD_DIR not set")
    work = tmp_path_factory.mktemp("pkg")
    os.environ["ODLAC"], site = odlactest.install_package(build_dir, str(work))
    os.environ["ODLAC_CACHE_DIR"] = str(work / "cache")
    import odlac as module
    assert module.__file__.startswith(site)
    yield module
    sys.path.remove(site)


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def backends():
    lib = os.path.join(os.environ.get("ODLAC_BUILD_DIR", ""), "runtime_stubs", "dnnl")
    return ["reference"] + (["dnnl"] if os.path.isdir(lib) else [])


@pytest.mark.parametrize("backend", backends())
@pytest.mark.parametrize("name", ["cnn", "digits", "mlp"])
def test_models_match_their_test_data_and_onnx_runtime(odlac, backend, name):
    folder = os.path.join(ROOT, "models", name)
    data = os.path.join(folder, "test_data_set_0")
    x = load(os.path.join(data, "input_0.pb"))
    model = os.path.join(folder, "model.onnx")
    graph_input = onnx.load(model).graph.input[0].name
    with odlac.compile(model, backend=backend, opt_level=3,
                       input_shapes={graph_input: x.shape}) as m:
        assert [t.name for t in m.get_inputs()] == [graph_input]
        (y,) = m.run(None, {graph_input: x})
        np.testing.assert_allclose(y, load(os.path.join(data, "output_0.pb")), rtol=1e-4,
                                   atol=1e-5)
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(y, sess.run(None, {graph_input: x})[0], rtol=1e-4, atol=1e-5)
        # By name, twice: the instance runs again with the same results.
        (again,) = m.run([m.get_outputs()[0].name], {graph_input: x})
        np.testing.assert_array_equal(again, y)


def test_against_pytorch(odlac, tmp_path):
    """A small CNN built in PyTorch, exported to ONNX, compiled by odlac: its outputs against
    PyTorch's forward on random inputs."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 4, 3, stride=2), torch.nn.Sigmoid(), torch.nn.Flatten(),
        torch.nn.Linear(4 * 3 * 3, 5), torch.nn.Softmax(dim=1)).eval()
    x = torch.randn(2, 3, 16, 16)
    path = str(tmp_path / "net.onnx")
    torch.onnx.export(net, (x,), path, input_names=["x"], output_names=["p"], dynamo=False)
    with torch.no_grad():
        want = net(x).numpy()
    for backend in backends():
        with odlac.compile(path, backend=backend, opt_level=3) as m:
            (got,) = m.run(["p"], {"x": x.numpy()})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=backend)


def test_inputs_and_errors(odlac, tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Cast", ["s"], ["y"],
                                                                      to=TensorProto.INT32)],
        "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [2, 3]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 3])])
    path = str(tmp_path / "add.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    with odlac.compile(path, workdir=str(tmp_path / "out")) as m:
        assert [(t.name, t.type, t.shape) for t in m.get_outputs()] == [
            ("y", "i32", [2, 3]), ("s", "f32", [2, 3])]
        y, s = m.run(None, {"a": a, "b": a})
        np.testing.assert_array_equal(s, 2 * a)
        assert y.dtype == np.int32
        np.testing.assert_array_equal(y, (2 * a).astype(np.int32))
        (s2,) = m.run(["s"], {"a": a.astype(np.float64), "b": a})  # converted
        np.testing.assert_array_equal(s2, 2 * a)
        with pytest.raises(ValueError, match=r"input 'a' must have shape \[2, 3\], got \[3, 2\]"):
            m.run(None, {"a": a.T.copy(), "b": a})
        with pytest.raises(KeyError, match="input 'b' is not fed"):
            m.run(None, {"a": a})
        with pytest.raises(KeyError, match="no input named c"):
            m.run(None, {"a": a, "b": a, "c": a})
        with pytest.raises(KeyError, match="no output named z"):
            m.run(["z"], {"a": a, "b": a})
    assert os.path.exists(tmp_path / "out" / "libnet.so")  # workdir: kept
    with pytest.raises(RuntimeError, match="closed"):
        m.run(None, {"a": a, "b": a})
    with pytest.raises(odlac.CompileError, match="dim 0 is symbolic"):
        symbolic = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
                                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])])
        p = str(tmp_path / "sym.onnx")
        onnx.save(helper.make_model(symbolic, opset_imports=[helper.make_opsetid("", 13)]), p)
        odlac.compile(p)
    with pytest.raises(odlac.CompileError, match="odlac not found"):
        odlac.compile(path, odlac=str(tmp_path / "no-odlac"))


@pytest.mark.parametrize("backend", backends())
def test_dynamic_batch_runs_any_rows(odlac, backend):
    """A model compiled with --dynamic-batch takes any number of rows through net_run_batch:
    the real digits CNN at 1, 3 and 7 rows against ONNX Runtime; rows must agree."""
    model = os.path.join(ROOT, "models", "digits", "model.onnx")
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    with odlac.compile(model, backend=backend, opt_level=3,
                       flags=["--dynamic-batch", "--batch-size", "2"]) as m:
        assert m.dynamic_batch and m.get_inputs()[0].shape == [2, 1, 8, 8]
        for rows in (1, 3, 7):
            x = rng.uniform(0, 16, size=(rows, 1, 8, 8)).astype(np.float32)
            (y,) = m.run(None, {"input": x})
            assert y.shape == (rows, 10)
            np.testing.assert_allclose(y, sess.run(None, {"input": x})[0], rtol=1e-4, atol=1e-4)
        with pytest.raises(ValueError, match="must have shape"):
            m.run(None, {"input": np.zeros((3, 1, 8, 7), np.float32)})
