"""What the extractive summariser can take from messages: sentences and facts, never raw
tool output lines.

- Markup (`<output>`, `<returncode>`, any tag) is stripped from text before anything is
  taken from it; fenced code blocks are dropped from prose.
- A traceback (Python, or JS/Java `at …` frames) becomes ONE error: its last line and the
  innermost location (`ValueError: bad header (at src/io.py:112 in parse)`). Other error
  lines (`error: …`, `FAILED …`, `E   …`, `fatal: …`) are errors too, one per pattern.
- Paths: from tool-call arguments (touched; changed ones, by an edit or write tool, first),
  and paths written in any text (seen).
- From tool outputs, only prose-like lines (a sentence, a count with its unit), at most
  `TOOL_LINES_PER_MESSAGE` of them survive scoring; code, listings and frames never do.
  A structured (JSON) result is read by its fields: `price 227.16; order_id 12446;
  status Pending` (scalars, the first items of lists, nested one level at a time, at most
  `MAX_JSON_FIELDS`), its `error` field an error, paths in its values paths seen.
- A previous summary (or a chunk summary) given as input is parsed by section: its
  errors, files and narrative carry over, its goal and decisions become facts.
- Everything taken keeps the seqs of the messages it came from (docs/provenance.md):
  the same error, path or decision seen again unites them; from a previous summary, the
  seqs its lines cite.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from contextq.history.memory_actions import files_in, normalise_error, writes_files
from contextq.history.seq_markers import cite, merge_seqs, split_cited
from contextq.history.summary_format import (
    Decision,
    MemoryFacts,
    facts_from_summary,
    merge_facts,
    parse_summary,
)
from contextq.history.tool_output import (
    PY_FRAME,
    error_spot,
    is_error_line,
    readable,
    strip_markup,
    tracebacks,
)
from contextq.history.types import Message

SUMMARY_MARKER = "contextq-summary"  # Message.name of a summary given as input
TOOL_LINES_PER_MESSAGE = 2
_COMMAND_KEYS = ("stdout", "stderr", "output", "returncode", "exit_code")  # an envelope
MAX_JSON_FIELDS = 48  # fields read from one structured result
JSON_FIELDS_PER_LINE = 6
JSON_LIST_ITEMS = 4  # items of a list read before "(+N more)"
EARLIER_WORDINGS = 2  # an error line also quotes this many other wordings of its pattern
_EARLIER = " (earlier: "
MAX_SENTENCE_CHARS = 300

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`])|\n+")
_WORDS = re.compile(r"[A-Za-z]{2,}")
_PATH = re.compile(  # a whole token: a path with a directory, a /workspace path, a file name
    r"(?:/workspace/[\w./-]+|(?:~|\.{0,2})?/?(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}"
    r"|[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|rb|php|c|h|cc|cpp|hpp|cs|kt|swift|scala|md|rst|txt"
    r"|json|ya?ml|toml|ini|cfg|conf|csv|tsv|sql|sh|html|css|xml|lock|log|ipynb))"
)
PATH_EDGES = "\"'`()[]{}<>,;!?*"  # punctuation around a path in prose
_DECISION = re.compile(
    r"\b(?:(?:we|i)(?:'ve| have)? decided|decision:|let's go with|(?:we|i) will use|going with"
    r"|settled on|opted (?:for|to)|chose to|agreed (?:to|on))\b",
    re.I,
)
_NEXT = re.compile(r"\b(next,? i|next step|i will|i'll|then i|going to|plan is to|todo)\b", re.I)
_LETTERS_AND_SPACE = str.maketrans("", "", string.ascii_letters + " ")
_ERROR_EXAMPLE = re.compile(r"^- (.+?)(?: \(x(\d+)\))?(?: \(earlier: (.*)\))?$")
_OLD_ERROR_EXAMPLE = re.compile(r"^- \(#(-?\d+)(?:, x(\d+))?\) (.+)$")  # before provenance
_OLD_STATE = re.compile(r"^\(#(\d+)\) (.*)$")
_TAGGED = re.compile(r"^\((#-?\d+)(?: ([^)]*))?\) (.*)$")
_CODE_LINE = re.compile(  # code, prompts, frames, and `path:line:` hits of grep or a compiler
    r"^\s*(?:def |class |import |from \S+ import|return\b|if .*:$|for .*:$|[{}\[\]();]|#include"
    r"|@\w|\$ |>>> |>\s|\.\.\. |//|/\*|\*|-->|\||\+[-=]|=+$|-+$|\S+:\d+[:-])"
)
_CODE_TOKENS = (" = ", "()", "){", "=>", "->", "::", " == ", "&&", "||", "....")
_EXIT_ONLY = re.compile(r"^\(?exit (?:code|status) \d+\)?$", re.I)


@dataclass(slots=True)
class Candidate:
    """A sentence that may go into the narrative."""

    order: int
    seq: int
    role: str
    text: str
    message: int  # index of its message (to cap lines per tool message)
    score: float = 0.0
    tokens: int = 0


@dataclass(slots=True)
class ErrorFact:
    text: str  # the newest example
    seqs: tuple[int, ...]  # the messages it was seen in
    count: int = 1
    earlier: list[str] = field(default_factory=list)  # other wordings, newest first

    @property
    def seq(self) -> int:
        """The newest message it was seen in."""
        return max(self.seqs, default=-1)

    def line(self) -> str:
        times = f" (x{self.count})" if self.count > 1 else ""
        also = f"{_EARLIER}{'; '.join(self.earlier)})" if self.earlier else ""
        return f"- {self.text}{times}{also}{cite(self.seqs)}"


@dataclass(slots=True)
class Said:
    """A sentence of the state or the next step, with the message it came from."""

    text: str
    seqs: tuple[int, ...]

    def line(self, label: str) -> str:
        return f"{label}: {self.text}{cite(self.seqs)}"


@dataclass(slots=True)
class Harvest:
    sentences: list[Candidate] = field(default_factory=list)
    errors: dict[str, ErrorFact] = field(default_factory=dict)  # pattern → newest example
    error_lines: list[str] = field(default_factory=list)  # carried from earlier summaries
    # path → (weight, the seqs of the messages naming it)
    paths: dict[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    goal: str | None = None
    goal_seqs: tuple[int, ...] = ()
    decisions: list[Decision] = field(default_factory=list)
    prior_facts: MemoryFacts = field(default_factory=MemoryFacts)
    state: list[Said] = field(default_factory=list)
    next_step: Said | None = None

    def facts(self) -> MemoryFacts:
        """What earlier summaries stated, then the goal and decisions the messages state."""
        sources = {"goal": self.goal_seqs} if self.goal_seqs else {}
        found = MemoryFacts(goal=self.goal, decisions=tuple(self.decisions), sources=sources)
        return merge_facts(self.prior_facts, found)


def harvest(messages: Sequence[Message]) -> Harvest:
    out = Harvest()
    for index, message in enumerate(messages):
        if message.name == SUMMARY_MARKER:
            _take_summary(out, message, index)
        elif message.role == "tool":
            _take_tool_output(out, message, index)
        elif message.role != "system" or message.pinned:
            _take_prose(out, message, index)
    return out


def find_paths(text: str) -> list[str]:
    """File and workspace paths written in `text` (`src/a.py:12:` gives `src/a.py`)."""
    found = []
    for token in text.split():
        if "/" not in token and "." not in token:
            continue
        bare = token.strip(PATH_EDGES)
        if "://" in bare:
            continue
        path = bare.split(":", 1)[0].rstrip(".")
        if len(path) >= 3 and _PATH.fullmatch(path):
            found.append(path)
    return found


def _add_path(out: Harvest, path: str, weight: int, seqs: tuple[int, ...]) -> None:
    path = path.strip().rstrip(".,:;")
    if len(path) < 3 or "://" in path:
        return
    old_weight, old_seqs = out.paths.get(path, (0, ()))
    out.paths[path] = (max(weight, old_weight), merge_seqs(old_seqs, seqs))


def _add_error(out: Harvest, text: str, seqs: tuple[int, ...]) -> None:
    text = _clip(" ".join(text.split()))
    pattern = normalise_error(text)
    known = out.errors.pop(pattern, None)  # re-inserted: newest last
    fact = ErrorFact(text, seqs, 1)
    if known is not None:
        fact.count += known.count
        fact.seqs = merge_seqs(known.seqs, seqs)
        wordings = [known.text, *known.earlier] if known.text != text else known.earlier
        fact.earlier = wordings[:EARLIER_WORDINGS]
    out.errors[pattern] = fact


def _take_prose(out: Harvest, message: Message, index: int) -> None:
    text = _FENCE.sub(" [code] ", strip_markup(message.text()))
    seqs = (message.seq,)
    for call in message.tool_calls or ():
        function = call.get("function") or {}
        weight = 4 if writes_files(str(function.get("name", ""))) else 3
        for path in files_in(function.get("arguments")):
            _add_path(out, path, weight, seqs)
    for path in find_paths(text):
        _add_path(out, path, 2, seqs)
    sentences = [s for s in (_clip(p.strip()) for p in _SENTENCE.split(text)) if _is_sentence(s)]
    if message.role == "user" and out.goal is None and sentences:
        out.goal, out.goal_seqs = _clip(" ".join(sentences[:2])), seqs
    if message.kind == "decision" and sentences:
        out.decisions.append(Decision(_clip(" ".join(sentences[:2])), seqs=seqs))
    elif message.role != "user":
        out.decisions += [Decision(s, seqs=seqs) for s in sentences if _DECISION.search(s)]
    if message.role == "assistant" and sentences:
        stated = [s for s in sentences if _NEXT.search(s)]
        plain = [s for s in sentences if not _NEXT.search(s)]
        out.state = [Said(s, seqs) for s in plain[:1]]
        out.next_step = Said(stated[-1], seqs) if stated else out.next_step
    if message.kind == "error":
        _add_error(out, sentences[0] if sentences else text[:200], seqs)
    for sentence in sentences:
        out.sentences.append(
            Candidate(len(out.sentences), message.seq, message.role, sentence, index)
        )


def _take_tool_output(out: Harvest, message: Message, index: int) -> None:
    raw = message.text()
    if raw.lstrip()[:1] in ("{", "[") and _take_json(out, message, index, raw):
        return
    text = readable(raw)
    seqs = (message.seq,)
    remaining, spots = tracebacks(text)
    for path in find_paths(remaining):  # frames name library code, not what was touched
        _add_path(out, path, 1, seqs)
    for spot in spots:
        _add_error(out, spot.text(), seqs)
        if spot.path:
            _add_path(out, spot.path, 2, seqs)
    lines = [line for line in remaining.splitlines() if line.strip()]
    error_lines = [line for line in lines if is_error_line(line)]
    said = [line for line in error_lines if not _EXIT_ONLY.match(line.strip())]
    if said or spots:  # "(exit code 1)" says nothing the error itself does not
        error_lines = said
    for line in error_lines[:3]:
        _add_error(out, error_spot(line).text(), seqs)
    if message.kind == "error" and not spots and not error_lines and lines:
        _add_error(out, lines[-1], seqs)
    label = f"tool {message.name}" if message.name else "tool"
    for line in lines:
        sentence = _clip(line.strip())
        if line not in error_lines and _is_prose_line(line) and _is_sentence(sentence):
            out.sentences.append(Candidate(len(out.sentences), message.seq, label, sentence, index))


def _take_json(out: Harvest, message: Message, index: int, text: str) -> bool:
    """A structured result read by its fields; False when `text` is not JSON, or is a
    command's envelope (`stdout`, `output`, …: read as the text it holds)."""
    try:
        data = json.loads(text)
    except ValueError:
        return False
    if isinstance(data, dict) and any(key in data for key in _COMMAND_KEYS):
        return False
    seqs = (message.seq,)
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        _add_error(out, data["error"], seqs)
        data = {k: v for k, v in data.items() if k != "error"}
    fields = list(_json_fields(data, ""))[:MAX_JSON_FIELDS]
    label = f"tool {message.name}" if message.name else "tool"
    for path in find_paths(" ".join(value for _, value in fields)):
        _add_path(out, path, 1, seqs)
    for i in range(0, len(fields), JSON_FIELDS_PER_LINE):
        chunk = fields[i : i + JSON_FIELDS_PER_LINE]
        sentence = _clip("; ".join(f"{key} {value}" if key else value for key, value in chunk))
        if len(sentence) >= 8 and _WORDS.search(sentence):  # `card_id 262919693687` says it
            out.sentences.append(Candidate(len(out.sentences), message.seq, label, sentence, index))
    return True


