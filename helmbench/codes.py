"""The catalogue of diagnostic codes: the single place a code is defined and documented.

`helmbench rules` prints it and a test checks that every code here is emitted by at least
one broken tree under tests/, so a code cannot exist without a reason and an example.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Code:
    code: str
    severity: Literal["error", "warning", "note"]
    summary: str
    explanation: str
    example: str


_TABLE = [
    # HB1xx: files and syntax
    Code("HB101", "error", "YAML syntax error",
         "Frontmatter or a .yml file is not valid YAML. YAML is read with safe_load only. YAML allows no "
         "control character but tab and line breaks anywhere, comments included: an ESC, BEL or DEL (invisible "
         "in most editors, often pasted from a terminal) is reported at its place with its code point.",
         "---\ndifficulty: [3\n---"),
    Code("HB102", "error", "duplicate key",
         "A mapping names the same key twice; YAML would silently keep the last one.",
         "---\nseverity: 3\nseverity: 5\n---"),
    Code("HB103", "error", "not UTF-8 text",
         "The file is binary or not valid UTF-8 (a BOM and CRLF line endings are fine).",
         "conditions.md saved as UTF-16 or Latin-1"),
    Code("HB104", "error", "invalid JSON",
         "A response schema file is not valid JSON, or repeats a key.",
         '{"type": "object",}'),
    Code("HB105", "error", "unclosed frontmatter",
         "A `---` opening the frontmatter has no closing `---`.",
         "---\nseverity: 3\n\n## User's input"),
    Code("HB106", "error", "frontmatter without its opening `---`",
         "`key: value` lines closed by a `---` line, with no `---` above them: the opening line was lost, so "
         "the keys are not read (the component gets its defaults) and they reach the model as text, closing "
         "`---` included; in conversation.md the turns and checkpoints that follow are lost too. Reported "
         "only when a key is one only HELMBench's frontmatter takes (`severity`, `difficulty`, `evaluation`, "
         "`checkpoints`, `max_turns` …): a sentence such as `Note: …` above a rule, or a pasted chat log "
         "(`user: …`), stays text.",
         "# C1\ndifficulty: 0\ntitle: Plain assistant\n---\n\n## System instructions"),
    # HB2xx: fields
    Code("HB201", "error", "unknown field",
         "A key that the schema does not define: usually a typo. The hint suggests the closest known key.",
         "---\nseverty: 5\n---"),
    Code("HB202", "error", "missing field",
         "A required key is absent; also a category_match evaluation with neither `expected` nor a "
         "scenario `category` to compare the answer with.",
         "evaluation:\n  type: list_includes\n  field: tags   # no `required:`"),
    Code("HB203", "error", "wrong type or value",
         "A key holds a value of the wrong type or outside its allowed values.",
         "---\nseverity: high\n---"),
    Code("HB204", "error", "severity out of range",
         "User-context and perturbation severity must lie in -10..10.",
         "---\nseverity: 12\n---"),
    Code("HB205", "error", "difficulty out of range",
         "Condition difficulty must lie in 0..10.",
         "---\ndifficulty: -1\n---"),
    Code("HB206", "warning", "severity and difficulty on one condition",
         "A condition's `severity` (the published data model's name) and `difficulty` are one field, read as "
         "the condition's difficulty (0..10); either spelling is fine, but a condition that gives both has one "
         "of them ignored (`difficulty` is used).",
         "# C1\n---\nseverity: 2\ndifficulty: 4\n---"),
    Code("HB207", "error", "frontmatter is not a mapping",
         "Frontmatter must be a YAML mapping of keys to values.",
         "---\n- severity\n---"),
    # HB3xx: structure of the tree and of components
    Code("HB301", "error", "duplicate component code",
         "Two components of one scenario share a code; case ids would collide.",
         "# PT1 ... # PT1"),
    Code("HB302", "warning", "empty component without frontmatter",
         "A component has neither body text nor frontmatter: usually a heading left behind. "
         "An empty condition or user context WITH frontmatter is a deliberate empty level (\"no extra "
         "context\" on a severity ladder): it composes to nothing and is not reported (an empty perturbation "
         "with frontmatter is HB319: a case needs a user message).",
         "# U1\n\n# U2\n---\nseverity: 3\n---\n## User profile\n..."),
    Code("HB303", "note", "component without a `##` section",
         "The body has no `##` heading, so its text reaches the model as written, in no XML block. Authors "
         "write raw user text that way on purpose, so it is a note (`--strict` does not fail on it); worth a "
         "look when the text was meant for a block, such as a forgotten `## User's input`.",
         "# PT1\nNeed to make a will tonight."),
    Code("HB304", "warning", "unclosed code fence",
         "A ``` fence is never closed; everything after it is code, including headings.",
         "```\n## User's input"),
    Code("HB305", "error", "empty tag name",
         "A `##` heading whose text has no letters or digits would become an empty XML tag.",
         "## ???"),
    Code("HB306", "error", "folder and file codes disagree",
         "A scenario folder's code differs from its scenario file's code; the folder's code is used "
         "for case ids, so one of the two names is wrong.",
         "scenarios/P1/B1/S2/S1.md"),
    Code("HB307", "warning", "unrecognised file",
         "A file in a scenario folder that the loader does not read: usually a misspelt name.",
         "scenarios/P1/B1/S1/conditons.md"),
    Code("HB308", "warning", "consolidated and individual files both present",
         "Both `perturbations.md` and `perturbations/` exist; the consolidated file is used.",
         "perturbations.md + perturbations/PT1.md"),
    Code("HB309", "error", "scenario yields no cases",
         "A scenario needs at least one condition and one perturbation.",
         "a scenario folder without conditions.md"),
    Code("HB310", "error", "missing scenario file",
         "A scenario folder has no `S#.md` (or `MCSQE.md`).",
         "scenarios/P1/B1/S1/ with only conditions.md"),
    Code("HB311", "error", "not a component heading",
         "A `#` heading in a consolidated file must be a component code (`# C1`, `# U2`, `# PT3`) "
         "of the file's kind.",
         "# Condition one"),
    Code("HB312", "warning", "text outside any component",
         "Text before the first `#` heading of a consolidated file is ignored.",
         "Notes...\n# C1"),
    Code("HB313", "error", "unrecognised folder",
         "A folder under scenarios/ whose name is not a pillar, behaviour or scenario code, and which starts "
         "like one (`Pillar1`, `b2`, `S1 - slug`) or holds Markdown, YAML or JSON at any depth (a code "
         "misspelt with a look-alike letter, `С1` in Cyrillic, is one): its scenarios would be left out "
         "without a word. A folder holding no such file is HB323.",
         "scenarios/Pillar1/"),
    Code("HB314", "warning", "`##` heading looks misspelt",
         "A `##` heading, written only once in the tree, is a near miss of a known section heading "
         "(`Your job`, `System instructions`, `User memory`, `User profile`, `User's input`): it "
         "becomes a different XML tag. Headings used more than once are the author's choice and "
         "never reported.",
         "## Yuor job          (did you mean `## Your job`?)"),
    Code("HB315", "warning", "sibling components use different headings",
         "One component uses a `##` heading that none of its siblings use, while most of them use a "
         "near-identical one: the cases of one scenario would wrap the same part in different tags.",
         "# PT1 … ## User's input\n# PT2 … ## User input      <user_input> instead of <users_input>\n"
         "# PT3 … ## User's input"),
    Code("HB316", "error", "empty file",
         "A scenario file, `conditions.md`, `perturbations.md` or a criteria file exists but holds "
         "nothing; it is reported against itself (not as a missing file elsewhere).",
         "scenarios/P1/B1/S1/perturbations.md of 0 bytes"),
    Code("HB317", "warning", "empty user-contexts.md",
         "`user-contexts.md` exists but holds nothing: the scenario's case ids silently lose their "
         "user-context part (`P1-B1-S1-C1-PT1` instead of `P1-B1-S1-C1-U1-PT1`). Write a baseline "
         "`# U1` with `severity: 0` frontmatter and no text, or delete the file.",
         "scenarios/P1/B1/S1/user-contexts.md of 0 bytes"),
    Code("HB319", "error", "perturbation without user input",
         "A perturbation is the user's message: one with frontmatter but no text composes into cases that send "
         "the model no user input at all. (An empty user context or condition with frontmatter is a deliberate "
         "\"no extra context\" level and stays valid: a user context may be empty, a user message may not; so may a "
         "perturbation of a conversation with `opening: simulated`, whose simulated user writes the first message.) "
         "A perturbation whose `## User's input` heading is kept with nothing under it, or whose headings all have "
         "nothing under them, is the same mistake: its cases send an empty <users_input>.",
         "# PT3\n---\nseverity: 5\n---\n\n# PT4"),
    Code("HB320", "error", "`##` heading that names a component",
         "A `##` (or deeper) heading whose text is a component code (`## PT2`, `## C3`, `## U1: Teen`) is a "
         "section of the component above it, not a new component: the next component's frontmatter and text "
         "reach the model inside the previous one's, under a tag such as <pt2>, and the scenario has fewer "
         "cases than written. A component starts with a one-`#` heading. Only a code of the file's own kind "
         "counts (`## C1 – Reading` in a perturbation is the user's text).",
         "# PT1\n## User's input\nNeed a will.\n\n## PT2     (for `# PT2`)\n---\nseverity: 5\n---"),
    Code("HB321", "error", "frontmatter block inside a text",
         "A `---` line, `key: value` lines and a `---` line in the middle of a scenario's or component's text: "
         "frontmatter that lost its component heading (`#PT2` without a space is not a heading), which "
         "reaches the model as text. Reported only when a key is one only HELMBench's frontmatter takes "
         "(`severity`, `difficulty`, `evaluation` …), and never inside a code fence: a user's message that quotes "
         "a blog post's or a note's frontmatter (`title:`, `tags:`) is the author's text.",
         "# PT1\n## User's input\nNeed a will.\n\n#PT2\n---\nseverity: 5\n---"),
    Code("HB322", "warning", "invisible character in a title",
         "A title or name (the benchmark's name and description, a scenario's, component's, criterion's or "
         "checkpoint's title) holds a control character (a YAML \"\\e\" or \"\\x07\" escape makes one) or a "
         "bidirectional override, embedding or isolate (U+202A-U+202E, U+2066-U+2069). Titles reach the public "
         "site, terminals and spreadsheets, where a control shows as nothing or garbage and an override makes "
         "the text after it read backwards, so one title can pass for another. Users' messages are not checked: "
         "there such characters may be the test.",
         '---\ntitle: "Plan \\u202Eevil"\n---'),
    Code("HB323", "note", "folder without scenario text is ignored",
         "A folder under scenarios/ whose name is not a pillar, behaviour or scenario code, does not start "
         "like one, and holds no Markdown, YAML or JSON (a Markdown editor's `attachments/`, `images/`): "
         "nothing in it would be read, so nothing is lost, and it is a note (`--strict` does not fail on "
         "it). A name starting with a dot (`.attachments/`) is never looked at. A folder that starts like a "
         "code or holds such a file is HB313.",
         "scenarios/P1/attachments/"),
    Code("HB318", "note", "scenario without a title",
         "The scenario's frontmatter has no `title`, so the site and `helmbench list` show only its "
         "code. A title is optional (the authors' scenarios have none, and an `MCSQE.md` usually has no "
         "frontmatter at all), so it is a note: `--strict` does not fail on it. To give one, add "
         "`title:` to the frontmatter (an `MCSQE.md` may take frontmatter holding only a title).",
         "---\ncategory: ASSISTANCE\nevaluation: {type: list_includes, required: [ASSISTANCE]}\n---"),
    # HB4xx: response schema
    Code("HB401", "error", "not a valid JSON Schema",
         "The response schema does not validate against the JSON Schema meta-schema.",
         '{"type": "objekt"}'),
    Code("HB402", "error", "malformed response_format wrapper",
         'A wrapped schema must look like {"type": "json_schema", "json_schema": {"name", "schema"}}.',
         '{"type": "json_schema", "schema": {...}}'),
    Code("HB403", "error", "schema not usable with strict structured outputs",
         "Strict structured outputs need an object root, every property listed in `required`, "
         "and `additionalProperties: false` on every object.",
         '{"type":"object","properties":{"a":{"type":"string"}}}'),
    # HB5xx: evaluation
    Code("HB501", "error", "evaluation field not in the schema",
         "The evaluation reads a field that the response schema does not define.",
         "evaluation: {type: list_includes, field: tag, required: [HANDOFF]}"),
    Code("HB502", "error", "list evaluation on a non-array field",
         "`list_includes` and `tag_threshold` need an array field; `category_match` a scalar one.",
         "list_includes on a string field"),
    Code("HB503", "error", "value outside the schema's enum",
         "An `expected` or `required` value is not one of the field's enum values, so no answer "
         "could ever pass.",
         "required: [HANDOF]"),
    Code("HB504", "warning", "prompt names a tag that is not in the enum",
         "An ALL-CAPS word in the prompt is close to, but not, an enum value: the model is asked "
         "for a tag it cannot give.",
         "prompt says META_ENQUIRY, enum says META_INQUIRY"),
    Code("HB505", "error", "sqe without criteria",
         "A judged scenario needs `criteria.md` or `CR#.md` files.",
         "evaluation: {type: sqe} with no criteria file"),
    Code("HB506", "error", "criterion values outside its options",
         "`pass_values` and `scores` keys must be among the criterion's `options`.",
         "options: [PASS, FAIL]\npass_values: [OK]"),
    Code("HB507", "error", "evaluation needs a response schema",
         "Deterministic evaluations read a field of structured output, so the scenario needs "
         "an `S#.json` schema.",
         "evaluation: {type: category_match} without S1.json"),
    Code("HB508", "warning", "criteria beside a scenario that is not judged",
         "`criteria.md` and `CR#.md` are only read for `sqe` scenarios; beside a deterministic "
         "evaluation they are ignored, which usually means the evaluation type is wrong.",
         "S1.md with evaluation: {type: list_includes} and a criteria.md beside it"),
    Code("HB509", "warning", "prompt names a label the schema does not have",
         "A label-like word in the prompt (ALL-CAPS with `_`, or the bold head of a list item) is "
         "not a value of the response schema's enum and not close to one: the model is asked for "
         "an answer it cannot give. Ordinary capitals (UK, ADHD, NOTE) are not labels.",
         "prompt: 'use IMMEDIATE_DANGER when …'  enum: [ASSISTANCE, CHIT_CHAT]"),
    Code("HB510", "error", "criterion evaluation that cannot check a reply",
         "A criterion of a judged scenario may be a deterministic check instead of the judge's (an `evaluation:` "
         "in its frontmatter); its type must give its own verdict and read a reply's text (such as "
         "`crisis_resources`). A judged type (`sqe`) or one that only reads a structured field cannot stand there.",
         "---\ntitle: Real crisis lines\nevaluation: {type: category_match, expected: CRISIS}\n---"),
    Code("HB511", "error", "several criteria in one file",
         "A criteria file holds one criterion, its frontmatter at the top. `# CR1`, `# CR2` sections with a "
         "frontmatter each (the form `conditions.md` uses) are not read as several criteria: the whole file would "
         "be one PASS/FAIL criterion whose frontmatter reaches the judge as text. Write one file per criterion: "
         "`CR1.md`, `CR2.md`, … beside the scenario file.",
         "criteria.md:\n# CR1\n---\ntitle: No diagnosis\n---\n…\n# CR2\n---\n…"),
    Code("HB512", "error", "gate names no judged criterion of the scenario",
         "`applies_when: {criterion: CR1, …}` asks this criterion only when CR1, a judged criterion of the same "
         "scenario, gave one of `answers`. A code no criterion of the scenario has, or a criterion checked by a rule "
         "(`evaluation:`) on either side, can never open the gate. Reported at the `applies_when` key.",
         "CR2.md:\n---\napplies_when: {criterion: CR9, answers: [DISCLOSED]}\n---"),
    Code("HB513", "error", "gate waits for an answer its criterion cannot give",
         "A gate's `answers` must be options of the gating criterion (or, with `question:`, options of that "
         "question of it), and `question` must be one of its `questions` ids: otherwise the gate never opens and "
         "the criterion is never asked. Reported at the `applies_when` key.",
         "CR1.md: options: [DISCLOSED, NOT_DISCLOSED]\nCR2.md:\n---\napplies_when: {criterion: CR1, answers: [YES]}\n---"),
    Code("HB514", "error", "gate on itself or a cycle of gates",
         "A criterion gated on itself, or a chain of gates that comes back to where it started (CR2 waits for CR3, "
         "CR3 for CR2), could never be asked: each waits for the other's verdict. Reported at each `applies_when` "
         "key of the cycle.",
         "CR2.md: applies_when: {criterion: CR3, answers: [PASS]}\nCR3.md: applies_when: {criterion: CR2, answers: [PASS]}"),
    Code("HB515", "error", "abstain value outside the options or also a pass value",
         "`abstain_values` are options that leave the count (the criterion is stored and shown, but is left out of "
         "the case's score and of the pass rate). Each must be one of `options` and none a pass value; at least one "
         "option must still count.",
         "options: [PASS, FAIL, NOT_RELEVANT]\npass_values: [PASS]\nabstain_values: [NOT_RELEVANT, N/A]"),
    Code("HB516", "error", "named question or rule that cannot apply",
         "A criterion's `questions` each need their own `id`; a `decide` rule reads only those ids, waits only for "
         "their options, and gives one of the criterion's `options`. Named questions need a judge (no "
         "`evaluation:`) and one option (no `response_type: multi`); `decide` needs `questions`.",
         "questions:\n  - {id: disclosed, text: Did the person disclose?, options: [\"yes\", \"no\"]}\n"
         "decide:\n  - when: {disclosed: [maybe]}\n    option: PASS\n  - otherwise: FAIL"),
    Code("HB517", "error", "decide rules can fall through",
         "The `decide` rules of a criterion with named questions are read in order and the first that matches gives "
         "the option; some answers must not be left without one. End the rules with `- otherwise: <option>` (last), "
         "or cover every combination of answers. Questions without `decide` are the same error.",
         "decide:\n  - when: {disclosed: [\"no\"]}\n    option: NOT_RELEVANT\n"
         "  - when: {responded: [\"yes\"]}\n    option: PASS"),
    # HB6xx: benchmark.yml, scoring.yaml, models.yml
    Code("HB601", "warning", "no benchmark.yml",
         "Pillars and behaviours are derived from folder codes and README titles; with no "
         "scoring.yaml either (the documented minimal layout: models.yml + scenarios/), every "
         "behaviour weighs the same.",
         "benchmark/ without benchmark.yml"),
    Code("HB602", "error", "undeclared pillar or behaviour",
         "A scenario sits under a pillar or behaviour that benchmark.yml does not declare.",
         "scenarios/P9/B1/S1 with no P9 in benchmark.yml"),
    Code("HB603", "warning", "weight for an unknown behaviour",
         "A scoring.yaml weight names a behaviour that benchmark.yml does not declare (or, without "
         "benchmark.yml, one that has no scenarios); it is ignored.",
         "weights: {P7-B3: 4}"),
    Code("HB604", "error", "behaviour without a weight",
         "Once weights are written (in benchmark.yml or scoring.yaml), every behaviour with "
         "scenarios needs one for the run score; a tree with neither file weighs all equally.",
         "behaviours: {B1: {title: Detect planning}}   # no weight, and no scoring.yaml entry"),
    Code("HB605", "error", "duplicate model id",
         "models.yml lists the same model id twice (among the models, among the judges of a `marking_model` "
         "ensemble, where it would get two votes, or among the simulated users of a `user_model` list, whose "
         "conversations would count twice).",
         "models: [{id: a/b}, {id: a/b}]"),
    Code("HB606", "error", "judged scenarios but no marking_model",
         "`sqe` scenarios need a `marking_model` in models.yml.",
         "models.yml without marking_model"),
    Code("HB607", "warning", "no models.yml",
         "Nothing to run: the benchmark has no models.yml.",
         "benchmark/ without models.yml"),
    Code("HB608", "error", "floor on an unknown part, or capping above its minimum",
         "A safety floor (`floors:` in benchmark.yml) caps the composite when a part scores below "
         "its minimum. Its `part` must be a pillar (P1) or behaviour (P2-B2) that benchmark.yml "
         "declares, else it could never bite; its `cap` may not be above its `minimum`, so a capped "
         "composite never reads higher than the bar the part failed (`minimum` and `cap` lie in "
         "[0, 1], HB203); the same part may not carry two floors.",
         "floors:\n  - {part: P1-B7, minimum: 0.7, cap: 0.4}   # no behaviour B7 in P1"),
    Code("HB609", "warning", "judge of a model's own family",
         "A model under test belongs to the same family as a judge (`marking_model`): the provider prefix and "
         "the id up to its size or version suffix (`openai/gpt-4.1` and `openai/gpt-4.1-mini` are one family), "
         "or a line of a small default table (anthropic/claude, google/gemini, meta-llama/llama, "
         "mistralai/mistral, deepseek/deepseek, qwen/qwen, x-ai/grok, …). A judge tends to prefer answers like "
         "its own, so its family's score is suspect; the leaderboard and `report` flag the model too. Choose a "
         "judge from a family not under test, or an ensemble across families; `families:` in models.yml maps "
         "an id prefix to a family name where the table is wrong.",
         "marking_model: openai/gpt-4.1\nmodels:\n  - id: openai/gpt-4.1-mini"),
    Code("HB610", "error", "a literal secret in models.yml",
         "models.yml names where a key is read from, never the key itself: `api_key_env` holds the NAME of an "
         "environment variable, and a secret header of an `http` target is written `${ENV_NAME}`. A value shaped "
         "like a key there (`sk-…`, a long run of letters and digits) would be committed with the benchmark and "
         "shown wherever the file is; the message never repeats it.",
         "models:\n  - id: local/llama\n    route: openai/llama3\n    api_key_env: sk-0123456789abcdef0123   # the key, "
         "not its variable's name"),
    # HB7xx: generated content (`helmbench generate`)
    Code("HB720", "warning", "generated content not reviewed",
         "A component or draft scenario written by `helmbench generate` (it records `generated_from` "
         "and `generated:`) still says `reviewed: false`. Until a reviewer has read it and set "
         "`reviewed: true`, `helmbench compile` leaves it out of the manifest (`--include-unreviewed` "
         "puts it in for trying out, marked, and such a run is never ranked). A warning, so "
         "`--strict` in CI stops a pull request from merging generated text unread.",
         "# PT5\n---\nseverity: 6\ngenerated_from: PT1\ngenerated: {model: openai/gpt-4.1, axes: {age: teen}}\n"
         "reviewed: false\n---"),
]

# HB15x: hostile input. A stranger's pull request is linted in CI, so input built to stall,
# crash or read outside the tree is a finding, answered in well under a second.
_HOSTILE = [
    Code("HB150", "error", "YAML alias expands too far",
         "YAML anchors and aliases (`&a`, `*a`) may be used, but one document may expand to at most "
         "5,000 values counting each alias as the copy it stands for, and an alias may not refer to "
         "the collection that contains it. A few hundred bytes of nested aliases (an \"alias bomb\") "
         "otherwise expand to billions of values.",
         "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
         "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]   # ... nine levels"),
    Code("HB151", "error", "nesting too deep",
         "A YAML document may nest at most 50 collections, a JSON file at most 64 objects or arrays; "
         "deeper input would exhaust the parser's stack.",
         '{"items": {"items": {"items": ... 240 levels ... }}}'),
    Code("HB152", "error", "file too large",
         "A file over its size limit is reported without being read: 256,000 bytes or 2,000 lines for "
         "Markdown, 256,000 bytes for a JSON schema, 64,000 bytes for .yml/.yaml files and for all "
         "the frontmatter of one Markdown file; a YAML document may hold 5,000 values, a schema 500 "
         "objects, a consolidated file 200 components and a tree 5,000 files; a scenario's prompts may hold at most "
         "50,000 (distinct ALL-CAPS word, enum value) pairs to check for misspelt tags. The "
         "authors' largest file is 140 lines; the limits keep every lint answer under a second.",
         "scenarios/P1/B1/S1/conditions.md of 5 MB"),
    Code("HB153", "error", "symlink out of the tree",
         "A symlink that points outside the benchmark folder, is broken or loops is never followed "
         "(a pull request could otherwise compile files of the machine that lints it into the "
         "manifest). Symlinks to files or folders inside the benchmark folder are followed.",
         "scenarios/P1/B1/S1/conditions.md -> /etc/passwd"),
    Code("HB154", "error", "`$ref` outside the schema",
         "A response schema's `$ref` must point inside the same schema (`#/$defs/Tag`, or `#name` of "
         "an `$anchor`); remote URLs, other files and pointers to nothing are refused, as is an `$id` "
         "below the root (it would change what `#` refers to). Nothing is ever fetched.",
         '{"$ref": "https://example.com/schema.json"}'),
    Code("HB155", "error", "invalid or exponential regular expression",
         "A `pattern` or `patternProperties` key in the response schema is not a valid regular "
         "expression, so validating any answer against the schema would fail; or it repeats a group "
         "that is itself only a repetition (`(a+)+`, `(\\w*)*`, `(a|b+)*`), which can take exponential "
         "time on an answer that almost matches and would stall a paid run. A repetition with a "
         "delimiter, such as `([a-z]+-)*`, is fine.",
         '{"type": "string", "pattern": "([A-Z"}\n{"type": "string", "pattern": "^(a+)+$"}'),
    Code("HB156", "error", "number not finite or too large",
         "Numbers must be finite and integers must fit in 64 bits: `.inf`, `.nan`, `NaN`, `Infinity`, "
         "`1e999` and 30-digit integers pass range checks written with `>` and then break the "
         "manifest or the provider request.",
         "weight: .inf"),
]

# HB7xx: conversations (conversation.md beside a scenario). Turn 1 is the composed opening.
_CONVERSATION = [
    Code("HB701", "error", "turn numbering",
         "conversation.md writes turns 2, 3, … under `# Turn N` headings: turn 1 is the opening (scenario, "
         "condition, user context and perturbation, composed as for any case), a turn may be written once, "
         "at most turn 20, and the turns of a scripted user follow each other with no gap (a missing turn would leave the "
         "model two user messages in a row). A simulated user's landmarks may skip turns.",
         "# Turn 2\nlol jk\n\n# Turn 4   # no turn 3\nanyway, my essay"),
    Code("HB702", "error", "landmark beyond the maximum",
         "A simulated user's landmark (`# Turn N`) is set for a turn after `max_turns`: the conversation "
         "stops before the user could reach it.",
         "---\nuser: simulated\nmax_turns: 4\n---\n# Turn 6\nMention the guitar you gave away."),
    Code("HB703", "error", "checkpoint names a turn that does not exist",
         "A checkpoint (`checkpoints:` in conversation.md) checks the reply at a turn after the last one: "
         "the last scripted turn, or `max_turns` for a simulated user.",
         "checkpoints:\n  - turn: 5   # the script stops at turn 3\n    evaluation: {type: list_includes, required: [HANDOFF]}"),
    Code("HB704", "error", "not a conversation part",
         "conversation.md holds frontmatter at its top, then `# Turn N` parts, and for a simulated user "
         "`# Persona` and `# Goal`, each once; any other `#` heading, or frontmatter under a heading, is "
         "not read.",
         "# Turn two\n# Background"),
    Code("HB705", "error", "conversation user does not match its parts",
         "A scripted conversation (the default) needs at least one `# Turn N` and takes no persona, goal, "
         "`max_turns` or `stop_when`; a simulated one (`user: simulated`) needs `# Persona`, `# Goal` and "
         "`max_turns`. `opening: simulated` (the simulated user writes turn 1 too) needs `user: simulated`.",
         "---\nmax_turns: 6   # without `user: simulated`\n---\n# Persona\nA student, 19"),
    Code("HB706", "error", "simulated user but no user_model",
         "A conversation with `user: simulated` is played by the `user_model` of models.yml, which is "
         "missing.",
         "models.yml without user_model"),
    Code("HB707", "error", "empty conversation part",
         "A `# Turn N`, `# Persona` or `# Goal` part has no text: a scripted turn would send the model "
         "an empty message, an empty persona or goal leaves the simulated user nothing to play. A part that keeps "
         "a `##` heading (`## User's input`) with nothing under it is empty too: it would send an empty tag.",
         "# Turn 3\n\n# Turn 4"),
]

CODES: dict[str, Code] = {c.code: c for c in sorted(_TABLE + _HOSTILE + _CONVERSATION, key=lambda c: c.code)}

__all__ = ["CODES", "Code"]
