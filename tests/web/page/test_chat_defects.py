"""What a new user met on the chat page (issue 48), each in Debian's chromium against the live service:
a long title at tablet and phone widths, underscores in file names, banners that outlived what they
said, a stopped round's bar, a cut table preview, and offline
messages put on the page sentence by sentence."""

from __future__ import annotations

import re
import shutil

import httpx
import pytest

from tests.corpus import CORPUS
from tests.web.page.test_chat_page import (  # noqa: F401  (fixtures)
    TIMEOUT,
    answers,
    browser,
    expect,
    messages,
    page,
    screenshot_on_failure,
    send,
    server,
)
from tests.web.page.test_review_page import plan_waits, review_on

LONG = ("Quarterly revenue reconciliation across every regional subsidiary with the auditors' "
        "comments")[:80]


def at_width(browser, url: str, width: int):
    context = browser.new_context(viewport={"width": width, "height": 844 if width < 500 else 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    expect.set_options(timeout=TIMEOUT)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(url)
    return context, page


def box(locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found, f"{locator} has no box"
    return found


def boxes(page, **selectors: str) -> dict[str, dict[str, float]]:
    """The boxes of several elements read from one layout (one script run): boxes read one after the
    other can come from two layouts when a status or a message arrives between them."""
    found = page.evaluate("""(selectors) => Object.fromEntries(Object.entries(selectors).map(([name, css]) => {
        const rect = document.querySelector(css)?.getBoundingClientRect();
        return [name, rect && { x: rect.x, y: rect.y, width: rect.width, height: rect.height }];
    }))""", selectors)
    missing = [name for name, rect in found.items() if not rect]
    assert not missing, f"no box for {missing}"
    return found


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


@pytest.mark.parametrize("width", [1280, 768, 390])
def test_a_long_title_stays_one_line_and_leaves_the_messages_their_width(browser, server, tmp_path, width):
    started = httpx.post(server.url + "/api/workflows/start", json={"prompt": "Say hello"}, timeout=30).json()
    httpx.patch(f"{server.url}/api/workflows/{started['id']}", json={"name": LONG}, timeout=30).raise_for_status()
    context, page = at_width(browser, f"{server.url}/#/w/{started['id']}", width)
    try:
        with screenshot_on_failure(page, tmp_path / f"title-{width}.png"):
            title = page.get_by_role("heading", name=LONG[:30], exact=False)
            expect(title).to_have_attribute("title", LONG)
            expect(answers(page)).to_have_count(1)
            expect(page.locator("#status")).to_have_text(re.compile(r"^completed"))
            seen = boxes(page, heading="#title", rename="#rename", status="#status", thread="#messages")
            heading, rename, status, thread = (seen[name] for name in ("heading", "rename", "status", "thread"))
            assert heading["height"] < 40, f"the title is {heading['height']} px tall at {width} px"
            assert not overlap(rename, status), f"Rename sits over the status: {seen}"
            assert not overlap(rename, heading), f"Rename sits over the title: {seen}"
            window = page.viewport_size
            assert thread["width"] > 0.8 * min(window["width"], 960) - 272 * (width > 720), thread
            assert thread["height"] > 150, f"the messages get a strip {thread['height']} px tall"
            page.screenshot(path=str(tmp_path / f"title-{width}.png"))
            assert page.errors == []
    finally:
        context.close()


def test_underscores_in_file_names_are_text_never_emphasis(page, server, tmp_path):
    named = tmp_path / "q3_sales_by_region.csv"
    shutil.copy(CORPUS / "testCSV.csv", named)
    with screenshot_on_failure(page, tmp_path / "underscores.png"):
        send(page, "Summarise q3_sales_by_region.csv and a_b_c.docx, then __init__.py; _this_ one is emphasis", named)
        expect(answers(page)).to_have_count(1)
        request = messages(page).first.locator(".body")
        expect(request).to_contain_text("q3_sales_by_region.csv and a_b_c.docx, then __init__.py;")
        expect(request.locator("em")).to_have_text(["this"])
        expect(request.locator("strong")).to_have_count(0)
        mentions = messages(page).filter(has_text="q3_sales_by_region")
        expect(mentions.nth(1)).to_be_visible()  # the plan or the answer names the file too
        assert page.locator(".body em", has_text="sales").count() == 0
        expect(messages(page).filter(has_text="Work plan")).to_have_count(1)
        # The server saves rounds as flows (POST /api/flows {fromRound}): the plan offers it.
        expect(page.locator("button:visible", has_text="Save as flow")).to_have_count(1)
        # Saved (the name prompt taken as offered): what was saved is said, and the flow opens with its graph.
        page.get_by_role("button", name="Save the plan of round 1 as a flow").click()
        expect(page.get_by_role("alert")).to_contain_text(re.compile(r"Saved as the flow “Round 1 plan”: \d+ tasks? \("))
        graph = page.get_by_role("group", name="Graph of Round 1 plan")
        expect(graph.locator("g.node[data-node='start']")).to_be_visible()
        expect(graph.locator("g.node.agent")).not_to_have_count(0)
        assert page.errors == []


def test_a_refused_edit_banner_goes_when_the_corrected_plan_runs(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "banner.png"):
        review_on(page)
        send(page, "Summarise this document", CORPUS / "testCSV.csv")
        panel = plan_waits(page)
        panel.get_by_role("button", name="Edit").click()
        first = panel.get_by_role("list", name="Tasks to run").get_by_role("listitem").first
        task = first.locator("strong").inner_text().removeprefix("Task ")
        agent = panel.get_by_role("textbox", name=f"Agent of task {task}")
        proposed = agent.input_value()
        agent.fill("astrologer")
        panel.get_by_role("button", name="Run this plan").click()
        banner = page.get_by_role("alert").locator(".notice.error")
        expect(banner).to_contain_text("unknown agent 'astrologer'")
        agent.fill(proposed)
        panel.get_by_role("button", name="Run this plan").click()
        expect(page.locator("#status")).to_contain_text("completed · round 1")
        expect(banner).to_have_count(0)  # it spoke of a plan that no longer waits
        assert page.errors == []


def test_a_rejected_round_shows_where_it_stopped_not_100(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "stopped.png"):
        review_on(page)
        send(page, "Summarise this document", CORPUS / "testCSV.csv")
        panel = plan_waits(page)
        reached = page.get_by_role("progressbar", name="Progress").get_attribute("aria-valuenow")
        panel.get_by_role("button", name="Reject").click()
        expect(page.locator("#status")).to_contain_text("stopped")
        bar = page.get_by_role("progressbar", name="Progress")
        expect(bar).to_have_attribute("aria-valuetext", f"{reached}% · stopped")
        expect(page.locator("#progress-text")).to_have_text(f"{reached}% · stopped")
        assert reached != "100"
        page.reload()  # the same, from the logs, when the conversation is opened again
        expect(page.locator("#progress-text")).to_have_text(f"{reached}% · stopped")
        assert page.errors == []


def test_a_cut_table_preview_says_how_many_rows_it_shows(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "preview.png"):
        send(page, "Extract the table as CSV", CORPUS / "stanley-cups.tsv")
        expect(answers(page)).to_have_count(1)
        expect(page.locator(".body", has=page.locator("table"))
               .filter(has_text="rows shown").first).to_contain_text(re.compile(r"the first \d+ of \d+ rows shown"))
        assert page.errors == []


def test_offline_messages_appear_sentence_by_sentence(page, server, tmp_path):
    page.evaluate("""() => {
        window.seen = [];
        new MutationObserver(() => {
            for (const li of document.querySelectorAll("#messages li.message:not(.user)")) {
                window.seen.push([li.dataset.id, li.querySelector('.body').textContent.length,
                                  li.getAttribute('aria-busy')]);
            }
        }).observe(document.getElementById('messages'), { subtree: true, childList: true, characterData: true });
    }""")
    with screenshot_on_failure(page, tmp_path / "sentences.png"):
        send(page, "Summarise this document", CORPUS / "google-doc-document.pdf")
        expect(page.locator("#status")).to_contain_text("completed")
        expect(page.locator("#messages li[aria-busy]")).to_have_count(0)
        final = {li.get_attribute("data-id"): len(li.locator(".body").text_content() or "")
                 for li in page.locator("#messages li.message:not(.user)").all()}
        seen: list[list] = page.evaluate("window.seen")
        grew = {i for i, n, busy in seen if busy == "true" and 0 < n < final.get(i, 0)}
        assert grew, "no message was put on the page a sentence at a time"
        for message_id in grew:
            lengths = [n for i, n, _ in seen if i == message_id]
            assert lengths == sorted(lengths) or lengths[-1] == final[message_id]
        expect(page.get_by_text("writing…")).to_have_count(0)  # nothing pretends a model writes
        assert page.errors == []
