"""The lanes of judgements: the first (the one results use) and the re-judge lanes of `run --rejudge-sample`.

A module of its own because both the judgement writer (store/judgements.py) and the ledger's and judgements'
queries (store/queries/) read the mark, and the writer reads those queries: here it is below both.
"""

from __future__ import annotations

#: The re-judge lane (`run --rejudge-sample`): a judgement asked again is keyed by the first lane's settings
#: hash with this mark and the replicate number (`sha256:…#rejudge1`). Why in the key: the rejudge must
#: never reuse the first verdict, nor the first lane a rejudge (the cache is keyed by what was asked, and
#: the request and its settings are the same); why visible: the ledger's `settings_hash` and the
#: judgements row then say which lane a call was, and the pair (first, rejudge) is one exact join.
REJUDGE_MARK = "#rejudge"


def lane_settings_hash(settings_hash: str, replicate: int) -> str:
    """The judgement key's settings hash in lane `replicate` (0: the first lane, the one results use)."""
    return settings_hash if replicate == 0 else f"{settings_hash}{REJUDGE_MARK}{replicate}"
