"""A conversation as a case page shows it: the transcript, turn by turn, and a verdict per checkpoint.

Every string here comes from the database (the model's replies, the simulated user's messages,
the landmarks an author wrote) and is untrusted: each goes through `escape` exactly once. The
landmark the simulated user was to reach by a turn is shown beside its message, so a reader can
see whether the user model played its part.
"""

from __future__ import annotations

import re

from markupsafe import escape

#: The part of a prompt the person wrote: the benchmark's `## User's input` heading becomes <users_input>.
_PERSON = re.compile(r"<(users?_(?:input|message))>\s*(.*?)\s*</\1>", re.S)


def shown_verdict(verdict: str | None, score: float | None = None) -> str | None:
    """The verdict as a reader should see it: a FAIL that earned partial credit (0 < score < 1, such as a judge's
    PARTIAL) is shown as PARTIAL, never as a plain FAIL. It still counts as not passed in the pass rate."""
    if verdict == "FAIL" and score is not None and 0 < score < 1:
        return "PARTIAL"
    return verdict


def person_message(text: str | None) -> str | None:
    """What the person wrote, out of a prompt that wraps it in the benchmark's scaffold (the last such block:
    the latest input); None when the prompt has no such block (it is then shown whole)."""
    found = _PERSON.findall(text or "")
    return found[-1][1] if found else None


SPEAKER = {"opening": "User (opening)", "script": "User (scripted)", "user_model": "Simulated user",
           "model": "Model"}
#: An imported conversation's turns (`helmbench import transcripts`): written elsewhere, by whoever it says.
IMPORTED_SPEAKER = {"user": "User (imported)", "assistant": "Model (imported)"}
_REGION = 'tabindex="0" role="region" aria-label='


def played_by_of(turns) -> str | None:
    """The model id of the simulated user whose messages a transcript holds (None: an authored or scripted user)."""
    return next((t["caller"] for t in turns if t.get("source") == "user_model" and t.get("caller")), None)


def _e(value) -> str:
    return str(escape(value))


def transcript_html(res, badge, money, plain=lambda reason: None) -> str:
    """HTML of `res.turns` and `res.checkpoints` (badge: the verdict badge; money: the cost formatter; plain: a
    checkpoint's machine reason in words, or None, the machine reason then kept beside them)."""
    out = ['<div class="hb-transcript">\n<p class="hb-transcript-head"><strong>Transcript</strong></p>\n']
    played_by = played_by_of(res.turns)
    if played_by:  # which simulated user played the person (several may play one benchmark's conversations)
        out.append(f'<p class="hb-meta hb-played-by">The person in this conversation was played by the simulated user '
                   f'<code>{_e(played_by)}</code>.</p>\n')
    for t in res.turns:
        who = (IMPORTED_SPEAKER.get(t.get("role"), "") if t.get("source") == "imported"
               else SPEAKER.get(t.get("source"), t.get("role") or ""))
        side = "hb-turn-model" if t.get("role") == "assistant" else "hb-turn-user"
        label = f"Turn {int(t['turn'])} · {who}"
        out.append(f'<div class="hb-turn {side}">\n<p class="hb-role">{_e(label)}</p>\n')
        if t.get("landmark"):
            out.append(f'<p class="hb-landmark"><span class="hb-landmark-label">Landmark by this turn:</span> '
                       f'{_e(t["landmark"])}</p>\n')
        if t.get("error_kind"):
            out.append(f'<p class="hb-error">Error: {_e(t["error_kind"])} — {_e(t.get("error_message") or "")}</p>\n')
        elif t.get("stop"):
            out.append('<p class="hb-meta">The simulated user ended the conversation here.</p>\n')
        else:
            content = t.get("content") or ""
            said = person_message(content) if t.get("role") != "assistant" else None
            if said is not None and said != content.strip():
                # The person's words first; the whole prompt (instructions, labels, scaffold) one click away.
                out.append(f'<pre class="hb-text hb-turn-text hb-person" data-search-exclude {_REGION}"{_e(label)}">'
                           f'{_e(said)}</pre>\n<details class="hb-full-prompt"><summary>The full prompt the model '
                           f'received at this turn</summary><pre class="hb-text" data-search-exclude {_REGION}'
                           f'"{_e(label)}, full prompt">{_e(content)}</pre></details>\n')
            else:
                out.append(f'<pre class="hb-text hb-turn-text" data-search-exclude {_REGION}"{_e(label)}">'
                           f'{_e(content)}</pre>\n')
            if t.get("cost") is not None:
                out.append(f'<p class="hb-meta">cost {money(t["cost"])}</p>\n')
        out.append("</div>\n")
    if res.checkpoints:
        out.append('<div class="hb-table-wrap" role="region" tabindex="0" aria-label="Checkpoints and criteria (scrolls '
                   'sideways on narrow screens)"><table class="hb hb-checkpoints">\n<thead><tr><th>Checkpoint or criterion</th>'
                   '<th>Verdict</th><th>Score</th>'
                   '<th>Why</th></tr></thead>\n<tbody>\n')
        for cp in res.checkpoints:
            name = cp["checkpoint"] + (f" — {cp['title']}" if cp.get("title") else "")
            score = "—" if cp.get("score") is None else f"{round(cp['score'], 2)}"
            words = plain(cp.get("reason"))
            why = (f'{_e(words)} <small class="hb-code">(<code>{_e(cp["reason"])}</code>)</small>' if words
                   else _e(cp.get("reason") or ""))
            out.append(f"<tr><td>{_e(name)}</td><td>{badge(shown_verdict(cp['verdict'], cp.get('score')))}</td><td>{score}</td><td>{why}</td></tr>\n")
        out.append("</tbody>\n</table></div>\n")
    out.append("</div>\n")
    return "".join(out)
