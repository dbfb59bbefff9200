"""`odlac export-triton` repositories behind Triton Inference Server (the tritonserver of
PyPI's nvidia-pytriton, on 127.0.0.1): config.pbtxt as Triton reads it, answers to concurrent
tritonclient requests against the reference backend, requests joined by dynamic batching,
a killed model instance, names a stranger's model gives, and export-triton's refusals.

Run: ODLAC_BUILD_DIR=build SERVING_VENV/bin/python -m pytest tests/serving (ctest: label
serving)."""
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import DIGITS, MLP, check, digits_inputs

http = pytest.importorskip("tritonclient.http", reason="tritonclient is not installed "
                           "(scripts/pypi-serving.txt)")
pytest.importorskip("pytriton", reason="nvidia-pytriton (tritonserver) is not installed "
                    "(scripts/pypi-serving.txt)")
from tritonclient.utils import InferenceServerException  # noqa: E402


def infer(client, model, feeds, outputs):
    inputs = []
    for name, x in feeds.items():
        i = http.InferInput(name, list(x.shape), {np.float32: "FP32"}[x.dtype.type])
        i.set_data_from_numpy(x)
        inputs.append(i)
    r = client.infer(model, inputs)
    return [r.as_numpy(n) for n in outputs]


@pytest.fixture(scope="module")
def repo(odlac, tmp_path_factory):
    repo = tmp_path_factory.mktemp("repo")
    status, err = odlac.export(DIGITS, repo, "--backend", odlac.backend, "-O3",
                               "--max-batch", "16", "--instances", "2", "--model-name", "digits")
    assert status == 0, err
    status, err = odlac.export(MLP, repo, "--backend", odlac.backend)
    assert status == 0, err
    return repo


def test_repository_layout_and_config(repo, odlac):
    version = repo / "digits" / "1"
    for f in ["model.py", "odlac.py", "libnet.so", "net.json", "libodla_%s.so" % odlac.backend]:
        assert (version / f).is_file(), f
    config = (repo / "digits" / "config.pbtxt").read_text()
    assert 'name: "digits"' in config and 'backend: "python"' in config
    assert "max_batch_size: 16" in config and "dynamic_batching { }" in config
    assert re.search(r'name: "input" data_type: TYPE_FP32 dims: \[ 1, 8, 8 \]', config)
    assert re.search(r'name: "output" data_type: TYPE_FP32 dims: \[ 10 \]', config)
    assert "count: 2 kind: KIND_CPU" in config
    mlp = (repo / "model" / "config.pbtxt").read_text()  # named after model.onnx
    assert "max_batch_size: 0" in mlp and "dynamic_batching" not in mlp
    assert "dims: [ 1, 64 ]" in mlp


def test_concurrent_requests_match_the_reference_backend(repo, odlac):
    batches = digits_inputs(64, seed=1)
    rng = np.random.default_rng(2)
    rows = [rng.standard_normal((1, 64)).astype(np.float32) for _ in range(16)]
    with odlac.module.serve.TritonServer(str(repo)) as server:
        client_of = threading.local()

        def client():
            if not hasattr(client_of, "c"):
                client_of.c = http.InferenceServerClient(server.http_url)
            return client_of.c

        with ThreadPoolExecutor(8) as pool:
            digits = list(pool.map(lambda x: infer(client(), "digits", {"input": x},
                                                   ["output"]), batches))
            mlp = list(pool.map(lambda x: infer(client(), "model", {"input": x}, ["output"]),
                                rows))
        stats = http.InferenceServerClient(server.http_url).get_inference_statistics("digits")
    for x, got in zip(batches, digits):
        check(got, odlac.reference(DIGITS, {"input": x}))
    for x, got in zip(rows, mlp):
        check(got, odlac.reference(MLP, {"input": x}))
    # Triton joined requests into batches of more rows than any one request has (5).
    sizes = [b["batch_size"] for s in stats["model_stats"] for b in s["batch_stats"]]
    assert sum(b.shape[0] for b in batches) == sum(
        int(s["inference_count"]) for s in stats["model_stats"])
    assert max(sizes) > 5, sizes


def test_a_killed_instance_is_started_again_and_no_request_is_lost(repo, odlac):
    """A model instance's stub killed mid-run: its requests fail until the server's watch
    loads the model again; the clients retry them, and every answer is right."""
    batches = digits_inputs(48, seed=3)
    with odlac.module.serve.TritonServer(str(repo)) as server:
        killed = threading.Event()
        retried = []

        def ask(i):
            client = http.InferenceServerClient(server.http_url)
            if i == 12:
                os.kill([p for p, m in server.stubs().items() if m == "digits"][0], 9)
                killed.set()
            for attempt in range(100):
                try:
                    return infer(client, "digits", {"input": batches[i]}, ["output"])
                except InferenceServerException:
                    retried.append(i)
                    time.sleep(0.1)
            raise AssertionError("request %d never answered" % i)

        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(ask, range(len(batches))))
        assert killed.is_set()
        assert [m for _, m in server.restarts] == ["digits"]
        assert len([m for m in server.stubs().values() if m == "digits"]) >= 2
    for x, got in zip(batches, answers):
        check(got, odlac.reference(DIGITS, {"input": x}))


def test_names_from_the_model_stay_names(odlac, tmp_path):
    """Tensor names that would end config.pbtxt's strings or lines are escaped: Triton loads
    the model and the names reach the model as they are."""
    name_in, name_out = 'x" } ]\noutput [ {\\', "y\u00e9\t#"
    w = numpy_helper.from_array(np.full((3, 2), 0.5, np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", [name_in, "w"], [name_out])], "g",
                              [helper.make_tensor_value_info(name_in, TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info(name_out, TensorProto.FLOAT, [2, 2])],
                              [w])
    path = tmp_path / "odd.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    repo = tmp_path / "repo"
    status, err = odlac.export(path, repo)
    assert status == 0, err
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with odlac.module.serve.TritonServer(str(repo), supervise=False) as server:
        client = http.InferenceServerClient(server.http_url)
        meta = client.get_model_metadata("odd")
        assert [i["name"] for i in meta["inputs"]] == [name_in]
        assert [o["name"] for o in meta["outputs"]] == [name_out]
        (y,) = infer(client, "odd", {name_in: x}, [name_out])
    np.testing.assert_allclose(y, x @ np.full((3, 2), 0.5, np.float32))


@pytest.mark.parametrize("flags, message", [
    (["--emit=c"], "--emit is not an option of export-triton"),
    (["--weights", "bin"], "--weights is not an option of export-triton"),
    (["--dim", "N=4"], "--dim is not an option of export-triton"),
    (["--max-batch", "0"], "--max-batch takes a whole number from 1"),
    (["--instances", "x"], "--instances takes a whole number from 1 to 256"),
    (["--model-name", "../up"], "is not a Triton model name"),
    (["--dynamic-batch"], "--dynamic-batch without --max-batch"),
])
def test_refusals(odlac, tmp_path, flags, message):
    status, err = odlac.export(DIGITS, tmp_path / "repo", *flags)
    assert status == 1 and message in err, err
    assert not (tmp_path / "repo").exists()


def test_max_batch_needs_a_batch_dim(odlac, tmp_path):
    status, err = odlac.export(MLP, tmp_path / "repo", "--max-batch", "4")
    assert status == 1 and "dynamic-batch" in err, err
    assert not (tmp_path / "repo").exists()
