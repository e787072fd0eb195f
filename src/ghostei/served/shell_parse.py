"""The command-line grammar of Android's shell (mksh), as far as adb clients use it.

Lists joined by ``;``, ``&`` and newlines, ``&&``/``||`` chains, ``|`` pipelines with ``!``,
``NAME=value`` assignments, redirections (``>``, ``>>``, ``<``, ``2>``, ``2>&1``, ``&>``),
POSIX quoting (single quotes, double quotes, backslashes), ``$NAME``, ``${NAME}``, the special
parameters (``$?``, ``$$``, ``$#``, ``$0``...), and command substitution (``$(...)`` and
backquotes). Expansion happens when a command runs (``$?`` changes between commands), so a word
is kept as parts that remember whether they were quoted: quoted text is never split or globbed.
Compound commands (``if``, ``for``, ``( )``, ``{ }``) and here-documents are not understood and
are reported as syntax errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, cast

PartKind = Literal["lit", "var", "cmd"]
_META = " \t\n;&|<>()"
_SPECIAL_PARAMS = "?$#!@*-0123456789"
_UNSUPPORTED = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac"}
    | {"function", "select", "{", "}", "[[", "]]"}
)


class ShellSyntaxError(Exception):
    """A command line the shell cannot parse; the message is what mksh would say after 'sh: '."""


@dataclass(frozen=True)
class Part:
    """A piece of a word: literal text, a parameter (``var``) or a command substitution."""

    kind: PartKind
    text: str
    quoted: bool


@dataclass
class Word:
    """One shell word before expansion."""

    parts: list[Part] = field(default_factory=list)

    def literal(self) -> str | None:
        """The word's text if it is plain unquoted literal text (keywords, ``!``, names)."""
        if all(p.kind == "lit" and not p.quoted for p in self.parts):
            return "".join(p.text for p in self.parts)
        return None


@dataclass
class Redirect:
    """``fd op target``: op is one of ``>``, ``>>``, ``<``, ``>&``, ``<&``; fd -1 is ``&>``."""

    fd: int
    op: str
    target: Word


@dataclass
class Command:
    """A simple command: assignments, words and redirections."""

    assigns: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Pipeline:
    """Commands joined by ``|``; ``negate`` for a leading ``!``."""

    commands: list[Command]
    negate: bool = False


@dataclass
class AndOr:
    """Pipelines joined by ``&&`` and ``||`` (``ops[i]`` joins pipeline i and i+1)."""

    pipelines: list[Pipeline]
    ops: list[str] = field(default_factory=list)


Token = tuple[str, object]  # ("word", Word) | ("op", str) | ("redir", (fd, op))


def parse(source: str) -> list[AndOr]:
    """Parse a command line into and-or lists; raises ``ShellSyntaxError``."""
    return _Parser(_Lexer(source).tokens()).script()


