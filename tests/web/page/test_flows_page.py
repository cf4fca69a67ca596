"""Flows on the page (issue 48), in Debian's chromium against the live service: the Flows view (list,
search, rename, publish, delete), the graph drawn as SVG with every node's name, a run from the form
built from the flow's inputs with the graph beside the chat and each node's state live, a human node's
wait answered by its action's button, a node's output on click, and the draft edited without JSON
with a validation problem shown on its node; at 1280 and 390 px, with screenshots."""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path

import httpx
import pytest

from tests.web.page.test_chat_defects import at_width, box
from tests.web.page.test_chat_page import browser, expect, messages, screenshot_on_failure, server  # noqa: F401

SHOTS = os.environ.get("FOREMAN_FLOW_SCREENSHOTS")
DIFY = Path(__file__).parents[2] / "agents/flows/dify/translation_workflow.yml"  # a Dify DSL app  # a folder: the screenshots for docs/


def n(id: str, type: str, **config):
    return {"id": id, "type": type, "config": config}


def e(source: str, target: str, branch: str | None = None):
    return {"source": source, "target": target, **({"branch": branch} if branch else {})}


GATED = {
    "name": "Greet and ask", "description": "Greets, asks before sending, numbers the items",
    "inputs": {"word": {"type": "string"}, "times": {"type": "number", "default": 2},
               "loud": {"type": "boolean", "default": False}, "items": {"type": "list", "default": ["a", "b", "c"]}},
    "nodes": [n("start", "start"), n("hello", "template", text="Hello {{ inputs.word }}"),
              n("ask", "human", message="Send {{ hello.output }}?", actions=["send", "drop"]),
              n("send", "template", text="sent {{ hello.output }}"), n("drop", "template", text="dropped"),
              n("each", "map", items="inputs.items",
                body={"id": "line", "type": "template", "config": {"text": "{{ index }}={{ item }}"}}),
              n("end", "end")],
    "edges": [e("start", "hello"), e("hello", "ask"), e("ask", "send", "send"), e("ask", "drop", "drop"),
              e("start", "each"), e("send", "end"), e("drop", "end"), e("each", "end")],
    "outputs": {"answer": "{{ send.output }}{{ drop.output }}", "list": "{{ each.output | join(' ') }}"},
}


def node(page, scope, node_id: str):
    return scope.locator(f"g.node[data-node='{node_id}']")


def shot(page, name: str, showing=None) -> None:
    if SHOTS:
        if showing is None:
            page.evaluate("document.querySelector('.flow-detail').scrollTop = 0")
        else:
            showing.evaluate("e => e.scrollIntoView({block: 'end'})")
        page.screenshot(path=str(Path(SHOTS) / name))


