"""The Typer application every command module registers on.

Command modules import their stage lazily inside the command body, so that `helmbench
lint` never pays for importing litellm, datasette or mkdocs.
"""

import typer

from helmbench.cli.guard import GuardedGroup

app = typer.Typer(
    cls=GuardedGroup,  # every command's failure rendered as error:/hint: in one place
    name="helmbench",
    help="HELMBench: lint, compile, run and publish a mental-health safety benchmark for language models.\n\n"
    "Typical flow: helmbench lint benchmark → helmbench compile benchmark → helmbench run → helmbench publish",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
