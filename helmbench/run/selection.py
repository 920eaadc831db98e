"""Which models and which scenarios an invocation covers, with clear errors for typos.

A typo in `--models` or `--scenario` must fail before any money is spent, naming the
closest valid value, rather than silently running nothing.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from helmbench.errors import HelmbenchError, UsageError
from helmbench.spec.models import ModelEntry, ModelsFile


def _did_you_mean(value: str, choices: list[str]) -> str | None:
    close = difflib.get_close_matches(value, choices, n=3, cutoff=0.5)
    return f"did you mean {', '.join(close)}?" if close else None


def load_models_file(path: Path) -> ModelsFile:
    from helmbench.diagnostics import Collector
    from helmbench.spec.validate import validate
    from helmbench.spec.yamlio import YamlError, load_yaml

    if not path.is_file():
        raise UsageError(f"models file not found: {path}", hint="pass --models-file, e.g. benchmark/models.yml")
    try:
        data, _ = load_yaml(path.read_text(encoding="utf-8"))
    except YamlError as exc:
        raise HelmbenchError(f"{path}:{exc.line}:{exc.col}: {exc.message}") from None
    out = Collector()
    models = validate(ModelsFile, data, str(path), out, what=path.name)
    if models is None:
        lines = "\n".join(f"  {d.path}:{d.line}:{d.col} {d.code} {d.message}" for d in out.sorted())
        raise HelmbenchError(f"{path} is not valid:\n{lines}", hint=f"run `helmbench lint` on the benchmark folder")
    return models


def needs_openrouter_key(entries) -> bool:
    """Whether some entry goes to OpenRouter with OPENROUTER_API_KEY (one with its own route, HTTP target or
    `api_key_env` brings its own key)."""
    return any(e.http is None and e.route is None and e.api_key_env is None for e in entries)


def secret_values(entries) -> list[str]:
    """The values of every key and secret header the entries name (read from the environment): what the
    run's log filter and every error message replace with ***."""
    import os

    from helmbench.spec.models import EnvRef

    names = [e.api_key_env for e in entries if e.api_key_env]
    names += [n for e in entries if e.http for v in e.http.headers.values() for n in EnvRef.findall(v)]
    return [os.environ[n] for n in names if os.environ.get(n)]


def split_values(values: tuple[str, ...] | list[str] | None) -> list[str]:
    """Accept both `--models a --models b` and `--models a,b`."""
    return [v.strip() for item in (values or ()) for v in item.split(",") if v.strip()]


def select_models(models_file: ModelsFile, wanted: list[str], path: Path) -> list[ModelEntry]:
    known = {m.id: m for m in models_file.models}
    if not wanted:
        if not known:
            raise HelmbenchError(f"{path} lists no models under `models:`; there is nothing to run")
        return list(known.values())
    chosen = []
    for model_id in dict.fromkeys(wanted):
        if model_id not in known:
            hint = _did_you_mean(model_id, list(known)) or f"the models in {path} are: {', '.join(known)}"
            raise UsageError(f"unknown model id {model_id!r}: it is not in {path}", hint=hint)
        chosen.append(known[model_id])
    return chosen


def select_scenarios(catalog_scenarios: list[str], wanted: list[str]) -> set[str] | None:
    """None means every scenario. A selector may be a scenario (P1-B1-S1), behaviour (P1-B1) or pillar (P1)."""
    if not wanted:
        return None
    chosen: set[str] = set()
    for sel in wanted:
        hits = [s for s in catalog_scenarios if s == sel or s.startswith(sel + "-")]
        if not hits:
            hint = _did_you_mean(sel, catalog_scenarios) or "list them with `helmbench list`"
            raise UsageError(f"unknown scenario {sel!r}: the manifest has no such scenario", hint=hint)
        chosen.update(hits)
    return chosen


_SHARD = re.compile(r"([0-9]{1,6})/([0-9]{1,6})")


