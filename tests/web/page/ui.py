"""What several page tests do the same way in the browser."""

from __future__ import annotations

from typing import Any


def open_logs(page: Any) -> None:
    """Open the logs panel, whatever it was: the page remembers it open (localStorage), and a click on
    its summary toggles it, so a click is made only while it is closed, and repeated if the page was
    busy drawing and the toggle did not take."""
    from playwright.sync_api import expect

    panel = page.locator("#logs-panel")
    for _ in range(3):
        if panel.evaluate("e => e.open"):
            break
        panel.locator("summary").click()
        page.wait_for_timeout(100)
    expect(panel).to_have_js_property("open", True)
