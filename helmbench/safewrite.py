"""The one way HELMBench writes a file: safe against the tree it writes into.

Why one helper: a benchmark tree arrives by pull request, and a pull request can commit a
symbolic link anywhere (`scenarios/S1/perturbations.md -> ~/.bashrc`, a fixed temporary name
pointing at a file of the maintainer's, a `build` folder pointing elsewhere). Every writer
(generate, init, compile, publish, review export, snapshots) therefore goes through here, and
here every write:

- stays below a `root` the caller vouches for (the benchmark folder, its build folder, or a
  path the user named on the command line): the path is checked to be inside it, and every
  folder between the root and the file is opened without following links (`O_NOFOLLOW`, one
  component at a time, relative to its parent's descriptor), so a link anywhere below the root
  is refused rather than followed;
- never writes through a link: a target that is a symbolic link (or a folder) is refused;
- goes to a temporary file created exclusively (`O_EXCL`) with a random name in the target's
  own folder, then is renamed over the target in one step (`os.replace`, which replaces a name
  and never follows it): a reader sees the old file or the new one, never half of one, and a
  crash leaves at most a hidden temporary file;
- `exclusive=True` never replaces anything (the name is taken atomically with a hard link; a
  file made meanwhile is an error, not overwritten).

The root itself is trusted as named (a user may well keep `build` on another disk through a
link they made). Nothing here imports a stage, so every stage may use it.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from helmbench.errors import HelmbenchError

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class UnsafeWrite(HelmbenchError):
    """A write was refused: it would have followed a link or left the folder it belongs in."""

    exit_code = 2


def _refuse(path: Path | str, why: str) -> UnsafeWrite:
    return UnsafeWrite(f"refusing to write {path}: {why}; nothing was written",
                       hint="remove the symbolic link (a benchmark tree must hold ordinary files and folders), "
                            "or name an ordinary folder on the command line")


def _parts_below(path: Path, root: Path) -> list[str]:
    """The components of `path` below `root`, compared without resolving links (they are checked on the way)."""
    p = Path(os.path.normpath(os.path.abspath(path)))
    r = Path(os.path.normpath(os.path.abspath(root)))
    try:
        rel = p.relative_to(r)
    except ValueError:
        raise _refuse(path, f"it lies outside {root}") from None
    return list(rel.parts)


def _open_dir(root: Path, parts: list[str], *, create: bool, shown: Path) -> int:
    """A descriptor of root/parts…, each folder below the root opened without following a link."""
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        for name in parts:
            if create:
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refuse(shown, f"{name} on its way is a symbolic link or not a folder") from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _root_of(path: Path, root: Path | str | None) -> Path:
    root = Path(root) if root is not None else Path(path).parent
    try:
        Path(root).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise _refuse(path, f"{root} is not a folder") from None
    return Path(root)


def make_dir(folder: Path | str, root: Path | str | None = None) -> Path:
    """Create `folder` (and the folders up to it) below `root`, refusing any link on the way."""
    folder = Path(folder)
    base = _root_of(folder / "x", root if root is not None else folder)
    os.close(_open_dir(base, _parts_below(folder, base), create=True, shown=folder))
    return folder


def _target(dfd: int, name: str, shown: Path) -> os.stat_result | None:
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(shown, "it is a symbolic link")
    if stat.S_ISDIR(st.st_mode):
        raise _refuse(shown, "it is a folder")
    return st


def _folder_of(path: Path, root: Path | str | None) -> tuple[int, str]:
    """(a descriptor of `path`'s folder, opened safely below `root`; `path`'s name)."""
    base = _root_of(path, root)
    parts = _parts_below(path, base)
    if not parts:
        raise _refuse(path, "it is the folder itself")
    return _open_dir(base, parts[:-1], create=True, shown=path), parts[-1]


@contextmanager
def atomic(path: Path | str, root: Path | str | None = None, *, text: bool = False, encoding: str = "utf-8",
           newline: str | None = "\n", exclusive: bool = False, perms: int | None = None,
           before_replace: Callable[[], None] | None = None) -> Iterator:
    """A file object to write `path` through; the file appears (whole) only when the block ends
    without an exception. `root`: the folder the write must stay in (default: `path`'s folder).

    `exclusive`: refuse if `path` exists (never replaced). `perms`: the file's mode (default:
    0o666 less the umask, as `open` gives). `before_replace`: called just before the rename, to
    refuse at the last moment (e.g. the target changed meanwhile)."""
    path = Path(path)
    dfd, name = _folder_of(path, root)
    tmp = f".{name[:100]}.{secrets.token_hex(8)}.tmp"
    try:
        if _target(dfd, name, path) is not None and exclusive:
            raise FileExistsError(errno.EEXIST, "exists", str(path))
        fd = os.open(tmp, _NEW_FLAGS, 0o666, dir_fd=dfd)
        try:
            f = os.fdopen(fd, "w" if text else "wb", encoding=encoding if text else None,
                          newline=newline if text else None)
        except BaseException:
            os.close(fd)
            raise
        try:
            with f:
                yield f
                f.flush()
                if perms is not None:
                    os.fchmod(f.fileno(), perms)
                os.fsync(f.fileno())
            _target(dfd, name, path)  # a link put there meanwhile is refused; os.replace would replace it, not follow it
            if before_replace is not None:
                before_replace()
            if exclusive:
                _link_new(dfd, tmp, name, path)
            else:
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        finally:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except FileNotFoundError:
                pass
    finally:
        os.close(dfd)


def _link_new(dfd: int, tmp: str, name: str, shown: Path) -> None:
    """Give the temporary file its name only if the name is free (a hard link fails on an existing name)."""
    try:
        os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "exists", str(shown)) from None
    except OSError as exc:  # a file system without hard links: take the name with O_EXCL, then copy
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV):
            raise
        with open(os.open(name, _NEW_FLAGS, 0o666, dir_fd=dfd), "wb") as out, \
                open(os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=dfd), "rb") as src:
            shutil.copyfileobj(src, out)


def write_bytes(path: Path | str, data: bytes, root: Path | str | None = None, **kw) -> Path:
    """Write `data` at `path` safely (see `atomic` for the options)."""
    with atomic(path, root, **kw) as f:
        f.write(data)
    return Path(path)


def write_text(path: Path | str, text: str, root: Path | str | None = None, *, encoding: str = "utf-8",
               newline: str | None = "\n", **kw) -> Path:
    """Write `text` at `path` safely; `newline` as for `open` ("\\n": written as given)."""
    with atomic(path, root, text=True, encoding=encoding, newline=newline, **kw) as f:
        f.write(text)
    return Path(path)


def copy_file(src: Path | str, dest: Path | str, root: Path | str | None = None, **kw) -> Path:
    """Copy the ordinary file `src` to `dest` safely (a link as `src` is refused too)."""
    fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with open(fd, "rb") as inp, atomic(dest, root, **kw) as out:
        shutil.copyfileobj(inp, out, 1 << 20)
    return Path(dest)


def place(src: Path | str, dest: Path | str, root: Path | str | None = None) -> Path:
    """Move the finished file `src` (which HELMBench made, e.g. in a `fresh_dir`) to `dest` in one
    rename, below `root` and never through a link (for files another library writes, like SQLite's
    `VACUUM INTO`, which would follow a link at its target)."""
    dest = Path(dest)
    dfd, name = _folder_of(dest, root)
    try:
        _target(dfd, name, dest)
        os.replace(src, name, dst_dir_fd=dfd)
    finally:
        os.close(dfd)
    return dest


def open_in_place(path: Path | str, root: Path | str | None = None, flags: int = os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                  mode: int = 0o644) -> int:
    """A descriptor of `path` opened in place (for a file written as it goes: a run's log, a lock
    file), below `root` and never through a link: the folders on the way and the file itself are
    opened with `O_NOFOLLOW`, so a planted link is an error, not a write elsewhere."""
    path = Path(path)
    dfd, name = _folder_of(path, root)
    try:
        try:
            return os.open(name, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), mode, dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refuse(path, "it is a symbolic link") from None
            raise
    finally:
        os.close(dfd)


def links_in(folder: Path | str, limit: int = 200_000) -> Path | None:
    """The first symbolic link at or below `folder` (None: none), so a folder a tool will write
    into can be refused when a link in it could lead the tool's writes elsewhere."""
    folder = Path(folder)
    if folder.is_symlink():
        return folder
    seen = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            seen += 1
            p = Path(dirpath) / name
            if p.is_symlink():
                return p
            if seen > limit:
                return None
    return None


