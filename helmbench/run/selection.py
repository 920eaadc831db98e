"""Which models and which scenarios an invocation covers, with clear errors for typos.

A typo in `--models` or `--scenario` must fail before any money is spent, naming the
closest valid value, rather than silently running nothing.
"""

from __future__ import annotations

import difflib
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


def refuse_other_user_model(conversations: list[dict], models: ModelsFile, models_path: Path) -> None:
    """`user_model` is compiled into the manifest (it is part of each simulated conversation's request):
    a models file naming another one is refused before anything is sent, never half-applied (its
    judge taken, its simulated user ignored)."""
    wanted = models.user_model
    if wanted is None:
        return
    mine = {"id": wanted.id, "settings": wanted.settings()}
    for case in conversations:
        compiled = case["request"]["conversation"].get("user_model")
        if compiled is not None and compiled != mine:
            raise UsageError(
                f"{models_path} names the simulated user `{wanted.id}` ({_settings(mine)}), but the manifest was "
                f"compiled with `{compiled['id']}` ({_settings(compiled)}), which its conversations' requests hold",
                hint="compile the benchmark again with this models file (helmbench compile), or run with the "
                     "models file the manifest was compiled with")


def _settings(user: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(user["settings"].items())) or "default settings"
