"""What a person expects of a chat page beside ChatGPT or Open WebUI, in Debian's chromium against the
live service on the offline model (issue 31): a password field for an encrypted file, only the
messages scroll and a round's end comes into view, one notice per error, the answer apart from the
plan and the steps (collapsible), copy, edit and resend, rename, search and dates in the list."""

from __future__ import annotations

import json
import re

from tests.corpus import CORPUS
from tests.web.page.test_chat_page import (  # noqa: F401  (fixtures)
    answers,
    browser,
    by_agent,
    expect,
    messages,
    page,
    screenshot_on_failure,
    send,
    server,
)

LOCKED = "libreoffice-writer-password.pdf"  # opens with "openpassword"


def starts(page) -> list[dict]:
    """The bodies of the page's POST /api/workflows/start, as they are sent."""
    bodies: list[dict] = []
    page.on("request", lambda r: bodies.append(json.loads(r.post_data or "{}"))
            if r.method == "POST" and "/api/workflows/start" in r.url else None)
    return bodies


def round_of(page, n: int):
    return messages(page).filter(has_text=f"round {n}")


def test_an_encrypted_file_gets_a_password_field_and_a_wrong_password_is_told_apart(page, server, tmp_path):
    sent = starts(page)
    with screenshot_on_failure(page, tmp_path / "password.png"):
        send(page, "Summarise this document", CORPUS / LOCKED)
        expect(answers(page)).to_have_count(1)
        request = messages(page).first
        field = request.get_by_label(f"Password for {LOCKED}")
        expect(field).to_be_visible()  # beside that file, in the message that brought it
        expect(request.locator(".lock")).to_contain_text("Encrypted")
        file_id = sent[0]["listFileId"][0]
        assert "passwords" not in sent[0]

        field.fill("not-the-password")
        request.get_by_role("button", name=f"Open {LOCKED} with this password").click()
        expect(answers(page)).to_have_count(2)
        second = round_of(page, 2).first
        expect(second.get_by_label(f"Password for {LOCKED}")).to_be_visible()
        expect(second.locator(".lock")).to_contain_text("That password does not open it")
        assert sent[1]["passwords"] == {str(file_id): "not-the-password"}
        assert sent[1]["listFileId"] == [file_id] and sent[1]["prompt"] == "Summarise this document"
        expect(request.get_by_label(f"Password for {LOCKED}")).to_be_hidden()  # only on its latest showing

        second.get_by_label(f"Password for {LOCKED}").fill("openpassword")
        second.get_by_role("button", name=f"Open {LOCKED} with this password").click()
        expect(answers(page)).to_have_count(3)
        assert sent[2]["passwords"] == {str(file_id): "openpassword"}
        third = round_of(page, 3)
        expect(third.first.locator(".lock")).to_have_count(0)  # opened: no field any more
        expect(page.get_by_label(f"Password for {LOCKED}")).to_have_count(2)
        for field in page.get_by_label(f"Password for {LOCKED}").all():
            expect(field).to_be_hidden()
        expect(third.filter(has=page.locator(".agent", has_text="Summarizer"))).to_have_count(1)
        assert page.evaluate("location.hash").count("/w/") == 1 and len({s.get("prompt") for s in sent}) == 1
        page.screenshot(path=str(tmp_path / "password-opened.png"))
        assert page.errors == []


def test_only_the_messages_scroll_and_the_answer_comes_into_view_when_a_round_ends(page, server, tmp_path):
    # Short enough that the conversation is surely taller than the window (at 560 px it overflowed by
    # 145 px once, when the chat's header grew with the Chat/Flows links).
    page.set_viewport_size({"width": 1100, "height": 460})
    with screenshot_on_failure(page, tmp_path / "scroll.png"):
        # A person reading above while the round runs: each step that arrives finds the view at the top.
        page.evaluate("""() => new MutationObserver((changes) => {
            for (const change of changes) for (const node of change.addedNodes)
              if (node.classList && !node.classList.contains("answer")) document.getElementById("thread").scrollTop = 0;
          }).observe(document.getElementById("messages"), { childList: true })""")
        send(page, "Summarise these documents", CORPUS / "google-doc-document.pdf", CORPUS / "stanley-cups.tsv")
        expect(answers(page)).to_have_count(1)
        expect(page.locator("#status")).to_contain_text("completed")
        thread = page.locator("#thread")
        page.wait_for_function("""() => {
            const t = document.getElementById("thread").getBoundingClientRect();
            const a = document.querySelector("#messages li.answer").getBoundingClientRect();
            return a.top >= t.top - 1 && a.top < t.bottom; }""")
        height = thread.evaluate("e => e.scrollHeight - e.clientHeight")
        assert height > 200, "the conversation should be taller than the window for this test"

        def boxes() -> list[dict]:
            return [page.locator(sel).bounding_box() for sel in (
                "header.bar", "#sidebar", ".head", "#composer", "#new-conversation")]

        at_bottom = boxes()
        thread.evaluate("e => e.scrollTop = 0")
        page.mouse.move(600, 300)
        page.mouse.wheel(0, 400)
        page.wait_for_function("() => document.getElementById('thread').scrollTop > 0")
        assert boxes() == at_bottom  # the header, the list, the title and the message box stayed
        assert page.evaluate("document.scrollingElement.scrollTop") == 0  # the page itself never scrolls
        assert page.evaluate("document.scrollingElement.scrollHeight <= innerHeight")
        assert page.errors == []


