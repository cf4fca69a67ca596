"""ZIP archives: every member extracted in turn, nested archives too, within limits against bombs."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from extractors.base import ContentItem, Extraction
from extractors.detect import detect_mime
from extractors.registry import ExtractorRegistry, Source, failure, nested

MIMES = ["application/zip", "application/x-zip-compressed"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class ArchiveLimits:
    """How much an archive may unpack to before it is refused as a likely zip bomb."""

    max_depth: int = 3  # archives inside archives
    max_members: int = 1000  # over all levels
    max_total_bytes: int = 256 * 1024 * 1024  # expanded, over all levels
    max_ratio: int = 200  # expanded/compressed, for members larger than 1 MiB


class _RefusedError(Exception):
    """The archive would unpack beyond a limit."""


@dataclass
class _Budget:
    members: int = 0
    expanded: int = 0


class ZipExtractor:
    """Extracts ZIP members through the registry; shares one budget over nested archives."""

    def __init__(self, limits: ArchiveLimits | None = None) -> None:
        self.limits = limits or ArchiveLimits()

    def __call__(self, source: Source, registry: ExtractorRegistry) -> Extraction:
        """All members' items in archive order, or a "refused" notice when a limit is passed."""
        extraction = Extraction(mime=source.mime, status="ok")
        try:
            self._walk(source.data, "", source.depth, _Budget(), registry, extraction, source.password)
        except _RefusedError as error:
            return failure(source.mime, "refused", source.name, f"refused as a likely zip bomb: {error}")
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as error:
            return failure(source.mime, "corrupt", source.name, f"not a readable ZIP archive ({error})")
        if not extraction.items:
            extraction.warnings.append(f"{source.name} is an empty archive.")
        return extraction

    def _walk(
        self,
        data: bytes,
        prefix: str,
        depth: int,
        budget: _Budget,
        registry: ExtractorRegistry,
        extraction: Extraction,
        password: str | None,
    ) -> None:
        if depth > self.limits.max_depth:
            raise _RefusedError(f"archives are nested more than {self.limits.max_depth} deep")
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [info for info in archive.infolist() if not info.is_dir()]
            self._check_declared(members, budget)
            for info in members:
                path = prefix + info.filename
                try:
                    content = self._read(archive, info, budget)
                except RuntimeError as error:  # zipfile says "encrypted" this way
                    self._notice(extraction, path, "encrypted", f"{path} is encrypted inside the archive ({error})")
                    continue
                except (zipfile.BadZipFile, EOFError, OSError) as error:
                    self._notice(extraction, path, "corrupt", f"{path} could not be unpacked ({error})")
                    continue
                if detect_mime(content, info.filename) in MIMES:
                    self._walk(content, path + "/", depth + 1, budget, registry, extraction, password)
                    continue
                inner = registry.extract(content, info.filename, depth=depth + 1)
                extraction.items.extend(nested(inner.items, path, member=path))
                extraction.warnings.extend(inner.warnings)
                if inner.status != "ok":
                    extraction.status = "partial"

    def _check_declared(self, members: list[zipfile.ZipInfo], budget: _Budget) -> None:
        """Refuse on the sizes the archive declares, before unpacking a single byte."""
        limits = self.limits
        if budget.members + len(members) > limits.max_members:
            raise _RefusedError(f"more than {limits.max_members} members")
        declared = sum(info.file_size for info in members)
        if budget.expanded + declared > limits.max_total_bytes:
            raise _RefusedError(f"it would expand to {declared:,} bytes, over the {limits.max_total_bytes:,} byte limit")
        for info in members:
            if info.file_size > _CHUNK and info.file_size > limits.max_ratio * max(info.compress_size, 1):
                raise _RefusedError(f"{info.filename} is compressed more than {limits.max_ratio}:1")
        budget.members += len(members)

    def _read(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget) -> bytes:
        """Unpack one member, counting real bytes: declared sizes can lie."""
        chunks = []
        with archive.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                budget.expanded += len(chunk)
                if budget.expanded > self.limits.max_total_bytes:
                    raise _RefusedError(f"it expands beyond {self.limits.max_total_bytes:,} bytes")
                chunks.append(chunk)
        return b"".join(chunks)

    @staticmethod
    def _notice(extraction: Extraction, path: str, status: str, sentence: str) -> None:
        extraction.items.append(
            ContentItem(
                sequence_nr=len(extraction.items) + 1,
                name=f"{path}: {status}",
                ext="txt",
                content_type="text/plain",
                data=sentence,
                metadata={"extractor": "zipfile", "member": path, "status": status},
            )
        )
        extraction.warnings.append(sentence)
        extraction.status = "partial"
