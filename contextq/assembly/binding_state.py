"""The state bound reasoning carries per conversation and model, beside the cut point
(`contextq.assembly.binding` decides with it; the service stores it as JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Pins:
    """What the turn's first answer sent that stays put for the rest of the turn."""

    turn_seq: int  # the seq of the turn's user message (0: no user message)
    now: str  # the time of the turn's first answer (ISO 8601): its date line
    searched: bool  # whether its system prompt had the citation section
    reminders: tuple[tuple[int, str], ...] = ()  # (seq it is sent after, text), in order


@dataclass(frozen=True, slots=True)
class Answer:
    """A stored answer: the newest seq of the history it was made from, its format and
    fingerprints."""

    last_seq: int
    format: str
    fingerprint: str  # of the whole answer
    head: str  # of its tools and system field alone (to name a cause)


@dataclass(frozen=True, slots=True)
class BindState:
    """The binding state carried per conversation and model (beside the cut point)."""

    watermark: int | None = None  # reasoning of rows at or below this seq is never sent
    answers: tuple[Answer, ...] = ()  # oldest first
    bound: Mapping[int, str] = field(default_factory=dict)  # row seq → its fingerprint
    pins: Pins | None = None
    notice: tuple[int, str] | None = None  # (last seq of the answer, warning) of the last drop

    def to_json(self) -> dict[str, Any]:
        """The JSON stored beside the cut point (the watermark is its own column)."""
        pins = self.pins
        return {
            "answers": [[a.last_seq, a.format, a.fingerprint, a.head] for a in self.answers],
            "bound": {str(seq): fp for seq, fp in sorted(self.bound.items())},
            "notice": list(self.notice) if self.notice is not None else None,
            "pins": None
            if pins is None
            else {
                "turn_seq": pins.turn_seq,
                "now": pins.now,
                "searched": pins.searched,
                "reminders": [[seq, text] for seq, text in pins.reminders],
            },
        }

    @classmethod
    def from_json(cls, watermark: int | None, data: Any) -> BindState:
        """The state stored (`to_json`), tolerant of a missing or malformed value."""
        if not isinstance(data, Mapping):
            return cls(watermark)
        answers = tuple(
            Answer(int(a[0]), str(a[1]), str(a[2]), str(a[3]))
            for a in data.get("answers") or ()
            if isinstance(a, list) and len(a) == 4
        )
        bound = {int(k): str(v) for k, v in (data.get("bound") or {}).items()}
        raw = data.get("pins")
        pins = None
        if isinstance(raw, Mapping):
            pins = Pins(
                int(raw["turn_seq"]),
                str(raw["now"]),
                bool(raw["searched"]),
                tuple((int(s), str(t)) for s, t in raw.get("reminders") or ()),
            )
        notice = data.get("notice")
        said = (int(notice[0]), str(notice[1])) if isinstance(notice, list) else None
        return cls(watermark, answers, bound, pins, said)
