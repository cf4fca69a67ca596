"""The chat page in a real browser (Debian's chromium, driven by Playwright) against the live service
on the offline model: what a person does, found by role and label as a screen reader would."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.corpus import CORPUS
from tests.harness import LiveServer, other_process, settings_for
from tests.web.page.ui import open_logs

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
TIMEOUT = 90_000  # ms: rounds run on a 2-core machine shared with the rest of the suite

if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed (apt-get install chromium; .ci/run does it): "
                "the browser tests are skipped", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
expect = sync_api.expect


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(settings_for(tmp_path_factory.mktemp("page"))) as live:
        yield live


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server: LiveServer, tmp_path: Path):
    context = browser.new_context(viewport={"width": 1100, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    expect.set_options(timeout=TIMEOUT)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("dialog", lambda dialog: dialog.accept(dialog.default_value))  # a prompt: as offered
    page.goto(server.url + "/")
    yield page
    context.close()


@contextlib.contextmanager
def screenshot_on_failure(page, path: Path) -> Iterator[None]:
    """A failed assertion names a screenshot of the page as it was."""
    try:
        yield
    except (AssertionError, sync_api.Error) as exc:
        page.screenshot(path=str(path), full_page=True)
        raise AssertionError(f"{exc}\nscreenshot: {path}") from exc


def messages(page):
    return page.get_by_role("list", name="Messages").get_by_role("listitem").filter(has=page.locator(".meta"))


def by_agent(page, name: str):
    return messages(page).filter(has=page.locator(".agent", has_text=re.compile(f"^{name}$")))


def answers(page):
    """The project manager's answers (a round's `last` message), shown apart from the plan and steps."""
    return messages(page).filter(has=page.locator(".badge", has_text=re.compile("^answer$")))


def send(page, text: str, *files: Path) -> None:
    if files:
        page.get_by_label("Attach files").set_input_files([str(f) for f in files])
        for f in files:  # uploaded, with the type the server detected
            expect(page.locator(".chip.ready", has_text=f.name)).to_be_visible()
    page.get_by_role("textbox", name="Message").fill(text)
    page.get_by_role("textbox", name="Message").press("Enter")


def download_csv(page):
    """The last CSV's download, clicked as a person would, again when a click brought nothing: once in three
    full runs of the suite in three workers the click landed as the page redrew the message and no download
    came in 90 s (the lost click is noted as a defect of the page: a redraw replaces the chips)."""
    for attempt in range(3):
        button = page.get_by_role("button", name=re.compile(r"^Download .*\.csv$")).last
        try:
            with page.expect_download(timeout=20_000) as info:
                button.click()
            return info.value
        except sync_api.TimeoutError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def test_a_person_summarises_two_documents_and_downloads_a_produced_table(page, server, tmp_path):
    shot = tmp_path / "conversation.png"
    streams = []
    page.on("request", lambda request: streams.append(request.url) if "/events" in request.url else None)
    with screenshot_on_failure(page, shot):
        page.get_by_label("Attach files").set_input_files([str(CORPUS / "google-doc-document.pdf"),
                                                          str(CORPUS / "stanley-cups.tsv")])
        expect(page.locator(".chip.ready", has_text="google-doc-document.pdf")).to_contain_text("PDF document")
        expect(page.locator(".chip.ready", has_text="stanley-cups.tsv")).to_contain_text("TSV table")
        prompt = page.get_by_role("textbox", name="Message")
        prompt.fill("Summarise these")
        prompt.press("Shift+Enter")
        prompt.press_sequentially("documents")
        expect(prompt).to_have_value("Summarise these\ndocuments")
        prompt.fill("Summarise these documents")
        prompt.press("Enter")

        items = messages(page)
        expect(items.first).to_contain_text("You")
        expect(items.first.locator(".badge")).to_have_text("request")
        expect(items.first).to_contain_text("Summarise these documents")
        expect(by_agent(page, "Project manager").filter(has_text="Work plan")).to_have_count(1)
        expect(by_agent(page, "Summarizer")).to_have_count(1)
        expect(by_agent(page, "Summarizer")).to_contain_text("step")
        expect(items.last.locator(".badge")).to_have_text("answer")
        expect(page.get_by_role("progressbar", name="Progress")).to_have_attribute("aria-valuenow", "100")
        expect(page.locator("#status")).to_contain_text("completed")
        assert any("/events" in url for url in streams), "the page did not follow the round by the event stream"
        open_logs(page)
        expect(page.locator("#logs")).to_contain_text("Workflow completed successfully")

        # The same conversation goes on: a table as CSV, then downloaded from the page.
        send(page, "Extract the table as CSV", CORPUS / "stanley-cups.tsv")
        expect(answers(page).filter(has_text="round 2")).to_have_count(1)
        expect(page.locator("#status")).to_contain_text("completed · round 2")
        saved = tmp_path / "download.csv"
        download_csv(page).save_as(saved)
        text = saved.read_bytes().decode("utf-8-sig")
        source = (CORPUS / "stanley-cups.tsv").read_text()
        cells = [c.strip() for line in text.splitlines() for c in line.split(",") if c.strip()]
        assert len(cells) > 10 and all(c.strip('"') in source for c in cells), text[:300]
        assert page.errors == []
    page.screenshot(path=str(shot))
    target = os.environ.get("FOREMAN_PAGE_SCREENSHOT")  # the README's picture is made here
    if target:
        page.set_viewport_size({"width": 1100, "height": 820})
        page.get_by_role("list", name="Messages").get_by_role("listitem").first.scroll_into_view_if_needed()
        page.screenshot(path=target)


def test_a_person_stops_a_long_round_and_finds_the_conversation_after_a_reload(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "stopped.png"):
        send(page, "Summarise this book", CORPUS / "freeculture.pdf")
        stop = page.get_by_role("button", name="Stop")
        # Stopped as soon as the person sees their message: the 352-page book keeps the round busy.
        expect(messages(page).first).to_contain_text("Summarise this book")
        expect(stop).to_be_enabled()
        stop.click()
        expect(page.locator("#status")).to_contain_text("stopped")
        expect(page.locator("#logs")).to_contain_text("Workflow stopped by user")
        # Where the work got to, and that it stopped there: not 100 % (issue 48).
        expect(page.get_by_role("progressbar", name="Progress")).to_have_attribute(
            "aria-valuetext", re.compile(r"^([0-9]|[1-9][0-9])% · stopped$"))
        expect(stop).to_be_disabled()
        # The list of messages says so, after the round's messages (not only the status and the logs).
        stopped = page.get_by_role("list", name="Messages").get_by_role("listitem").filter(has_text="was stopped")
        expect(stopped).to_have_count(1)
        expect(stopped).to_have_text("Round 1 was stopped before it finished. Send a message to go on.")
        assert page.locator("#messages > li").last.inner_text() == stopped.inner_text()

        page.reload()
        link = page.get_by_role("navigation", name="Conversations").get_by_role("link", name="Summarise this book")
        expect(link).to_have_count(1)
        link.click()
        expect(messages(page).first).to_contain_text("Summarise this book")
        expect(messages(page).first.get_by_role("button", name="Download freeculture.pdf")).to_be_visible()
        expect(page.locator("#status")).to_contain_text("stopped")
        expect(stopped).to_have_count(1)  # from the round's log, after a reload too

        page.get_by_role("button", name="Delete conversation").click()
        expect(link).to_have_count(0)
        expect(page.get_by_role("heading", name="New conversation")).to_be_visible()
        assert page.errors == []


def test_html_in_a_models_text_is_shown_as_text_and_never_runs(page, server, tmp_path):
    hostile = tmp_path / "notes.txt"
    attack = '<img src=x onerror="window.__pwned=1">'
    hostile.write_text(f"The quarterly review names the attack {attack} in its findings. "
                       "Revenue grew by twelve percent in the third quarter of the year. "
                       "The board approved the budget for the new warehouse in March.\n")
    with screenshot_on_failure(page, tmp_path / "hostile.png"):
        send(page, "Summarise this document", hostile)
        summary = by_agent(page, "Summarizer")
        expect(summary).to_contain_text(attack)
        expect(messages(page).last.locator(".badge")).to_have_text("answer")
        assert page.locator("#messages img").count() == 0
        assert page.evaluate("window.__pwned") is None
        assert page.errors == []


def test_a_message_and_a_file_can_be_deleted_and_a_phone_width_window_works(page, server, tmp_path):
    with screenshot_on_failure(page, tmp_path / "phone.png"):
        page.set_viewport_size({"width": 390, "height": 800})
        send(page, "Summarise this document", CORPUS / "testCSV.csv")
        items = messages(page)
        expect(items.last.locator(".badge")).to_have_text("answer")
        first = items.first
        first.get_by_role("button", name="Remove testCSV.csv from this message").click()
        expect(first.get_by_role("button", name="Download testCSV.csv")).to_have_count(0)
        count = items.count()
        items.last.get_by_role("button", name="Delete message").click()
        expect(items).to_have_count(count - 1)
        page.reload()
        expect(messages(page)).to_have_count(count - 1)
        expect(messages(page).first.get_by_role("button", name="Download testCSV.csv")).to_have_count(0)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width}px wide on a 390px screen"
        page.get_by_role("button", name="Conversations").click()
        expect(page.get_by_role("navigation", name="Conversations").get_by_role("link").first).to_be_visible()
        assert page.errors == []


def test_files_dropped_on_the_message_box_are_uploaded_with_their_detected_type(page, server):
    dropped = page.evaluate_handle("""() => {
        const data = new DataTransfer();
        data.items.add(new File(["Revenue grew by twelve percent in the third quarter."], "dropped.txt",
                                {type: "application/x-made-up"}));
        return data;
    }""")
    page.dispatch_event("#drop", "drop", {"dataTransfer": dropped})
    expect(page.locator(".chip.ready", has_text="dropped.txt")).to_contain_text("Text file")  # from the bytes
    send(page, "Summarise this document")
    expect(messages(page).first.get_by_role("button", name="Download dropped.txt")).to_be_visible()
    expect(messages(page).last.locator(".badge")).to_have_text("answer")
    assert page.errors == []


def test_no_key_field_where_the_server_asks_for_none_and_an_unknown_conversation_is_a_notice(page, server):
    # Local mode asks for no key: the page shows no key field (it appears on the server's 401).
    nav = page.get_by_role("navigation", name="Conversations")
    expect(nav.locator("li, #no-conversations:visible").first).to_be_visible()  # the list has loaded
    if nav.locator("li").count() == 0:  # this test run first: an empty list says so
        expect(nav.locator("#no-conversations")).to_have_text("No conversations yet: write a message to start one.")
    expect(page.get_by_label("API key")).to_be_hidden()
    expect(page.locator("#key-field")).to_be_hidden()
    # A key kept from an earlier visit is shown, so it can be changed or cleared.
    page.evaluate("localStorage.setItem('foreman.apiKey', 'kept-key')")
    page.reload()
    expect(page.get_by_label("API key")).to_have_value("kept-key")
    page.get_by_label("API key").fill("")
    page.get_by_label("API key").press("Tab")
    assert page.evaluate("localStorage.getItem('foreman.apiKey')") is None
    page.goto(server.url + "/#/w/no-such-conversation")
    expect(page.get_by_role("alert")).to_contain_text("There is no workflow")


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m app` with API_KEYS, in its own process (one runtime per process: the module's
    server already runs here); its URL."""
    tmp = tmp_path_factory.mktemp("keyed")
    with other_process(tmp, "", executor_id="keyed", environ={"API_KEYS": "page-key-1:1:1"}) as client:
        yield str(client.base_url).rstrip("/")


