"""The manifest stage: composition, case expansion, canonical hashing, writer, reader, diff."""

from helmbench.manifest.canonical import canonical, hash_of
from helmbench.manifest.compose import compose, compose_body, response_format
from helmbench.manifest.reader import Manifest, ManifestError, read_manifest
from helmbench.manifest.emit import CompileResult, LintFailed, compile_tree

__all__ = [
    "CompileResult", "LintFailed", "Manifest", "ManifestError", "canonical", "compile_tree", "compose",
    "compose_body", "hash_of", "read_manifest", "response_format",
]