class _Lexer:
    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2  # a line continuation between words
            elif c == "\n":
                out.append(("op", "\n"))
                self.i += 1
            elif c == "#":
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c in ";&|()":
                out.append(self._operator())
            elif c in "<>":
                out.append(self._redirect(None))
            elif c.isdigit() and self._fd_redirect():
                start = self.i
                while s[self.i].isdigit():
                    self.i += 1
                out.append(self._redirect(int(s[start : self.i])))
            else:
                out.append(("word", self._word()))
        return out

    def _fd_redirect(self) -> bool:
        j = self.i
        while j < len(self.s) and self.s[j].isdigit():
            j += 1
        return j < len(self.s) and self.s[j] in "<>"

    def _operator(self) -> Token:
        s, i = self.s, self.i
        two = s[i : i + 2]
        if two == "&>":
            self.i += 2
            return ("redir", (-1, ">"))
        if two in ("&&", "||"):
            self.i += 2
            return ("op", two)
        if two == ";;":
            raise ShellSyntaxError("syntax error: ';;' unexpected")
        if s[i] in "()":
            raise ShellSyntaxError(f"syntax error: '{s[i]}' unexpected")
        self.i += 1
        return ("op", s[i])

    def _redirect(self, fd: int | None) -> Token:
        s = self.s
        c = s[self.i]
        nxt = s[self.i + 1 : self.i + 2]
        if c == "<" and nxt == "<":
            raise ShellSyntaxError("syntax error: here-documents are not supported")
        if nxt == "&":
            op, width = c + "&", 2
        elif c == ">" and nxt == ">":
            op, width = ">>", 2
        elif c == ">" and nxt == "|":
            op, width = ">", 2
        else:
            op, width = c, 1
        self.i += width
        default = 0 if c == "<" else 1
        return ("redir", (default if fd is None else fd, op))

    def _word(self) -> Word:
        s = self.s
        parts: list[Part] = []
        buf: list[str] = []
        had_quotes = False

        def flush(quoted: bool) -> None:
            if buf:
                parts.append(Part("lit", "".join(buf), quoted))
                buf.clear()

        while self.i < len(s) and s[self.i] not in _META:
            c = s[self.i]
            if c == "\\":
                flush(False)
                if self.i + 1 >= len(s):
                    buf.append("\\")
                    self.i += 1
                elif s[self.i + 1] == "\n":
                    self.i += 2
                else:
                    parts.append(Part("lit", s[self.i + 1], True))
                    self.i += 2
            elif c == "'":
                flush(False)
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("syntax error: no closing quote")
                parts.append(Part("lit", s[self.i + 1 : end], True))
                had_quotes = True
                self.i = end + 1
            elif c == '"':
                flush(False)
                self.i += 1
                parts.extend(self._double_quoted())
                had_quotes = True
            elif c == "$":
                flush(False)
                parts.append(self._dollar(quoted=False))
            elif c == "`":
                flush(False)
                parts.append(Part("cmd", self._backquoted(), False))
            else:
                buf.append(c)
                self.i += 1
        flush(False)
        if not parts and had_quotes:
            parts.append(Part("lit", "", True))
        return Word(parts)

    def _double_quoted(self) -> list[Part]:
        s = self.s
        parts: list[Part] = []
        buf: list[str] = []
        while True:
            if self.i >= len(s):
                raise ShellSyntaxError("syntax error: no closing quote")
            c = s[self.i]
            if c == '"':
                self.i += 1
                break
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    buf.append(s[self.i + 1])
                self.i += 2
            elif c == "$":
                if buf:
                    parts.append(Part("lit", "".join(buf), True))
                    buf = []
                parts.append(self._dollar(quoted=True))
            elif c == "`":
                if buf:
                    parts.append(Part("lit", "".join(buf), True))
                    buf = []
                parts.append(Part("cmd", self._backquoted(), True))
            else:
                buf.append(c)
                self.i += 1
        parts.append(Part("lit", "".join(buf), True))  # "" is an empty word, not no word
        return parts

    def _dollar(self, quoted: bool) -> Part:
        s = self.s
        self.i += 1  # the $
        nxt = s[self.i : self.i + 1]
        if s.startswith("((", self.i):
            raise ShellSyntaxError("syntax error: arithmetic expansion is not supported")
        if nxt == "(":
            return Part("cmd", self._until_paren(), quoted)
        if nxt == "{":
            end = s.find("}", self.i)
            if end < 0:
                raise ShellSyntaxError("syntax error: missing '}'")
            name = s[self.i + 1 : end]
            self.i = end + 1
            if not (_is_name(name) or (len(name) == 1 and name in _SPECIAL_PARAMS)):
                raise ShellSyntaxError(f"${{{name}}}: bad substitution")
            return Part("var", name, quoted)
        if nxt and nxt in _SPECIAL_PARAMS:
            self.i += 1
            return Part("var", nxt, quoted)
        start = self.i
        while self.i < len(s) and (s[self.i].isalnum() or s[self.i] == "_"):
            self.i += 1
        name = s[start : self.i]
        if name and not name[0].isdigit():
            return Part("var", name, quoted)
        self.i = start
        return Part("lit", "$", quoted)

    def _until_paren(self) -> str:
        # $( ... ): find the matching parenthesis, skipping quoted text.
        s = self.s
        depth = 0
        start = self.i + 1
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "'":
                end = s.find("'", self.i + 1)
                self.i = (end if end >= 0 else len(s)) + 1
                continue
            if c == '"':
                self.i += 1
                while self.i < len(s) and s[self.i] != '"':
                    self.i += 2 if s[self.i] == "\\" else 1
                self.i += 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return s[start : self.i - 1]
            self.i += 1
        raise ShellSyntaxError("syntax error: missing ')'")

    def _backquoted(self) -> str:
        s = self.s
        self.i += 1
        out: list[str] = []
        while self.i < len(s):
            c = s[self.i]
            if c == "`":
                self.i += 1
                return "".join(out)
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in "$`\\":
                out.append(s[self.i + 1])
                self.i += 2
                continue
            out.append(c)
            self.i += 1
        raise ShellSyntaxError("syntax error: no closing '`'")


