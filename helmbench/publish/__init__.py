"""Publishing: the static site (mkdocs-material, pages generated at build time) and Datasette.

- `build_site(...)` runs `mkdocs build` in-process with the site's inputs (what `helmbench
  publish` does) with the packaged configuration (`mkdocs.yml`, `site_default/`) and whatever the
  benchmark repository adds (`siteconfig.py`); `site.py` and `pages.py` say how pages are generated,
  `hooks.py` is the file the configuration names.
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


def build_site(settings: PublishSettings, *, config_file: str | Path | None = None,
               site_dir: str | Path | None = None, strict: bool = False,
               project_dir: str | Path | None = None) -> Path:
    """Run `mkdocs build` with `settings` as inputs; returns the site folder.

    The packaged configuration and pages (`siteconfig.py`) are the defaults; `config_file`
    (default: `project_dir/mkdocs.yml` when there is one) and `project_dir/site/` override
    or extend them. The site lands in `site_dir` (default: `build/site` beside the database).
    Raises `helmbench.errors.HelmbenchError` when the build fails (with --strict, on any warning).
    """
    from helmbench.errors import HelmbenchError, UsageError

    project = Path(project_dir) if project_dir is not None else None
    if config_file is not None:
        config_path: Path | None = Path(config_file)
        if not config_path.is_file():
            raise UsageError(f"mkdocs configuration not found: {config_path}",
                             hint="leave out -f to use the packaged site configuration")
    else:
        config_path = project / "mkdocs.yml" if project is not None and (project / "mkdocs.yml").is_file() else None
    out_dir = Path(site_dir) if site_dir is not None else settings.db.parent / "site"
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.commands.build import build
    from mkdocs.exceptions import MkDocsException

    from helmbench.publish import siteconfig

    with _environment(settings.as_env()):
        try:
            cfg = siteconfig.load(user_config=config_path, project_dir=project, work_dir=out_dir.parent,
                                  site_dir=out_dir, strict=strict)
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
