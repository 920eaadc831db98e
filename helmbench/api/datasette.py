"""The raw results in Datasette from Python (`helmbench serve`): a consistent snapshot, its metadata, and the
command that serves it read-only, or a public copy to publish.

Why a module of its own: serving the rows behind the numbers is one concept apart from building the site; the
command line runs the returned command in the foreground (Ctrl-C handling is the terminal's business).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable


@dataclass
class DatasetteFiles:
    """What `datasette_serve` or `datasette_publish` wrote: the snapshot, its metadata.json, the plugins folder a
    public host must be started with (publish only), and the command that serves it (serve only)."""

    snapshot: Path
    metadata: Path
    plugins: Path | None = None
    command: list[str] = field(default_factory=list)


def datasette_serve(db: str | Path, serve_dir: str | Path, *, port: int = 8001, site_url: str | None = None,
                    allow_hosts: Iterable[str] = ()) -> DatasetteFiles:
    """Snapshot `db` (`VACUUM INTO`: a run may be writing to it) into `serve_dir` with its metadata, and return
    the command that serves it immutable on 127.0.0.1:`port`, answering only loopback names and `allow_hosts`."""
    from helmbench.publish import datasette

    serve_dir = Path(serve_dir)
    snap = datasette.new_snapshot(Path(db), serve_dir)
    meta = datasette.write_metadata(snap, serve_dir / "metadata.json", site_url=site_url)
    return DatasetteFiles(snap, meta, None, datasette.serve_command(snap, meta, port, allow_hosts=tuple(allow_hosts)))


def datasette_publish(db: str | Path, out_dir: str | Path, *, site_url: str | None = None) -> DatasetteFiles:
    """Write a public copy of `db` into `out_dir` for `datasette publish`: only the tables the leaderboard reads
    (no reviews, no generations), its metadata, and the plugins folder that keeps visitors' SQL plain."""
    from helmbench.publish import datasette

    out_dir = Path(out_dir)
    snap = datasette.snapshot(Path(db), out_dir, public=True)
    meta = datasette.write_metadata(snap, out_dir / "metadata.json", site_url=site_url)
    return DatasetteFiles(snap, meta, datasette.write_plugins(out_dir))
