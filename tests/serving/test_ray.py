"""odlac.serve.deployment on Ray Serve: a local head node (127.0.0.1, no dashboard) and two
replica processes each running an export-triton version folder; concurrent HTTP requests and
deployment-handle calls against the reference backend, batches joined, bad requests refused.

Run: ODLAC_BUILD_DIR=build SERVING_VENV/bin/python -m pytest tests/serving (ctest: label
serving)."""
import json
import socket
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from conftest import DIGITS, check, digits_inputs

ray = pytest.importorskip("ray", reason="ray is not installed (scripts/pypi-serving.txt)")
serve = pytest.importorskip("ray.serve", reason="ray[serve] is not installed")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as r:
        return json.load(r)


@pytest.fixture(scope="module")
def app(odlac, tmp_path_factory):
    repo = tmp_path_factory.mktemp("repo")
    status, err = odlac.export(DIGITS, repo, "--backend", odlac.backend, "-O3",
                               "--max-batch", "16", "--model-name", "digits")
    assert status == 0, err
    port = free_port()
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False)
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    handle = serve.run(odlac.module.serve.deployment(str(repo / "digits" / "1"), name="digits",
                                                     num_replicas=2, max_batch_size=16,
                                                     batch_wait_timeout_s=0.01),
                       name="digits", route_prefix="/digits")
    yield "http://127.0.0.1:%d/digits" % port, handle
    serve.shutdown()
    ray.shutdown()


def test_two_replicas_answer_http_requests_like_the_reference_backend(app, odlac):
    url, _ = app
    replicas = serve.status().applications["digits"].deployments["digits"].replica_states
    assert replicas.get("RUNNING") == 2, replicas
    batches = digits_inputs(48, seed=4)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda x: post(url, {"inputs": {"input": x.tolist()}}), batches))
    for x, got in zip(batches, answers):
        check([np.asarray(got["outputs"]["output"], np.float32)],
              odlac.reference(DIGITS, {"input": x}))


def test_handle_calls_are_batched(app, odlac):
    _, handle = app
    batches = digits_inputs(32, seed=5)
    responses = [handle.infer.remote({"input": x}) for x in batches]
    for x, r in zip(batches, responses):
        check(r.result(), odlac.reference(DIGITS, {"input": x}))


def test_bad_requests_get_400_and_do_not_fail_the_others(app, odlac):
    url, handle = app
    for body, message in [({"inputs": {"input": [[1.0, 2.0]]}}, "must have shape"),
                          ({"inputs": {"nope": [[1.0]]}}, "inputs ['input'] expected"),
                          ({"feeds": {}}, "bad request")]:
        with pytest.raises(urllib.error.HTTPError) as e:
            post(url, body)
        assert e.value.code == 400
        assert message in json.load(e.value)["error"]
    # A bad request joined with good ones in one batch leaves theirs right.
    x = digits_inputs(4, seed=6)
    calls = [handle.infer.remote({"input": x[0]}), handle.infer.remote({"input": x[1][:, :, :4]}),
             handle.infer.remote({"input": x[2]})]
    check(calls[0].result(), odlac.reference(DIGITS, {"input": x[0]}))
    with pytest.raises(Exception, match="must have shape"):
        calls[1].result()
    check(calls[2].result(), odlac.reference(DIGITS, {"input": x[2]}))
