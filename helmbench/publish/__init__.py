"""Publishing: the static site (mkdocs-material, pages generated at build time) and Datasette.

- `build_site(...)` runs `mkdocs build` in-process with the site's inputs (what `helmbench
  publish` does); `site.py` and `pages.py` say how pages are generated, `hooks.py` is the file
  mkdocs.yml names.
- `datasette.py` snapshots results.db and writes Datasette metadata (`helmbench serve`).

Nothing here is imported by lint or compile; mkdocs and matplotlib load only when a site is built.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path

from helmbench.publish.settings import PublishSettings


@contextmanager
def _environment(values: dict[str, str]):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def build_site(settings: PublishSettings, *, config_file: str | Path = "mkdocs.yml",
               site_dir: str | Path | None = None, strict: bool = False) -> Path:
    """Run `mkdocs build` on `config_file` with `settings` as inputs; returns the site folder.

    Raises `helmbench.errors.HelmbenchError` when the build fails (with --strict, on any warning).
    """
    from helmbench.errors import HelmbenchError, UsageError

    config_path = Path(config_file)
    if not config_path.is_file():
        raise UsageError(f"mkdocs configuration not found: {config_path}", hint="run from the repository root, or pass -f")
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    with _environment(settings.as_env()):
        try:
            cfg = load_config(config_file=str(config_path), site_dir=str(site_dir) if site_dir else None, strict=strict)
            cfg.plugins.on_startup(command="build", dirty=False)
            try:
                build(cfg)
            finally:
                cfg.plugins.on_shutdown()
        except MkDocsException as exc:
            raise HelmbenchError(f"the site build failed: {exc}") from None
    return Path(cfg.site_dir)


def log_to_stderr(level: int = logging.INFO) -> None:
    """Show mkdocs' own log lines (as `mkdocs build` would) when building from the CLI."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    logger.setLevel(level)


__all__ = ["PublishSettings", "build_site", "log_to_stderr"]