def _json_fields(data: object, key: str) -> Iterator[tuple[str, str]]:
    """(field, value) of the scalars in `data`, lists read to their first items."""
    if isinstance(data, dict):
        for name, value in data.items():
            yield from _json_fields(value, f"{key}.{name}" if key else str(name))
    elif isinstance(data, list):
        scalars = all(not isinstance(item, dict | list) for item in data)
        if scalars:
            shown = ", ".join(str(item) for item in data[:JSON_LIST_ITEMS])
            more = f" (+{len(data) - JSON_LIST_ITEMS} more)" if len(data) > JSON_LIST_ITEMS else ""
            yield key, shown + more
        else:
            for item in data[:JSON_LIST_ITEMS]:
                yield from _json_fields(item, key)
    elif data is not None and str(data) != "":
        yield key, " ".join(str(data).split())


def _take_summary(out: Harvest, message: Message, index: int) -> None:
    text = message.text().split("\n", 1)[-1]  # drop the "Summary of …:" preface line
    parsed = parse_summary(text)
    if not parsed.structured:  # someone else's summary: plain prose
        _take_prose(out, Message(role="assistant", content=text, seq=message.seq), index)
        return
    out.prior_facts = _combine(out.prior_facts, facts_from_summary(text))
    for line in parsed.sections.get("errors", []):
        _take_error_line(out, line, message.seq)
    for line in parsed.sections.get("files", []):
        body, seqs, _ = split_cited(line)
        for path in body.removeprefix("- ").split(", "):
            _add_path(out, path, 2, seqs)
    state = [split_cited(line) for line in parsed.sections.get("state", [])]
    if state:
        out.state = [
            _said(body.removeprefix("State: "), seqs)
            for body, seqs, _ in state
            if body.startswith("State: ")
        ]
    for line in parsed.sections.get("narrative", []):
        sentence = line.removeprefix("- ")
        seq, role = message.seq, "summary"
        tagged = _TAGGED.match(sentence)
        if tagged:
            seq, role, sentence = int(tagged.group(1)[1:]), tagged.group(2) or role, tagged.group(3)
        out.sentences.append(Candidate(len(out.sentences), seq, role, sentence, index))


