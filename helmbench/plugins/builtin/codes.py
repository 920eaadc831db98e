"""The built-in diagnostic codes, as the registry checks plugin codes against them."""

from __future__ import annotations


def builtin_codes() -> dict:
    from helmbench.lint.codes import CODES

    return CODES
