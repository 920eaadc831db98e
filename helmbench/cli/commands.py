"""Imports every command module so that each registers itself on the app.

Each module is owned by one pipeline stage; adding a stage means adding one line here.
"""

from helmbench.cli import lint_cmd  # noqa: F401
from helmbench.cli import manifest_cmd  # noqa: F401
from helmbench.cli import schema_cmd  # noqa: F401
from helmbench.cli import run_cmd  # noqa: F401
from helmbench.cli import publish_cmd  # noqa: F401
from helmbench.cli import report_cmd  # noqa: F401
from helmbench.cli import init_cmd  # noqa: F401
from helmbench.cli import plugins_cmd  # noqa: F401
from helmbench.cli import generate_cmd  # noqa: F401
from helmbench.cli import agreement_cmd  # noqa: F401
from helmbench.cli import review_cmd  # noqa: F401
from helmbench.cli import export_cmd  # noqa: F401
from helmbench.cli import merge_cmd  # noqa: F401
from helmbench.cli import import_cmd  # noqa: F401
