"""`helmbench schema`: JSON Schemas of every authored file, for editors, and of every output a program reads.

The input schemas are generated from the same Pydantic models the loader validates with, so an
editor that validates frontmatter while an author types agrees with `helmbench lint` by
construction. The output schemas (`report --format json`, a review plan, a verdicts file, …) are
written by hand, one file per output in `output_schemas/` beside this module (shipped in the
package), each with the `format` its output carries: the tests validate every command's real
output against them, so the code cannot change a shape without its schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app

from helmbench.api import input_schemas as build_schemas  # noqa: E402  (the authored files' schemas)


#: Where the output schemas live: shipped in the package, one `<output>.schema.json` each.
OUTPUT_SCHEMAS = Path(__file__).resolve().parent / "output_schemas"


def output_schemas() -> dict[str, dict]:
    """{output name: JSON Schema} of every machine-readable output (`report` for report.schema.json, …)."""
    import json

    suffix = ".schema.json"
    return {p.name[: -len(suffix)]: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(OUTPUT_SCHEMAS.glob(f"*{suffix}"))}


def all_schemas() -> dict[str, dict]:
    """{file name: JSON Schema}: the authored files', then the outputs'."""
    return {**build_schemas(), **{f"{stem}.schema.json": s for stem, s in output_schemas().items()}}


def _text(schema: dict) -> str:
    import json

    return json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


@app.command()
def schema(
    out: Path = typer.Option(Path("build/schemas"), "--out", "-o", help="Folder to write the schemas to."),
    list_: bool = typer.Option(False, "--list", help="List the schemas (file name and what it describes); write nothing."),
    print_: Optional[str] = typer.Option(None, "--print",
                                         help="Print this one schema (e.g. report.schema.json); write nothing."),
) -> None:
    """Write JSON Schemas of frontmatter and YAML files (scenario.schema.json, …) for editors, and of
    every output a program reads (report.schema.json, costs.schema.json, review-plan.schema.json, …).

    Each output schema's `format` is the version its output carries (`"format": 1`); a change of
    shape comes with a new version. The reference page lists what each output schema describes.

    Examples:

        helmbench schema --list

        helmbench schema --print report.schema.json > report.schema.json

    VS Code (YAML extension): map `build/schemas/benchmark.schema.json` to `benchmark/benchmark.yml`
    under `yaml.schemas`.
    """
    from helmbench.api import write_text
    from helmbench.cli import validate
    from helmbench.errors import UsageError
    from helmbench.terminal import printable

    schemas = all_schemas()
    if list_:  # a plugin's schema names and descriptions are its own text: shown, never obeyed by the terminal
        for name, one in schemas.items():
            what = " ".join(str(one.get("title") or one.get("description") or "").split())[:100]
            typer.echo(printable(f"{name}\t{what}", keep="\t"))
        return
    if print_ is not None:
        if print_ not in schemas:
            raise UsageError(f"--print: no schema named {printable(print_[:80])!r}",
                             hint="see them with: helmbench schema --list")
        typer.echo(_text(schemas[print_]), nl=False)
        return
    validate.output_dir(out, "--out")
    for name, one in schemas.items():
        write_text(out / name, _text(one), out)  # never through a link below --out
        print(out / name)
