"""Load a benchmark tree (flat or nested layout) into a `Benchmark`, collecting every problem.

The loader never stops at the first problem: it records a diagnostic and carries on with
what it could read, so one lint run shows an author everything to fix.

The tree may come from a stranger's pull request, so every file access goes through the
checks here: a symlink that leaves the tree, is broken or loops is reported (HB153) and never
followed, while one that stays inside the tree is followed like the file it names (the walk
has a fixed depth, so a link to an ancestor folder cannot loop); a file over its size limit
(`MAX_BYTES`) is reported (HB152) without being read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from helmbench.diagnostics import Collector
from helmbench.errors import UsageError
from helmbench.spec import markdown as md
from helmbench.spec.models import (
    BenchmarkFile,
    ConditionMeta,
    CriterionMeta,
    criterion_meta,
    ModelsFile,
    PerturbationMeta,
    ScenarioMeta,
    scenario_meta,
    ScoringFile,
    Sqe,
    UserContextMeta,
)
from helmbench.spec.naming import (
    BEHAVIOUR_RE,
    CODE_LIKE_RE,
    COMPONENT_RE,
    CRITERION_RE,
    FLAT_RE,
    PILLAR_RE,
    SCENARIO_RE,
    natural_key,
)
from helmbench.spec.conversation import FILE as CONVERSATION, ConversationMeta
from helmbench.spec.conversation_load import load_conversation
from helmbench.spec.jsonio import JsonError, load_json
from helmbench.spec.text import SourceText, TextError, read_source
from helmbench.spec.tree import (
    KINDS,
    Benchmark,
    BehaviourInfo,
    Component,
    Criterion,
    PillarInfo,
    Scenario,
)
from helmbench.spec.validate import component_code_hint, suggest, validate
from helmbench.spec.yamlio import LineDict, YamlError, load_yaml

CONSOLIDATED = {"condition": "conditions.md", "user_context": "user-contexts.md", "perturbation": "perturbations.md"}
INDIVIDUAL = {"condition": "conditions", "user_context": "user-contexts", "perturbation": "perturbations"}
META = {"condition": ConditionMeta, "user_context": UserContextMeta, "perturbation": PerturbationMeta}
WHAT = {"condition": "condition", "user_context": "user context", "perturbation": "perturbation"}
# The frontmatter keys that only HELMBench's files take: a `key: value` block is read as frontmatter that lost its
# `---` (HB106) or its heading (HB321) only when one of its keys is one of these. The keys other formats share
# (`title`, `tags`, `aliases`, `description`, `user`, `options`, `country` …) stay the author's text: a user's
# message may quote a blog post's or a note's frontmatter, or a chat log (`user: …`), on purpose.
TELLING_KEYS = frozenset({"severity", "difficulty", "evaluation", "checkpoints", "max_turns", "stop_when", "opening",
                          "pass_values", "abstain_values", "applies_when", "response_field", "response_type",
                          "generated_from"})
assert TELLING_KEYS <= frozenset().union(*(m.model_fields for m in (
    ScenarioMeta, ConditionMeta, UserContextMeta, PerturbationMeta, CriterionMeta, ConversationMeta))) | {"severity"}
HEADING_CODE = re.compile(r"^([A-Za-z]+\d+[A-Za-z]*)(?:\s*[:\u2014\u2013-]\s*(.*))?$", re.ASCII)

# Largest file read, by kind. YAML is parsed in pure Python (~5 s per MB); Markdown costs
# per block (32,000 one-line list items took 5.7 s), so it is bounded in lines as well. The
# authors' largest file is a 12.6 kB, 140-line README.
MAX_BYTES = {".md": 256_000, ".json": 256_000, ".yml": 64_000, ".yaml": 64_000}
MAX_MD_LINES = 2_000
MAX_YAML_PER_FILE = 64_000  # characters of frontmatter in one Markdown file, all parts together
MAX_PARTS = 200  # components in one consolidated file; the authors' files hold at most ~10
MAX_FILES = 5_000  # files read per tree (~1 ms each); the shipped benchmark has 61


class Loader:
    def __init__(self, root: Path):
        self.root = root
        self.out = Collector()
        self.refused: set[Path] = set()  # symlinks reported once and never followed
        self.yaml_chars: dict[str, int] = {}
        self.files_read = 0

    # --- guarded access: symlinks out of the tree are never followed -------------------------

    def inside(self, path: Path) -> bool:
        """True unless `path` is a symlink that leaves the tree, is broken or loops (then HB153)."""
        if path in self.refused:
            return False
        if not path.is_symlink():
            return True
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop on Python < 3.13
            problem = "symlink is broken or loops"
        else:
            if target.is_relative_to(self.root):
                return True
            problem = "symlink points outside the benchmark folder"
        self.refused.add(path)
        self.out.add("HB153", self.rel(path), 1, f"{problem}; it is not followed",
                     hint="commit the file itself, or a link to a file inside the benchmark folder")
        return False

    def is_file(self, path: Path) -> bool:
        return self.inside(path) and path.is_file()

    def is_dir(self, path: Path) -> bool:
        return self.inside(path) and path.is_dir()

    def entries(self, folder: Path) -> list[Path]:
        """Visible entries of `folder` that may be followed, in natural order."""
        return sorted((p for p in folder.iterdir() if not p.name.startswith(".") and self.inside(p)),
                      key=lambda p: natural_key(p.name))

    # --- files ---------------------------------------------------------------------------

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def read(self, path: Path) -> SourceText | None:
        limit = MAX_BYTES.get(path.suffix.lower(), MAX_BYTES[".md"])
        try:
            if not self.inside(path):
                return None
            if not path.is_file():  # a folder, or a FIFO that would block the read forever
                self.out.add("HB103", self.rel(path), 1, "not a regular file")
                return None
            self.files_read += 1
            if self.files_read > MAX_FILES:
                if self.files_read == MAX_FILES + 1:
                    self.out.add("HB152", self.rel(path), 1,
                                 f"the tree has more than {MAX_FILES:,} files to read; from here on none is read")
                return None
            if (size := path.stat().st_size) > limit:
                self.out.add("HB152", self.rel(path), 1,
                             f"file of {size:,} bytes is over the {limit:,}-byte limit for {path.suffix or 'its'} files; "
                             "it is not read", hint="split it, or remove what does not belong in the benchmark")
                return None
            src = read_source(self.root, path)
            if path.suffix.lower() == ".md" and (lines := src.text.count("\n")) > MAX_MD_LINES:
                self.out.add("HB152", src.path, MAX_MD_LINES + 1,
                             f"file of {lines:,} lines is over the {MAX_MD_LINES:,}-line limit for Markdown; "
                             "it is not read", hint="split it, or remove what does not belong in the benchmark")
                return None
            return src
        except TextError as exc:
            self.out.add("HB103", self.rel(path), exc.line, exc.message, col=exc.col)
        except OSError as exc:
            self.out.add("HB103", self.rel(path), 1, f"cannot read file: {exc.strerror}")
        return None

    def yaml(self, text: str, path: str, line_offset: int = 0):
        before = self.yaml_chars.get(path, 0)
        self.yaml_chars[path] = before + len(text)
        if before + len(text) > MAX_YAML_PER_FILE:
            if before <= MAX_YAML_PER_FILE:  # reported once, where the budget runs out
                self.out.add("HB152", path, line_offset + 1,
                             f"more than {MAX_YAML_PER_FILE:,} characters of YAML in one file; from here on "
                             "it is not read")
            return None, False
        try:
            data, dups = load_yaml(text, line_offset)
        except YamlError as exc:
            noticed = ((*exc.parser_at, "the parser noticed here"),) if exc.parser_at else ()
            self.out.add(exc.code, path, exc.line, exc.message, col=exc.col, related=noticed)
            return None, False
        for d in dups:
            self.out.add("HB102", path, d.line, f"duplicate key `{d.key}` (first at line {d.first_line})", col=d.col)
        return data, True

    def frontmatter(self, fm: md.Frontmatter, path: str) -> tuple[LineDict | None, bool]:
        if fm.unclosed_at is not None:
            self.out.add("HB105", path, fm.unclosed_at, "frontmatter opened with `---` is never closed",
                         hint="add a `---` line after the last key")
            return None, False
        if fm.unopened is not None and TELLING_KEYS.intersection(fm.unopened[2]):
            first, close, keys = fm.unopened
            self.out.add("HB106", path, first,
                         f"frontmatter has no opening `---`: `{keys[0]}:` down to the `---` at line {close} is read "
                         "as text, not as frontmatter", hint=f"add a `---` line above `{keys[0]}:`")
            return None, False
        if fm.text is None:
            return None, True
        data, ok = self.yaml(fm.text, path, fm.line - 1)
        if not ok:
            return None, False
        if data is None:
            return None, True
        if not isinstance(data, LineDict):
            found = "a list" if isinstance(data, list) else "a single value"
            self.out.add("HB207", path, fm.line, f"frontmatter must be a mapping of keys to values (`key: value` lines), not {found}")
            return None, False
        return data, True

    def find(self, folder: Path, *names: str) -> Path | None:
        return next((folder / n for n in names if self.is_file(folder / n)), None)

    # --- top level ---------------------------------------------------------------------------

    def load(self) -> Benchmark:
        if not self.root.is_dir():  # the root itself was resolved: the user chose it
            raise UsageError(f"benchmark folder not found: {self.root}", hint="pass the folder that holds scenarios/")
        bench = Benchmark(root=self.root)
        self.load_benchmark_file(bench)
        if not bench.declared:
            bench.name = display_name(self.readme_title(self.root, level="h1"), self.root.name)
        self.load_scoring(bench)
        self.load_models(bench)
        scenarios_dir = self.root / "scenarios"
        if not self.is_dir(scenarios_dir):
            self.out.add("HB310", "scenarios", 1, "no scenarios/ folder in the benchmark")
        else:
            self.walk(bench, scenarios_dir)
        bench.scenarios.sort(key=lambda s: (natural_key(s.pillar), natural_key(s.behaviour), natural_key(s.code)))
        if not bench.declared:
            equal = "; with no scoring.yaml either, every behaviour weighs the same" if bench.equal_weights else ""
            self.out.add("HB601", "benchmark.yml", 1,
                         "no benchmark.yml: pillars and behaviours come from folder codes and README titles" + equal)
        return bench

    def load_benchmark_file(self, bench: Benchmark) -> None:
        path = self.find(self.root, "benchmark.yml", "benchmark.yaml")
        if not path:
            return
        bench.declared = True  # even when unreadable (`read` says why): it is there, so never "no benchmark.yml"
        if not (src := self.read(path)):
            return
        bench.benchmark_source = src
        data, ok = self.yaml(src.text, src.path)
        if not ok:
            return
        model = validate(BenchmarkFile, data, src.path, self.out, what="benchmark.yml")
        if not model:
            return
        bench.name, bench.version, bench.description = model.name, model.version, model.description
        bench.content_note = model.content_note
        for pcode, pillar in model.pillars.items():
            bench.pillars[pcode] = PillarInfo(pcode, pillar.title, pillar.description)
            for bcode, b in pillar.behaviours.items():
                compliance = [b.compliance] if isinstance(b.compliance, str) else list(b.compliance or [])
                info = BehaviourInfo(pcode, bcode, b.title, b.description, compliance, b.weight)
                bench.behaviours[info.key] = info
        bench.floors = [f.model_dump() for f in model.floors]
        # reviewers_per_item only when written: a tree that does not set it keeps its manifest's bytes
        bench.calibration = model.calibration.model_dump(
            exclude=None if "reviewers_per_item" in model.calibration.model_fields_set else {"reviewers_per_item"}
        ) if model.calibration else None
        bench.adjudication = model.adjudication.model_dump() if model.adjudication else None

    def load_scoring(self, bench: Benchmark) -> None:
        path = self.find(self.root, "scoring.yaml", "scoring.yml")
        if not path or not (src := self.read(path)):
            return
        data, ok = self.yaml(src.text, src.path)
        if not ok:
            return
        model = validate(ScoringFile, data, src.path, self.out, what="scoring.yaml")
        if model:
            bench.scoring_weights = dict(model.weights)
            bench.scoring_source = src
            bench.scoring_data = data

    def load_models(self, bench: Benchmark) -> None:
        path = self.find(self.root, "models.yml", "models.yaml")
        if not path:
            self.out.add("HB607", "models.yml", 1, "no models.yml: there is nothing to run")
            return
        if not (src := self.read(path)):
            return
        data, ok = self.yaml(src.text, src.path)
        if not ok:
            return
        bench.models_source, bench.models_data = src, data
        bench.models = validate(ModelsFile, data, src.path, self.out, what="models.yml")

    # --- walking scenarios/ ------------------------------------------------------------------

    def subdirs(self, folder: Path) -> list[Path]:
        entries = self.entries(folder)
        for p in entries:
            if p.is_file() and p.name.lower() != "readme.md":
                self.out.add("HB307", self.rel(p), 1, f"unrecognised file `{p.name}` is ignored")
        return [p for p in entries if p.is_dir()]

    def walk(self, bench: Benchmark, scenarios_dir: Path) -> None:
        for entry in self.subdirs(scenarios_dir):
            if m := FLAT_RE.match(entry.name):
                self.note_pillar(bench, m.group(1), None)
                self.note_behaviour(bench, m.group(1), m.group(2), None)
                self.load_scenario(bench, entry, m.group(1), m.group(2), m.group(3))
            elif m := PILLAR_RE.match(entry.name):
                self.walk_pillar(bench, entry, m.group(1))
            else:
                self.unrecognised_folder(entry, "a pillar (`P1`) or flat scenario (`P1-B1-S1`) folder")

    def walk_pillar(self, bench: Benchmark, folder: Path, pillar: str) -> None:
        self.note_pillar(bench, pillar, folder)
        for entry in self.subdirs(folder):
            if m := BEHAVIOUR_RE.match(entry.name):
                self.note_behaviour(bench, pillar, m.group(1), entry)
                for sub in self.subdirs(entry):
                    if s := SCENARIO_RE.match(sub.name):
                        self.load_scenario(bench, sub, pillar, m.group(1), s.group(1))
                    else:
                        self.unrecognised_folder(sub, "a scenario folder (`S1` or `S1--slug`)")
            else:
                self.unrecognised_folder(entry, "a behaviour folder (`B1` or `B1--slug`)")

    def unrecognised_folder(self, folder: Path, expected: str) -> None:
        """Both are ignored. A folder whose name starts like a code, or that holds text HELMBench would read
        (Markdown, YAML, JSON, at any depth), is an error (HB313): a misspelt code, or a look-alike letter, loses
        its scenarios. Any other (an editor's attachments, images) loses nothing: a note (HB323)."""
        lost = CODE_LIKE_RE.match(folder.name) or self._holds_authored_text(folder)
        self.out.add("HB313" if lost else "HB323", self.rel(folder), 1,
                     f"folder `{folder.name}` is not {expected}; it is ignored",
                     hint=None if lost else f"to keep it there without this note, name it `.{folder.name}`")

    #: How many entries `_holds_authored_text` looks at before it takes a folder to hold text (bounds a huge folder).
    _LOOK_AT = 2000

    def _holds_authored_text(self, folder: Path) -> bool:
        """True if `folder` holds, at any depth, a file of a format HELMBench reads (MAX_BYTES' suffixes) or more
        entries than it looks at. Links are not followed."""
        read, seen = tuple(MAX_BYTES), 0
        for _, dirs, files in os.walk(folder, followlinks=False):
            seen += len(dirs) + len(files)
            if seen > self._LOOK_AT or any(f.lower().endswith(read) for f in files):
                return True
        return False

    def readme_title(self, folder: Path | None, level: str | None = None) -> str | None:
        """The first heading of `folder`'s README (of `level`, `h1` for `# `, when given) as text."""
        path = self.find(folder, "README.md", "readme.md") if folder else None
        if not path or not (src := self.read(path)):
            return None
        lines = src.text.split("\n")
        fm = md.find_frontmatter(lines, 0, len(lines))
        body = "\n".join(lines[fm.body_start :]) if fm.text is not None else src.text
        tokens = md.parse(body)
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open" and (level is None or tok.tag == level):
                return tokens[i + 1].content.strip() or None
        return None

    def note_pillar(self, bench: Benchmark, code: str, folder: Path | None) -> None:
        if bench.declared or code in bench.pillars:
            return
        bench.pillars[code] = PillarInfo(code, self.readme_title(folder) or code)

    def note_behaviour(self, bench: Benchmark, pillar: str, code: str, folder: Path | None) -> None:
        key = f"{pillar}-{code}"
        if bench.declared or key in bench.behaviours:
            return
        bench.behaviours[key] = BehaviourInfo(pillar, code, self.readme_title(folder) or key)

    # --- one scenario ---------------------------------------------------------------------------

    def load_scenario(self, bench: Benchmark, folder: Path, pillar: str, behaviour: str, code: str) -> None:
        sc = Scenario(pillar, behaviour, code, self.rel(folder))
        used: set[str] = {"README.md", "readme.md"}
        scenario_file = self.find(folder, f"{code}.md", "MCSQE.md")
        schema_code = code
        if scenario_file is None:
            other = sorted(p for p in self.entries(folder)
                           if p.suffix == ".md" and SCENARIO_RE.match(p.stem) and "--" not in p.stem)
            if other:
                scenario_file = other[0]
                schema_code = other[0].stem
                self.out.add("HB306", self.rel(other[0]), 1,
                             f"scenario file `{other[0].name}` in folder for scenario `{code}`",
                             hint=f"rename it to `{code}.md` or the folder to `{other[0].stem}`")
        if scenario_file is None:
            self.out.add("HB310", sc.folder, 1, f"scenario folder has no `{code}.md` (or `MCSQE.md`)")
        else:
            used.add(scenario_file.name)
            self.load_scenario_file(sc, scenario_file)
        schema = self.find(folder, f"{schema_code}.json", f"{code}.json")
        if schema:
            used.add(schema.name)
            self.load_schema(sc, schema)
        for kind in KINDS:
            used |= self.load_components(sc, folder, kind)
        used |= self.load_criteria(sc, folder)
        if self.is_file(folder / CONVERSATION):
            used.add(CONVERSATION)
            load_conversation(self, sc, folder / CONVERSATION)
        self.unrecognised_files(folder, used)
        bench.scenarios.append(sc)

    def load_scenario_file(self, sc: Scenario, path: Path) -> None:
        if not (src := self.read(path)):
            return
        sc.source = src
        fm, body, body_line = md.split_single(src.text)
        data, ok = self.frontmatter(fm, src.path)
        sc.frontmatter, sc.body, sc.body_line = data, body, body_line
        if not ok:
            return
        if path.name == "MCSQE.md" and data is None:
            sc.meta = ScenarioMeta(evaluation=Sqe(type="sqe"))
            return
        if path.name == "MCSQE.md" and "evaluation" not in data:  # the name says "judged"; a title does not change that
            data["evaluation"] = {"type": "sqe"}
        sc.meta = validate(scenario_meta(), data, src.path, self.out, what="scenario frontmatter")

    def load_schema(self, sc: Scenario, path: Path) -> None:
        if not (src := self.read(path)):
            return
        sc.schema_source = src
        try:
            sc.schema, dups = load_json(src.text)
        except JsonError as exc:
            self.out.add(exc.code, src.path, exc.line, exc.message, col=exc.col)
            return
        for key, line in dups:
            self.out.add("HB104", src.path, line, f"duplicate key `{key}` in JSON")

    def load_components(self, sc: Scenario, folder: Path, kind: str) -> set[str]:
        consolidated = folder / CONSOLIDATED[kind]
        individual = folder / INDIVIDUAL[kind]
        used: set[str] = set()
        if self.is_file(consolidated):
            used.add(consolidated.name)
            if self.is_dir(individual):
                used.add(individual.name)
                self.out.add("HB308", self.rel(individual), 1,
                             f"both `{consolidated.name}` and `{individual.name}/` exist; `{consolidated.name}` is used")
            self.load_consolidated(sc, consolidated, kind)
        elif self.is_dir(individual):
            used.add(individual.name)
            for path in self.entries(individual):
                if path.suffix == ".md" and COMPONENT_RE[kind].match(path.stem):
                    self.load_individual(sc, path, kind)
                else:
                    hint = f"{INDIVIDUAL[kind]}/ holds files named like `{ {'condition': 'C1', 'user_context': 'U1', 'perturbation': 'PT1'}[kind] }.md`"
                    self.out.add("HB307", self.rel(path), 1, f"unrecognised file `{path.name}` is ignored", hint=hint)
        return used

    def add_component(self, sc: Scenario, kind: str, code: str, title: str | None, data, ok: bool,
                      body: str, src: SourceText, line: int, body_line: int) -> None:
        if ok and kind == "condition" and isinstance(data, LineDict) and "severity" in data:
            # The benchmark's published data model gives a condition an optional `severity`, which its
            # scoring reads as difficulty: the authors' key is the format, accepted silently as the same
            # field (`difficulty` is the other spelling). Only both at once is a finding: one is ignored.
            if "difficulty" in data:
                self.out.add("HB206", src.path, data.key_spans.get("severity") or data.line_of("severity"),
                             "a condition gives both `severity` and `difficulty`, the same field; `difficulty` is "
                             "used", hint="keep one of the two")
            else:
                data["difficulty"] = data["severity"]
                data.key_lines["difficulty"] = data.key_lines["severity"]
                data.key_spans["difficulty"] = data.key_spans["severity"]
                data.value_spans["difficulty"] = data.value_spans["severity"]
            del data["severity"]
        meta = validate(META[kind], data, src.path, self.out, what=WHAT[kind]) if ok else None
        if meta is not None and meta.title is None and title:
            meta = meta.model_copy(update={"title": title})
        sc.components[kind].append(Component(kind, code, meta, body, src, line, body_line, data))

    def load_consolidated(self, sc: Scenario, path: Path, kind: str) -> None:
        if not (src := self.read(path)):
            return
        split = md.split_consolidated(src.text)
        if split.preamble_line is not None:
            self.out.add("HB312", src.path, split.preamble_line, "text before the first `#` heading is ignored")
        if len(split.parts) > MAX_PARTS:
            self.out.add("HB152", src.path, split.parts[MAX_PARTS].line,
                         f"more than {MAX_PARTS} components in one file; from here on they are not read")
        for part in split.parts[:MAX_PARTS]:
            m = HEADING_CODE.match(part.heading)
            code = m.group(1) if m else part.heading
            if not m or not COMPONENT_RE[kind].match(code):
                self.out.add("HB311", src.path, part.line,
                             f"heading `# {part.heading}` is not a {WHAT[kind]} code",
                             hint=component_code_hint(part.heading, kind))
                continue
            data, ok = self.frontmatter(part.frontmatter, src.path)
            self.add_component(sc, kind, code, m.group(2), data, ok, part.body, src, part.line, part.body_line)

    def load_individual(self, sc: Scenario, path: Path, kind: str) -> None:
        if not (src := self.read(path)):
            return
        fm, body, body_line = md.split_single(src.text)
        data, ok = self.frontmatter(fm, src.path)
        self.add_component(sc, kind, path.stem, None, data, ok, body, src, 1, body_line)

    def load_criteria(self, sc: Scenario, folder: Path) -> set[str]:
        used = set()
        files = []
        if self.is_file(folder / "criteria.md"):
            files.append(("criteria", folder / "criteria.md"))
        files += [(p.stem, p) for p in self.entries(folder) if p.suffix == ".md" and CRITERION_RE.match(p.stem)]
        for code, path in sorted(files, key=lambda cp: natural_key(cp[0])):
            used.add(path.name)
            if not (src := self.read(path)):
                continue
            fm, body, body_line = md.split_single(src.text)
            data, ok = self.frontmatter(fm, src.path)
            meta = validate(criterion_meta(), data, src.path, self.out, what="criterion") if ok else None
            sc.criteria.append(Criterion(code, meta, body, src, body_line, data))
        return used

    def unrecognised_files(self, folder: Path, used: set[str]) -> None:
        known = ["README.md", "conditions.md", "user-contexts.md", "perturbations.md", "criteria.md",
                 "conditions", "user-contexts", "perturbations", "MCSQE.md", "CR1.md", CONVERSATION, *sorted(used)]
        for p in self.entries(folder):
            if p.name in used:
                continue
            kind = "folder" if p.is_dir() else "file"
            self.out.add("HB307", self.rel(p), 1, f"unrecognised {kind} `{p.name}` in a scenario folder is ignored",
                         hint=suggest(p.name, known))


_UNSHOWN = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
MAX_NAME = 120  # characters of a display name taken from a README heading


def display_name(title: str | None, folder: str) -> str:
    """The name a tree without benchmark.yml is shown and exported under: its README's first `# `
    heading, else its folder's name. It goes into the manifest header only (never the manifest
    hash: a tree keeps its hash wherever it lies). Control and direction-changing characters are
    dropped and the length bounded here, once; each renderer still escapes it for its medium (a
    heading is authored text that reaches a public site)."""
    for raw in (title, folder):
        text = " ".join(_UNSHOWN.sub("", " ".join((raw or "").split())).split())
        if text:
            return text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"
    return "untitled"


def load_benchmark(root: str | Path) -> tuple[Benchmark, Collector]:
    """Load the tree at `root`; returns the benchmark and every diagnostic found on the way."""
    loader = Loader(Path(root).resolve())
    bench = loader.load()
    return bench, loader.out
