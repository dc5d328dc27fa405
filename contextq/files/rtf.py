"""RTF → plain text: a small reader after the well-known striprtf approach.

markitdown has no RTF converter. Formatting, fonts, pictures and metadata are dropped;
`\\u` escapes, `\\'hh` code-page bytes and the common special characters are kept.
"""

from __future__ import annotations

import re

from contextq.errors import InvalidInput

_RTF_TOKEN = re.compile(
    rb"\\([a-z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-f]{2})|\\([^a-z])|([{}])|[\r\n]+|(.)",
    re.IGNORECASE | re.DOTALL,
)
# Destinations whose text is not document text (most others are marked with \* anyway).
_DESTINATION_NAMES = """
    aftncn aftnsep aftnsepc annotation atnauthor atndate atnid author bkmkend bkmkstart
    blipuid buptim category colorschememapping colortbl comment company creatim
    datafield datastore defchp defpap doccomm docvar falt fchars ffname field file
    filetbl fldinst fontemb fontfile fonttbl footer footerf footerl footerr footnote
    ftncn ftnsep ftnsepc generator header headerf headerl headerr info keywords
    latentstyles levelnumbers leveltext list listlevel listname listoverridetable
    listpicture listtable listtext manager nonesttables objdata object objclass operator
    panose password pict pntext pntxta pntxtb printim private revtbl revtim rsidtbl shp
    shpinst shppict stylesheet subject template themedata title userprops wgrffmtfilter
    writereservation xmlnstbl
"""
_RTF_DESTINATIONS = frozenset(_DESTINATION_NAMES.split())
_RTF_SPECIALS = {
    "par": "\n",
    "sect": "\n\n",
    "page": "\n\n",
    "line": "\n",
    "tab": "\t",
    "row": "\n",
    "cell": " | ",
    "nestcell": " | ",
    "emdash": "\u2014",
    "endash": "\u2013",
    "emspace": "\u2003",
    "enspace": "\u2002",
    "qmspace": "\u2005",
    "bullet": "\u2022",
    "lquote": "\u2018",
    "rquote": "\u2019",
    "ldblquote": "\u201c",
    "rdblquote": "\u201d",
}


class _RtfReader:
    """State of one RTF pass: the group stack, `\\uc` skipping and the text so far."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, bool]] = []
        self.ignorable = False
        self.uc_skip = 1
        self.cur_skip = 0
        self.out: list[str] = []

    def brace(self, brace: bytes) -> None:
        self.cur_skip = 0
        if brace == b"{":
            self.stack.append((self.uc_skip, self.ignorable))
        elif self.stack:
            self.uc_skip, self.ignorable = self.stack.pop()

    def symbol(self, char: bytes) -> None:
        self.cur_skip = 0
        if char == b"*":
            self.ignorable = True
        elif not self.ignorable and char == b"~":
            self.out.append("\xa0")
        elif not self.ignorable and char in b"{}\\":
            self.out.append(char.decode("latin-1"))

    def control(self, word: bytes, arg: bytes | None) -> None:
        self.cur_skip = 0
        name = word.decode("ascii")
        if name in _RTF_DESTINATIONS:
            self.ignorable = True
        elif self.ignorable:
            return
        elif name in _RTF_SPECIALS:
            self.out.append(_RTF_SPECIALS[name])
        elif name == "uc" and arg is not None:
            self.uc_skip = max(0, min(int(arg), 8))
        elif name == "u" and arg is not None:
            code = int(arg)
            code = code + 0x10000 if code < 0 else code
            self.out.append(chr(code) if 0 <= code <= 0xFFFF else "\ufffd")
            self.cur_skip = self.uc_skip

    def char(self, text: str) -> None:
        if self.cur_skip > 0:
            self.cur_skip -= 1
        elif not self.ignorable:
            self.out.append(text)


def rtf_to_text(data: bytes) -> str:
    """Plain text of an RTF document (formatting, fonts, pictures and metadata dropped)."""
    if not data.lstrip().startswith(b"{\\rtf"):
        raise InvalidInput("this file is named .rtf but is not RTF (it does not start with {\\rtf)")
    reader = _RtfReader()
    for match in _RTF_TOKEN.finditer(data):
        word, arg, hexcode, char, brace, tchar = match.groups()
        if brace:
            reader.brace(brace)
        elif char:
            reader.symbol(char)
        elif word:
            reader.control(word, arg)
        elif hexcode:
            reader.char(bytes([int(hexcode, 16)]).decode("cp1252", errors="replace"))
        elif tchar:
            reader.char(tchar.decode("latin-1"))
    text = "".join(reader.out).encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
