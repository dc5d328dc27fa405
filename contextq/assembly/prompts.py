"""The system prompt (S) in three layers with its dynamic sections, the custom agent
prompt (CA) and the reminders (R) — docs/history.md#the-ready-to-send-context.

S is the conversation's `system_prompt`, else the owner's saved one, else the packaged
default (`default_system_prompt.md`, shipped as package data). With
`replace_system_prompt` the conversation's `custom_agent_prompt` is the system prompt
(and does not move). Appended, each as its own titled section:

- the current date, in UTC or the conversation's `timezone`, at day granularity by
  default (byte-identical all day, so providers' prompt caches keep hitting), or to the
  minute on request;
- when the turn has tools, "when to use which tool" from their names and descriptions;
- while a search tool has run in the current turn, how to cite documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from importlib import resources
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from contextq.assembly.inputs import GRANULARITIES, Prompts
from contextq.assembly.tools import Tool, guidance
from contextq.errors import ValidationFailed

DATE_TITLE = "## Current date"
TOOLS_TITLE = "## When to use which tool"
CITATIONS_TITLE = "## Citations"
CITATIONS_SECTION = (
    "Documents in this conversation carry a `citation_id`. When your answer uses a "
    "document, cite it right after the statement as [citation_id], for example [1] or "
    "[2][3]. Cite only documents you were given."
)
CITATION_REMINDER = "A search tool ran in this turn: cite the documents you use as [citation_id]."
REMINDER_TITLE = "Reminders:"


@lru_cache(maxsize=1)
def default_system_prompt() -> str:
    """The packaged default prompt (`contextq/assembly/default_system_prompt.md`)."""
    text = resources.files("contextq.assembly").joinpath("default_system_prompt.md")
    return text.read_text(encoding="utf-8").strip()


def check_timezone(name: str | None, *, field: str = "timezone") -> str | None:
    """An IANA zone name (`Europe/Paris`, `UTC`) or None; ValidationFailed otherwise."""
    if name is None or name == "":
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationFailed(
            f"{field}: unknown time zone {name!r}; use an IANA name such as Europe/Paris",
            field=field,
        ) from None
    return name


def check_granularity(value: str | None, *, field: str = "datetime_granularity") -> str | None:
    if value is None or value in GRANULARITIES:
        return value
    raise ValidationFailed(f"{field} must be day or minute", field=field)


def base_system_prompt(prompts: Prompts) -> str | None:
    """The first layer that is set (see the module docstring)."""
    if prompts.replace_system_prompt and prompts.custom_agent_prompt:
        return prompts.custom_agent_prompt
    for layer in (prompts.system_prompt, prompts.owner_system_prompt):
        if layer is not None and layer.strip():
            return layer
    return default_system_prompt() if prompts.use_default else None


def date_section(now: datetime, timezone: str | None, granularity: str) -> str:
    zone = ZoneInfo(timezone) if timezone else UTC
    local = now.astimezone(zone)
    label = timezone or "UTC"
    if granularity == "minute":
        offset = local.strftime("%z")
        when = f"{local:%A, %Y-%m-%d %H:%M} ({label}, UTC{offset[:3]}:{offset[3:]})"
    else:
        when = f"{local:%A, %Y-%m-%d} ({label})"
    return f"{DATE_TITLE}\n{when}"


def system_text(
    prompts: Prompts, *, now: datetime, tools: Sequence[Tool], search_ran: bool
) -> str | None:
    """S: the base prompt plus its sections (None when there is no prompt at all)."""
    base = base_system_prompt(prompts)
    if not prompts.sections:
        return base
    sections = [base.strip()] if base else []
    sections.append(date_section(now, prompts.timezone, prompts.datetime_granularity))
    if tools:
        sections.append(f"{TOOLS_TITLE}\n{guidance(tools)}")
    if search_ran:
        sections.append(f"{CITATIONS_TITLE}\n{CITATIONS_SECTION}")
    return "\n\n".join(sections)


def custom_agent_text(prompts: Prompts) -> str | None:
    """CA, sent before the newest user message (None when it is the system prompt)."""
    text = prompts.custom_agent_prompt
    if not text or not text.strip() or prompts.replace_system_prompt:
        return None
    return text


def reminder_text(prompts: Prompts, *, search_ran: bool) -> str | None:
    """R: the conversation's reminders plus the citation reminder, in one message."""
    items = list(prompts.reminders)
    if search_ran:
        items.append(CITATION_REMINDER)
    if not items:
        return None
    return REMINDER_TITLE + "\n" + "\n".join(f"- {item}" for item in items)
