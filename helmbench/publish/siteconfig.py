"""The mkdocs configuration a build uses: the packaged defaults, plus what a benchmark repository adds.

Why: the site's theme, hook, pages and scripts belong to the tool, so `helmbench publish` must
work in a repository that holds only a benchmark. A repository may still customise its site:
- its own `mkdocs.yml` (beside `build/`): its keys override the packaged ones (mappings such as
  `theme` or `validation` are merged one level deep; lists such as `nav` are replaced); relative
  paths in it are resolved against its folder, as mkdocs does; its `hooks` run after ours;
- a `site/` folder (or the `docs_dir` its mkdocs.yml names): its files are added to the packaged
  pages, or replace a packaged page of the same path (e.g. `site/authors-guide.md`).
The output folder is always `build/site` (or `helmbench publish --site-dir`): a `site_dir` in the
repository's mkdocs.yml is ignored, so a build never writes outside build/ by surprise.

mkdocs resolves `docs_dir` and `hooks` against the configuration file's folder, so the build
loads the packaged file (whose relative paths point into the package) and passes the merged
keys as overrides with absolute paths; nothing is written but the merged pages folder, and
only when the repository has pages of its own.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
DEFAULT_CONFIG = PACKAGE / "mkdocs.yml"
DEFAULT_DOCS = PACKAGE / "site_default"
HOOKS = PACKAGE / "hooks.py"
PAGES_FOLDER = "site"  # a benchmark repository's own pages, when its mkdocs.yml names no docs_dir
#: Bound on a repository's own pages copied into the build (they are its maintainers' files,
#: but a pull request could add anything).
MAX_PAGE_FILES = 2000


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _read_user_config(path: Path) -> dict:
    from helmbench.errors import UsageError
    from mkdocs.utils import yaml_load

    try:
        with open(path, "rb") as f:
            data = yaml_load(f)  # mkdocs' own loader: !ENV, !relative and INHERIT work as in `mkdocs build`
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except Exception as exc:  # noqa: BLE001 - yaml and INHERIT errors, reported as a message
        raise UsageError(f"{path}: not a valid mkdocs configuration: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: an mkdocs configuration must be a mapping of keys")
    return data


def _copy_pages(src: Path, dest: Path, count: list[int]) -> None:
    """Copy `src` into `dest` without following a symbolic link (nothing from outside the folder)."""
    from helmbench.errors import UsageError

    dest.mkdir(parents=True, exist_ok=True)
    for entry in sorted(os.scandir(src), key=lambda e: e.name):
        if entry.is_symlink():
            continue
        target = dest / entry.name
        if entry.is_dir(follow_symlinks=False):
            _copy_pages(Path(entry.path), target, count)
        elif entry.is_file(follow_symlinks=False):
            count[0] += 1
            if count[0] > MAX_PAGE_FILES:
                raise UsageError(f"{src}: more than {MAX_PAGE_FILES} files in the site's pages")
            if target.is_dir():
                shutil.rmtree(target)
            shutil.copyfile(entry.path, target)


def merged_docs(extra: Path | None, work_dir: Path) -> Path:
    """The packaged pages, or a copy of them with `extra`'s files added (in `work_dir/site-src`)."""
    if extra is None or not extra.is_dir() or _same(extra, DEFAULT_DOCS):
        return DEFAULT_DOCS
    dest = work_dir / "site-src"
    if dest.exists():
        shutil.rmtree(dest)
    count = [0]
    _copy_pages(DEFAULT_DOCS, dest, count)
    _copy_pages(extra, dest, count)
    return dest


def overrides(*, user_config: Path | None, project_dir: Path | None, work_dir: Path, site_dir: Path) -> dict:
    """The keys to lay over the packaged configuration, every path absolute."""
    from mkdocs.utils import yaml_load

    with open(DEFAULT_CONFIG, "rb") as f:
        defaults = yaml_load(f)
    user = _read_user_config(user_config) if user_config is not None else {}
    base = user_config.resolve().parent if user_config is not None else None
    out: dict = {}
    for key, value in user.items():
        if key in ("INHERIT", "docs_dir", "site_dir", "hooks"):
            continue
        if isinstance(value, dict) and isinstance(defaults.get(key), dict):
            value = {**defaults[key], **value}
        out[key] = value
    theme = out.get("theme")
    if isinstance(theme, dict) and isinstance(theme.get("custom_dir"), str) and base is not None:
        theme["custom_dir"] = str(base / theme["custom_dir"])
    hooks = [str(HOOKS)]
    for h in user.get("hooks") or []:
        p = Path(h) if base is None or Path(h).is_absolute() else base / h
        if not _same(p, HOOKS):
            hooks.append(str(p))
    out["hooks"] = hooks
    extra = None
    if base is not None and user.get("docs_dir"):
        extra = base / str(user["docs_dir"])
    elif project_dir is not None and (project_dir / PAGES_FOLDER).is_dir():
        extra = project_dir / PAGES_FOLDER
    out["docs_dir"] = str(merged_docs(extra, work_dir).absolute())
    out["site_dir"] = str(site_dir.absolute())
    return out


def load(*, user_config: Path | None, project_dir: Path | None, work_dir: Path, site_dir: Path, strict: bool):
    """The validated mkdocs config: the packaged file with the repository's overrides."""
    from mkdocs.config import load_config

    keys = overrides(user_config=user_config, project_dir=project_dir, work_dir=work_dir, site_dir=site_dir)
    return load_config(config_file=str(DEFAULT_CONFIG), strict=strict, **keys)
