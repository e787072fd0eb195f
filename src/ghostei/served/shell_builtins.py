"""The shell's own commands (mksh builtins): echo, printf, test, cd, exit, sh -c, sleep, ..."""

from __future__ import annotations

import re

from .commands import IO, PROGRAMS, Session, ShellExit, UsageError, command

_BUILTINS = frozenset(
    {"cd", "command", "eval", "exec", "exit", "export", "pwd", "set", "type", "unset", "wait"}
    | {":", "[", "echo", "false", "printf", "sleep", "test", "true"}
)
_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
}


def backslash_escapes(text: str) -> tuple[str, bool]:
    """Interpret print(1)-style escapes; the flag says whether ``\\c`` cut the output short."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 >= len(text):
            out.append(c)
            i += 1
            continue
        d = text[i + 1]
        if d == "c":
            return "".join(out), True
        if d in _ESCAPES:
            out.append(_ESCAPES[d])
            i += 2
        elif d == "0":
            m = re.match(r"[0-7]{0,3}", text[i + 2 :])
            digits = m.group(0) if m else ""
            out.append(chr(int(digits or "0", 8)))
            i += 2 + len(digits)
        elif d == "x" and re.match(r"[0-9A-Fa-f]", text[i + 2 : i + 3]):
            m = re.match(r"[0-9A-Fa-f]{1,2}", text[i + 2 :])
            assert m is not None
            out.append(chr(int(m.group(0), 16)))
            i += 2 + len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out), False


@command("echo")
def echo(session: Session, argv: list[str], io: IO) -> int:
    """echo [-neE] ARGS: mksh's echo interprets backslash escapes unless -E."""
    args = argv[1:]
    newline, escapes = True, True
    while args and re.fullmatch(r"-[neE]+", args[0]):
        for flag in args.pop(0)[1:]:
            if flag == "n":
                newline = False
            else:
                escapes = flag == "e"
    text = " ".join(args)
    if escapes:
        text, cut = backslash_escapes(text)
        newline = newline and not cut
    io.write(text + ("\n" if newline else ""))
    return 0


_PRINTF_SPEC = re.compile(r"%([-+ 0#]*\d*(?:\.\d+)?)([sdioxXcbu%])")


@command("printf")
def printf(session: Session, argv: list[str], io: IO) -> int:
    """printf FORMAT [ARGS]: the format is reused while arguments remain."""
    if len(argv) < 2:
        raise UsageError("usage: printf FORMAT [ARGUMENT...]")
    fmt = backslash_escapes(argv[1])[0]
    args = argv[2:]
    status = 0
    while True:
        text, used, ok = _printf_once(fmt, args, io)
        io.write(text)
        status = status or (0 if ok else 1)
        if used == 0 or used >= len(args):
            return status
        args = args[used:]


def _printf_once(fmt: str, args: list[str], io: IO) -> tuple[str, int, bool]:
    used = 0
    ok = True

    def field(m: re.Match[str]) -> str:
        nonlocal used, ok
        flags, conv = m.group(1), m.group(2)
        if conv == "%":
            return "%"
        arg = args[used] if used < len(args) else ""
        used += 1
        if conv == "b":
            return backslash_escapes(arg)[0]
        if conv in "sc":
            return ("%" + flags + "s") % (arg[:1] if conv == "c" else arg)
        try:
            number = int(arg or "0", 0)
        except ValueError:
            io.error(f"printf: invalid number '{arg}'")
            ok = False
            number = 0
        return ("%" + flags + ("d" if conv in "iu" else conv)) % number

    return _PRINTF_SPEC.sub(field, fmt), used, ok


@command("true", ":")
def true(session: Session, argv: list[str], io: IO) -> int:
    """true: succeed."""
    return 0


@command("false")
def false(session: Session, argv: list[str], io: IO) -> int:
    """false: fail."""
    return 1


@command("exit")
def exit_(session: Session, argv: list[str], io: IO) -> int:
    """exit [N]: end the shell with status N (default: the last status)."""
    if len(argv) > 1 and not re.fullmatch(r"-?\d+", argv[1]):
        raise UsageError(f"/system/bin/sh: exit: {argv[1]}: bad number", 1)
    raise ShellExit(int(argv[1]) & 0xFF if len(argv) > 1 else session.status)


@command("sleep")
def sleep(session: Session, argv: list[str], io: IO) -> int:
    """sleep SECONDS: returns at once; the simulated phone has already settled."""
    if len(argv) < 2:
        raise UsageError("usage: sleep DURATION[smhd]...")
    for arg in argv[1:]:
        if not re.fullmatch(r"\d*\.?\d+[smhd]?|\d+\.", arg):
            raise UsageError(f"sleep: bad '{arg}'")
    return 0


@command("wait", "set", "umask")
def no_op(session: Session, argv: list[str], io: IO) -> int:
    """Builtins without an effect here (there are no background jobs or shell options)."""
    return 0


@command("cd")
def cd(session: Session, argv: list[str], io: IO) -> int:
    """cd [DIR]: change the working directory of this shell."""
    target = argv[1] if len(argv) > 1 else session.env.get("HOME", "/")
    path = session.path(target)
    kind = session.fs.kind(path)
    if kind != "dir":
        why = "No such file or directory" if kind is None else "Not a directory"
        raise UsageError(f"/system/bin/sh: cd: {target}: {why}", 2)
    session.cwd = path
    return 0


@command("pwd")
def pwd(session: Session, argv: list[str], io: IO) -> int:
    """pwd: print the working directory."""
    io.print(session.cwd)
    return 0


