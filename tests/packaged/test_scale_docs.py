"""The "Running at scale" commands of the authors' guide, followed as written in a repository `helmbench init`
made, leave no results database where git would pick it up (a shard's database committed by `git add .`)."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "helmbench" / "publish" / "site_default" / "authors-guide.md"
IGNORE = REPO / "helmbench" / "cli" / "init_template" / "_dot_gitignore"


def _scale_block() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("## Running at scale"):]
    return section[section.index("```bash"):section.index("```", section.index("```bash") + 3)]


def test_every_database_the_scale_commands_write_is_ignored_by_the_init_gitignore():
    ignored = [line.strip().rstrip("/") for line in IGNORE.read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")]
    written = re.findall(r"--db (\S+)", _scale_block()) + re.findall(r"helmbench merge (\S+)", _scale_block())
    assert len(written) == 4  # three shards and the merged database
    for path in written:
        assert PurePosixPath(path).parts[0] in ignored, f"{path} would be committed by `git add .`"
