"""XML → the truncated tree, streamed through defusedxml (entities and external
references → HostileInput), keeping only what is shown."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from contextq.errors import HostileInput, InvalidInput
from contextq.files.json_view import DEPTH_MARKER, Limits, more_items, more_keys
from contextq.settings import Settings

# ---------------------------------------------------------------- XML


def read_xml(path: Path, settings: Settings, lim: Limits, meta: dict[str, Any]) -> str:
    """Stream the XML, pruning as it goes; render the kept tree back as indented XML.

    An element is dropped from its parent as soon as it ends if it lies deeper
    than MAX_NESTING_DEPTH or past the parent's MAX_ARRAY_ITEMS children, so
    memory holds only the view, whatever the file's size.
    """
    open_elems: list[Any] = []
    counts: list[int] = []  # children seen so far, per open element
    hidden: list[bool] = []  # past its parent's item limit, below the depth limit, or inside one
    root: Any = None
    try:
        with path.open("rb") as fh:
            for event, elem in iterparse(fh, events=("start", "end")):
                if event == "start":
                    if counts:
                        counts[-1] += 1
                    hidden.append(
                        bool(hidden)
                        and (hidden[-1] or counts[-1] > lim.items or len(open_elems) >= lim.depth)
                    )
                    open_elems.append(elem)
                    counts.append(0)
                    lim.max_depth = max(lim.max_depth, len(open_elems))
                    if root is None:
                        root = elem
                    continue
                depth = len(open_elems)
                open_elems.pop()
                children = counts.pop()
                if hidden.pop():
                    elem.clear()
                    if open_elems:
                        open_elems[-1].remove(elem)
                    continue
                _trim_element(elem, lim, depth, children)
    except DefusedXmlException as exc:
        raise HostileInput(
            f"this XML declares entities or external references ({type(exc).__name__}); "
            "they are refused (billion-laughs and XXE protection)"
        ) from exc
    except SyntaxError as exc:  # xml.etree.ElementTree.ParseError
        raise InvalidInput(f"invalid XML: {exc}") from exc
    if root is None:
        raise InvalidInput("this XML has no root element")
    meta["root"] = root.tag
    ET.indent(root)
    return ET.tostring(root, encoding="unicode")


def _trim_element(elem: Any, lim: Limits, depth: int, children: int) -> None:
    """Cut an element that has just ended: text, attributes, depth, children."""
    if depth < lim.depth:  # children of the last level are cut by depth, not counted as items
        lim.items_total += children
        lim.items_shown += min(children, lim.items)
    lim.keys_total += len(elem.attrib)
    lim.keys_shown += min(len(elem.attrib), lim.keys)
    if elem.text:
        elem.text = lim.string_value(elem.text.strip()) or None
    if elem.tail:
        elem.tail = lim.string_value(elem.tail.strip()) or None
    if len(elem.attrib) > lim.keys:
        extra = len(elem.attrib) - lim.keys
        for name in list(elem.attrib)[lim.keys :]:
            del elem.attrib[name]
        elem.set("_more", more_keys(extra))
    for name, value in list(elem.attrib.items()):
        elem.set(name, lim.string_value(value))
    if depth == lim.depth and children:
        elem.text = DEPTH_MARKER
    elif children > lim.items:
        elem.append(ET.Comment(f" {more_items(children - lim.items)} "))
