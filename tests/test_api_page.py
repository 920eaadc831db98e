"""The API page's examples run, in order, as a notebook would: the page cannot drift from the API.

Each ```python block of helmbench/publish/site_default/api.md is executed in one namespace,
in a temporary folder holding the example benchmark the page starts from (`helmbench init
my-benchmark`), with OPENROUTER_API_BASE pointing at the fake OpenRouter server of tests/fakes
(litellm really talks to it over HTTP). A block that raises, or whose assert fails, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PAGE = REPO / "helmbench" / "publish" / "site_default" / "api.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


def test_the_page_is_in_the_site_navigation():
    nav = (REPO / "helmbench" / "publish" / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s+- [^:\n]+: api\.md$", nav, re.M)


def test_the_page_covers_the_whole_flow():
    code = "\n".join(python_blocks(PAGE.read_text(encoding="utf-8")))
    for call in ("helmbench.lint(", "helmbench.compile(", "dry_run=True", "helmbench.run(", "helmbench.report(",
                 "helmbench.publish("):
        assert call in code, call


def test_every_python_block_of_the_page_runs(tmp_path, monkeypatch, capsys):
    from helmbench.cli.init_cmd import scaffold
    from tests.fakes.openrouter import FakeOpenRouter

    text = PAGE.read_text(encoding="utf-8")
    assert "helmbench init my-benchmark" in text  # the set-up this test repeats
    scaffold(tmp_path / "my-benchmark")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(text)
    assert len(blocks) >= 6
    with FakeOpenRouter() as fake:
        monkeypatch.setenv("OPENROUTER_API_BASE", fake.api_base)
        monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-test-not-a-key")
        monkeypatch.setenv("HELMBENCH_RETRY_BASE_DELAY", "0.01")
        namespace: dict = {"__name__": "__api_page__"}
        for number, block in enumerate(blocks, 1):
            try:
                exec(compile(block, f"{PAGE.name} python block {number}", "exec"), namespace)
            except Exception as exc:  # say which block failed, with its code
                raise AssertionError(f"api.md python block {number} failed: {exc!r}\n{block}") from exc
        assert fake.stats()["total"] > 0  # the run block really called the provider
    out = capsys.readouterr().out
    assert "dry-run" in out and "completed" in out
    assert (tmp_path / "my-benchmark" / "build" / "site" / "index.html").is_file()


def test_the_page_shows_runs_real_signature():
    """The signature on the page is the function's, parameter for parameter (defaults included)."""
    import inspect

    import helmbench

    parts, star = [], False
    for p in inspect.signature(helmbench.run).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind is p.VAR_KEYWORD:
            parts.append("**" + p.name)
            continue
        parts.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
    assert f"`run({', '.join(parts)})`" in PAGE.read_text(encoding="utf-8")


def test_the_page_names_every_option_run_passes_on_with_its_default():
    """`run(..., **options)` passes `options` to `run_options`: each of those the signature above does not
    show (`shard`, ...) is named on the page with its real default, so a new option cannot stay hidden."""
    import inspect

    import helmbench

    shown = inspect.signature(helmbench.run).parameters
    text = PAGE.read_text(encoding="utf-8")
    hidden = [p for p in inspect.signature(helmbench.api.run_options).parameters.values() if p.name not in shown]
    assert "shard" in {p.name for p in hidden}
    for p in hidden:
        assert f"`{p.name}={p.default!r}`".replace("'", '"') in text, p.name


def public_functions() -> list[str]:
    """The functions `helmbench.api` offers: every public callable defined in helmbench.api or its modules."""
    import inspect

    from helmbench import api

    return sorted(name for name, f in vars(api).items()
                  if not name.startswith("_") and inspect.isfunction(f) and f.__module__.startswith("helmbench.api"))


def test_the_page_lists_every_function_of_the_api():
    """Every command is one API call (#41 §1): each function is on the page, so none stays private by omission."""
    text = PAGE.read_text(encoding="utf-8")
    names = public_functions()
    assert {"review_plan", "review_packets", "review_status", "review_import", "review_export", "costs"} <= set(names)
    missing = [n for n in names if f"`{n}(" not in text]
    assert not missing, f"api.md does not list: {', '.join(missing)}"
