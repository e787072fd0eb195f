"""toybox's file programs on the served phone: ls, cat, mkdir, rm, cp, mv, touch, stat, find, ...

Messages and exit statuses are toybox's (Android's ``/system/bin`` tools), so a client that
checks for "No such file or directory" or for a non-zero status sees what a device gives.
"""

from __future__ import annotations

import math
import posixpath
import stat as statmod
from collections.abc import Iterator
from datetime import UTC, datetime
from fnmatch import fnmatchcase

from .commands import IO, Session, UsageError, command, strerror
from .vfs import FileStat, PhoneFS


def parse_flags(args: list[str], flags: str, valued: str = "") -> tuple[dict[str, str], list[str]]:
    """Short options (combinable, ``--`` ends them); ``valued`` ones take an argument.

    Returns the options seen (flag -> value, "" for plain flags) and the operands.
    """
    seen: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i + 1 :])
            break
        if len(arg) < 2 or not arg.startswith("-") or arg == "-":
            rest.append(arg)
            i += 1
            continue
        j = 1
        while j < len(arg):
            flag = arg[j]
            if flag in valued:
                value = arg[j + 1 :]
                if not value:
                    i += 1
                    if i >= len(args):
                        raise UsageError(f"Missing argument to -{flag}")
                    value = args[i]
                seen[flag] = value
                break
            if flag not in flags:
                raise UsageError(f"Unknown option '{flag}'")
            seen[flag] = ""
            j += 1
        i += 1
    return seen, rest


def when(seconds: int) -> str:
    """ls -l's time column."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M")


def _owner(fs: PhoneFS, path: str) -> tuple[str, str]:
    return ("root", "media_rw") if fs.in_storage(fs.canonical(path)) else ("root", "root")


# ----- ls -------------------------------------------------------------------------------------


@command("ls")
def ls(session: Session, argv: list[str], io: IO) -> int:
    """ls [-1aAdlRrSt] [PATH...]."""
    opts, paths = parse_flags(argv[1:], "1aAdlRrSthnsF")
    fs = session.fs
    status = 0
    files: list[tuple[str, FileStat]] = []
    dirs: list[tuple[str, str]] = []
    for arg in paths or ["."]:
        st = fs.stat(session.path(arg))
        if st is None:
            io.error(f"ls: {arg}: No such file or directory")
            status = 1
        elif st.is_dir and "d" not in opts:
            dirs.append((arg, session.path(arg)))
        else:
            files.append((arg, st))
    if files:
        _ls_print(session, io, opts, files, None)
    for i, (label, path) in enumerate(dirs):
        header = len(dirs) + len(files) > 1 or "R" in opts
        if header:
            if files or i:
                io.print()
            io.print(f"{label}:")
        status |= _ls_dir(session, io, opts, label, path)
    return status


def _ls_dir(session: Session, io: IO, opts: dict[str, str], label: str, path: str) -> int:
    listing = session.fs.listdir(path)
    if listing is None:
        io.error(f"ls: {label}: Permission denied")
        return 1
    entries = [(n, st) for n, st in listing if not n.startswith(".") or "a" in opts or "A" in opts]
    if "a" in opts:
        here = session.fs.stat(path)
        up = session.fs.stat(posixpath.dirname(path)) or here
        assert here is not None and up is not None
        entries = [(".", here), ("..", up), *entries]
    _ls_print(session, io, opts, entries, path)
    if "R" in opts:
        for name, st in entries:
            if st.is_dir and name not in (".", ".."):
                sub_label = posixpath.join(label, name)
                io.print()
                io.print(f"{sub_label}:")
                _ls_dir(session, io, opts, sub_label, posixpath.join(path, name))
    return 0


def _ls_print(
    session: Session,
    io: IO,
    opts: dict[str, str],
    entries: list[tuple[str, FileStat]],
    folder: str | None,
) -> None:
    if "t" in opts:
        entries = sorted(entries, key=lambda e: -e[1].mtime)
    elif "S" in opts:
        entries = sorted(entries, key=lambda e: -e[1].size)
    if "r" in opts:
        entries = entries[::-1]
    if "l" not in opts and "n" not in opts:
        for name, st in entries:
            io.print(name + ("/" if "F" in opts and st.is_dir else ""))
        return
    if folder is not None:
        io.print(f"total {sum(math.ceil(st.size / 4096) * 4 for _, st in entries)}")
    rows = []
    for name, st in entries:
        path = posixpath.join(folder, name) if folder else session.path(name)
        user, group = _owner(session.fs, path)
        links = "2" if st.is_dir else "1"
        rows.append((statmod.filemode(st.mode), links, user, group, str(st.size), st, name))
    widths = [max((len(str(r[i])) for r in rows), default=0) for i in range(5)]
    for mode, links, user, group, size, st, name in rows:
        io.print(
            f"{mode} {links:>{widths[1]}} {user:<{widths[2]}} {group:<{widths[3]}} "
            f"{size:>{widths[4]}} {when(st.mtime)} {name}"
        )


# ----- reading and writing files ---------------------------------------------------------


def read_inputs(session: Session, prog: str, paths: list[str], io: IO) -> tuple[list[bytes], int]:
    """The contents of the named files ("-" or none: stdin), with toybox's error messages."""
    if not paths:
        return [io.stdin], 0
    out: list[bytes] = []
    status = 0
    for arg in paths:
        if arg == "-":
            out.append(io.stdin)
            continue
        st = session.fs.stat(session.path(arg))
        data = session.fs.read(session.path(arg))
        if data is None:
            why = "Is a directory" if st is not None and st.is_dir else "No such file or directory"
            io.error(f"{prog}: {arg}: {why}")
            status = 1
            continue
        out.append(data)
    return out, status


