"""docs/contract.md is the frontend contract kept with the code: the same text as the shared contract."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "CONTRACT.md"


def test_the_contract_in_docs_is_the_shared_one():
    if not SHARED.is_file():
        pytest.skip(f"no shared contract at {SHARED} to compare with")
    assert (ROOT / "docs" / "contract.md").read_text() == SHARED.read_text(), (
        "the shared contract changed: copy it to docs/contract.md (cp ../shared/CONTRACT.md docs/contract.md)")
