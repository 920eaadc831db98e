"""Every rule module is imported here so that its rules register."""

from helmbench.lint.rules import components  # noqa: F401
