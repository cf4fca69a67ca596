"""Password-protected Office Open XML files: decrypted with the supplied password, then extracted."""

from __future__ import annotations

import io

import msoffcrypto
from msoffcrypto.exceptions import DecryptionError, FileFormatError, InvalidKeyError

from extractors.base import Extraction
from extractors.registry import ExtractorRegistry, Source, failure

MIMES = ["application/x-ooxml-encrypted"]


def extract_encrypted_ooxml(source: Source, registry: ExtractorRegistry) -> Extraction:
    """Decrypt and hand the plain document back to the registry; without the password say so."""
    if not source.password:
        return _locked(source, "it needs a password")
    try:
        office = msoffcrypto.OfficeFile(io.BytesIO(source.data))
        office.load_key(password=source.password)
        plain = io.BytesIO()
        office.decrypt(plain)
    except (InvalidKeyError, DecryptionError):
        return _locked(source, "the password supplied does not open it")
    except FileFormatError as error:
        return failure(source.mime, "corrupt", source.name, f"not a readable encrypted Office file ({error})")
    inner = registry.extract(plain.getvalue(), source.name, depth=source.depth)
    inner.warnings.insert(0, f"{source.name} was decrypted with the supplied password.")
    for item in inner.items:
        item.metadata = {**item.metadata, "decrypted": True}
    return inner


def _locked(source: Source, reason: str) -> Extraction:
    result = failure(source.mime, "encrypted", source.name, f"the Office document is encrypted and {reason}")
    result.items[0].name = "encrypted"
    return result
