"""The mkdocs configuration a build uses: the packaged defaults, plus what a benchmark repository adds.

Why: the site's theme, hook, pages and scripts belong to the tool, so `helmbench publish` must
work in a repository that holds only a benchmark. A repository may still customise its site:
- its own `mkdocs.yml` (beside `build/`): its keys override the packaged ones (mappings such as
  `theme` or `validation` are merged one level deep; lists such as `nav` are replaced); relative
  paths in it are resolved against its folder, as mkdocs does;
- a `site/` folder (or the `docs_dir` its mkdocs.yml names, inside the repository): its files
  are added to the packaged pages, or replace a packaged page of the same path.
The output folder is always `build/site` (or `helmbench publish --site-dir`): a `site_dir` in the
repository's mkdocs.yml is ignored, so a build never writes outside build/ by surprise.

The repository's mkdocs.yml is data, not code: it arrives by pull request like the benchmark.
It is read with HELMBench's bounded safe YAML loader (never mkdocs' own, which runs `!ENV`,
`!relative` and `INHERIT`), a value with any other tag (`!ENV KEY`, `!!python/...`) is dropped
with a warning, and only the keys in `DATA_KEYS` are taken (theme options, nav, extra pages and
CSS, Markdown extensions from `SAFE_EXTENSIONS`). What would run code in the build or in the
pages — `hooks`, `plugins`, `theme.custom_dir` (Jinja templates can call Python),
`extra_javascript`, `extra_templates`, other Markdown extensions (each is a Python import) — is
taken only when the maintainer passes `helmbench publish --allow-site-code`; without it each
is named in a warning and left out. The packaged hook always runs first.

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


#: Keys of a repository's mkdocs.yml taken as data.
DATA_KEYS = frozenset({
    "site_name", "site_description", "site_author", "site_url", "copyright", "repo_url", "repo_name", "edit_uri",
    "nav", "theme", "extra", "extra_css", "markdown_extensions", "validation", "not_in_nav", "exclude_docs",
    "draft_docs", "use_directory_urls", "docs_dir",
})
#: Keys that make the build or the pages run the repository's code: only with --allow-site-code.
CODE_KEYS = frozenset({"hooks", "plugins", "extra_javascript", "extra_templates"})
#: Markdown extensions a repository may turn on without --allow-site-code: Python-Markdown's and
#: pymdownx's that only change how text renders (no file inclusion such as pymdownx.snippets).
SAFE_EXTENSIONS = frozenset({
    "abbr", "admonition", "attr_list", "def_list", "footnotes", "md_in_html", "tables", "toc", "sane_lists",
    "smarty", "meta", "nl2br", "wikilinks", "fenced_code", "codehilite",
    "pymdownx.arithmatex", "pymdownx.betterem", "pymdownx.caret", "pymdownx.critic", "pymdownx.details",
    "pymdownx.highlight", "pymdownx.inlinehilite", "pymdownx.keys", "pymdownx.mark", "pymdownx.smartsymbols",
    "pymdownx.superfences", "pymdownx.tabbed", "pymdownx.tasklist", "pymdownx.tilde", "pymdownx.blocks.admonition",
    "pymdownx.blocks.details", "pymdownx.blocks.tab", "pymdownx.saneheaders", "pymdownx.escapeall",
})
MAX_CONFIG_BYTES = 1 << 20


def _warn(message: str) -> None:
    import logging

    logging.getLogger("mkdocs.plugins.helmbench").warning("helmbench: %s", message)


def _read_user_config(path: Path) -> dict:
    """The repository's mkdocs.yml as plain data (see the module's docstring)."""
    from helmbench.errors import UsageError
    from helmbench.spec.yamlio import YamlError, load_yaml

    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise UsageError(f"{path}: larger than {MAX_CONFIG_BYTES >> 10} KB: not a site configuration")
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    inert: list = []
    try:
        data, _ = load_yaml(text, inert_tags=inert)
    except YamlError as exc:
        raise UsageError(f"{path}:{exc.line}:{exc.col}: not a valid mkdocs configuration: {exc.message}") from None
    for tag, line in inert:
        _warn(f"{path}:{line}: the value tagged {tag} is ignored (a site configuration is read as data: no "
              "environment variables, no Python objects)")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: an mkdocs configuration must be a mapping of keys")
    return _plain(data)


def _plain(value):
    """LineDict/LineList as plain dict/list, so nothing of the loader reaches mkdocs."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _extension_name(entry) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and len(entry) == 1:
        return next(iter(entry))
    return None


