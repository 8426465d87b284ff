"""What every ``%tg_*`` magic does with its line first: ``--help`` prints the usage, the line is
cut into words as Python reads it, and bad usage becomes a one-line ``UsageError`` that names
the magic and quotes at most a short excerpt of what was typed."""

from __future__ import annotations

from IPython.core.error import UsageError

EXCERPT = 60  # characters of the user's input quoted in a message
MESSAGE = 300  # characters of a whole usage error


def help_requested(line: str, magic, more: str = "") -> bool:
    """When ``line`` starts with ``-h`` or ``--help``: print ``magic``'s usage (its docstring,
    which ``magic_arguments`` makes the usage) and ``more``, and answer True."""
    if line.split()[:1] not in (["-h"], ["--help"]):
        return False
    print(magic.__doc__)
    if more:
        print(more)
    return True


def excerpt(text: str) -> str:
    """``text`` quoted for a message: whole when short, its start and length otherwise."""
    if len(text) <= EXCERPT:
        return repr(text)
    return f"{text[:EXCERPT]!r}... ({len(text)} characters)"


def usage_error(name: str, message: str) -> UsageError:
    """A UsageError ``"{name}: {message}"`` on one line (a multi-line message keeps its
    first line) of at most ``MESSAGE`` characters (a longer one loses its middle)."""
    text = f"{name}: {str(message).strip().splitlines()[0] if str(message).strip() else ''}"
    if len(text) > MESSAGE:
        half = MESSAGE // 2 - 3
        text = f"{text[:half]} ... {text[-half:]}"
    return UsageError(text)


def split_words(name: str, line: str) -> list[str]:
    """``line`` cut at the white space outside brackets and quotes, so that a call such as
    ``f(x, -y)`` stays one word (and is not read as an option ``-y)``); a word that is a single
    quoted string loses its quotes (``--title 'a b'``). An unclosed quote is a UsageError."""
    words, word, depth, quote, k = [], "", 0, "", 0
    while k < len(line):
        ch = line[k]
        if quote:
            if ch == "\\":
                word, k = word + line[k:k + 2], k + 2
                continue
            if line.startswith(quote, k):
                word, k, quote = word + quote, k + len(quote), ""
                continue
        elif ch in "'\"":
            quote = ch * 3 if line.startswith(ch * 3, k) else ch
            word, k = word + quote, k + len(quote)
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch.isspace() and depth == 0:
            if word:
                words.append(word)
            word, k = "", k + 1
            continue
        word, k = word + ch, k + 1
    if quote:
        raise usage_error(name, f"a quote ({quote}) is not closed in {excerpt(line)}")
    if word:
        words.append(word)
    return [_unquoted(w) for w in words]


def _unquoted(word: str) -> str:
    if len(word) >= 2 and word[0] in "'\"" and word[-1] == word[0]:
        import ast

        try:
            value = ast.literal_eval(word)
        except (ValueError, SyntaxError):
            return word
        if isinstance(value, str):
            return value
    return word


def parse_magic_args(magic, name: str, line: str):
    """``magic``'s arguments parsed from ``line`` (cut by ``split_words``); a parse error is
    a one-line UsageError naming the magic (``name``, e.g. ``"%tg_step"``)."""
    words = split_words(name, line)
    try:
        return magic.parser.parse_args(words)
    except UsageError as exc:
        raise usage_error(name, str(exc)) from None
