"""A flow's history and files over real HTTP on both databases: publish, edit, publish, read a version, diff
(exact fields), restore, a run that keeps its version through a publish while it waits, export and import
(the same hash, for every flow this module makes), Dify DSL files (real exports, and one written here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from app.config import ApiKey
from tests.harness import LiveServer, settings_for, wait_status
from tests.rounds.test_flow_rounds import GREETING, EchoModel, e, n, run_flow

MODEL = EchoModel()
DIFY = Path(__file__).parent.parent / "agents" / "flows" / "dify"
MADE: list[int] = []  # every flow this module creates: the last test exports and imports each


@pytest.fixture(scope="module")
def server(tmp_path_factory, module_database_url):
    settings = settings_for(tmp_path_factory.mktemp("flow-versions"), module_database_url,
                            api_keys=(ApiKey("alice", 1, 1), ApiKey("bob", 1, 2)))
    with LiveServer(settings, model=MODEL) as live:
        yield live


def create(client, definition: dict[str, Any]) -> int:
    made = client.post("/api/flows", json=definition)
    assert made.status_code == 201, made.text
    MADE.append(made.json()["id"])
    return int(made.json()["id"])


GATED = {"name": "gated", "inputs": {"word": {"type": "string"}},
         "nodes": [n("start", "start"), n("ask", "human", message="Go on with {{ inputs.word }}?", actions=["go"]),
                   n("say", "template", text="v1 says {{ inputs.word }}"), n("end", "end")],
         "edges": [e("start", "ask"), e("ask", "say", "go"), e("say", "end")],
         "outputs": {"out": "{{ say.output }}"}}


def test_publish_edit_publish_then_read_diff_and_restore(server):
    with server.client("alice") as alice, server.client("bob") as bob:
        flow_id = create(alice, GREETING)
        v1 = alice.post(f"/api/flows/{flow_id}/versions", json={"name": "first", "comment": "as made"}).json()
        edited = {**GREETING, "description": "edited",
                  "nodes": [*GREETING["nodes"][:3], n("many", "llm", prompt="MANY: {{ t.output }}", system="terse"),
                            *GREETING["nodes"][4:], n("extra", "template", text="x")],
                  "edges": [*GREETING["edges"], e("start", "extra"), e("extra", "end")],
                  "inputs": {"word": {"type": "string"}, "items": {"type": "list", "default": ["a", "b"]}},
                  "outputs": {**GREETING["outputs"], "more": "{{ extra.output }}"}}
        assert alice.put(f"/api/flows/{flow_id}", json=edited).status_code == 200
        v2 = alice.post(f"/api/flows/{flow_id}/versions", json={"name": "second"}).json()
        assert (v1["version"], v2["version"]) == (1, 2) and v1["hash"] != v2["hash"]

        one = alice.get(f"/api/flows/{flow_id}/versions/1").json()
        assert one["hash"] == v1["hash"] and one["name"] == "first" and one["definition"]["description"] == \
            GREETING["description"]
        assert alice.get(f"/api/flows/{flow_id}/versions/3").json()["code"] == "flow_version_not_found"
        assert bob.get(f"/api/flows/{flow_id}/versions/1").status_code == 404

        changes = alice.get(f"/api/flows/{flow_id}/diff", params={"from": "1", "to": "2"})
        assert changes.status_code == 200, changes.text
        d = changes.json()
        assert d["flow"] == [{"field": "description", "from": GREETING["description"], "to": "edited"}]
        assert d["nodes"]["added"] == ["extra"] and d["nodes"]["removed"] == []
        assert d["nodes"]["changed"] == [{"key": "many", "fields": [
            {"field": "config.prompt", "from": "many: {{ t.output }}", "to": "MANY: {{ t.output }}"},
            {"field": "config.system", "from": None, "to": "terse"}]}]
        assert d["edges"]["added"] == ["start -> extra", "extra -> end"]
        assert d["inputs"]["changed"] == [{"key": "items", "fields": [
            {"field": "default", "from": ["a", "b", "c"], "to": ["a", "b"]}]}]
        assert d["outputs"]["added"] == ["more"]
        for same in (("1", "1"), ("2", "draft"), ("draft", "draft")):
            answer = alice.get(f"/api/flows/{flow_id}/diff", params={"from": same[0], "to": same[1]}).json()
            assert all(not any(answer[s].values()) for s in ("nodes", "edges", "inputs", "outputs"))
            assert answer["flow"] == []
        assert alice.get(f"/api/flows/{flow_id}/diff", params={"from": "9", "to": "1"}).status_code == 404
        assert alice.get(f"/api/flows/{flow_id}/diff", params={"from": "x", "to": "1"}).status_code == 400

        restored = alice.post(f"/api/flows/{flow_id}/restore", json={"version": 1})
        assert restored.status_code == 200, restored.text
        assert restored.json()["hash"] == v1["hash"] and restored.json()["draft"]["description"] == \
            GREETING["description"]
        assert [v["version"] for v in alice.get(f"/api/flows/{flow_id}/versions").json()] == [2, 1]  # kept
        assert alice.post(f"/api/flows/{flow_id}/restore", json={"version": 7}).status_code == 404
        assert bob.post(f"/api/flows/{flow_id}/restore", json={"version": 1}).status_code == 404


def test_a_run_keeps_its_version_through_a_publish_while_it_waits(server):
    with server.client("alice") as alice:
        flow_id = create(alice, GATED)
        alice.post(f"/api/flows/{flow_id}/versions", json={})
        wf = run_flow(alice, flow_id, {"word": "it"}, version=None)
        assert wait_status(alice, wf, "waiting")["waitingFor"]["kind"] == "node"
        changed = {**GATED, "nodes": [*GATED["nodes"][:2], n("say", "template", text="v2 says"), GATED["nodes"][3]]}
        assert alice.put(f"/api/flows/{flow_id}", json=changed).status_code == 200
        assert alice.post(f"/api/flows/{flow_id}/versions", json={}).json()["version"] == 2
        assert alice.post(f"/api/workflows/{wf}/review", json={"decision": "go"}).status_code == 200
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        messages = alice.get(f"/api/workflows/{wf}/messages").json()["items"]
        assert messages[0]["metadata"]["flow"]["version"] == 1
        assert messages[-1]["content"] == "v1 says it"


def test_export_as_yaml_and_json_downloads(server):
    with server.client("alice") as alice:
        flow_id = create(alice, GREETING)
        alice.post(f"/api/flows/{flow_id}/versions", json={})
        as_yaml = alice.get(f"/api/flows/{flow_id}/versions/1", params={"format": "yaml"})
        assert as_yaml.status_code == 200 and as_yaml.headers["content-type"], as_yaml.text[:300]
        assert as_yaml.headers["content-type"].startswith("application/yaml"), as_yaml.text[:300]
        assert 'filename="greeting-v1.yaml"' in as_yaml.headers["content-disposition"]
        assert yaml.safe_load(as_yaml.text)["name"] == "greeting"
        as_json = alice.get(f"/api/flows/{flow_id}/versions/1", params={"format": "json"})
        assert as_json.json()["nodes"][0]["id"] == "start"
        assert alice.get(f"/api/flows/{flow_id}/versions/1", params={"format": "xml"}).status_code == 400


def test_import_refuses_bad_files_naming_the_line(server):
    with server.client("alice") as alice:
        bad = alice.post("/api/flows/import", content=b"name: x\nnodes:\n  - id: a\n   type: b\n",
                         headers={"Content-Type": "application/yaml"})
        assert bad.status_code == 400 and bad.json()["code"] == "bad_import" and "line 4" in bad.json()["detail"]
        deep = alice.post("/api/flows/import", content=("[" * 100 + "]" * 100).encode(),
                          headers={"Content-Type": "application/json"})
        assert deep.status_code == 400 and "deep" in deep.json()["detail"]
        bombs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdef", "bcdefg"))
        bomb = alice.post("/api/flows/import", content=bombs.encode(), headers={"Content-Type": "application/yaml"})
        assert bomb.status_code == 400 and "aliases" in bomb.json()["detail"]
        shape = alice.post("/api/flows/import", content=b"name: 3\n", headers={"Content-Type": "text/plain"})
        assert shape.status_code == 400 and shape.json()["code"] == "invalid_flow"
        media = alice.post("/api/flows/import", content=b"x", headers={"Content-Type": "image/png"})
        assert media.status_code == 415
        text = yaml.safe_dump(GATED)  # raw text with no type it names is taken as YAML too
        made = alice.post("/api/flows/import", content=text.encode(), headers={"Content-Type": "text/plain"})
        assert made.status_code == 201, made.text
        assert made.json()["source"] == "foreman" and made.json()["flow"]["name"] == "gated"
        MADE.append(made.json()["flow"]["id"])


REAL = ["translation_workflow.yml", "runLLMCode.yml", "Artifact.yml", "xiashuo_v2.yml"]


@pytest.mark.parametrize("name", [*REAL, "handwritten_nodes.yml"])
def test_a_dify_app_imports_as_a_flow(server, name):
    with server.client("alice") as alice:
        made = alice.post("/api/flows/import", content=(DIFY / name).read_bytes(),
                          headers={"Content-Type": "application/yaml"})
        assert made.status_code == 201, made.text
        answer = made.json()
        assert answer["source"] == "dify" and answer["imported"] == answer["nodes"] > 0
        MADE.append(answer["flow"]["id"])
        draft = answer["flow"]["draft"]
        assert "{{#" not in str(draft)  # every Dify reference translated
        if name == "handwritten_nodes.yml":
            types = {node["id"]: node["type"] for node in draft["nodes"]}
            assert types == {"start": "start", "n200": "map", "n300": "loop", "n400": "condition", "n500": "human",
                             "n600": "code", "end": "end"}
            assert {(x["source"], x.get("branch")) for x in draft["edges"]} >= {("n400", "true"), ("n400", "default"),
                                                                               ("n500", "approve"), ("n500", "reject")}
            assert draft["outputs"]["fallback"] == "{{ n600.output.result }}"


def test_a_dify_app_whose_nodes_have_no_counterpart_is_refused_whole(server):
    with server.client("alice") as alice:
        before = len(alice.get("/api/flows", params={"limit": 200}).json()["items"])
        for name, node, kind in (("jina_reader_jinja.yml", "1713262010863", "tool"),
                                 ("dify_course_demo.yml", None, "iteration")):
            refused = alice.post("/api/flows/import", content=(DIFY / name).read_bytes(),
                                 headers={"Content-Type": "application/yaml"})
            assert refused.status_code == 400 and refused.json()["code"] == "dify_unsupported"
            assert refused.json()["nodeType"] == kind and kind in refused.json()["detail"]
            if node:
                assert refused.json()["nodeId"] == node and node in refused.json()["detail"]
        assert len(alice.get("/api/flows", params={"limit": 200}).json()["items"]) == before  # nothing half-made


def test_a_dify_import_runs(server):
    """translation_workflow.yml: an if-else on a start variable, then the llm of the branch taken."""
    with server.client("alice") as alice:
        made = alice.post("/api/flows/import", content=(DIFY / "translation_workflow.yml").read_bytes(),
                          headers={"Content-Type": "application/yaml"}).json()["flow"]
        inputs = {name: "Hello" if spec["type"] == "string" else 1 for name, spec in made["draft"]["inputs"].items()
                  if "default" not in spec}
        wf = run_flow(alice, made["id"], inputs)
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed", \
            alice.get(f"/api/workflows/{wf}/messages").json()["items"][-1]["content"]


def test_export_then_import_gives_the_same_hash_for_every_flow_made_here(server):
    assert len(MADE) >= 8
    with server.client("alice") as alice:
        for flow_id in MADE:
            published = alice.post(f"/api/flows/{flow_id}/versions", json={}).json()
            for fmt, media in (("yaml", "application/yaml"), ("json", "application/json")):
                exported = alice.get(f"/api/flows/{flow_id}/versions/{published['version']}", params={"format": fmt})
                assert exported.status_code == 200
                back = alice.post("/api/flows/import", content=exported.content, headers={"Content-Type": media})
                assert back.status_code == 201, back.text
                assert back.json()["flow"]["hash"] == published["hash"], (flow_id, fmt)