def _take_error_line(out: Harvest, line: str, fallback_seq: int) -> None:
    """An error line of a previous summary: counted on (the same error seen again adds to
    its count), with its seqs; other lines are carried as they are."""
    body, seqs, cited = split_cited(line)
    old = _OLD_ERROR_EXAMPLE.match(body) if not cited else None
    if old:  # "- (#12, x3) text" (a summary from before provenance)
        seqs, body = (
            (int(old.group(1)),),
            f"- {old.group(3)}" + (f" (x{old.group(2)})" if old.group(2) else ""),
        )
    example = _ERROR_EXAMPLE.match(body)
    if body.startswith("- recurring") or example is None:
        if not body.startswith("- recurring"):
            out.error_lines.append(line)
        return
    error, times, earlier = example.group(1), int(example.group(2) or 1), example.group(3) or ""
    older = [e for e in earlier.split("; ") if e]
    fact = ErrorFact(error, seqs or (fallback_seq,), times, older)
    out.errors.setdefault(normalise_error(error), fact)


def _said(text: str, seqs: tuple[int, ...]) -> Said:
    old = _OLD_STATE.match(text)
    return Said(old.group(2), (int(old.group(1)),)) if old and not seqs else Said(text, seqs)


def _combine(first: MemoryFacts, second: MemoryFacts) -> MemoryFacts:
    return merge_facts(first, second) if not first.is_empty() else second


def _is_sentence(text: str) -> bool:
    return len(text) >= 8 and len(_WORDS.findall(text, 0, 120)) >= 3


def _is_prose_line(line: str) -> bool:
    if line.startswith(("    ", "\t")) or _CODE_LINE.match(line) or PY_FRAME.match(line):
        return False
    stripped = line.strip().strip("=-*# ")
    if len(stripped) < 20 or stripped.endswith((":", "{", ";", ",", "(")):
        return False
    if any(token in stripped for token in _CODE_TOKENS):
        return False
    others = len(stripped.translate(_LETTERS_AND_SPACE))
    # 0.4: a measured line ("Partition 2024-03-11 holds 334504 events.") is prose
    return others / len(stripped) <= 0.4


def _clip(text: str) -> str:
    if len(text) <= MAX_SENTENCE_CHARS:
        return text
    cut = text.rfind(" ", 0, MAX_SENTENCE_CHARS)
    return text[: cut if cut > MAX_SENTENCE_CHARS // 2 else MAX_SENTENCE_CHARS] + " …"