def test_one_notice_per_error_and_a_notice_can_be_dismissed(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "notices.png"):
        send(page, "Summarise this document", CORPUS / "testCSV.csv")
        expect(answers(page)).to_have_count(1)
        step = by_agent(page, "Summarizer")
        wid = page.evaluate("decodeURIComponent(location.hash.slice(4))")
        step_id = step.get_attribute("data-id")
        # Gone behind the page's back: each Delete is refused with the same sentence.
        assert page.request.delete(f"{server.url}/api/workflows/{wid}/messages/{step_id}").status == 200
        for _ in range(3):
            step.get_by_role("button", name="Delete message").click()
        notice = page.get_by_role("alert").locator(".notice")
        expect(notice).to_have_count(1)
        expect(notice).to_contain_text(f"has no message {step_id}")
        expect(notice.locator(".times")).to_have_text("×3")
        notice.get_by_role("button", name="Dismiss").click()
        expect(notice).to_have_count(0)
        # Information (not an error) is one notice too, and it goes by itself.
        page.get_by_role("button", name="New conversation").click()
        expect(page.get_by_role("progressbar", name="Progress")).to_be_hidden()  # none on an empty conversation
        for _ in range(2):
            page.get_by_role("button", name="Send").click()
        info = page.locator(".notice.info", has_text="Write a message or attach a file first.")
        expect(info).to_have_count(1)
        expect(info).to_have_count(0, timeout=15_000)
        assert page.errors == []


def test_the_answer_stands_apart_from_the_plan_and_the_steps_which_collapse(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "steps.png"):
        send(page, "Summarise this document", CORPUS / "testCSV.csv")
        answer = answers(page)
        expect(answer).to_have_count(1)
        expect(answer).to_contain_text("Project manager")
        plan = messages(page).filter(has=page.locator(".badge", has_text=re.compile("^plan$")))
        step = messages(page).filter(has=page.locator(".badge", has_text=re.compile("^step t1$")))
        expect(plan).to_contain_text("Work plan")
        expect(step).to_contain_text("Summary of testCSV.csv")
        for work in (plan, step):  # quieter than the answer: set in, dashed
            assert work.evaluate("e => getComputedStyle(e).borderTopStyle") == "dashed"
            assert work.bounding_box()["x"] > answer.bounding_box()["x"]
        assert answer.evaluate("e => getComputedStyle(e).borderLeftWidth") == "4px"
        expect(answer.get_by_role("button", name=re.compile("^(Hide|Show)"))).to_have_count(0)

        hide = step.get_by_role("button", name="Hide step of Summarizer")
        expect(hide).to_have_attribute("aria-expanded", "true")
        hide.click()
        show = step.get_by_role("button", name="Show step of Summarizer")
        expect(show).to_have_attribute("aria-expanded", "false")
        expect(step.locator(".body")).to_be_hidden()
        expect(step.locator(".agent")).to_be_visible()  # its line stays, to open it again
        expect(answer.locator(".body")).to_be_visible()
        plan.get_by_role("button", name="Hide plan of Project manager").click()
        expect(plan.locator(".body")).to_be_hidden()
        show.click()
        expect(step.locator(".body")).to_be_visible()
        assert page.errors == []