def test_a_person_runs_a_flow_answers_its_human_node_and_edits_its_draft(browser, server, tmp_path):
    flow = httpx.post(server.url + "/api/flows", json=GATED, timeout=30).json()
    context, page = at_width(browser, f"{server.url}/#/flows", 1280)
    try:
        with screenshot_on_failure(page, tmp_path / "flows.png"):
            flows = page.get_by_role("list", name="Your flows")
            expect(flows.get_by_role("link", name="Greet and ask")).to_be_visible()
            page.get_by_role("searchbox", name="Search flows").fill("nothing like it")
            expect(flows.get_by_role("link")).to_have_count(0)
            page.get_by_role("searchbox", name="Search flows").fill("greet")
            flows.get_by_role("link", name="Greet and ask").click()
            graph = page.get_by_role("group", name="Graph of Greet and ask")
            for node_id in ["start", "hello", "ask", "send", "drop", "end"]:
                expect(node(page, graph, node_id)).to_have_attribute("aria-label", re.compile(f"^[a-z]+ {node_id}$"))
            # A map is a box drawn around its body.
            expect(node(page, graph, "each")).to_have_attribute("aria-label", "map each body: template line")
            expect(node(page, graph, "each").locator("rect.body")).to_have_count(1)
            expect(graph.locator("text.branch", has_text="drop")).to_have_count(1)
            # Rename (PUT of the draft with the new name), then publish with a name and a comment.
            page.get_by_role("button", name="Rename flow").click()
            page.get_by_role("textbox", name="Flow name").fill("Greeter")
            page.get_by_role("button", name="Save name").click()
            expect(page.get_by_role("heading", name="Greeter")).to_be_visible()
            expect(flows.get_by_role("link", name="Greeter")).to_be_visible()
            page.get_by_role("textbox", name="Version name").fill("first")
            page.get_by_role("textbox", name="Version comment").fill("as written")
            page.get_by_role("button", name="Publish the draft").click()
            versions = page.get_by_role("list", name="Published versions")
            expect(versions.get_by_role("listitem")).to_have_count(1)
            expect(versions).to_contain_text("Version 1 first")
            expect(page.get_by_role("combobox", name="Version")).to_have_value("1")  # the latest published
            shot(page, "flows-1280.png")
            # Run it from the form built from its inputs.
            form = page.get_by_role("form", name="Run this flow")
            form.get_by_role("textbox", name="word").fill("world")
            expect(form.get_by_role("spinbutton", name="times")).to_have_value("2")
            form.get_by_role("switch", name="loud").check()
            expect(form.get_by_role("textbox", name="items")).to_have_value("a\nb\nc")
            form.get_by_role("button", name="Run flow").click()
            expect(page).to_have_url(re.compile(r"#/w/"))
            run = page.get_by_role("group", name="Run of Greeter")
            wait = page.get_by_role("region", name="The flow waits for you")
            expect(wait).to_contain_text("Send Hello world?")
            expect(node(page, run, "ask")).to_have_attribute("aria-label", re.compile("waiting for you"))
            expect(node(page, run, "hello")).to_have_attribute("aria-label", re.compile("done"))
            expect(node(page, run, "each")).to_have_attribute("aria-label", re.compile("done 3/3"))
            shot(page, "flow-run-1280.png")
            wait.get_by_role("button", name="send").click()
            expect(page.locator("#status")).to_contain_text("completed")
            expect(node(page, run, "send")).to_have_attribute("aria-label", re.compile("done"))
            expect(node(page, run, "drop")).to_have_attribute("aria-label", re.compile("skipped"))
            expect(wait).to_be_hidden()
            expect(messages(page).last).to_contain_text("sent Hello world")
            node(page, run, "hello").click()
            expect(page.get_by_role("region", name="Node details")).to_contain_text("Hello world")
            # A node can be run again from (the server reruns flows); a run that did not fail has no failure
            # to go on from.
            expect(page.get_by_role("button", name="Rerun from hello")).to_be_visible()
            expect(page.get_by_role("button", name="Rerun from the failure")).to_be_hidden()
            # Edit the draft without JSON: a prompt with an undefined variable is refused on its node.
            page.get_by_role("link", name="Flows").click()
            page.get_by_role("list", name="Your flows").get_by_role("link", name="Greeter").click()
            graph = page.get_by_role("group", name="Graph of Greeter")
            expect(page.get_by_label("Import a flow (YAML, JSON or a Dify DSL file)")).to_be_attached()
            node(page, graph, "hello").click()
            text = page.get_by_role("textbox", name="Text of hello")
            text.fill("Hello {{ inputs.nobody }}")
            page.get_by_role("button", name="Save draft").click()
            expect(page.get_by_role("list", name="Problems")).to_contain_text("hello")
            expect(node(page, graph, "hello")).to_have_attribute("aria-label", re.compile("problem"))
            expect(page.get_by_role("textbox", name="Draft as JSON")).to_have_value(re.compile("inputs.nobody"))
            text.fill("Hi {{ inputs.word }}")
            page.get_by_role("button", name="Save draft").click()
            expect(page.get_by_role("alert")).to_contain_text("The draft was saved.")
            saved = httpx.get(f"{server.url}/api/flows/{flow['id']}", timeout=30).json()
            assert saved["draft"]["nodes"][1]["config"]["text"] == "Hi {{ inputs.word }}"
            page.get_by_role("button", name="Delete flow").click()
            expect(page.get_by_role("list", name="Your flows").get_by_role("link", name="Greeter")).to_have_count(0)
            assert page.errors == []
    finally:
        context.close()


def publish(server, flow: dict, name: str) -> None:
    httpx.post(f"{server.url}/api/flows/{flow['id']}/versions", json={"name": name}, timeout=30).raise_for_status()


