"""What a set of model calls will cost before it is made: output tokens and dollars, as a range.

Why: a maintainer preparing a run (or reviewing a pull request that adds cases) wants to know
what it will cost, and a single number would claim a precision nobody has. Per call:
- input tokens: characters ÷ 4 of the messages (as the dry run has always counted them);
- output tokens: the median completion tokens already stored for that model and scenario when
  there are any (a point estimate); otherwise from the smallest answer the scenario's response
  schema allows (the low end) up to the model's `max_tokens` (the high end; none without it);
- prices: `price:` in models.yml, else the cost map litellm ships in its package (read as a file,
  never fetched, without importing litellm). A model with neither is reported as unpriced.
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from helmbench.run.plan import _chars
from helmbench.spec.models import ModelEntry

#: Bound on the depth of a response schema walked for the smallest answer.
MAX_SCHEMA_DEPTH = 32


@dataclass(frozen=True)
class Price:
    input_per_token: float
    output_per_token: float
    source: str  # "models.yml" or "litellm"


COST_MAP_FILE = "model_prices_and_context_window_backup.json"
MAX_COST_MAP_BYTES = 64 * 1024 * 1024


def _litellm_costs() -> dict:
    """litellm's price list as shipped in its package, read without importing litellm (a dry run stays fast)."""
    import importlib.util
    import sys

    if "litellm" in sys.modules:  # a real run already loaded it (with LITELLM_LOCAL_MODEL_COST_MAP set)
        return getattr(sys.modules["litellm"], "model_cost", None) or {}
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.origin:
        return {}
    path = Path(spec.origin).parent / COST_MAP_FILE
    try:
        if path.stat().st_size > MAX_COST_MAP_BYTES:
            return {}
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def price_for(entry: ModelEntry, costs: dict | None = None) -> Price | None:
    """The model's price per token: models.yml's `price`, else litellm's cost map (under the entry's own
    route when it names one), else None (no known price: a local model, a chatbot)."""
    if entry.price is not None:
        return Price(entry.price.input_per_mtok / 1e6, entry.price.output_per_mtok / 1e6, "models.yml")
    if entry.http is not None:  # a deployed chatbot: no price list knows it
        return None
    costs = _litellm_costs() if costs is None else costs
    name = entry.route or entry.id  # an entry's own route is what litellm prices (`openai/gpt-4.1`)
    bare = name.split("/", 1)[-1]
    for key in ((name, bare) if entry.route else (f"openrouter/{entry.id}", entry.id, bare)):
        info = costs.get(key)
        if isinstance(info, dict):
            i, o = info.get("input_cost_per_token"), info.get("output_cost_per_token")
            if isinstance(i, (int, float)) and isinstance(o, (int, float)) and i >= 0 and o >= 0:
                return Price(float(i), float(o), "litellm")
    return None


def _smallest(schema, depth: int = 0):
    """The smallest JSON value `schema` accepts (required properties only), as far as it can tell."""
    if not isinstance(schema, dict) or depth > MAX_SCHEMA_DEPTH:
        return None
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        return min(schema["enum"], key=lambda v: len(json.dumps(v)))
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object":
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        return {k: _smallest(props.get(k), depth + 1) for k in required if isinstance(k, str)}
    if kind == "array":
        n = schema.get("minItems") if isinstance(schema.get("minItems"), int) else 0
        return [_smallest(schema.get("items"), depth + 1)] * min(max(n, 0), 16)
    if kind == "string":
        n = schema.get("minLength") if isinstance(schema.get("minLength"), int) else 0
        return "x" * min(max(n, 0), 1000)
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    return None


