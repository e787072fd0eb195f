"""toybox's text filters, for pipelines like ``dumpsys window | grep mCurrentFocus``.

grep takes POSIX basic regular expressions by default and extended ones with ``-E``; both are
translated to Python's ``re`` (bracket classes such as ``[[:digit:]]`` included).
"""

from __future__ import annotations

import base64 as b64
import hashlib
import posixpath
import re
from datetime import UTC, datetime

from .commands import IO, Session, UsageError, command
from .coreutils import parse_flags, read_inputs

_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r" \t\n\r\f\v",
    "blank": r" \t",
    "xdigit": "0-9A-Fa-f",
    "punct": r"!-/:-@\[-`{-~",
    "word": r"\w",
    "cntrl": r"\x00-\x1f\x7f",
    "print": r"\x20-\x7e",
    "graph": r"\x21-\x7e",
}


def posix_regex(pattern: str, extended: bool) -> str:
    """A POSIX basic (or extended) regular expression as a Python one."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            d = pattern[i + 1]
            if not extended and d in "(){}|+?":
                out.append(d)
            elif d in "<>":
                out.append(r"\b")
            else:
                out.append("\\" + d)
            i += 2
        elif c == "[":
            i = _bracket(pattern, i, out)
        elif not extended and c in "(){}|+?":
            out.append("\\" + c)
            i += 1
        elif c == "*" and (not out or out[-1] in ("(", "|", "^")):
            out.append(r"\*")  # a leading star is literal
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _bracket(pattern: str, i: int, out: list[str]) -> int:
    j = i + 1
    body: list[str] = []
    if j < len(pattern) and pattern[j] == "^":
        body.append("^")
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        body.append(r"\]")
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        if pattern.startswith("[:", j):
            end = pattern.find(":]", j)
            if end > 0:
                body.append(_CLASSES.get(pattern[j + 2 : end], ""))
                j = end + 2
                continue
        ch = pattern[j]
        body.append("\\" + ch if ch in "\\[" else ch)
        j += 1
    if j >= len(pattern):
        out.append(r"\[")  # no closing bracket: a literal [
        return i + 1
    out.append("[" + "".join(body) + "]")
    return j + 1


def _lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _emit(io: IO, line: str) -> None:
    io.out((line + "\n").encode("utf-8", "surrogateescape"))


@command("grep", "egrep", "fgrep")
def grep(session: Session, argv: list[str], io: IO) -> int:
    """grep [-EFivoqcnlLhHwxs] [-e PATTERN] [-m MAX] PATTERN [FILE...]."""
    args = list(argv[1:])
    patterns: list[str] = []
    # -e may repeat; pull every occurrence out before the combined-flag parser sees them.
    rest: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "-e" and args:
            patterns.append(args.pop(0))
        elif arg.startswith("--regexp="):
            patterns.append(arg.split("=", 1)[1])
        elif arg == "--":
            rest.append(arg)
            rest.extend(args)
            break
        else:
            rest.append(arg)
    opts, operands = parse_flags(rest, "EFivoqcnlLhHwxsrRa", "m")
    if not patterns:
        if not operands:
            raise UsageError("usage: grep [-EFivoqcnlLhHwxs] [-e PATTERN] PATTERN [FILE...]", 2)
        patterns.append(operands.pop(0))
    extended = "E" in opts or argv[0] == "egrep"
    fixed = "F" in opts or argv[0] == "fgrep"
    alternatives = [p for pat in patterns for p in pat.split("\n")]
    sources = [re.escape(p) if fixed else posix_regex(p, extended) for p in alternatives]
    if "w" in opts:
        sources = [rf"(?<!\w)(?:{s})(?!\w)" for s in sources]
    if "x" in opts:
        sources = [rf"^(?:{s})$" for s in sources]
    try:
        regex = re.compile("|".join(f"(?:{s})" for s in sources), re.I if "i" in opts else 0)
    except re.error as exc:
        io.error(f"grep: bad regex '{patterns[0]}': {exc}")
        return 2
    limit = int(opts["m"]) if "m" in opts else None
    named = (len(operands) > 1 and "h" not in opts) or "H" in opts
    matched = False
    errors = 0
    for i, data in enumerate(_grep_inputs(session, operands, io)):
        if data is None:
            errors += 1
            continue
        label = operands[i] if operands else "(standard input)"
        count = 0
        for number, line in enumerate(_lines(data), 1):
            if limit is not None and count >= limit:
                break
            found = list(regex.finditer(line))
            if bool(found) == ("v" in opts):
                continue
            count += 1
            matched = True
            if "q" in opts:
                return 0
            if "c" in opts or "l" in opts or "L" in opts:
                continue
            prefix = (f"{label}:" if named else "") + (f"{number}:" if "n" in opts else "")
            if "o" in opts and "v" not in opts:
                for m in found:
                    if m.group(0):
                        _emit(io, prefix + m.group(0))
            else:
                _emit(io, prefix + line)
        if "c" in opts:
            _emit(io, (f"{label}:" if named else "") + str(count))
        elif ("l" in opts and count) or ("L" in opts and not count):
            _emit(io, label)
    if errors and "s" in opts:
        errors = 0
    if errors and not matched:
        return 2
    return 0 if matched else 1


def _grep_inputs(session: Session, operands: list[str], io: IO) -> list[bytes | None]:
    if not operands:
        return [io.stdin]
    out: list[bytes | None] = []
    for arg in operands:
        data = io.stdin if arg == "-" else session.fs.read(session.path(arg))
        if data is None:
            st = session.fs.stat(session.path(arg))
            why = "Is a directory" if st is not None and st.is_dir else "No such file or directory"
            io.error(f"grep: {arg}: {why}")
        out.append(data)
    return out


def _count_arg(args: list[str]) -> list[str]:
    # head -5 and tail -5 are -n 5.
    return ["-n", args[0][1:], *args[1:]] if args and re.fullmatch(r"-\d+", args[0]) else args


def _split_keep(data: bytes) -> list[bytes]:
    """Lines with their newlines; an unterminated last line stays unterminated."""
    parts = data.split(b"\n")
    return [line + b"\n" for line in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


@command("head")
def head(session: Session, argv: list[str], io: IO) -> int:
    """head [-n N] [-c N] [FILE...]."""
    opts, paths = parse_flags(_count_arg(argv[1:]), "qv", "nc")
    chunks, status = read_inputs(session, "head", paths, io)
    for data in chunks:
        if "c" in opts:
            io.out(data[: int(opts["c"])])
        else:
            io.out(b"".join(_split_keep(data)[: int(opts.get("n", "10"))]))
    return status


@command("tail")
def tail(session: Session, argv: list[str], io: IO) -> int:
    """tail [-n N|+N] [-c N] [FILE...]."""
    opts, paths = parse_flags(_count_arg(argv[1:]), "fFqv", "nc")
    chunks, status = read_inputs(session, "tail", paths, io)
    for data in chunks:
        if "c" in opts:
            count = int(opts["c"])
            io.out(data[-count:] if count else b"")
            continue
        spec = opts.get("n", "10")
        lines = _split_keep(data)
        if spec.startswith("+"):
            keep = lines[max(int(spec[1:]) - 1, 0) :]
        else:
            keep = lines[-int(spec) :] if int(spec) else []
        io.out(b"".join(keep))
    return status


@command("wc")
def wc(session: Session, argv: list[str], io: IO) -> int:
    """wc [-lwcm] [FILE...]."""
    opts, paths = parse_flags(argv[1:], "lwcm")
    chunks, status = read_inputs(session, "wc", paths, io)
    wanted = [f for f in "lwc" if f in opts or (f == "c" and "m" in opts)] or ["l", "w", "c"]
    for i, data in enumerate(chunks):
        counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
        if "m" in opts:
            counts["c"] = len(data.decode("utf-8", "replace"))
        numbers = [str(counts[f]) for f in wanted]
        line = " ".join(numbers) if len(numbers) == 1 else " ".join(f"{n:>7}" for n in numbers)
        io.print(line + (f" {paths[i]}" if paths else ""))
    return status


@command("sort")
def sort(session: Session, argv: list[str], io: IO) -> int:
    """sort [-rnuf] [FILE...]."""
    opts, paths = parse_flags(argv[1:], "rnufb", "tk")
    chunks, status = read_inputs(session, "sort", paths, io)
    lines = [line for data in chunks for line in _lines(data)]

    def number(line: str) -> float:
        m = re.match(r"\s*(-?\d+(?:\.\d+)?)", line)
        return float(m.group(1)) if m else 0.0

    if "n" in opts:
        lines.sort(key=number, reverse="r" in opts)
    else:
        lines.sort(key=str.lower if "f" in opts else None, reverse="r" in opts)
    if "u" in opts:
        lines = list(dict.fromkeys(lines))
    for line in lines:
        _emit(io, line)
    return status


@command("uniq")
def uniq(session: Session, argv: list[str], io: IO) -> int:
    """uniq [-cdu] [FILE]."""
    opts, paths = parse_flags(argv[1:], "cdui")
    chunks, status = read_inputs(session, "uniq", paths[:1], io)
    groups: list[list[str]] = []
    for line in _lines(b"".join(chunks)):
        same = groups and (
            groups[-1][0].lower() == line.lower() if "i" in opts else groups[-1][0] == line
        )
        if same:
            groups[-1].append(line)
        else:
            groups.append([line])
    for group in groups:
        if ("d" in opts and len(group) < 2) or ("u" in opts and len(group) > 1):
            continue
        _emit(io, (f"{len(group):>7} " if "c" in opts else "") + group[0])
    return status


@command("cut")
def cut(session: Session, argv: list[str], io: IO) -> int:
    """cut -d DELIM -f LIST | -c LIST [FILE...]."""
    opts, paths = parse_flags(argv[1:], "s", "dfcb")
    if "f" not in opts and "c" not in opts and "b" not in opts:
        raise UsageError("cut: Needs -fcb")
    chunks, status = read_inputs(session, "cut", paths, io)
    spec = opts.get("f") or opts.get("c") or opts.get("b") or ""
    delim = opts.get("d", "\t")
    for data in chunks:
        for line in _lines(data):
            if "f" in opts:
                if delim not in line:
                    if "s" not in opts:
                        _emit(io, line)
                    continue
                parts = line.split(delim)
                _emit(io, delim.join(parts[i] for i in _positions(spec, len(parts))))
            else:
                _emit(io, "".join(line[i] for i in _positions(spec, len(line))))
    return status


def _positions(spec: str, length: int) -> list[int]:
    picked: set[int] = set()
    for item in spec.split(","):
        start, dash, end = item.partition("-")
        lo = int(start) if start else 1
        hi = (int(end) if end else length) if dash else lo
        picked.update(range(lo - 1, min(hi, length)))
    return sorted(i for i in picked if 0 <= i < length)


# ----- checksums and encodings ---------------------------------------------------------------


@command("md5sum", "sha1sum", "sha256sum")
def checksum(session: Session, argv: list[str], io: IO) -> int:
    """md5sum / sha1sum / sha256sum [FILE...]: "HASH  NAME" lines."""
    algo = {"md5sum": "md5", "sha1sum": "sha1", "sha256sum": "sha256"}[argv[0]]
    _, paths = parse_flags(argv[1:], "bc")
    chunks, status = read_inputs(session, argv[0], paths, io)
    names = [p for p in paths if session.fs.read(session.path(p)) is not None or p == "-"]
    for data, name in zip(chunks, names or ["-"], strict=False):
        io.print(f"{hashlib.new(algo, data).hexdigest()}  {name}")
    return status


@command("base64")
def base64(session: Session, argv: list[str], io: IO) -> int:
    """base64 [-d] [FILE]."""
    opts, paths = parse_flags(argv[1:], "di", "w")
    chunks, status = read_inputs(session, "base64", paths, io)
    data = b"".join(chunks)
    if "d" in opts:
        io.out(b64.b64decode(b"".join(data.split()), validate=False))
        return status
    text = b64.b64encode(data).decode()
    width = int(opts.get("w", "76"))
    lines = [text[i : i + width] for i in range(0, len(text), width)] if width else [text]
    io.write("".join(line + "\n" for line in lines))
    return status


@command("basename")
def basename(session: Session, argv: list[str], io: IO) -> int:
    """basename PATH [SUFFIX]."""
    if len(argv) < 2:
        raise UsageError("basename: Needs 1 argument")
    name = posixpath.basename(argv[1].rstrip("/")) or "/"
    if len(argv) > 2 and name.endswith(argv[2]) and name != argv[2]:
        name = name[: -len(argv[2])]
    io.print(name)
    return 0


@command("dirname")
def dirname(session: Session, argv: list[str], io: IO) -> int:
    """dirname PATH."""
    if len(argv) < 2:
        raise UsageError("dirname: Needs 1 argument")
    io.print(posixpath.dirname(argv[1].rstrip("/")) or ".")
    return 0


@command("date")
def date(session: Session, argv: list[str], io: IO) -> int:
    """date [-u] [+FORMAT]: the phone's clock (GMT)."""
    moment = datetime.fromisoformat(session.phone.now()).replace(tzinfo=UTC)
    fmt = next((a[1:] for a in argv[1:] if a.startswith("+")), "%a %b %e %H:%M:%S GMT %Y")
    fmt = fmt.replace("%s", str(int(moment.timestamp()))).replace("%Z", "GMT")
    io.print(moment.strftime(fmt))
    return 0
