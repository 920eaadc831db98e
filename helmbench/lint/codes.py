"""The diagnostic codes, as lint's own name for them (the catalogue lives in `helmbench.codes`).

Why the catalogue is not here: spec's parsers emit codes too (through `helmbench.diagnostics`),
and spec comes before lint, so the catalogue sits below both.
"""

from helmbench.codes import CODES, Code

__all__ = ["CODES", "Code"]
