"""An agent's question and a task that needs approval on the chat page, in Debian's chromium against
the live service with a scripted model and two test agents: found by role and accessible name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents.registry import build_registry
from tests.harness import LiveServer, settings_for
from tests.rounds.test_asking import Clerk, PlanPerPrompt, Publisher, plan, task
from tests.web.page.test_chat_page import (  # noqa: F401  (fixtures)
    browser,
    expect,
    messages,
    page,
    screenshot_on_failure,
    send,
)

MODEL = PlanPerPrompt()
MODEL.scripts = {"zq-figures": plan(task("t1", "clerk"), task("t2", "writer", ["t1"])),
                 "zq-publish": plan(task("t1", "analyst"), task("t2", "publisher", ["t1"]))}
MODEL.revisions = {"Not on the wiki": plan(task("t1", "analyst"))}  # revised around the rejected task


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    registry = build_registry(entry_points=False)
    registry.add(Publisher())
    registry.add(Clerk())
    with LiveServer(settings_for(tmp_path_factory.mktemp("asking-page")), MODEL, registry) as live:
        yield live


def test_a_person_answers_an_agents_question_and_the_round_completes(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "question.png"):
        send(page, "zq-figures: the figures, please")
        panel = page.get_by_role("region", name="The clerk agent asks you")
        expect(panel).to_be_visible()
        expect(panel).to_contain_text("Which year do you mean?")
        expect(page.locator("#status")).to_contain_text("Waiting for your answer")
        expect(panel.get_by_role("button", name="Approve")).to_be_hidden()
        panel.get_by_role("textbox", name="Your answer").fill("2024")
        panel.get_by_role("button", name="Answer").click()
        expect(panel).to_be_hidden()
        expect(page.locator("#status")).to_contain_text("completed · round 1")
        expect(messages(page).filter(has_text="The figures of 2024.")).to_have_count(1)
        assert page.errors == []


def test_a_person_sees_what_a_task_will_do_and_rejects_it_saying_why(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "tool.png"):
        send(page, "zq-publish: the report")
        panel = page.get_by_role("region", name="A task waits for your approval")
        expect(panel).to_be_visible()
        expect(page.locator("#status")).to_contain_text("Waiting for your approval")
        facts = panel.get_by_role("definition")
        expect(facts).to_contain_text(["publisher", "Publishes a page on the team's wiki.", "Do t2."])
        expect(panel).to_contain_text('{"page":"Sales 2024"}')
        expect(panel.get_by_role("button", name="Revise")).to_be_hidden()
        panel.get_by_role("textbox", name="Why not").fill("Not on the wiki, please.")
        panel.get_by_role("button", name="Reject").click()
        expect(panel).to_be_hidden()
        expect(page.locator("#status")).to_contain_text("completed · round 1")
        # The task failed with the reason, and the plan was revised around it.
        expect(messages(page).filter(has_text="failed: you did not approve it: Not on the wiki, please.")
               ).to_have_count(1)
        expect(messages(page).filter(has_text="Plan revised (1 of at most 2)")).to_have_count(1)
        assert page.errors == []
