"""Code and http nodes of a flow over real HTTP: the code runs in the sandbox (its result the node's output,
an escape attempt a node error and no effect), a request goes only where FLOW_HTTP_ALLOW says, and a
secret from FLOW_SECRET_ENV never shows in node runs or messages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.sandbox import confinement
from tests.harness import LiveServer, counting_listener, settings_for, wait_status
from tests.rounds.test_flow_rounds import EchoModel, e, n, run_flow

SECRET = "s3cr3t-token-value"


@pytest.fixture(scope="module")
def server(tmp_path_factory, module_database_url):
    import os

    os.environ["FOREMAN_TEST_FLOW_TOKEN"] = SECRET
    settings = settings_for(tmp_path_factory.mktemp("flow-sandbox"), module_database_url,
                            flow_http_allow=("localhost",), flow_secret_env=("FOREMAN_TEST_FLOW_TOKEN",))
    with LiveServer(settings, model=EchoModel()) as live:
        yield live
    os.environ.pop("FOREMAN_TEST_FLOW_TOKEN", None)


@pytest.fixture
def listener() -> Iterator[tuple[int, list[Any]]]:
    """A listener on 127.0.0.1 the code must never reach."""
    with counting_listener() as found:
        yield found


def one_node(node: dict[str, Any], output: str) -> dict[str, Any]:
    return {"name": f"one {node['type']}", "inputs": {"n": {"type": "number", "default": 4}},
            "nodes": [n("start", "start"), node, n("end", "end")],
            "edges": [e("start", node["id"]), e(node["id"], "end")], "outputs": {"out": output}}


needs_sandbox = pytest.mark.skipif(confinement.unsupported_reason() is not None,
                                   reason=f"no OS isolation here: {confinement.unsupported_reason()}")


@needs_sandbox
def test_a_code_node_computes_in_the_sandbox(server):
    with server.client() as client:
        flow = client.post("/api/flows", json=one_node(
            n("c", "code", code="import math\nresult = {'sq': inputs['n'] ** 2, 'pi': round(math.pi, 2)}"),
            "{{ c.output.sq }} {{ c.output.pi }}")).json()
        wf = run_flow(client, flow["id"], {})
        assert wait_status(client, wf, "completed", "failed")["status"] == "completed"
        assert client.get(f"/api/workflows/{wf}/messages").json()["items"][-1]["content"] == "16 3.14"


@needs_sandbox
@pytest.mark.parametrize("code", [
    "import socket\ns = socket.socket(); s.connect(('127.0.0.1', PORT)); result = 'connected'",
    "import os\nresult = os.system('true')",
    "result = open('/etc/shadow').read()",
    "().__class__.__base__.__subclasses__()\nimport subprocess\nresult = subprocess.run(['id']).returncode",
])
def test_a_code_node_that_tries_to_get_out_fails_and_nothing_happens(server, listener, code):
    port, seen = listener
    with server.client() as client:
        flow = client.post("/api/flows", json=one_node(n("c", "code", code=code.replace("PORT", str(port))),
                                                       "{{ c.output }}")).json()
        wf = run_flow(client, flow["id"], {})
        assert wait_status(client, wf, "completed", "failed")["status"] == "failed"
        runs = {r["path"]: r for r in client.get(f"/api/workflows/{wf}/nodes").json()["items"]}
        assert runs["c"]["status"] == "failed" and runs["c"]["error"]
        assert "root:" not in str(runs["c"])
        assert client.get("/health").status_code == 200
    assert not seen  # the listener saw no connection


def test_an_http_node_goes_nowhere_it_is_not_allowed_and_keeps_secrets(server, listener):
    port, seen = listener
    node = {**n("h", "http", url=f"http://127.0.0.1:{port}/x?key={{{{ env.FOREMAN_TEST_FLOW_TOKEN }}}}",
                headers={"Authorization": "Bearer {{ env.FOREMAN_TEST_FLOW_TOKEN }}"}), "onError": "continue"}
    named = {**n("l", "http", url=f"http://localhost:{port}/y"), "onError": "continue"}
    definition = {"name": "requests", "nodes": [n("start", "start"), node, named, n("end", "end")],
                  "edges": [e("start", "h"), e("start", "l"), e("h", "end"), e("l", "end")],
                  "outputs": {"out": "{{ h.output }}{{ l.output }}"}}
    with server.client() as client:
        flow = client.post("/api/flows", json=definition)
        assert flow.status_code == 201, flow.text
        wf = run_flow(client, flow.json()["id"], {})
        assert wait_status(client, wf, "completed", "failed")["status"] == "completed"
        runs = {r["path"]: r for r in client.get(f"/api/workflows/{wf}/nodes").json()["items"]}
        assert runs["h"]["status"] == "failed" and "127.0.0.1" in runs["h"]["error"]
        assert runs["l"]["status"] == "failed"  # allowed by name, but it resolves to loopback: refused
        everything = client.get(f"/api/workflows/{wf}").text + client.get(f"/api/workflows/{wf}/nodes").text
        assert SECRET not in everything and "[secret]" in runs["h"]["input"]["url"]
    assert not seen
    leaked = {"name": "leak", "nodes": [n("start", "start"), n("t", "template", text="{{ env.FOREMAN_TEST_FLOW_TOKEN }}"),
                                        n("end", "end")], "edges": [e("start", "t"), e("t", "end")]}
    with server.client() as client:
        refused = client.post("/api/flows", json=leaked)
        assert refused.status_code == 400 and "http nodes only" in refused.text