def allowed(user: dict, *, allow_code: bool, where: Path) -> dict:
    """The keys of a repository's configuration the build takes (with a warning for each left out)."""
    out: dict = {}
    for key, value in user.items():
        if key == "hooks" and isinstance(value, list):  # naming the packaged hook (this repository's file) is no code of its own
            value = [h for h in value if not _same(Path(str(h)) if Path(str(h)).is_absolute()
                                                   else where.absolute().parent / str(h), HOOKS)] or None
        if value is None:
            continue
        if key in CODE_KEYS and not allow_code:
            _warn(f"{where}: `{key}` is ignored: it would run code from the repository "
                  "(pass --allow-site-code if you trust it)")
            continue
        if key not in DATA_KEYS and key not in CODE_KEYS:
            if key not in ("INHERIT", "site_dir"):
                _warn(f"{where}: `{key}` is not a setting a benchmark's site may change; ignored")
            continue
        out[key] = value
    theme = out.get("theme")
    if isinstance(theme, dict):
        theme = {k: v for k, v in theme.items() if k != "name"}  # the packaged theme (material) is the site
        if "custom_dir" in theme and not allow_code:
            _warn(f"{where}: `theme.custom_dir` is ignored: its templates would run code "
                  "(pass --allow-site-code if you trust it)")
            theme.pop("custom_dir")
        out["theme"] = theme
    elif "theme" in out:
        _warn(f"{where}: `theme` must be a mapping of options; ignored")
        out.pop("theme")
    if "markdown_extensions" in out:
        exts = out["markdown_extensions"] if isinstance(out["markdown_extensions"], list) else []
        kept = []
        for entry in exts:
            name = _extension_name(entry)
            if name is None or (name not in SAFE_EXTENSIONS and not allow_code):
                _warn(f"{where}: Markdown extension {str(name or entry)[:80]!r} is ignored: only "
                      "text-formatting extensions are taken (pass --allow-site-code for others)")
                continue
            kept.append(entry)
        out["markdown_extensions"] = kept
    return out


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
    dest = work_dir / "site-src"  # work_dir: a fresh folder of this build (no link can be in it)
    count = [0]
    _copy_pages(DEFAULT_DOCS, dest, count)
    _copy_pages(extra, dest, count)
    return dest


def _inside(path: Path, base: Path, where: Path, key: str) -> Path | None:
    """`path` when it is a folder inside `base` reached without a link; None (with a warning) otherwise."""
    try:
        real = path.resolve()
        ok = real.is_relative_to(base.resolve()) and not any(  # the base itself may be a link the user made
            p.is_symlink() for p in [path, *path.parents] if p != base and p.is_relative_to(base))
    except OSError:
        ok = False
    if not ok:
        _warn(f"{where}: `{key}` {path} lies outside the repository or goes through a link; ignored")
        return None
    return path


def overrides(*, user_config: Path | None, project_dir: Path | None, work_dir: Path, site_dir: Path,
              allow_code: bool = False) -> dict:
    """The keys to lay over the packaged configuration, every path absolute."""
    from mkdocs.utils import yaml_load

    with open(DEFAULT_CONFIG, "rb") as f:
        defaults = yaml_load(f)  # our own packaged file (it uses no tag)
    user = _read_user_config(user_config) if user_config is not None else {}
    base = user_config.absolute().parent if user_config is not None else None
    user = allowed(user, allow_code=allow_code, where=user_config) if user_config is not None else {}
    out: dict = {}
    for key, value in user.items():
        if key in ("docs_dir", "hooks"):
            continue
        if isinstance(value, dict) and isinstance(defaults.get(key), dict):
            value = {**defaults[key], **value}
        out[key] = value
    theme = out.get("theme")
    if isinstance(theme, dict) and isinstance(theme.get("custom_dir"), str) and base is not None:
        theme["custom_dir"] = str(base / theme["custom_dir"])
    hooks = [str(HOOKS)]
    for h in user.get("hooks") or []:
        p = Path(str(h)) if base is None or Path(str(h)).is_absolute() else base / str(h)
        if not _same(p, HOOKS):
            hooks.append(str(p))
    out["hooks"] = hooks
    extra = None
    if base is not None and user.get("docs_dir"):
        extra = _inside(base / str(user["docs_dir"]), base, user_config, "docs_dir")
    elif project_dir is not None and (project_dir / PAGES_FOLDER).is_dir():
        extra = _inside(project_dir / PAGES_FOLDER, project_dir, project_dir, PAGES_FOLDER)
    out["docs_dir"] = str(merged_docs(extra, work_dir).absolute())
    out["site_dir"] = str(site_dir.absolute())
    return out


def load(*, user_config: Path | None, project_dir: Path | None, work_dir: Path, site_dir: Path, strict: bool,
         allow_code: bool = False):
    """The validated mkdocs config: the packaged file with the repository's overrides."""
    from mkdocs.config import load_config

    keys = overrides(user_config=user_config, project_dir=project_dir, work_dir=work_dir, site_dir=site_dir,
                     allow_code=allow_code)
    return load_config(config_file=str(DEFAULT_CONFIG), strict=strict, **keys)