def test_on_a_server_with_api_keys_the_typed_key_makes_the_page_work(browser, keyed_server, tmp_path):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    expect.set_options(timeout=TIMEOUT)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sent: list[str | None] = []
    page.on("request", lambda request: sent.append(request.headers.get("authorization"))
            if "/api/" in request.url else None)
    try:
        with screenshot_on_failure(page, tmp_path / "keyed.png"):
            page.goto(keyed_server + "/")
            # No key yet: the server refuses (401), the key field appears, and the page says what to do.
            expect(page.get_by_role("alert")).to_contain_text("This server asks for an API key")
            expect(page.get_by_label("API key")).to_be_visible()
            expect(page.get_by_label("API key")).to_be_focused()
            # A wrong key: a readable notice, nothing else happens.
            page.get_by_role("button", name="Dismiss").first.click()
            page.get_by_label("API key").fill("not-the-key")
            page.get_by_label("API key").press("Tab")
            expect(page.get_by_role("alert")).to_contain_text("This API key is not known to the server")
            assert "Bearer not-the-key" in sent
            # The same wrong key again: the same notice counts up, no second one.
            page.get_by_label("API key").fill("not-the-key-either")
            page.get_by_label("API key").press("Tab")
            unknown = page.locator(".notice", has_text="This API key is not known to the server")
            expect(unknown.locator(".times")).to_have_text("×2")
            expect(unknown).to_have_count(1)
            for button in page.get_by_role("button", name="Dismiss").all():
                button.click()
            # The right key: the page works, the key sent as the bearer header with every call.
            page.get_by_label("API key").fill("page-key-1")
            page.get_by_label("API key").press("Tab")
            sent.clear()
            send(page, "Summarise the request")
            expect(messages(page).first).to_contain_text("Summarise the request")
            expect(messages(page).last.locator(".badge")).to_have_text("answer")
            expect(page.get_by_role("progressbar", name="Progress")).to_have_attribute("aria-valuenow", "100")
            expect(page.get_by_role("navigation").get_by_role("link", name="Summarise the request")).to_be_visible()
            expect(page.locator("#notices")).not_to_contain_text("API key")
            assert sent and set(sent) == {"Bearer page-key-1"}, sent
            # Kept for the next visit.
            page.reload()
            expect(page.get_by_label("API key")).to_have_value("page-key-1")
            expect(page.get_by_role("navigation").get_by_role("link", name="Summarise the request")).to_be_visible()
            assert errors == []
    finally:
        context.close()


