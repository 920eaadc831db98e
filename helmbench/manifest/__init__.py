"""The manifest stage: composition, case expansion, canonical hashing, writer, reader, diff.

The names below load on first use (`helmbench.lazy`): the store hashes with `canonical` alone and
must not pay for the compiler (the spec models and the plugin registry) to do so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from helmbench import lazy
# named like their modules, so imported here (see lazy.exports); both are light
from helmbench.manifest.canonical import canonical, hash_of
from helmbench.manifest.compose import compose, compose_body, response_format

if TYPE_CHECKING:
    from helmbench.manifest.emit import CompileResult, LintFailed, compile_tree
    from helmbench.manifest.reader import Manifest, ManifestError, read_manifest

__all__ = [
    "CompileResult", "LintFailed", "Manifest", "ManifestError", "canonical", "compile_tree", "compose",
    "compose_body", "hash_of", "read_manifest", "response_format",
]

__getattr__ = lazy.exports(__name__, {
    "CompileResult": "helmbench.manifest.emit", "LintFailed": "helmbench.manifest.emit",
    "compile_tree": "helmbench.manifest.emit",
    "Manifest": "helmbench.manifest.reader", "ManifestError": "helmbench.manifest.reader",
    "read_manifest": "helmbench.manifest.reader",
})