def fresh_dir(parent: Path | str, prefix: str, root: Path | str | None = None) -> Path:
    """A new, empty folder with a random name in `parent` (created below `root`), for a tool
    that writes many files itself (mkdocs): nothing in it can be a link HELMBench did not make."""
    parent = Path(parent)
    make_dir(parent, root)
    for _ in range(100):
        candidate = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            os.mkdir(candidate, 0o777)
        except FileExistsError:
            continue
        return candidate
    raise HelmbenchError(f"cannot create a new folder in {parent}")


def swap_dir(new: Path | str, dest: Path | str) -> Path:
    """Put the finished folder `new` at `dest` (a sibling), the old `dest` removed; `dest` must
    not be a link. Between the two renames `dest` is briefly missing, never half-written."""
    new, dest = Path(new), Path(dest)
    if dest.is_symlink():
        raise _refuse(dest, "it is a symbolic link")
    old = None
    if dest.exists():
        if not dest.is_dir():
            raise _refuse(dest, "it is a file, not a folder")
        old = dest.with_name(f".{dest.name}-old-{secrets.token_hex(6)}")
        os.rename(dest, old)
    try:
        os.rename(new, dest)
    except BaseException:
        if old is not None:
            os.rename(old, dest)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return dest


__all__ = ["UnsafeWrite", "atomic", "copy_file", "fresh_dir", "links_in", "make_dir", "open_in_place", "place", "swap_dir", "write_bytes",
           "write_text"]