def second_version(name: str) -> dict:
    """GATED as changed for its version 2: greets with "Hi", notes it in a new node, asks with a deadline."""
    draft = copy.deepcopy({**GATED, "name": name})
    nodes = {x["id"]: x for x in draft["nodes"]}
    nodes["hello"]["config"]["text"] = "Hi {{ inputs.word }}"
    nodes["ask"]["config"] |= {"timeoutSeconds": 3600, "defaultAction": "drop"}
    draft["nodes"].insert(2, n("note", "template", text="noted"))
    draft["edges"] += [e("hello", "note"), e("note", "end")]
    return draft


def changes_between(page, before: str, after: str):
    form = page.get_by_role("form", name="Compare versions")
    form.get_by_role("combobox", name="From").select_option(before)
    form.get_by_role("combobox", name="To").select_option(after)
    form.get_by_role("button", name="Show changes").click()
    return form.locator("section.changes")


def test_two_versions_compared_side_by_side_and_a_run_rerun_from_a_node(browser, server, tmp_path):
    flow = httpx.post(server.url + "/api/flows", json={**GATED, "name": "Versioned"}, timeout=30).json()
    publish(server, flow, "first")
    httpx.put(f"{server.url}/api/flows/{flow['id']}", json=second_version("Versioned"), timeout=30).raise_for_status()
    publish(server, flow, "second")
    context, page = at_width(browser, f"{server.url}/#/flows/{flow['id']}", 1280)
    try:
        with screenshot_on_failure(page, tmp_path / "versions.png"):
            expect(page.get_by_role("list", name="Published versions")).to_contain_text("Version 2 second runs use this one")
            form = page.get_by_role("form", name="Compare versions")
            expect(form.get_by_role("combobox", name="From")).to_have_value("1")  # the two newest by default
            expect(form.get_by_role("combobox", name="To")).to_have_value("2")
            form.get_by_role("button", name="Show changes").click()
            changes = page.get_by_role("list", name="Changes from version 1 to version 2")
            for line in ["Node note added", "Node hello changed: text", "Node ask changed: defaultAction, timeoutSeconds",
                         "Edge hello → note added", "Edge note → end added"]:
                expect(changes.get_by_role("listitem").filter(has_text=line)).to_have_count(1)
            text = changes.get_by_role("table", name="text of node hello")
            old, new = text.locator("td.old"), text.locator("td.new")
            expect(old).to_have_text("Hello {{ inputs.word }}")
            expect(new).to_have_text("Hi {{ inputs.word }}")
            assert box(old)["x"] + box(old)["width"] <= box(new)["x"] and box(old)["y"] == box(new)["y"]  # side by side
            shot(page, "flow-diff-1280.png", changes)
            expect(changes_between(page, "2", "draft")).to_contain_text("No changes: version 2 and the draft are the same.")
            # Restore version 1 into the draft; export it (a download) and import the file back as a new flow.
            page.get_by_role("button", name="Restore version 1").click()
            expect(page.get_by_role("alert")).to_contain_text("Version 1 is the draft again.")
            expect(changes_between(page, "1", "draft")).to_contain_text("No changes: version 1 and the draft are the same.")
            with page.expect_download() as download:
                page.get_by_role("button", name="Export version 1").click()
            assert download.value.suggested_filename == "Versioned-v1.yaml"
            exported = tmp_path / "Versioned-v1.yaml"
            download.value.save_as(exported)
            page.get_by_label("Import a flow (YAML, JSON or a Dify DSL file)").set_input_files(str(exported))
            expect(page).not_to_have_url(re.compile(f"#/flows/{flow['id']}$"))
            expect(page.get_by_role("group", name="Graph of Versioned").locator("g.node[data-node='hello']")).to_be_visible()
            page.get_by_label("Import a flow (YAML, JSON or a Dify DSL file)").set_input_files(str(DIFY))
            expect(page.get_by_role("alert")).to_contain_text(
                re.compile(r"Imported “translation_workflow” from translation_workflow.yml \(a Dify app, \d+ nodes\)"))
            expect(page.get_by_role("group", name="Graph of translation_workflow")).to_be_visible()
            page.goto(f"{server.url}/#/flows/{flow['id']}")
            # A run of version 2 waits at its human node, which says when it takes its default.
            page.get_by_role("form", name="Run this flow").get_by_role("textbox", name="word").fill("there")
            page.get_by_role("button", name="Run flow").click()
            wait = page.get_by_role("region", name="The flow waits for you")
            expect(wait).to_contain_text("Send Hi there?")
            expect(wait).to_contain_text(re.compile(r"Takes “drop” at \d{1,2}:\d\d.* \(in (1 h 0 min|59 min \d+ s)\) "
                                                    r"if you do not decide\."))
            wait.get_by_role("button", name="send").click()
            expect(page.locator("#status")).to_contain_text("completed")
            run = page.get_by_role("group", name="Run of Versioned")
            # Rerun from a node: the inputs form, filled with the run's, starts round 2 from that node.
            node(page, run, "hello").click()
            page.get_by_role("button", name="Rerun from hello").click()
            again = page.get_by_role("form", name="Rerun from hello")
            expect(again).to_contain_text("The new round starts at node hello")
            expect(again.get_by_role("textbox", name="word")).to_have_value("there")
            expect(again.get_by_role("spinbutton", name="times")).to_have_value("2")
            expect(again.get_by_role("textbox", name="items")).to_have_value("a\nb\nc")
            again.get_by_role("textbox", name="word").fill("again")
            again.get_by_role("button", name="Start the new round").click()
            expect(page.get_by_role("alert")).to_contain_text("Round 2 runs the flow again from node hello.")
            expect(messages(page).filter(has_text="Rerun of round 1 from node hello")).to_have_count(1)
            expect(wait).to_contain_text("Send Hi again?")
            expect(again).to_be_hidden()
            wait.get_by_role("button", name="drop").click()
            expect(page.locator("#status")).to_contain_text("completed")
            expect(messages(page).last).to_contain_text("dropped")
            runs = httpx.get(f"{server.url}/api/workflows/{page.url.split('#/w/')[1]}/nodes?round=2", timeout=30).json()
            reused = {r["nodeId"] for r in runs["items"] if r.get("reusedFrom")}
            assert "each" in reused and "hello" not in reused  # the map before it ran once; hello ran again
            assert page.errors == []
    finally:
        context.close()


