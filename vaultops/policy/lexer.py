"""The shell's lexer: a command's text into words and operators, as bash reads them.

Quotes are removed from words; what a word expands to at run time is marked ``dynamic``; the command
substitutions inside a word (``$( … )``, backticks, ``<( … )``, also within double quotes and unquoted
here-documents) come with it as token lists of their own, for ``bash.py`` to turn into commands.  What
cannot be read is added to ``problems``; the lexer itself never raises on any text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_DEPTH = 12  # nested substitutions and `bash -c` levels

_OPERATORS = (
    "&&", "||", ";;&", ";;", ";&", "|&", "&>>", "&>", ">>", "<<<", "<<-", "<<", "<>", ">&", "<&", ">|",
    ";", "&", "|", "(", ")", "<", ">", "\n",
)  # fmt: skip


REDIRECTS = frozenset({"&>>", "&>", ">>", "<<<", "<<-", "<<", "<>", ">&", "<&", ">|", "<", ">"})


_SEPARATORS = frozenset({"&&", "||", ";;&", ";;", ";&", "|&", ";", "&", "|", "\n"})


_BRACE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f",
         "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip


@dataclass
class Tok:
    """A lexed token: a word (``op`` empty) or an operator.  A word carries the token lists of the command
    substitutions inside it; a here-document operator carries its body (and the body's substitutions)."""

    op: str = ""
    text: str = ""
    dynamic: bool = False
    glob: bool = False
    brace: bool = False
    subs: list[list[Tok]] = field(default_factory=list)
    body: str | None = None
    fd: str = ""
    quoted: bool = False  # some part was quoted: not a reserved word, no brace expansion
    sources: list[str] = field(default_factory=list)  # the text of each $( … ) or backtick substitution


class Lexer:
    def __init__(self, text: str, depth: int, problems: list[str]) -> None:
        self.s = text
        self.depth = depth
        self.problems = problems
        self.heredocs: list[tuple[Tok, str, bool, bool]] = []  # (operator token, delimiter, quoted, strip)

    def problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    # -- the token stream; stops at an unmatched ")" when ``closing`` (the end of a substitution) --
    def tokens(self, i: int, closing: bool) -> tuple[list[Tok], int]:
        s, n = self.s, len(self.s)
        out: list[Tok] = []
        parens = 0
        expect_delim = False
        while i < n:
            c = s[i]
            if c in " \t":
                i += 1
                continue
            if s.startswith("\\\n", i):
                i += 2
                continue
            if c == "#":
                while i < n and s[i] != "\n":
                    i += 1
                continue
            if c == "\n":
                out.append(Tok(op="\n"))
                i = self.read_heredocs(i + 1)
                continue
            if c in "<>" and s.startswith("(", i + 1):  # process substitution: a word
                word, i = self.word(i)
                out.append(word)
                continue
            op = next((o for o in _OPERATORS if s.startswith(o, i)), None)
            if op is not None:
                if op == ")" and closing and parens == 0:
                    return out, i + 1
                parens += op == "("
                parens -= op == ")"
                tok = Tok(op=op)
                # "2>" lexes as a word "2" then ">": the number is the descriptor, if it touched the ">"
                touching = i > 0 and s[i - 1].isdigit()
                if op in REDIRECTS and touching and out and not out[-1].op and out[-1].text.isdigit():
                    tok.fd = out.pop().text
                out.append(tok)
                i += len(op)
                expect_delim = op in ("<<", "<<-")
                continue
            word, i = self.word(i)
            if expect_delim:
                tok_op = out[-1]
                self.heredocs.append((tok_op, word.text, word.quoted, tok_op.op == "<<-"))
                expect_delim = False
            out.append(word)
        if closing:
            self.problem("a $( … ) or ( … ) is not closed")
        return out, i

    def read_heredocs(self, i: int) -> int:
        """After a newline: the bodies of the here-documents opened on the line just ended."""
        s = self.s
        for tok, delim, quoted, strip in self.heredocs:
            lines: list[str] = []
            while True:
                if i >= len(s):
                    self.problem(f"the here-document ending with {delim!r} is not closed")
                    break
                end = s.find("\n", i)
                line = s[i:] if end < 0 else s[i:end]
                i = len(s) if end < 0 else end + 1
                if (line.lstrip("\t") if strip else line) == delim:
                    break
                lines.append(line.lstrip("\t") if strip else line)
            tok.body = "\n".join(lines) + "\n"
            if not quoted:  # an unquoted delimiter: $( … ) and backticks in the body run
                tok.subs.extend(self.substitutions_in(tok.body))
        self.heredocs = []
        return i

    def substitutions_in(self, text: str) -> list[list[Tok]]:
        """The command substitutions of a text read as if inside double quotes (a here-document body)."""
        sub = Lexer(text + '"', self.depth, self.problems)
        tok = Tok()
        sub.double(0, tok, [])
        return tok.subs

    # -- one word, with its quoting and expansions --
    def word(self, i: int) -> tuple[Tok, int]:
        s, n = self.s, len(self.s)
        tok = Tok()
        text: list[str] = []
        quoted = False
        while i < n:
            c = s[i]
            if c in " \t\n;&|()":
                break
            if c in "<>":
                if s.startswith("(", i + 1):  # <( … ) or >( … ): runs a command, names a pipe
                    inner, i = self.sub_tokens(i + 2)
                    tok.subs.append(inner)
                    tok.dynamic = True
                    text.append("/dev/fd/63")
                    continue
                break
            if s.startswith("\\\n", i):
                i += 2
            elif c == "\\":
                text.append(s[i + 1] if i + 1 < n else "")
                quoted = True
                i += 2
            elif c == "'":
                end = s.find("'", i + 1)
                if end < 0:
                    self.problem("a single quote is not closed")
                    end = n
                text.append(s[i + 1 : end])
                quoted = True
                i = end + 1
            elif c == '"':
                i = self.double(i + 1, tok, text)
                quoted = True
            elif c == "$":
                i = self.dollar(i, tok, text)
            elif c == "`":
                i = self.backtick(i + 1, tok, text)
            else:
                if c in "*?[":
                    tok.glob = True
                if c == "{" and _BRACE.match(s, i):
                    tok.brace = True
                text.append(c)
                i += 1
        tok.text = "".join(text)
        tok.quoted = quoted
        return tok, i

    def double(self, i: int, tok: Tok, text: list[str]) -> int:
        """Inside double quotes from ``i``; returns the index after the closing quote."""
        s, n = self.s, len(self.s)
        while i < n:
            c = s[i]
            if c == '"':
                return i + 1
            if c == "\\" and i + 1 < n:
                nxt = s[i + 1]
                if nxt == "\n":
                    i += 2
                    continue
                text.append(nxt if nxt in '"\\$`' else "\\" + nxt)
                i += 2
            elif c == "$":
                i = self.dollar(i, tok, text)
            elif c == "`":
                i = self.backtick(i + 1, tok, text)
            else:
                text.append(c)
                i += 1
        self.problem("a double quote is not closed")
        return n

    def dollar(self, i: int, tok: Tok, text: list[str]) -> int:
        s, n = self.s, len(self.s)
        nxt = s[i + 1] if i + 1 < n else ""
        if s.startswith("$((", i):  # arithmetic: no command, unless a substitution hides inside
            end = matching(s, i + 3, "(", ")", 2)
            if end < 0:
                self.problem("a $(( … )) is not closed")
                return n
            tok.subs.extend(self.substitutions_in(s[i + 3 : end - 2]))
            tok.dynamic = True
            text.append(s[i:end])
            return end
        if nxt == "(":
            inner, end = self.sub_tokens(i + 2)
            tok.subs.append(inner)
            tok.sources.append(s[i + 2 : end - 1])
            tok.dynamic = True
            text.append("$(…)")
            return end
        if nxt == "{":
            end = matching(s, i + 2, "{", "}", 1)
            if end < 0:
                self.problem("a ${ … } is not closed")
                return n
            tok.subs.extend(self.substitutions_in(s[i + 2 : end - 1]))
            tok.dynamic = True
            text.append(s[i:end])
            return end
        if nxt == "'":  # $'…': ANSI-C quoting, a literal after its escapes
            j = i + 2
            out: list[str] = []
            while j < n and s[j] != "'":
                if s[j] == "\\" and j + 1 < n:
                    char, j = _ansi_escape(s, j)
                    out.append(char)
                else:
                    out.append(s[j])
                    j += 1
            if j >= n:
                self.problem("a $'…' quote is not closed")
            text.append("".join(out))
            return j + 1
        if nxt == '"':
            return self.double(i + 2, tok, text)
        m = _NAME.match(s, i + 1)
        if m:
            tok.dynamic = True
            text.append(s[i : m.end()])
            return m.end()
        if nxt and nxt in "@*#?$!-0123456789":
            tok.dynamic = True
            text.append(s[i : i + 2])
            return i + 2
        text.append("$")
        return i + 1

    def backtick(self, i: int, tok: Tok, text: list[str]) -> int:
        s, n = self.s, len(self.s)
        body: list[str] = []
        while i < n and s[i] != "`":
            if s[i] == "\\" and i + 1 < n and s[i + 1] in "`\\$":
                body.append(s[i + 1])
                i += 2
            else:
                body.append(s[i])
                i += 1
        if i >= n:
            self.problem("a backtick substitution is not closed")
        tok.subs.append(self.nested("".join(body)))
        tok.sources.append("".join(body))
        tok.dynamic = True
        text.append("`…`")
        return i + 1

    def sub_tokens(self, i: int) -> tuple[list[Tok], int]:
        if self.depth >= MAX_DEPTH:
            self.problem(f"substitutions are nested more than {MAX_DEPTH} deep")
        saved = self.heredocs
        self.heredocs = []
        self.depth += 1
        inner, end = self.tokens(i, closing=True)
        self.depth -= 1
        self.heredocs = saved
        return inner, end

    def nested(self, text: str) -> list[Tok]:
        if self.depth >= MAX_DEPTH:
            self.problem(f"substitutions are nested more than {MAX_DEPTH} deep")
            return []
        sub = Lexer(text, self.depth + 1, self.problems)
        toks, _ = sub.tokens(0, closing=False)
        return toks


_ANSI_HEX = {"x": 2, "u": 4, "U": 8}


def _ansi_escape(s: str, j: int) -> tuple[str, int]:
    """The character of the escape at ``s[j]`` (a backslash) in ``$'…'``, and the index after it:
    ``\\x72`` and ``\\162`` are ``r``, ``\\u0441`` is a Cyrillic letter, ``\\cA`` a control character."""
    kind = s[j + 1]
    if kind in _ANSI_HEX or kind in "01234567":
        base, most, start = (16, _ANSI_HEX[kind], j + 2) if kind in _ANSI_HEX else (8, 3, j + 1)
        digits = "0123456789abcdefABCDEF" if base == 16 else "01234567"
        end = start
        while end < len(s) and end - start < most and s[end] in digits:
            end += 1
        if end == start:
            return "\\" + kind, j + 2
        try:
            return chr(int(s[start:end], base)), end
        except (ValueError, OverflowError):
            return "\ufffd", end
    if kind == "c" and j + 2 < len(s):
        return chr(ord(s[j + 2]) & 0x1F), j + 3
    return _ANSI.get(kind, "\\" + kind), j + 2


def matching(s: str, i: int, open_: str, close: str, need: int) -> int:
    """Index after the ``need`` closing characters that balance an opening already consumed; -1 if none.
    Quotes are skipped so that ``${x:-")"}`` is read right."""
    depth = need
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            end = s.find("'", i + 1)
            i = n if end < 0 else end + 1
            continue
        if c == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            i = j + 1
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1