def _is_name(text: str) -> bool:
    return bool(text) and (text[0].isalpha() or text[0] == "_") and text.replace("_", "a").isalnum()


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.t = tokens
        self.i = 0

    def _peek(self) -> Token | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def _is_op(self, *ops: str) -> bool:
        tok = self._peek()
        return tok is not None and tok[0] == "op" and tok[1] in ops

    def script(self) -> list[AndOr]:
        out: list[AndOr] = []
        while self.i < len(self.t):
            if self._is_op("\n"):
                self.i += 1
                continue
            out.append(self._and_or())
            if self.i < len(self.t):
                if not self._is_op(";", "&", "\n"):
                    raise ShellSyntaxError(f"syntax error: '{self.t[self.i][1]}' unexpected")
                self.i += 1
        return out

    def _and_or(self) -> AndOr:
        node = AndOr([self._pipeline()])
        while self._is_op("&&", "||"):
            node.ops.append(str(self.t[self.i][1]))
            self.i += 1
            while self._is_op("\n"):
                self.i += 1
            node.pipelines.append(self._pipeline())
        return node

    def _pipeline(self) -> Pipeline:
        negate = False
        tok = self._peek()
        if (
            tok is not None
            and tok[0] == "word"
            and isinstance(tok[1], Word)
            and tok[1].literal() == "!"
        ):
            negate = True
            self.i += 1
        commands = [self._command()]
        while self._is_op("|"):
            self.i += 1
            while self._is_op("\n"):
                self.i += 1
            commands.append(self._command())
        return Pipeline(commands, negate)

    def _command(self) -> Command:
        cmd = Command()
        while (tok := self._peek()) is not None and tok[0] != "op":
            self.i += 1
            if tok[0] == "redir":
                fd, op = cast(tuple[int, str], tok[1])
                target = self._peek()
                if target is None or target[0] != "word":
                    found = "end of line" if target is None else f"'{target[1]}'"
                    raise ShellSyntaxError(f"syntax error: {found} unexpected after redirection")
                self.i += 1
                assert isinstance(target[1], Word)
                cmd.redirects.append(Redirect(fd, op, target[1]))
                continue
            word = tok[1]
            assert isinstance(word, Word)
            if not cmd.words and (assign := _assignment(word)) is not None:
                cmd.assigns.append(assign)
                continue
            if not cmd.words and word.literal() in _UNSUPPORTED:
                raise ShellSyntaxError(f"syntax error: '{word.literal()}' is not supported")
            cmd.words.append(word)
        if not (cmd.words or cmd.assigns or cmd.redirects):
            tok = self._peek()
            found = "end of file" if tok is None else repr(str(tok[1])).replace('"', "'")
            raise ShellSyntaxError(f"syntax error: {found} unexpected")
        return cmd


def _assignment(word: Word) -> tuple[str, Word] | None:
    if not word.parts or word.parts[0].kind != "lit" or word.parts[0].quoted:
        return None
    first = word.parts[0].text
    name, eq, rest = first.partition("=")
    if not eq or not _is_name(name):
        return None
    value_parts = ([Part("lit", rest, False)] if rest else []) + word.parts[1:]
    return name, Word(value_parts)
