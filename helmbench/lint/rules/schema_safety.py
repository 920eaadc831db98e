"""Rules that keep a response schema self-contained and usable: no `$ref` out of the file,
no invalid regular expression.

The run stage validates every answer against the schema with reference retrieval switched
off; a reference to a URL or another file, or a `pattern` Python cannot compile, would fail
every answer after the calls were paid for (and, before retrieval was switched off, fetched
the URL or read the file). Lint refuses both, so compile refuses them too.
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint import schemas
from helmbench.lint.jsonpos import locate
from helmbench.lint.rulebook import rule
from helmbench.spec.tree import Benchmark


@rule("HB154", "HB155")
def schema_safety(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        if sc.schema is None or sc.schema_source is None:
            continue
        found = schemas.inner(sc.schema) or schemas.Inner(sc.schema, ())
        src = sc.schema_source
        for code, problems in (("HB154", schemas.foreign_refs(found.schema, found.prefix)),
                               ("HB155", schemas.bad_patterns(found.schema, found.prefix))):
            for path, message in problems:
                line, col = locate(src.text, path)
                out.add(code, src.path, line, message, col=col)
