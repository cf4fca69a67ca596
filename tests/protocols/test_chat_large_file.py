"""A 10 MB text file part on /v1/chat/completions: its body and base64 are decoded off the event loop
(a ticker beside the work runs meanwhile: no timing is measured), and over real HTTP the round gets
the file's very bytes."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

from app.protocols.chat_request import read_turn
from tests.harness import LiveServer, settings_for

TEXT = b"".join(b"Line %d of a long plain text file, to be read whole.\n" % i for i in range(200_000))[:10_000_000]


def chat_body(data: bytes, stream: bool = False) -> bytes:
    return json.dumps({"model": "foreman", "stream": stream, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "Summarise the file."},
        {"type": "file", "file": {"filename": "notes.txt", "file_data": base64.b64encode(data).decode()}}]}]}).encode()


async def test_a_ten_megabyte_file_part_is_decoded_while_the_loop_turns() -> None:
    raw = chat_body(TEXT)
    ticks = [0]

    async def tick() -> None:
        while True:
            ticks[0] += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0)
    ticks[0] = 0
    try:
        body, turn = await read_turn(raw)
    finally:
        ticker.cancel()
    assert ticks[0] > 0  # on the loop, the decoding would never have yielded to the ticker
    assert turn.prompt == "Summarise the file." and turn.uploads == [("notes.txt", TEXT)]
    assert body.model == "foreman"


def test_a_ten_megabyte_text_part_reaches_the_round_whole(tmp_path: Path) -> None:
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        with client.stream("POST", "/v1/chat/completions", content=chat_body(TEXT, stream=True), timeout=120,
                           headers={"Content-Type": "application/json"}) as answer:
            assert answer.status_code == 200
            workflow = answer.headers["x-foreman-workflow"]
        first = client.get(f"/api/workflows/{workflow}/messages").json()["items"][0]
        [document] = first["documents"]
        assert (document["name"], document["ext"]) == ("notes", "txt")
        assert client.get(f"/api/files/{document['fileId']}/content").content == TEXT
        client.post(f"/api/workflows/{workflow}/stop")