DIVIDER = {
    "name": "Divider", "inputs": {"n": {"type": "number", "default": 0}},
    "nodes": [n("start", "start"), n("half", "template", text="{{ 1 / inputs.n }}"),
              n("ask", "human", message="Keep {{ half.output }}?", actions=["keep", "drop"], timeoutSeconds=15,
                defaultAction="keep"),
              n("keep", "template", text="kept {{ half.output }}"), n("drop", "template", text="dropped"), n("end", "end")],
    "edges": [e("start", "half"), e("half", "ask"), e("ask", "keep", "keep"), e("ask", "drop", "drop"),
              e("keep", "end"), e("drop", "end")],
    "outputs": {"answer": "{{ keep.output }}{{ drop.output }}"},
}


def test_a_failed_run_reruns_from_the_failure_and_a_human_node_takes_its_default_on_a_tablet(browser, server, tmp_path):
    flow = httpx.post(server.url + "/api/flows", json=DIVIDER, timeout=30).json()
    context, page = at_width(browser, f"{server.url}/#/flows/{flow['id']}", 768)
    try:
        with screenshot_on_failure(page, tmp_path / "tablet.png"):
            page.get_by_role("button", name="Run flow").click()  # n = 0: the division fails
            expect(page.locator("#status")).to_contain_text("failed")
            run = page.get_by_role("group", name="Run of Divider")
            expect(node(page, run, "half")).to_have_attribute("aria-label", re.compile("failed"))
            page.get_by_role("button", name="Rerun from the failure").click()
            again = page.get_by_role("form", name="Rerun from the failure (half)")
            expect(again).to_contain_text("The new round starts at node half")
            expect(again.get_by_role("spinbutton", name="n")).to_have_value("0")
            again.get_by_role("spinbutton", name="n").fill("4")
            again.get_by_role("button", name="Start the new round").click()
            expect(page.get_by_role("alert")).to_contain_text("Round 2 runs the flow again from node half.")
            wait = page.get_by_role("region", name="The flow waits for you")
            expect(wait).to_contain_text("Keep 0.25?")
            expect(wait).to_contain_text(re.compile(r"Takes “keep” at \d{1,2}:\d\d.* \(in \d+ s\)"))
            assert page.evaluate("document.documentElement.scrollWidth") <= 768
            # Nobody decides: the node takes "keep" when its 15 s are up, and the round goes on.
            expect(page.locator("#status")).to_contain_text("completed")
            expect(messages(page).last).to_contain_text("kept 0.25")
            expect(wait).to_be_hidden()
            expect(node(page, run, "ask")).to_have_attribute("aria-label", re.compile("done"))
            assert page.errors == []
    finally:
        context.close()


