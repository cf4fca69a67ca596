"""Plan review on the chat page, in Debian's chromium against the live service on the offline model:
the switch "Review plans before they run", the waiting plan with Approve / Reject / Revise / Edit,
found by role and accessible name."""

from __future__ import annotations

import os
import re

from tests.corpus import CORPUS
from tests.web.page.test_chat_page import (  # noqa: F401  (fixtures)
    answers,
    browser,
    expect,
    messages,
    page,
    screenshot_on_failure,
    send,
    server,
)
from tests.web.page.ui import open_logs


def review_on(page) -> None:
    switch = page.get_by_role("switch", name="Review plans before they run")
    expect(switch).not_to_be_checked()
    switch.check()
    expect(switch).to_be_checked()


def plan_waits(page):
    panel = page.get_by_role("region", name="The plan waits for your review")
    expect(panel).to_be_visible()
    expect(page.locator("#status")).to_contain_text("Waiting for your review")
    return panel


def test_a_person_reviews_the_plan_revises_it_and_approves_and_the_round_completes(page, server, tmp_path):
    shot = tmp_path / "review.png"
    with screenshot_on_failure(page, shot):
        review_on(page)
        send(page, "Summarise this document", CORPUS / "testCSV.csv")
        panel = plan_waits(page)
        tasks = panel.get_by_role("list", name="Planned tasks").get_by_role("listitem")
        expect(tasks.first).to_contain_text("summarizer")
        expect(page.get_by_role("button", name="Stop")).to_be_enabled()  # a wait can be stopped too
        expect(answers(page)).to_have_count(0)  # nothing ran yet
        page.screenshot(path=str(shot))
        if os.environ.get("FOREMAN_REVIEW_SCREENSHOT"):
            page.screenshot(path=os.environ["FOREMAN_REVIEW_SCREENSHOT"], full_page=True)

        # Revise: the feedback becomes a user message of the round and a new plan waits.
        plans_before = messages(page).filter(has_text="Work plan").count()
        panel.get_by_role("textbox", name="Feedback on the plan").fill("Keep the summary short")
        panel.get_by_role("button", name="Revise").click()
        # Once, as the user's message (the revised plan may quote the request it was made for).
        expect(messages(page).and_(page.locator("li.user")).filter(has_text="Keep the summary short")).to_have_count(1)
        expect(messages(page).filter(has_text="Work plan")).to_have_count(plans_before + 1)
        panel = plan_waits(page)

        panel.get_by_role("button", name="Approve").click()
        expect(panel).to_be_hidden()
        expect(messages(page).last.locator(".badge")).to_have_text("answer")
        expect(page.locator("#status")).to_contain_text("completed · round 1")
        expect(page.get_by_role("progressbar", name="Progress")).to_have_attribute("aria-valuenow", "100")

        # The switch is the conversation's: it is on again after a reload, and the next round waits too.
        page.reload()
        expect(page.get_by_role("switch", name="Review plans before they run")).to_be_checked()
        send(page, "Summarise it again")
        plan_waits(page)
        expect(page.locator("#status")).to_contain_text("round 2")
        assert page.errors == []


def test_a_rejected_plan_ends_the_round_stopped_and_a_chat_post_while_waiting_revises(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "rejected.png"):
        review_on(page)
        send(page, "Summarise this document", CORPUS / "testCSV.csv")
        plan_waits(page)
        plans = messages(page).filter(has_text="Work plan")
        expect(plans).to_have_count(1)
        send(page, "Only the first rows, please")  # a chat post while waiting is a revise
        expect(plans).to_have_count(2)
        panel = plan_waits(page)
        panel.get_by_role("button", name="Reject").click()
        expect(page.locator("#status")).to_contain_text("stopped")
        expect(panel).to_be_hidden()
        open_logs(page)
        expect(page.locator("#logs")).to_contain_text("Plan rejected by user")
        expect(answers(page)).to_have_count(0)
        assert page.errors == []


def test_without_the_switch_a_round_runs_without_waiting(page, server):
    expect(page.get_by_role("switch", name="Review plans before they run")).not_to_be_checked()
    send(page, "Summarise this document", CORPUS / "testCSV.csv")
    expect(messages(page).last.locator(".badge")).to_have_text("answer")
    expect(page.get_by_role("region", name="The plan waits for your review")).to_be_hidden()
    assert page.errors == []


def test_a_person_edits_the_plan_a_bad_edit_is_refused_and_a_good_one_runs(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "edit.png"):
        review_on(page)
        send(page, "Summarise this document", CORPUS / "testCSV.csv")
        panel = plan_waits(page)
        panel.get_by_role("button", name="Edit").click()
        editor = panel.get_by_role("list", name="Tasks to run")
        first = editor.get_by_role("listitem").first
        first_id = first.locator("strong").inner_text().removeprefix("Task ")
        # A bad edit (an agent that does not exist) is refused with the problem; nothing changes.
        agent = panel.get_by_role("textbox", name=f"Agent of task {first_id}")
        proposed = agent.input_value()
        agent.fill("astrologer")
        panel.get_by_role("button", name="Run this plan").click()
        expect(page.locator(".notice.error")).to_contain_text("unknown agent 'astrologer'")
        expect(page.locator("#status")).to_contain_text("Waiting for your review")
        # Fixed, with a task added at the end: it runs as edited.
        agent.fill(proposed)
        panel.get_by_role("button", name="Add task").click()
        panel.get_by_role("textbox", name="Agent of task n1").fill("writer")
        panel.get_by_role("textbox", name="Instructions of task n1").fill("Write one line about the table.")
        for other in editor.get_by_role("listitem").all()[1:-1]:  # only the first task and the new one are kept
            other.get_by_role("button", name=re.compile("^Remove")).click()
        expect(editor.get_by_role("listitem")).to_have_count(2)
        panel.get_by_role("button", name="Move up task n1").click()
        expect(editor.get_by_role("listitem").first).to_contain_text("Task n1")
        panel.get_by_role("button", name="Run this plan").click()
        expect(panel).to_be_hidden()
        expect(page.locator("#status")).to_contain_text("completed · round 1")
        expect(messages(page).filter(has_text="Write one line about the table.")).to_have_count(2)  # plan, writer
        open_logs(page)
        expect(page.locator("#logs")).to_contain_text("Plan edited by user: 2 tasks")
        assert page.errors == []