def test_friendly_file_types_a_title_cut_at_a_word_and_a_favicon(page, server, tmp_path):
    page.get_by_label("Attach files").set_input_files([str(CORPUS / "testEXCEL.xlsx")])
    expect(page.locator(".chip.ready", has_text="testEXCEL.xlsx")).to_contain_text("Excel workbook")
    assert "spreadsheetml" not in page.locator(".chip.ready", has_text="testEXCEL.xlsx").inner_text()
    long = "Please compare the quarterly revenue figures of every region in this workbook with last year"
    send(page, long)
    expect(page.locator("#status")).to_contain_text("completed")
    link = page.get_by_role("navigation", name="Conversations").get_by_role("link").first
    shown = link.inner_text()
    assert shown.endswith("…") and len(shown) < len(long)
    assert long.startswith(shown[:-1]) and long[len(shown) - 1] == " "  # cut at a word, not inside one
    header = page.get_by_role("heading", level=2).first.inner_text()
    assert header.endswith("…") and long[len(header) - 1] == " "  # the server's 80 characters, cut at a word
    # Log numbers past 9 (and past 99) are drawn inside the list, never clipped at its left edge.
    open_logs(page)
    assert page.locator("#logs").evaluate("e => getComputedStyle(e).listStylePosition") == "inside"
    expect(page.locator("#logs li").first).to_be_visible()
    if os.environ.get("FOREMAN_PAGE_SHOTS"):  # to look at the chips, the list and the logs by eye
        page.screenshot(path=os.path.join(os.environ["FOREMAN_PAGE_SHOTS"], "friendly.png"), full_page=True)
    icon = page.locator("link[rel=icon]").get_attribute("href")
    answer = page.request.get(server.url + icon)
    assert answer.status == 200 and answer.headers["content-type"].startswith("image/svg+xml")
    assert page.errors == []