TWO_ASKS = {
    "name": "Two asks",
    "nodes": [n("start", "start"), n("a", "human", message="Approve A?", actions=["yes", "no"]),
              n("b", "human", message="Approve B?", actions=["yes", "no"]),
              n("ya", "template", text="A yes"), n("na", "template", text="A no"),
              n("yb", "template", text="B yes"), n("nb", "template", text="B no"), n("end", "end")],
    "edges": [e("start", "a"), e("start", "b"), e("a", "ya", "yes"), e("a", "na", "no"), e("b", "yb", "yes"),
              e("b", "nb", "no"), e("ya", "end"), e("na", "end"), e("yb", "end"), e("nb", "end")],
    "outputs": {"answer": "{{ ya.output }}{{ na.output }} / {{ yb.output }}{{ nb.output }}"},
}


def test_two_human_nodes_waiting_at_once_are_each_answered_by_their_own_buttons(browser, server, tmp_path):
    flow = httpx.post(server.url + "/api/flows", json=TWO_ASKS, timeout=30).json()
    context, page = at_width(browser, f"{server.url}/#/flows/{flow['id']}", 1280)
    try:
        with screenshot_on_failure(page, tmp_path / "two.png"):
            page.get_by_role("button", name="Run flow").click()
            wait = page.get_by_role("region", name="The flow waits for you")
            expect(wait).to_contain_text("Approve A?")
            expect(wait).to_contain_text("Approve B?")
            run = page.get_by_role("group", name="Run of Two asks")
            for node_id in ["a", "b"]:
                expect(node(page, run, node_id)).to_have_attribute("aria-label", re.compile("waiting for you"))
            wait.get_by_role("button", name="no (b)", exact=True).click()  # the second first
            expect(wait).not_to_contain_text("Approve B?")
            expect(wait).to_contain_text("Approve A?")
            wait.get_by_role("button", name="yes", exact=True).click()  # the one left: its buttons say only the action
            expect(page.locator("#status")).to_contain_text("completed")
            expect(messages(page).last).to_contain_text("A yes / B no")
            assert page.errors == []
    finally:
        context.close()


COUNTER = {
    "name": "File counter", "inputs": {"docs": {"type": "files"}},
    "nodes": [n("start", "start"), n("count", "template", text="{{ inputs.docs | length }} file(s)"), n("end", "end")],
    "edges": [e("start", "count"), e("count", "end")],
    "outputs": {"answer": "{{ count.output }}"},
}


def test_a_run_picks_its_files_from_a_conversation_on_a_phone(browser, server, tmp_path):
    uploaded = httpx.post(server.url + "/api/files", timeout=60,
                          files={"files": ("q3_notes.txt", b"Sales rose in the third quarter.", "text/plain")}).json()
    talk = httpx.post(server.url + "/api/workflows/start", timeout=60,
                      json={"prompt": "Summarise the notes", "listFileId": [uploaded[0]["id"]]}).json()
    flow = httpx.post(server.url + "/api/flows", json=COUNTER, timeout=30).json()
    context, page = at_width(browser, f"{server.url}/#/flows/{flow['id']}", 390)
    try:
        with screenshot_on_failure(page, tmp_path / "pick.png"):
            form = page.get_by_role("form", name="Run this flow")
            form.get_by_text("Pick files for docs from a conversation").click()
            choose = form.get_by_role("combobox", name="Conversation for docs")
            expect(choose.locator(f"option[value='{talk['id']}']")).to_have_count(1)
            choose.select_option(talk["id"])
            form.get_by_role("group", name="Files for docs").get_by_role("checkbox", name="q3_notes.txt").check()
            form.get_by_role("button", name="Run flow").click()
            expect(page.locator("#status")).to_contain_text("completed")
            expect(messages(page).last).to_contain_text("1 file(s)")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            assert page.errors == []
    finally:
        context.close()


