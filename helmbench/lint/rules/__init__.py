"""Every rule module is imported here so that its rules register."""

from helmbench.lint.rules import benchmark  # noqa: F401
from helmbench.lint.rules import components  # noqa: F401
from helmbench.lint.rules import conversation  # noqa: F401
from helmbench.lint.rules import criteria  # noqa: F401
from helmbench.lint.rules import evaluation  # noqa: F401
from helmbench.lint.rules import models  # noqa: F401
from helmbench.lint.rules import prompt_tags  # noqa: F401
from helmbench.lint.rules import schema  # noqa: F401
from helmbench.lint.rules import schema_safety  # noqa: F401
from helmbench.lint.rules import headings  # noqa: F401
from helmbench.lint.rules import titles  # noqa: F401