def test_a_message_is_copied_and_a_prompt_is_edited_and_sent_again_in_the_same_conversation(
        browser, server, tmp_path):
    context = browser.new_context(viewport={"width": 1100, "height": 900},
                                  permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(server.url + "/")
    sent = starts(page)
    try:
        with screenshot_on_failure(page, tmp_path / "copy-edit.png"):
            send(page, "Summarise this document", CORPUS / "testCSV.csv")
            expect(answers(page)).to_have_count(1)
            wid = page.evaluate("decodeURIComponent(location.hash.slice(4))")
            step = by_agent(page, "Summarizer")
            step.get_by_role("button", name=re.compile("^Copy message")).click()
            expect(step.get_by_role("button", name=re.compile("^Copy message"))).to_have_text("Copied")
            stored = page.request.get(f"{server.url}/api/workflows/{wid}").json()
            [summary] = [m for m in stored["messages"] if m["agentName"] == "summarizer"]
            assert page.evaluate("navigator.clipboard.readText()") == summary["content"]  # the Markdown source

            request = messages(page).first
            request.get_by_role("button", name="Edit this request").click()
            box = request.get_by_role("textbox", name="Edit your message")
            expect(box).to_have_value("Summarise this document")
            box.fill("Summarise this document in three points")
            request.get_by_role("button", name="Send edited").click()
            expect(answers(page)).to_have_count(2)
            again = round_of(page, 2).first
            expect(again).to_contain_text("Summarise this document in three points")
            expect(again.get_by_role("button", name="Download testCSV.csv")).to_be_visible()  # the same file
            expect(request).to_contain_text("Summarise this document")  # the first request stays as it was
            assert page.evaluate("decodeURIComponent(location.hash.slice(4))") == wid  # the same conversation
            assert sent[1]["prompt"] == "Summarise this document in three points"
            assert sent[1]["listFileId"] == sent[0]["listFileId"]
            listed = [w for w in page.request.get(f"{server.url}/api/workflows").json()["items"] if w["id"] == wid]
            assert listed[0]["currentRound"] == 2
            assert page.errors == []
    finally:
        context.close()


def test_conversations_are_renamed_searched_and_dated_in_the_list(page, server, tmp_path):
    nav = page.get_by_role("navigation", name="Conversations")
    with screenshot_on_failure(page, tmp_path / "list.png"):
        send(page, "Count the squares in this table", CORPUS / "testCSV.csv")
        expect(answers(page)).to_have_count(1)
        page.get_by_role("button", name="New conversation").click()
        send(page, "Which team has the most cups", CORPUS / "stanley-cups.tsv")
        expect(answers(page)).to_have_count(1)

        page.get_by_role("button", name="Rename").click()
        name = page.get_by_role("textbox", name="Conversation name")
        expect(name).to_have_value("Which team has the most cups")
        name.fill("Stanley Cup winners")
        name.press("Enter")
        expect(page.get_by_role("heading", level=2)).to_have_text("Stanley Cup winners")
        expect(nav.get_by_role("link", name="Stanley Cup winners")).to_have_count(1)
        # Escape leaves the name as it is.
        page.get_by_role("button", name="Rename").click()
        name.fill("Not this one")
        name.press("Escape")
        expect(page.get_by_role("heading", level=2)).to_have_text("Stanley Cup winners")
        page.reload()
        expect(page.get_by_role("heading", level=2)).to_have_text("Stanley Cup winners")

        # Each conversation in the list has its date (the time, today) and status.
        item = nav.get_by_role("listitem").filter(has_text="Stanley Cup winners")
        stamp = item.locator("time").get_attribute("datetime")
        assert re.match(r"^\d{4}-\d\d-\d\dT", stamp), stamp
        expect(item.locator("time")).to_have_text(re.compile(r"\d\d:\d\d"))
        expect(item).to_contain_text("completed")

        # Search: over the titles of the list, every word, any case.
        search = page.get_by_role("searchbox", name="Search conversations")
        search.fill("stanley WINNERS")
        expect(nav.get_by_role("link")).to_have_count(1)
        expect(nav.get_by_role("link")).to_have_text("Stanley Cup winners")
        search.fill("squares")
        expect(nav.get_by_role("link", name="Count the squares in this table")).to_be_visible()
        expect(nav.get_by_role("link", name="Stanley Cup winners")).to_have_count(0)
        search.fill("no conversation is called this")
        expect(nav.get_by_role("link")).to_have_count(0)
        expect(page.get_by_text("No conversation has these words in its title.")).to_be_visible()
        search.fill("")
        expect(nav.get_by_role("link", name="Stanley Cup winners")).to_be_visible()
        if tmp_path:
            page.screenshot(path=str(tmp_path / "list-ok.png"))
        assert page.errors == []


def test_the_address_opens_the_conversation_it_names_on_load_and_when_it_changes(browser, server, tmp_path):
    from tests.harness import wait_status

    ids = []
    with server.client() as client:
        for prompt in ("First: what do ferries carry?", "Second: what do bakeries sell?"):
            wid = client.post("/api/workflows/start", json={"prompt": prompt, "listFileId": []}).json()["id"]
            wait_status(client, wid, "completed", "failed", timeout=120)
            ids.append(wid)
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        # A fresh load of the address the page writes, and of the bare id a person pastes.
        for address in (f"#/w/{ids[0]}", f"#{ids[0]}"):
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            with screenshot_on_failure(page, tmp_path / "address.png"):
                page.goto(f"{server.url}/{address}")
                expect(messages(page).first).to_contain_text("First: what do ferries carry?", timeout=30_000)
                expect(page.locator(f'#conversations a[data-id="{ids[0]}"]')).to_have_attribute("aria-current", "page")
                assert page.evaluate("location.hash") == f"#/w/{ids[0]}"  # one form in the address bar
                # The address changed by hand (no click in the list): the conversation it names is shown.
                page.evaluate(f"location.hash = '#{ids[1]}'")
                expect(messages(page).first).to_contain_text("Second: what do bakeries sell?", timeout=30_000)
                expect(messages(page).filter(has_text="First: what do ferries carry?")).to_have_count(0)
                expect(page.locator(f'#conversations a[data-id="{ids[1]}"]')).to_have_attribute("aria-current", "page")
                page.go_back()  # the history still holds the first
                expect(messages(page).first).to_contain_text("First: what do ferries carry?", timeout=30_000)
            assert errors == []
            page.close()
    finally:
        context.close()