def floor_tokens(request: dict) -> int:
    """Output tokens of the smallest answer the request's response format allows (at least 1)."""
    rf = request.get("response_format")
    schema = rf.get("json_schema", {}).get("schema") if isinstance(rf, dict) else None
    if not isinstance(schema, dict):
        return 1  # free text: the answer could be one token
    return max(1, len(json.dumps(_smallest(schema), ensure_ascii=False)) // 4)


def stored_medians(db: str | Path | None, model: str) -> dict[str, float]:
    """Median completion tokens of the model's stored, successful answers, per scenario."""
    if db is None or not Path(db).is_file():
        return {}
    from helmbench.errors import HelmbenchError
    from helmbench.store import DatabaseError, open_readonly, queries

    try:
        conn = open_readonly(db, check=False)
    except HelmbenchError:
        return {}
    try:
        rows = queries.completion_tokens_by_scenario(conn, model)
    except DatabaseError:  # an older or damaged database: no history, only the schema bound
        return {}
    finally:
        conn.close()
    by: dict[str, list[int]] = {}
    for scenario, tokens in rows:
        by.setdefault(scenario, []).append(int(tokens))
    return {s: float(statistics.median(v)) for s, v in by.items()}


@dataclass
class ModelEstimate:
    entry: ModelEntry
    price: Price | None
    calls: int = 0
    input_tokens: int = 0
    output_low: float = 0.0
    output_high: float | None = 0.0  # None: no upper bound (no max_tokens and no history)
    from_history: int = 0  # calls whose output comes from stored medians
    role: str = ""  # "simulated user" for one of models.yml's user_model (which may also be a model under test)

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def label(self) -> str:
        """The row's name where it is shown: the model id, with its role when it is not a model under test."""
        return f"{self.entry.id} ({self.role})" if self.role else self.entry.id

    @property
    def cost_low(self) -> float | None:
        return None if self.price is None else (self.input_tokens * self.price.input_per_token
                                                + self.output_low * self.price.output_per_token)

    @property
    def cost_high(self) -> float | None:
        if self.price is None or self.output_high is None:
            return None
        return self.input_tokens * self.price.input_per_token + self.output_high * self.price.output_per_token


@dataclass
class Estimate:
    models: list[ModelEstimate] = field(default_factory=list)

    @property
    def unpriced(self) -> list[str]:
        return [m.label for m in self.models if m.price is None and m.calls]

    @property
    def calls(self) -> int:
        return sum(m.calls for m in self.models)

    def total(self) -> tuple[float, float | None]:
        """(low, high) over the priced models; high is None when one has no upper bound."""
        priced = [m for m in self.models if m.price is not None]
        low = sum(m.cost_low or 0.0 for m in priced)
        highs = [m.cost_high for m in priced if m.calls]
        return low, (None if any(h is None for h in highs) else sum(h or 0.0 for h in highs))

    def to_dict(self) -> dict:
        """The estimate as data (`helmbench costs --format json`): per model its new calls, output tokens and
        cost as a (low, high) range (high None: no upper bound; cost None: no known price), the price used."""
        low, high = self.total()
        return {"calls": self.calls, "cost_low": low, "cost_high": high, "unpriced": self.unpriced,
                "notes": notes(self),
                "models": [{"model": m.id, "role": m.role or "model under test", "calls": m.calls, "input_tokens": m.input_tokens,
                            "output_tokens_low": m.output_low, "output_tokens_high": m.output_high,
                            "from_history": m.from_history, "cost_low": m.cost_low, "cost_high": m.cost_high,
                            "price": None if m.price is None else {
                                "input_per_mtok": m.price.input_per_token * 1e6,
                                "output_per_mtok": m.price.output_per_token * 1e6, "source": m.price.source}}
                           for m in self.models]}


def _user(user_id: str) -> tuple[str, str]:
    """The Estimator's key of a simulated user's row (a model under test may have the same id)."""
    return ("user", user_id)


class Estimator:
    """Add calls (model, case, count) one at a time; `result()` gives the per-model estimate. `users`: models.yml's
    simulated users, whose turns are calls of their own (`add_user`), each priced like any model."""

    def __init__(self, entries: Iterable[ModelEntry], db: str | Path | None, costs: dict | None = None,
                 users: Iterable[ModelEntry] = ()):
        self.db = db
        self._costs = costs
        self.by_id: dict[str | tuple, ModelEstimate] = {}
        self._medians: dict[str, dict[str, float]] = {}
        for e in entries:
            self.by_id[e.id] = ModelEstimate(e, price_for(e, self._cost_map()))
        for user in users:
            self.by_id[_user(user.id)] = ModelEstimate(user, price_for(user, self._cost_map()), role="simulated user")

    def _cost_map(self) -> dict:
        if self._costs is None:
            self._costs = _litellm_costs()
        return self._costs

    def add(self, model: str | tuple, case: dict, n: int = 1) -> None:
        if n <= 0 or model not in self.by_id:  # the simulated user without a user_model: nothing to price
            return
        m = self.by_id[model]
        if m.id not in self._medians:
            self._medians[m.id] = stored_medians(self.db, m.id)
        m.calls += n
        m.input_tokens += n * (_chars(case["request"]) // 4)
        cap = m.entry.max_tokens
        median = self._medians[m.id].get(case.get("scenario"))
        if median is not None:
            point = min(median, cap) if cap else median
            m.output_low += n * point
            if m.output_high is not None:
                m.output_high += n * point
            m.from_history += n
            return
        floor = floor_tokens(case["request"])
        m.output_low += n * (min(floor, cap) if cap else floor)
        m.output_high = None if (cap is None or m.output_high is None) else m.output_high + n * cap

    def add_user(self, case: dict, n: int, user_id: str) -> None:
        """`n` turns of the simulated user `user_id` in a conversation case (each one call to that user model)."""
        self.add(_user(user_id), case, n)

    def result(self) -> Estimate:
        return Estimate(list(self.by_id.values()))


def estimate_plan(plan, db: str | Path | None, costs: dict | None = None) -> Estimate:
    """The estimate of a run plan's new calls (what `helmbench run` would send now): each phase of the run
    (`run.phases`) adds the calls it would send, so a new kind of call is estimated by its own phase."""
    from helmbench.run.phases import phases

    simulated = any(c["request"]["conversation"].get("user") != "scripted" for c in plan.conversations)
    est = Estimator([mp.entry for mp in plan.models], db, costs,
                    users=plan.user_models if simulated else ())
    for phase in phases():
        phase.estimate(plan, est)
    return est.result()


def money(v: float | None) -> str:
    if v is None:
        return "?"
    return f"${v:,.2f}" if v >= 0.01 or v == 0 else f"${v:.4f}"


def notes(est: Estimate) -> list[str]:
    out = ["Output tokens: the median stored for the model and scenario where there is one, else from the smallest "
           "answer the scenario's schema allows up to the model's max_tokens."]
    if any(m.calls and m.output_high is None for m in est.models):
        out.append("A model without max_tokens (and no stored answers) has no upper bound.")
    if est.unpriced:
        out.append("No known price for: " + ", ".join(est.unpriced) + ". Add `price: {input_per_mtok: …, "
                   "output_per_mtok: …}` (USD per million tokens) to its entry in models.yml.")
    low, high = est.total()
    if not est.calls:
        out.append("Estimated cost of the models' calls: $0 (every answer is already stored); judge calls are not "
                   "included.")
        return out
    if all(m.price is None for m in est.models if m.calls):
        out.append(f"Estimated cost of {est.calls:,} call(s): unknown (no model has a known price).")
        return out
    out.append(f"Estimated cost of {est.calls:,} call(s): {money(low)} – {money(high) if high is not None else 'no limit'}"
               + (" (priced models only)" if est.unpriced else "") + "; judge calls are not included.")
    return out


def estimate_remaining(manifest: str | Path, models_file: str | Path, db: str | Path | None,
                       models: list[str] | None = None) -> Estimate:
    """The estimate of every call `helmbench run` would still make for `manifest` (one sample each)."""
    from helmbench.manifest import read_manifest
    from helmbench.run.plan import build_plan
    from helmbench.run.selection import load_models_file, select_models
    from helmbench.store import open_reader

    path = Path(models_file)
    entries = select_models(load_models_file(path), list(models or []), path)
    # Read-only: an estimate must work on a read-only disk and never migrate someone's database.
    database = open_reader(db) if db is not None and Path(db).exists() else None
    models_file = load_models_file(path)
    plan = build_plan(read_manifest(manifest), entries, database, scenarios=None, case_ids=None, samples=1,
                      user_models=models_file.simulators)
    return estimate_plan(plan, db)
