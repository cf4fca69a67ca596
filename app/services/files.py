"""What the API does with files: store uploads (type from the bytes), find the owner's files, read them."""

from __future__ import annotations

import asyncio

from app.clock import now
from app.contract.filenames import clean_name, split_name
from app.contract.schemas import FileInfo
from app.contract.views import file_info
from app.errors import BadRequestError, NotFoundError, PayloadTooLargeError
from app.store.filestore import BlobStore
from app.store.records import Owner
from app.store.repository.files import FileStore
from app.store.tables import FileRow
from extractors.detect import detect_mime

LARGE_FILE = 1 << 20


class FileService:
    """Files as their owner sees them."""

    def __init__(self, files: FileStore, storage: BlobStore, max_upload_bytes: int) -> None:
        self.files = files
        self.storage = storage
        self.max_upload_bytes = max_upload_bytes

    async def upload(self, owner: Owner, parts: list[tuple[str, bytes]]) -> list[FileInfo]:
        """Store uploaded (file name, bytes) parts; nothing is stored unless every part passes."""
        limit = self.max_upload_bytes
        rows = []
        for filename, data in parts:
            display = clean_name(filename)
            if len(data) > limit:
                raise PayloadTooLargeError(f"{display!r} is {len(data)} bytes; the limit is {limit} bytes "
                                           "(MAX_UPLOAD_BYTES). Nothing was stored.", code="file_too_large")
            if not data:
                raise BadRequestError(f"{display!r} is empty (0 bytes); nothing was stored.", code="empty_file")
            name, ext = split_name(display)
            # Detection reads the bytes (a text file's encoding, a ZIP's members): a large file's in a thread.
            mime = await asyncio.to_thread(detect_mime, data, display) if len(data) >= LARGE_FILE \
                else detect_mime(data, display)
            rows.append((data, FileRow(mandate_id=owner.mandate_id, user_id=owner.user_id, name=name,
                                       ext=ext, mime=mime, size=len(data),
                                       sha256="", origin="upload", created_at=now())))
        for data, row in rows:  # stored only once every part passed the checks
            row.sha256 = await self.storage.put(data)
        added = await self.files.add_files([row for _, row in rows])
        for data, row in rows:  # a delete of a workflow with the same bytes may have released them meanwhile
            await self.storage.keep(row.sha256, data)
        return [file_info(row) for row in added]

    async def owned(self, owner: Owner, file_id: int) -> FileRow:
        """The owner's file, or NotFoundError."""
        row = (await self.files.files(owner, [file_id])).get(file_id)
        if row is None:
            raise NotFoundError(f"There is no file {file_id}.", code="file_not_found")
        return row

    async def produced(self, owner: Owner, limit: int = 500) -> list[FileRow]:
        """The documents the owner's rounds produced, newest first."""
        return await self.files.produced(owner, limit)

    async def content(self, row: FileRow) -> bytes:
        """A file's bytes, checked against their hash."""
        return await self.storage.get(row.sha256)
