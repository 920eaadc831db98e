"""The names of the model pages: a URL- and file-safe slug of each model id, unique within the site.

Why a module: a model's page, its chart file and the anchors that link to it are named by this one rule, which
the reader (publish/reader.py) applies once and the tests use to find a model's page.
"""

from __future__ import annotations

import re


def slugify(model_id: str) -> str:
    """A URL- and file-safe slug of a model id: `openai/gpt-4.1` → `openai--gpt-4.1`."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model_id.replace("/", "--")).strip("-.")
    return slug or "model"


def unique_slugs(model_ids: list[str]) -> dict[str, str]:
    slugs: dict[str, str] = {}
    used: set[str] = set()
    for mid in model_ids:
        base = slug = slugify(mid)
        n = 2
        while slug.lower() in used:
            slug, n = f"{base}-{n}", n + 1
        used.add(slug.lower())
        slugs[mid] = slug
    return slugs