def test_the_flows_view_and_a_run_fit_a_phone(browser, server, tmp_path):
    flow = httpx.post(server.url + "/api/flows", json={**GATED, "name": "Phone flow"}, timeout=30).json()
    publish(server, flow, "v1")
    httpx.put(f"{server.url}/api/flows/{flow['id']}", json=second_version("Phone flow"), timeout=30).raise_for_status()
    context, page = at_width(browser, f"{server.url}/#/flows/{flow['id']}", 390)
    try:
        with screenshot_on_failure(page, tmp_path / "phone.png"):
            graph = page.get_by_role("group", name="Graph of Phone flow")
            expect(node(page, graph, "ask")).to_be_visible()
            assert box_width(graph) <= 390
            expect(page.get_by_role("combobox", name="Version")).to_have_value("1")
            shot(page, "flows-390.png")
            changes = changes_between(page, "1", "draft")
            expect(changes.get_by_role("table", name="text of node hello").locator("td.new")).to_have_text(
                "Hi {{ inputs.word }}")
            assert box_width(changes) <= 390
            page.get_by_role("form", name="Run this flow").get_by_role("textbox", name="word").fill("phone")
            page.get_by_role("button", name="Run flow").click()
            wait = page.get_by_role("region", name="The flow waits for you")
            expect(wait).to_contain_text("Send Hello phone?")
            expect(node(page, page.get_by_role("group", name="Run of Phone flow"), "ask")).to_have_attribute(
                "aria-label", re.compile("waiting for you"))
            wait.scroll_into_view_if_needed()
            shot(page, "flow-run-390.png")
            wait.get_by_role("button", name="drop").click()
            expect(page.locator("#status")).to_contain_text("completed")
            expect(messages(page).last).to_contain_text("dropped")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
            assert page.errors == []
    finally:
        context.close()


def box_width(locator) -> float:
    found = locator.bounding_box()
    assert found
    return found["x"] + found["width"]


AXE = Path(os.environ.get("FOREMAN_AXE", "/tmp/page-axe/node_modules/axe-core/axe.min.js"))


def test_axe_core_finds_no_violation_on_the_flows_view_and_a_run(browser, server, tmp_path):
    """axe-core (npm install --prefix /tmp/page-axe axe-core@4, or FOREMAN_AXE=<its axe.min.js>) in the page."""
    if not AXE.exists():
        pytest.skip(f"axe-core is not installed at {AXE}")
    flow = httpx.post(server.url + "/api/flows", json={**GATED, "name": "Checked flow"}, timeout=30).json()
    publish(server, flow, "first")
    httpx.put(f"{server.url}/api/flows/{flow['id']}", json=second_version("Checked flow"), timeout=30).raise_for_status()
    publish(server, flow, "second")
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, bypass_csp=True)  # to inject axe
    page = context.new_page()
    try:
        page.goto(f"{server.url}/#/flows/{flow['id']}")
        expect(page.get_by_role("group", name="Graph of Checked flow")).to_be_visible()

        def violations() -> list:
            page.add_script_tag(content=AXE.read_text())
            return page.evaluate("async () => (await axe.run(document)).violations.map(v => [v.id, v.nodes.length])")

        assert violations() == []
        changes = changes_between(page, "1", "2")  # the changes side by side
        expect(changes.get_by_role("table", name="text of node hello")).to_be_visible()
        assert violations() == []
        page.get_by_role("form", name="Run this flow").get_by_role("textbox", name="word").fill("axe")
        page.get_by_role("button", name="Run flow").click()
        wait = page.get_by_role("region", name="The flow waits for you")
        expect(wait).to_contain_text("Takes “drop” at")  # with its deadline
        assert violations() == []
        wait.get_by_role("button", name="send").click()
        expect(page.locator("#status")).to_contain_text("completed")
        node(page, page.get_by_role("group", name="Run of Checked flow"), "hello").click()
        page.get_by_role("button", name="Rerun from hello").click()
        expect(page.get_by_role("form", name="Rerun from hello")).to_be_visible()  # the rerun's inputs form
        assert violations() == []
    finally:
        context.close()
