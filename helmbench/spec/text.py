"""Reading authored files as text: UTF-8, BOM stripped, every line ending made LF.

Normalising here, once, means line numbers and hashes of composed prompts are the same
whether an author saved with Windows or Unix line endings.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SourceText:
    path: str  # relative, POSIX
    text: str
    sha256: str  # of the raw bytes, so `sources` name exactly what was on disk


class TextError(Exception):
    def __init__(self, message: str, line: int = 1, col: int = 1):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


def normalise(raw: str) -> str:
    if raw.startswith("\ufeff"):
        raw = raw[1:]
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def decode(data: bytes) -> str:
    """Decode bytes as UTF-8 text or raise TextError at the first bad line."""
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise TextError("binary file (contains NUL bytes), expected UTF-8 text", line)
    try:
        return normalise(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TextError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8", line, col)


def read_source(root: Path, path: Path) -> SourceText:
    data = path.read_bytes()
    rel = path.relative_to(root).as_posix()
    return SourceText(rel, decode(data), "sha256:" + hashlib.sha256(data).hexdigest())
