"""The page's figures for issue 48, in Debian's chromium against the live service (offline model):
the time from opening a 50-node flow to its graph drawn (median of 9), the page's JavaScript size on
main (55ba000) and here, and axe-core's accessibility violations on the chat page before and after
and on the Flows view and a flow run.

    npm install --prefix /tmp/page-axe axe-core@4
    python bench/page_figures.py [--axe /tmp/page-axe/node_modules/axe-core/axe.min.js]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

from tests.harness import LiveServer, settings_for

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "55ba000"
LAST = "abc55d1"  # issue 48's first part, before the diff view, map boxes, reruns with the form and deadlines
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def fifty_nodes() -> dict:
    """start, 12 layers of 4 templates (each reading one node of the layer above), a condition, end."""
    nodes = [{"id": "start", "type": "start", "config": {}}]
    edges = []
    above = ["start"]
    for layer in range(12):
        row = []
        for i in range(4):
            node_id = f"l{layer}n{i}"
            parent = above[i % len(above)]
            text = "{{ inputs.word }}" if parent == "start" else "{{ " + parent + ".output }}!"
            nodes.append({"id": node_id, "type": "template", "name": f"Step {layer}.{i}", "config": {"text": text}})
            edges.append({"source": parent, "target": node_id})
            row.append(node_id)
        above = row
    nodes.append({"id": "end", "type": "end", "config": {}})
    edges += [{"source": node_id, "target": "end"} for node_id in above]
    return {"name": "Fifty nodes", "inputs": {"word": {"type": "string"}}, "nodes": nodes, "edges": edges,
            "outputs": {"last": "{{ l11n0.output }}"}}


def js_bytes(commit: str | None) -> int:
    if commit is None:
        return sum(p.stat().st_size for p in (ROOT / "app/web/static").glob("*.js"))
    names = subprocess.run(["git", "ls-tree", "--name-only", f"{commit}:app/web/static"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    return sum(len(subprocess.run(["git", "show", f"{commit}:app/web/static/{n}"], cwd=ROOT, check=True,
                                  capture_output=True).stdout) for n in names if n.endswith(".js"))


def serve_before(context, tmp: Path, commit: str = BEFORE) -> None:
    """The page as `commit` had it: its index.html and static files in place of this branch's."""
    (tmp / commit).mkdir(exist_ok=True)
    subprocess.run(f"git archive {commit} app/web/static | tar -x -C {tmp / commit}", shell=True, cwd=ROOT, check=True)
    static = tmp / commit / "app/web/static"

    def fulfil(route, request):
        path = request.url.split("://", 1)[1].split("/", 1)[1].split("#")[0]
        name = "index.html" if path in ("", "/") else path.removeprefix("static/")
        kind = {"js": "text/javascript", "css": "text/css", "html": "text/html", "svg": "image/svg+xml"}
        route.fulfill(body=(static / name).read_bytes(), content_type=kind[name.rsplit(".", 1)[1]])

    context.route(lambda url: "/api/" not in url, fulfil)


def with_patience(new_context):
    def patient(**options):
        context = new_context(**options)
        context.set_default_timeout(180_000)
        return context
    return patient


def violations(page, axe: str) -> list[tuple[str, str, int]]:
    page.add_script_tag(content=Path(axe).read_text())
    found = page.evaluate("async () => (await axe.run(document)).violations.map(v => [v.id, v.impact, v.nodes.length, v.nodes.slice(0, 2).map(n => n.html.slice(0, 160))])")
    return [tuple(v) for v in found]  # (rule, impact, how many elements, the first two)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--axe", default="/tmp/page-axe/node_modules/axe-core/axe.min.js")
    axe = parser.parse_args().axe
    with tempfile.TemporaryDirectory() as tmp, LiveServer(settings_for(Path(tmp))) as live, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS, headless=True)
        browser.new_context = with_patience(browser.new_context)  # rounds are slow on a loaded 2-core machine
        flow = httpx.post(live.url + "/api/flows", json=fifty_nodes(), timeout=30).json()
        started = httpx.post(live.url + "/api/workflows/start", json={"prompt": "Say hello"}, timeout=30).json()
        context = browser.new_context(viewport={"width": 1280, "height": 1000}, bypass_csp=True)
        page = context.new_page()
        page.goto(live.url + "/#/flows")
        page.wait_for_selector("#flow-items a")
        last_context = browser.new_context(viewport={"width": 1280, "height": 1000})
        serve_before(last_context, Path(tmp), LAST)  # the page before this change, timed in turn with it
        last_page = last_context.new_page()
        last_page.goto(live.url + "/#/flows")
        last_page.wait_for_selector("#flow-items a")
        times, last_times = [], []
        opening = """async (id) => {
                location.hash = '#/flows';
                await new Promise((r) => setTimeout(r, 50));
                const t0 = performance.now();
                const drawn = new Promise((r) => document.addEventListener('flow-drawn', r, { once: true }));
                location.hash = '#/flows/' + id;
                await drawn;
                return performance.now() - t0; }"""
        for _ in range(9):
            times.append(page.evaluate(opening, flow["id"]))
            last_times.append(last_page.evaluate(opening, flow["id"]))
        assert page.locator("g.node").count() == 50
        print(f"50-node flow opened to graph drawn: median {statistics.median(times):.1f} ms "
              f"(min {min(times):.1f}, max {max(times):.1f}, n={len(times)}; includes GET flow and versions)")
        print(f"the same at {LAST}, timed in turn: median {statistics.median(last_times):.1f} ms; ratio here / there "
              f"{statistics.median(times) / statistics.median(last_times):.2f}")
        before, after = js_bytes(BEFORE), js_bytes(None)
        print(f"page JavaScript: {before} bytes on main ({BEFORE}), {after} here, ratio {after / before:.2f}")
        last = js_bytes(LAST)
        print(f"page JavaScript: {last} bytes at {LAST} (before the diff view, the boxes, reruns and deadlines), "
              f"{after} here, ratio {after / last:.2f}")
        page.screenshot(path=str(Path(tmp).parent / "page-fifty.png"))
        after_flows = violations(page, axe)
        page.goto(f"{live.url}/#/w/{started['id']}")
        page.wait_for_selector("li.answer")
        after_chat = violations(page, axe)
        old = browser.new_context(viewport={"width": 1280, "height": 1000}, bypass_csp=True)
        serve_before(old, Path(tmp))
        old_page = old.new_page()
        old_page.goto(f"{live.url}/#/w/{started['id']}")
        old_page.wait_for_selector("li.answer")
        before_chat = violations(old_page, axe)
        print(f"axe-core violations, chat page: before {before_chat}, after {after_chat}")
        print(f"axe-core violations, Flows view (50-node graph): {after_flows}")
        ran = httpx.post(live.url + "/api/workflows/start", timeout=30,
                         json={"flow": {"id": flow["id"], "version": "draft", "inputs": {"word": "hi"}}}).json()
        page.goto(f"{live.url}/#/w/{ran['id']}")
        page.wait_for_selector("g.node.succeeded")
        print(f"axe-core violations, a run of it beside the chat: {violations(page, axe)}")
        browser.close()


if __name__ == "__main__":
    main()