@dataclass(frozen=True)
class Shard:
    """Part K of N of an invocation's work (`--shard K/N`), by (case, model).

    A (case, model) falls in the shard given by a hash of the model id and the key its first call is
    cached by (a single-answer case's request hash, a conversation's opening turn key), never by
    positions: a case keeps its shard when the manifest grows or models are added, so N jobs over a
    growing benchmark keep resuming the same work. Keying by the cached call rather than by the
    case id is what makes N shards ask each call once: two cases that send the same request are
    one stored answer, so they must share a shard. All samples of a (case, model), and all turns
    of a conversation, fall in one shard.
    """

    index: int  # K, 1-based
    count: int  # N

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def takes(self, case: dict, model_id: str) -> bool:
        return shard_of(first_call_key(case), model_id, self.count) == self.index


def first_call_key(case: dict) -> str:
    """The cache key of a case's first call: its request hash, or a conversation's opening turn key."""
    from helmbench.manifest.canonical import hash_of
    from helmbench.manifest.conversation import is_conversation

    if not is_conversation(case):
        return case["request_hash"]
    # the opening's key without who plays the user (an authored opening's turn 1 key, as it always was):
    # every simulated user of a case, and an `opening: simulated` case's too, falls in one shard
    return hash_of({"messages": case["request"]["messages"], "response_format": case["request"].get("response_format")})


def shard_of(key: str, model_id: str, count: int) -> int:
    """The shard (1..count) of a call key and a model: the first 8 bytes of sha256 of both, modulo count."""
    digest = hashlib.sha256(f"{key}\x00{model_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse_shard(value: "str | Shard | None") -> Shard | None:
    """`K/N` (1 ≤ K ≤ N) as a Shard; None for no sharding. A bad value is a usage error (exit 2)."""
    if value is None or isinstance(value, Shard):
        return value
    m = _SHARD.fullmatch(str(value).strip())
    if not m:
        raise UsageError(f"--shard {str(value)[:40]!r} is not K/N (two whole numbers, e.g. 2/3)",
                         hint="--shard 1/3, --shard 2/3 and --shard 3/3 together run everything once")
    k, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= k <= n:
        why = "N must be 1 or more" if n < 1 else f"K must be between 1 and {n}"
        raise UsageError(f"--shard {k}/{n}: {why}", hint="shards are numbered from 1: --shard 1/N … --shard N/N")
    return Shard(k, n)


def refuse_other_user_model(conversations: list[dict], models: ModelsFile, models_path: Path) -> None:
    """`user_model` is compiled into the manifest (it is part of each simulated conversation's request):
    a models file naming another one is refused before anything is sent, never half-applied (its
    judge taken, its simulated user ignored)."""
    from helmbench.manifest.conversation import simulators

    if not models.simulators:
        return
    mine = [{"id": u.id, "settings": u.settings()} for u in models.simulators]
    for case in conversations:
        compiled = simulators(case["request"]["conversation"])
        if compiled and compiled != mine:
            raise UsageError(
                f"{models_path} names the simulated user(s) {_users(mine)}, but the manifest was compiled with "
                f"{_users(compiled)}, which its conversations' requests hold",
                hint="compile the benchmark again with this models file (helmbench compile), or run with the "
                     "models file the manifest was compiled with")


def refuse_structured_for_http(plan) -> None:
    """A deployed chatbot (`http:` in models.yml) answers in free text: it cannot be held to a response
    schema, and a structured-output scenario's evaluation reads fields of one. Such a case is refused before
    anything is sent, naming the scenarios, rather than asked and failed for a format the service never saw
    (which would score the service on the wrong thing). Select the free-text scenarios (judged, `sqe`, and
    conversations without `reply_field`) with --scenario, or run the chatbot in its own invocation."""
    targets = [mp.id for mp in plan.models if mp.entry.http is not None]
    if not targets:
        return
    structured = sorted({case["scenario"] for case in plan.manifest
                         if plan.selected(case) and case["request"].get("response_format")})
    if structured:
        more = f" and {len(structured) - 3} more" if len(structured) > 3 else ""
        raise UsageError(
            f"{', '.join(targets)} is a deployed chatbot (an `http` target) that answers in free text, but scenario "
            f"{', '.join(structured[:3])}{more} asks for structured output (a response schema): it is not asked of "
            "such a target", hint="select free-text scenarios with --scenario, or leave the chatbot out with --models")


def _users(users: list[dict]) -> str:
    return ", ".join(f"`{u['id']}` ({_settings(u)})" for u in users)


def _settings(user: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(user["settings"].items())) or "default settings"
