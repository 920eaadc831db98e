"""Where the site reads from: results.db, the manifest and the Datasette base URL.

`mkdocs build` has no command-line options for a hook, so the inputs travel as environment
variables (`helmbench publish` sets them); relative paths are resolved against the folder
of mkdocs.yml, so `mkdocs build` from the repository root needs none of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ENV_DB = "HELMBENCH_DB"
ENV_MANIFEST = "HELMBENCH_MANIFEST"
ENV_DATASETTE_URL = "HELMBENCH_DATASETTE_URL"
#: "1": imported runs (`helmbench import transcripts`) are ranked on the leaderboard, marked (`publish --include-imported`).
ENV_INCLUDE_IMPORTED = "HELMBENCH_INCLUDE_IMPORTED"

DEFAULT_DB = Path("build/results.db")
DEFAULT_MANIFEST = Path("build/manifest.jsonl")
DEFAULT_DATASETTE_URL = "http://127.0.0.1:8001"
#: The database name Datasette serves the snapshot under (`helmbench serve` names the file so).
DATASETTE_DB_NAME = "results"


@dataclass(frozen=True)
class PublishSettings:
    db: Path
    manifest: Path
    datasette_url: str  # no trailing slash
    include_imported: bool = False  # imported runs on the leaderboard beside live runs (marked), not only on their pages

    @classmethod
    def from_env(cls, base_dir: str | Path = ".", environ: dict | None = None) -> "PublishSettings":
        env = os.environ if environ is None else environ
        base = Path(base_dir)

        def path(name: str, default: Path) -> Path:
            p = Path(env.get(name) or default)
            return p if p.is_absolute() else base / p

        url = (env.get(ENV_DATASETTE_URL) or DEFAULT_DATASETTE_URL).rstrip("/")
        return cls(db=path(ENV_DB, DEFAULT_DB), manifest=path(ENV_MANIFEST, DEFAULT_MANIFEST), datasette_url=url,
                   include_imported=env.get(ENV_INCLUDE_IMPORTED) == "1")

    def as_env(self) -> dict[str, str]:
        """The environment variables that make a `mkdocs build` read these settings."""
        return {ENV_DB: str(self.db.resolve()), ENV_MANIFEST: str(self.manifest.resolve()),
                ENV_DATASETTE_URL: self.datasette_url, ENV_INCLUDE_IMPORTED: "1" if self.include_imported else "0"}