@command("cat")
def cat(session: Session, argv: list[str], io: IO) -> int:
    """cat [FILE...]."""
    _, paths = parse_flags(argv[1:], "uvteAn")
    chunks, status = read_inputs(session, "cat", paths, io)
    for chunk in chunks:
        io.out(chunk)
    return status


@command("mkdir")
def mkdir(session: Session, argv: list[str], io: IO) -> int:
    """mkdir [-p] [-m MODE] DIR..."""
    opts, paths = parse_flags(argv[1:], "pv", "mZ")
    if not paths:
        raise UsageError("mkdir: Needs 1 argument")
    status = 0
    for arg in paths:
        try:
            if "p" in opts:
                session.fs.makedirs(session.path(arg))
            else:
                session.fs.mkdir(session.path(arg))
        except OSError as exc:
            io.error(f"mkdir: '{arg}': {strerror(exc)}")
            status = 1
    return status


@command("rm")
def rm(session: Session, argv: list[str], io: IO) -> int:
    """rm [-fiRrv] FILE..."""
    opts, paths = parse_flags(argv[1:], "fiRrv")
    force, recursive = "f" in opts, "r" in opts or "R" in opts
    if not paths and not force:
        raise UsageError("rm: Needs 1 argument")
    status = 0
    for arg in paths:
        path = session.path(arg)
        kind = session.fs.kind(path)
        if kind is None:
            if not force:
                io.error(f"rm: {arg}: No such file or directory")
                status = 1
            continue
        if kind == "dir" and not recursive:
            io.error(f"rm: {arg}: Is a directory")
            status = 1
            continue
        try:
            session.fs.delete(path, recursive)
        except OSError as exc:
            io.error(f"rm: {arg}: {strerror(exc)}")
            status = 1
    return status


@command("rmdir")
def rmdir(session: Session, argv: list[str], io: IO) -> int:
    """rmdir DIR..."""
    _, paths = parse_flags(argv[1:], "p")
    status = 0
    for arg in paths:
        st = session.fs.stat(session.path(arg))
        try:
            if st is not None and not st.is_dir:
                raise NotADirectoryError(20, "Not a directory")
            session.fs.delete(session.path(arg), recursive=False)
        except OSError as exc:
            io.error(f"rmdir: '{arg}': {strerror(exc)}")
            status = 1
    return status


def _destination(session: Session, sources: list[str], target: str) -> list[tuple[str, str]]:
    into = session.fs.kind(session.path(target)) == "dir"
    if len(sources) > 1 and not into:
        raise UsageError(f"'{target}' not directory")
    pairs = []
    for src in sources:
        to = target
        if into:
            to = posixpath.join(target, posixpath.basename(src.rstrip("/")))
        pairs.append((src, to))
    return pairs


@command("cp")
def cp(session: Session, argv: list[str], io: IO) -> int:
    """cp [-afpRr] SOURCE... DEST."""
    opts, paths = parse_flags(argv[1:], "afpRrvndHLP")
    if len(paths) < 2:
        raise UsageError("cp: Needs 2 arguments")
    status = 0
    for src, dst in _destination(session, paths[:-1], paths[-1]):
        status |= _copy(session, io, src, dst, "r" in opts or "R" in opts or "a" in opts)
    return status


def _copy(session: Session, io: IO, src: str, dst: str, recursive: bool) -> int:
    fs = session.fs
    st = fs.stat(session.path(src))
    if st is None:
        io.error(f"cp: {src}: No such file or directory")
        return 1
    try:
        if st.is_dir:
            if not recursive:
                io.error(f"cp: {src}: Is a directory")
                return 1
            fs.makedirs(session.path(dst))
            for name, _ in fs.listdir(session.path(src)) or []:
                _copy(session, io, posixpath.join(src, name), posixpath.join(dst, name), True)
            return 0
        fs.write(session.path(dst), fs.read(session.path(src)) or b"", st.mode)
    except OSError as exc:
        io.error(f"cp: {dst}: {strerror(exc)}")
        return 1
    return 0


@command("mv")
def mv(session: Session, argv: list[str], io: IO) -> int:
    """mv [-fin] SOURCE... DEST."""
    _, paths = parse_flags(argv[1:], "fivnT")
    if len(paths) < 2:
        raise UsageError("mv: Needs 2 arguments")
    status = 0
    for src, dst in _destination(session, paths[:-1], paths[-1]):
        try:
            session.fs.move(session.path(src), session.path(dst))
        except OSError as exc:
            io.error(f"mv: {src}: {strerror(exc)}")
            status = 1
    return status


