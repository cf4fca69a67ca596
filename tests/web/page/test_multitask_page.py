"""A message sent while a round runs (issue 48), in Debian's chromium against the live service on a model
that holds a round until the test lets it go: the page offers steer (the default), queue or interrupt and
sends the choice as `multitaskStrategy`; it is never refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.corpus import CORPUS
from tests.harness import LiveServer, settings_for
from tests.services.test_multitask import GateModel
from tests.web.page.test_chat_defects import at_width
from tests.web.page.test_chat_page import browser, expect, messages, screenshot_on_failure, send  # noqa: F401
from tests.web.page.test_conversation_page import LOCKED


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, GateModel]]:
    model = GateModel()
    with LiveServer(settings_for(tmp_path_factory.mktemp("gated")), model=model) as live:
        yield live, model


def test_a_message_sent_while_a_round_runs_steers_by_default_or_queues(browser, gated, tmp_path):
    live, model = gated
    context, page = at_width(browser, live.url + "/", 1280)
    bodies: list[dict] = []
    page.on("request", lambda r: bodies.append(r.post_data_json) if r.url.endswith("/start") or "/start?" in r.url else None)
    first, second = uuid.uuid4().hex, uuid.uuid4().hex
    try:
        with screenshot_on_failure(page, tmp_path / "multitask.png"):
            send(page, f"Look at this [gate] {first}")
            expect(page.locator("#status")).to_contain_text("running")
            choice = page.get_by_role("group", name="A round is running. Your message will")
            expect(choice).to_be_visible()
            expect(choice.get_by_role("radio", name="Steer join it: the plan adapts")).to_be_checked()
            choice.get_by_role("radio", name="Queue run next, when it ends").check()
            page.screenshot(path=str(tmp_path / "multitask.png"))
            send(page, f"And then this [gate] {second}")
            expect(page.get_by_role("alert")).to_contain_text("Queued: your message runs as the next round")
            assert "multitaskStrategy" not in bodies[0]
            assert bodies[1]["multitaskStrategy"] == "enqueue"
            expect(page.locator(".notice.error")).to_have_count(0)  # never refused
            model.open(first)
            expect(page.locator("#status")).to_contain_text("running · round 2")
            expect(messages(page).filter(has_text=second)).to_have_count(1)
            # Steer: the message joins the running round (round 2) as the person's message.
            choice.get_by_role("radio", name="Steer join it: the plan adapts").check()
            send(page, "Keep it to one line")
            expect(messages(page).filter(has_text="Keep it to one line").locator(".round")).to_have_text("round 2")
            assert bodies[2]["multitaskStrategy"] == "steer"
            model.open(second)
            expect(page.locator("#status")).to_contain_text("completed · round 2")
            expect(choice).to_be_hidden()
            expect(page.locator(".notice.error")).to_have_count(0)
            assert page.errors == []
    finally:
        context.close()


def test_a_password_sent_while_its_round_still_runs_is_queued_as_the_next_round(browser, gated, tmp_path):
    """The password field is on the request while its round may still run (the answer shows a moment before
    the round's status does): the resend carries the file, which cannot steer, so it is queued and runs
    next. It was sent as a steer and refused (400), and the person's click was lost (a CI run's failure)."""
    live, model = gated
    context, page = at_width(browser, live.url + "/", 1280)
    bodies: list[dict] = []
    page.on("request", lambda r: bodies.append(r.post_data_json) if r.url.endswith("/start") or "/start?" in r.url else None)
    token = uuid.uuid4().hex
    try:
        with screenshot_on_failure(page, tmp_path / "password-running.png"):
            send(page, f"Summarise this document [gate] {token}", CORPUS / LOCKED)
            expect(page.locator("#status")).to_contain_text("running")
            request = messages(page).first
            request.get_by_label(f"Password for {LOCKED}").fill("openpassword")
            request.get_by_role("button", name=f"Open {LOCKED} with this password").click()
            expect(page.get_by_role("alert")).to_contain_text("Queued: a message with files runs as the next round")
            assert bodies[1]["multitaskStrategy"] == "enqueue" and bodies[1]["passwords"]
            expect(page.locator(".notice.error")).to_have_count(0)
            model.open(token)
            expect(page.locator("#status")).to_contain_text("completed · round 2")
            assert page.errors == []
    finally:
        context.close()