@command("export")
def export(session: Session, argv: list[str], io: IO) -> int:
    """export NAME=VALUE...: set variables."""
    for arg in argv[1:]:
        name, eq, value = arg.partition("=")
        if eq:
            session.env[name] = value
        else:
            session.env.setdefault(name, "")
    if len(argv) == 1:
        for name in sorted(session.env):
            io.print(f"export {name}={session.env[name]}")
    return 0


@command("unset")
def unset(session: Session, argv: list[str], io: IO) -> int:
    """unset NAME...: remove variables."""
    for name in argv[1:]:
        session.env.pop(name, None)
    return 0


@command("sh")
def sh(session: Session, argv: list[str], io: IO) -> int:
    """sh [-c COMMAND [NAME [ARGS]]] | sh FILE [ARGS] | sh (commands from stdin)."""
    args = argv[1:]
    while args and args[0].startswith("-") and args[0] != "-c" and args[0] != "-":
        args.pop(0)  # -e, -x, -u...: options that change nothing observable here
    if args and args[0] == "-c":
        if len(args) < 2:
            raise UsageError("/system/bin/sh: -c: option requires an argument", 1)
        return session.run_script(session, args[1], io, args[2:])
    if args and args[0] != "-":
        data = session.fs.read(session.path(args[0]))
        if data is None:
            raise UsageError(f"/system/bin/sh: {args[0]}: No such file or directory", 127)
        return session.run_script(session, data.decode("utf-8", "replace"), io, args)
    return session.run_script(
        session, io.stdin.decode("utf-8", "replace"), IO(b"", io.out, io.err), []
    )


@command("toybox")
def toybox(session: Session, argv: list[str], io: IO) -> int:
    """toybox [NAME ARGS]: run one of the toolbox's programs, or list them."""
    if len(argv) < 2:
        io.print(" ".join(sorted(n for n in PROGRAMS if n not in _BUILTINS)))
        return 0
    return session.invoke(session, argv[1:], io)


@command("eval")
def eval_(session: Session, argv: list[str], io: IO) -> int:
    """eval ARGS: run the arguments as a command line."""
    return session.run_script(session, " ".join(argv[1:]), io, [])


@command("exec", "command")
def exec_(session: Session, argv: list[str], io: IO) -> int:
    """exec CMD / command [-v] CMD: run CMD (command -v prints where it is)."""
    args = argv[1:]
    if argv[0] == "command" and args and args[0] in ("-v", "-V"):
        found = [name for name in args[1:] if name in PROGRAMS]
        for name in found:
            io.print(name if name in _BUILTINS else f"/system/bin/{name}")
        return 0 if found and len(found) == len(args) - 1 else 1
    return session.invoke(session, args, io) if args else 0


@command("which")
def which(session: Session, argv: list[str], io: IO) -> int:
    """which NAME...: where each program is."""
    status = 0
    for name in argv[1:]:
        if name in PROGRAMS and name not in _BUILTINS - {"echo", "false", "printf", "sleep"}:
            io.print(f"/system/bin/{name}")
        else:
            status = 1
    return status


@command("type")
def type_(session: Session, argv: list[str], io: IO) -> int:
    """type NAME...: what each name is."""
    status = 0
    for name in argv[1:]:
        if name in _BUILTINS:
            io.print(f"{name} is a shell builtin")
        elif name in PROGRAMS:
            io.print(f"{name} is a tracked alias for /system/bin/{name}")
        else:
            io.print(f"{name} not found")
            status = 1
    return status


@command("test", "[")
def test(session: Session, argv: list[str], io: IO) -> int:
    """test EXPR / [ EXPR ]: file tests, string and integer comparisons, !, -a, -o."""
    args = argv[1:]
    if argv[0] == "[":
        if not args or args[-1] != "]":
            raise UsageError("/system/bin/sh: [: missing ]", 2)
        args = args[:-1]
    try:
        return 0 if _test_or(session, args) else 1
    except ValueError as exc:
        raise UsageError(f"/system/bin/sh: {argv[0]}: {exc}", 2) from exc


def _test_or(session: Session, args: list[str]) -> bool:
    if "-o" in args:
        i = args.index("-o")
        return _test_or(session, args[:i]) or _test_or(session, args[i + 1 :])
    if "-a" in args[1:]:
        i = args.index("-a", 1)
        return _test_or(session, args[:i]) and _test_or(session, args[i + 1 :])
    if args and args[0] == "!":
        return not _test_or(session, args[1:])
    return _test_simple(session, args)


def _test_simple(session: Session, args: list[str]) -> bool:
    if not args:
        return False
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, arg = args
        if op == "-z":
            return arg == ""
        if op == "-n":
            return arg != ""
        st = session.fs.stat(session.path(arg))
        checks = {
            "-e": st is not None,
            "-f": st is not None and st.is_file,
            "-d": st is not None and st.is_dir,
            "-s": st is not None and st.size > 0,
            "-r": st is not None,
            "-w": st is not None,
            "-x": st is not None and bool(st.mode & 0o111),
            "-L": False,
            "-h": False,
        }
        if op not in checks:
            raise ValueError(f"{op}: unexpected operator")
        return checks[op]
    if len(args) == 3:
        left, op, right = args
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        numeric = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}
        if op in numeric:
            try:
                a, b = int(left), int(right)
            except ValueError as exc:
                raise ValueError("bad number") from exc
            return {
                "-eq": a == b,
                "-ne": a != b,
                "-lt": a < b,
                "-le": a <= b,
                "-gt": a > b,
                "-ge": a >= b,
            }[op]
    raise ValueError("unexpected operator")
