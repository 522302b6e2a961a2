"""Text for a terminal: names and values from the databases, with their control characters made visible.

Anything a writer of a source row, a table's owner or a database's error message can put in front of
the operator (a column name, an error quoting a value) could otherwise drive the operator's terminal:
``ESC ] 0 ; … BEL`` sets its title, ``ESC [ 31 m`` its colours, OSC 52 writes its clipboard, and the
C1 control U+009B is a CSI on terminals that read C1. Every text renderer (``snaprepl status``,
``snaprepl history``, the command's error and result lines, its log lines) passes its text through
:func:`visible`, which writes each such character as an escape: ``\\x1b``, ``\\u009b``, ``\\n``.
JSON output needs nothing: ``json.dumps`` escapes every control character already.
"""

from __future__ import annotations

import re

#: C0 controls (U+0000 to U+001F), DEL (U+007F) and the C1 controls (U+0080 to U+009F).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``str(text)`` with every control character (C0, DEL, C1) written as a visible escape, so the
    result is one line that cannot change the terminal's state."""
    return CONTROL.sub(_escape, str(text))


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (C0, DEL or C1)."""
    return CONTROL.search(text) is not None
