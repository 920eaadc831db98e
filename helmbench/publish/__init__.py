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
import re
from contextlib import contextmanager
from pathlib import Path

from helmbench.publish.settings import PublishSettings


#: Environment variables that look like credentials: absent while a site is built, so that no
#: template, hook or configuration value can copy one into a page (publishing needs none).
SECRET_ENV = re.compile(r"API_KEY|(^|_)KEY($|_)|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|(^|_)AUTH",
                        re.IGNORECASE)


@contextmanager
def _environment(values: dict[str, str]):
    hidden = [k for k in os.environ if SECRET_ENV.search(k)]
    saved = {k: os.environ.get(k) for k in [*values, *hidden]}
    for k in hidden:
        del os.environ[k]
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
               project_dir: str | Path | None = None, allow_code: bool = False) -> Path:
    """Run `mkdocs build` with `settings` as inputs; returns the site folder.

    The packaged configuration and pages (`siteconfig.py`) are the defaults; `config_file`
    (default: `project_dir/mkdocs.yml` when there is one) and `project_dir/site/` override
    or extend them, read as data (`allow_code`: also take their hooks, plugins, templates and
    scripts, and build in a child process whose environment holds no credentials). The site lands in `site_dir` (default: `build/site` beside the database): mkdocs
    builds into a fresh folder HELMBench creates beside it, which then replaces it whole, so a
    link planted in the site folder can never lead mkdocs' writes elsewhere (a site folder that
    is, or holds, a link is refused), and a failed build leaves the previous site as it was.
    Raises `helmbench.errors.HelmbenchError` when the build fails (with --strict, on any warning).
    """
    import shutil

    from helmbench import safewrite
    from helmbench.errors import UsageError

    project = Path(project_dir) if project_dir is not None else None
    if config_file is not None:
        config_path: Path | None = Path(config_file)
        if not config_path.is_file():
            raise UsageError(f"mkdocs configuration not found: {config_path}",
                             hint="leave out -f to use the packaged site configuration")
    else:
        config_path = project / "mkdocs.yml" if project is not None and (project / "mkdocs.yml").is_file() else None
    out_dir = Path(site_dir) if site_dir is not None else settings.db.parent / "site"
    link = safewrite.links_in(out_dir) if out_dir.exists() or out_dir.is_symlink() else None
    if link is not None:
        raise safewrite.UnsafeWrite(f"refusing to build the site into {out_dir}: {link} is a symbolic link; "
                                    "nothing was written", hint="remove the link, or pass another --site-dir")
    fresh = safewrite.fresh_dir(out_dir.parent, f".{out_dir.name}-building-")
    work = safewrite.fresh_dir(out_dir.parent, f".{out_dir.name}-pages-")  # the merged pages, if any
    try:
        if allow_code:
            _build_in_child(settings, config_path, project, work, fresh, strict)
        else:
            with _environment(settings.as_env()):
                run_mkdocs(config_path, project, work, fresh, strict, allow_code=False)
        safewrite.swap_dir(fresh, out_dir)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    return out_dir.absolute()


def run_mkdocs(config_path: Path | None, project: Path | None, work: Path, site_dir: Path, strict: bool,
               allow_code: bool) -> None:
    """mkdocs build of the merged configuration into `site_dir`, in this process; HelmbenchError if it fails."""
    from helmbench.errors import HelmbenchError

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.commands.build import build
    from mkdocs.exceptions import MkDocsException

    from helmbench.publish import siteconfig

    try:
        cfg = siteconfig.load(user_config=config_path, project_dir=project, work_dir=work,
                              site_dir=site_dir, strict=strict, allow_code=allow_code)
        cfg.plugins.on_startup(command="build", dirty=False)
        try:
            build(cfg)
        finally:
            cfg.plugins.on_shutdown()
    except MkDocsException as exc:
        raise HelmbenchError(f"the site build failed: {exc}") from None


def scrubbed_environment(values: dict[str, str]) -> dict[str, str]:
    """This process's environment without anything that looks like a credential, plus `values`."""
    return {**{k: v for k, v in os.environ.items() if not SECRET_ENV.search(k)}, **values}


def _build_in_child(settings: PublishSettings, config_path: Path | None, project: Path | None, work: Path,
                    site_dir: Path, strict: bool) -> None:
    """The build with the repository's own code allowed (`--allow-site-code`), in a child process started
    with a scrubbed environment: its hooks find no credential in `os.environ` or `/proc/self/environ`
    (hiding them in this process's `os.environ` would not reach the latter). It still runs as this user."""
    import json
    import subprocess
    import sys

    from helmbench.errors import HelmbenchError

    logger = logging.getLogger("mkdocs")
    request = {"config": str(config_path) if config_path else None, "project": str(project) if project else None,
               "work": str(work), "site_dir": str(site_dir), "strict": strict,
               "log_level": logger.level if logger.handlers else None}
    proc = subprocess.run([sys.executable, "-m", "helmbench.publish.build_child"], input=json.dumps(request),
                          stdout=subprocess.PIPE, text=True, env=scrubbed_environment(settings.as_env()))
    if proc.returncode != 0:
        try:
            message = json.loads(proc.stdout.strip().splitlines()[-1])["error"]
        except (ValueError, IndexError, KeyError, TypeError):
            message = f"the site build failed (its process exited with status {proc.returncode})"
        raise HelmbenchError(str(message))


def log_to_stderr(level: int = logging.INFO) -> None:
    """Show mkdocs' own log lines (as `mkdocs build` would) when building from the CLI."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    logger.setLevel(level)


__all__ = ["PublishSettings", "build_site", "log_to_stderr"]
