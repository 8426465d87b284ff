"""The one way text reaches generated C: as the body of a string literal or a comment.

Op names, variable names, Assert messages and other user-chosen text can hold anything:
newlines, quotes, ``*/``, backslashes, ``%``, ``??/`` (a trigraph under ``-std=c99``), NUL
bytes, non-ASCII letters.  Pasted raw, they end a literal or a comment early and break the
compile (or worse, become code).  Every generator that writes such text into C goes through
:func:`c_string` or :func:`c_comment`, whose output is plain printable ASCII.
"""

from __future__ import annotations

_PLAIN = {b: chr(b) for b in range(0x20, 0x7F)}
_PLAIN.update({ord("\\"): "\\\\", ord('"'): '\\"', ord("?"): "\\?"})


def c_string(text: str, *, printf: bool = True) -> str:
    """The body of a C string literal that spells ``text`` (UTF-8) exactly.

    With ``printf=True`` (the default) the literal is also a safe printf format that prints
    ``text`` (``%`` doubled); pass ``printf=False`` for a literal given to ``%s``.  A NUL byte
    would end the C string, so it is spelled ``\\0`` visibly.
    """
    parts = []
    for byte in str(text).encode("utf-8", "backslashreplace"):
        if byte == 0:
            parts.append("\\\\0")
        elif byte == ord("%") and printf:
            parts.append("%%")
        else:
            parts.append(_PLAIN.get(byte) or f"\\{byte:03o}")
    return "".join(parts)


def c_comment(text: str) -> str:
    """``text`` made safe inside ``/* ... */``: printable ASCII, no comment end."""
    return c_string(text, printf=False).replace("*/", "* /").replace("/*", "/ *")
