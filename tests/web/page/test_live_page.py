"""The chat page shows a message as the model writes it (a streaming stub): the text grows in a
draft with a caret before the message is complete, and the message replaces it in place."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import LiveServer, plan_of, settings_for
from tests.openai_stub import OpenAIStub, Pace, request_schema
from tests.web.page.test_chat_page import ARGS, CHROMIUM, TIMEOUT, expect, send, sync_api

WORDS = " ".join(f"word{n}" for n in range(150)) + "."


@pytest.fixture(scope="module")
def streaming() -> Iterator[tuple[LiveServer, OpenAIStub]]:
    with OpenAIStub() as stub, pytest.MonkeyPatch.context() as mp:
        mp.setattr(stub, "default", lambda body: json.dumps(plan_of(1, agent="writer")) if request_schema(body)
                   else WORDS)
        stub.pace = Pace(chars=6, delay=0.03)
        with tempfile.TemporaryDirectory() as tmp:
            settings = settings_for(Path(tmp), openai_base_url=stub.base_url, openai_api_key="test-key")
            with LiveServer(settings) as live:
                yield live, stub


def test_the_text_grows_with_a_caret_and_the_message_replaces_it_in_place(streaming):
    live, _stub = streaming
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1100, "height": 600})
        page.set_default_timeout(TIMEOUT)
        expect.set_options(timeout=TIMEOUT)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(live.url + "/")
        page.evaluate("""() => { window.scrolls = []; const thread = document.getElementById("thread");
            thread.addEventListener("scroll", () => window.scrolls.push(
                [thread.scrollTop, thread.scrollHeight, thread.clientHeight])); }""")
        # Each draft's height as its text changes, and each message's height as it replaces its draft.
        page.evaluate("""() => { window.replaced = []; const heights = {};
            new MutationObserver((records) => {
                for (const li of document.querySelectorAll("#messages li.draft")) heights[li.dataset.draft] = li.offsetHeight;
                for (const r of records) for (const gone of r.removedNodes) for (const came of r.addedNodes) {
                    if (gone.dataset && gone.dataset.draft && came.dataset && came.dataset.id)
                        window.replaced.push([came.className, heights[gone.dataset.draft], came.offsetHeight]);
                }
            }).observe(document.getElementById("messages"), { childList: true, subtree: true }); }""")
        send(page, "Write one long note.")
        draft = page.locator("#messages li.draft")
        expect(draft.locator(".caret")).to_be_visible()
        first = len(draft.first.inner_text())
        page.wait_for_function("([n]) => { const d = document.querySelector('#messages li.draft .body');"
                               " return d && d.innerText.length > n + 20; }", arg=[first])
        assert page.locator("#messages li.draft").count() >= 1  # still a draft: the message is not complete
        expect(page.locator("#messages li.message.last")).to_have_count(1, timeout=TIMEOUT)
        expect(page.locator("#messages li.draft")).to_have_count(0)
        writer = page.locator("#messages li.message", has=page.locator(".agent", has_text="writer"))
        expect(writer.locator(".body")).to_contain_text("word149.")
        scrolls = page.evaluate("window.scrolls")
        # The person never scrolled: the view follows the bottom at every step, and goes back only when
        # the thread itself grew taller (the round ended and the box under it shrank: the bottom moves).
        assert all(height - top - view < 8 for top, height, view in scrolls), f"the view left the bottom: {scrolls}"
        assert all(b[0] >= a[0] - 2 or b[2] > a[2] for a, b in zip(scrolls, scrolls[1:])), \
            f"the view jumped back: {scrolls}"
        # Each draft is drawn as the message it becomes (a step smaller and quieter than the answer, the
        # caret inside the text's last line), so the message takes its place without the thread shrinking:
        # the plan (its answer streams), the writer's step, then the final answer.
        replaced = page.evaluate("window.replaced")
        assert [kind.split()[-1] for kind, _, _ in replaced] == ["plan", "step", "answer"], replaced
        assert all(after >= before - 1 for _, before, after in replaced), f"a message is shorter than its draft: {replaced}"
        assert not errors, errors
        browser.close()