@command("touch")
def touch(session: Session, argv: list[str], io: IO) -> int:
    """touch [-c] FILE..."""
    opts, paths = parse_flags(argv[1:], "acmh", "dtr")
    status = 0
    for arg in paths:
        path = session.path(arg)
        if "c" in opts and session.fs.kind(path) is None:
            continue
        try:
            session.fs.touch(path)
        except OSError as exc:
            io.error(f"touch: '{arg}': {strerror(exc)}")
            status = 1
    return status


@command("stat")
def stat(session: Session, argv: list[str], io: IO) -> int:
    """stat [-c FORMAT] FILE... (%n %s %Y %a %A %F %u %g %U %G)."""
    opts, paths = parse_flags(argv[1:], "LtfL", "c")
    status = 0
    for arg in paths:
        st = session.fs.stat(session.path(arg))
        if st is None:
            io.error(f"stat: '{arg}': No such file or directory")
            status = 1
            continue
        kind = "directory" if st.is_dir else "regular file" if st.is_file else "character device"
        if st.is_file and st.size == 0:
            kind = "regular empty file"
        user, group = _owner(session.fs, session.path(arg))
        gid = "0" if group == "root" else "1023"
        fields = {
            "n": arg,
            "s": str(st.size),
            "Y": str(st.mtime),
            "a": f"{statmod.S_IMODE(st.mode):o}",
            "A": statmod.filemode(st.mode),
            "F": kind,
            "U": user,
            "G": group,
            "u": "0",
            "g": gid,
            "%": "%",
        }
        if "c" in opts:
            io.print(_format(opts["c"], fields))
            continue
        stamp = datetime.fromtimestamp(st.mtime, UTC).strftime("%Y-%m-%d %H:%M:%S.000000000 +0000")
        blocks = math.ceil(st.size / 512)
        io.print(f"  File: {arg}")
        io.print(f"  Size: {st.size}\t Blocks: {blocks}\t IO Blocks: 4096\t{kind}")
        io.print(
            f"Access: ({fields['a']:0>4}/{fields['A']})\tUid: (    0/{user:>8})"
            f"\tGid: ({gid:>5}/{group:>8})"
        )
        for label in ("Access", "Modify", "Change"):
            io.print(f"{label}: {stamp}")
    return status


def _format(fmt: str, fields: dict[str, str]) -> str:
    out: list[str] = []
    i = 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            out.append(fields.get(fmt[i + 1], "?"))
            i += 2
        else:
            out.append(fmt[i])
            i += 1
    return "".join(out)


@command("find")
def find(session: Session, argv: list[str], io: IO) -> int:
    """find PATH... [-name|-iname PAT] [-type f|d] [-mindepth N] [-maxdepth N] [-delete|-print]."""
    args = argv[1:]
    roots = []
    while args and not args[0].startswith("-"):
        roots.append(args.pop(0))
    tests: dict[str, str] = {}
    actions: list[str] = []
    while args:
        flag = args.pop(0)
        if flag in ("-print", "-delete"):
            actions.append(flag)
        elif flag in ("-name", "-iname", "-type", "-mindepth", "-maxdepth"):
            if not args:
                raise UsageError(f"find: '{flag}' needs 1 arg")
            tests[flag] = args.pop(0)
        else:
            raise UsageError(f"find: Unknown option '{flag}'")
    mindepth = int(tests.get("-mindepth", "0"))
    maxdepth = int(tests.get("-maxdepth", "1000"))
    status = 0
    for root in roots or ["."]:
        if session.fs.stat(session.path(root)) is None:
            io.error(f"find: {root}: No such file or directory")
            status = 1
            continue
        found = list(_walk(session.fs, root, session.path(root), 0, maxdepth))
        for label, st, depth in reversed(found) if "-delete" in actions else found:
            name = posixpath.basename(label.rstrip("/")) or label
            if depth < mindepth:
                continue
            if "-name" in tests and not fnmatchcase(name, tests["-name"]):
                continue
            if "-iname" in tests and not fnmatchcase(name.lower(), tests["-iname"].lower()):
                continue
            if tests.get("-type") == "f" and not st.is_file:
                continue
            if tests.get("-type") == "d" and not st.is_dir:
                continue
            if "-delete" in actions:
                try:
                    session.fs.delete(session.path(label))
                except OSError as exc:
                    io.error(f"find: {label}: {strerror(exc)}")
                    status = 1
            if "-print" in actions or not actions:
                io.print(label)
    return status


def _walk(
    fs: PhoneFS, label: str, path: str, depth: int, maxdepth: int
) -> Iterator[tuple[str, FileStat, int]]:
    st = fs.stat(path)
    if st is None:
        return
    yield label, st, depth
    if st.is_dir and depth < maxdepth:
        for name, _ in fs.listdir(path) or []:
            child = posixpath.join(path, name)
            yield from _walk(fs, posixpath.join(label, name), child, depth + 1, maxdepth)
