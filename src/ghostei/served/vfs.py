"""The served phone's file system, as adb and the shell see it.

Shared storage (``/sdcard``, also reached as ``/storage/emulated/0`` and
``/storage/self/primary``) *is* the world's files: a file pushed there becomes a
``FileEntry`` the Files and Gallery apps show, and a file an app saves can be pulled. A file's
bytes are its ``content`` as UTF-8, unless bytes that are not UTF-8 text were written (a PNG, an
APK): those are kept in a blob store beside the entry, so push then pull gives back the same
bytes. Outside shared storage the phone has Android's skeleton: ``/data/local/tmp`` and the rest
of ``/data`` are writable (adbd runs as root), ``/system`` and the other system partitions are
read-only. Paths are followed through the symlinks Android has, so ``stat`` never reports a
link.

Failures raise ``OSError`` with the errno Android's toybox would report, so callers can print
the same messages. Everything is forgotten when the phone's world is replaced (a reset or a
snapshot load), as a real emulator's disk is when a snapshot is loaded.
"""

from __future__ import annotations

import errno
import functools
import os
import posixpath
import stat
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Literal

from ..world import FileEntry, World
from .layout import (
    BIN_MODE,
    DIR_MODE,
    ELF_HEADER,
    LINKS,
    NULL_MODE,
    READ_ONLY,
    SDCARD,
    SDCARD_DIR_MODE,
    SDCARD_FILE_MODE,
    SKELETON_DIRS,
    STANDARD_FOLDERS,
    STORAGE_ALIASES,
    SYSTEM_BIN,
    WRITABLE,
)

if TYPE_CHECKING:
    from ..sim.phone import SimPhone


__all__ = ["SDCARD", "STANDARD_FOLDERS", "SYSTEM_BIN", "FileStat", "PhoneFS"]


@dataclass(frozen=True)
class FileStat:
    """What ``stat`` says of a path: mode bits (type and permissions), size and mtime."""

    mode: int
    size: int
    mtime: int

    @property
    def is_dir(self) -> bool:
        """Whether the path is a directory."""
        return stat.S_ISDIR(self.mode)

    @property
    def is_file(self) -> bool:
        """Whether the path is a regular file."""
        return stat.S_ISREG(self.mode)


def iso_to_epoch(value: str, default: int = 0) -> int:
    """Seconds since the epoch of a world time (the phone's clock runs in UTC)."""
    try:
        return int(datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp())
    except ValueError:
        return default


def epoch_to_iso(seconds: int) -> str:
    """The world's time format for seconds since the epoch."""
    return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None).isoformat(timespec="seconds")


def _error(code: int, path: str) -> OSError:
    return OSError(code, os.strerror(code), path)


def under(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or inside it."""
    return root == "/" or path == root or path.startswith(root + "/")


@dataclass
class _Blob:
    entry: FileEntry  # the world entry the bytes belong to, while it is unchanged
    content: str
    data: bytes


@dataclass
class _Private:
    data: bytes
    mode: int
    mtime: int


@dataclass
class _Index:
    """Where shared storage's files are in ``world.files``, so that finding one (and so
    writing one) costs the same however many files the phone has.

    ``key`` is what the world looked like when the index was last right (see
    ``PhoneFS._key``): the files and folders lists (which, their lengths) and the phone's
    event log and clock. Apps change files only while they handle something the phone does,
    which logs an event or moves the clock (an action always moves it); the file system's
    own changes update the index and its key as they make them. Any other change of the key
    rebuilds the index from the lists.
    """

    key: tuple[object, ...]
    files: dict[str, int]  # canonical path -> position of its (first) entry in world.files
    dirs: dict[str, int]  # folder under /sdcard -> how many files lie in it, at any depth
    folders: set[str]  # world.folders (made in Files or by mkdir)


@dataclass
class _State:
    """Everything the file system keeps beside the world; dropped with the world."""

    world: World
    blobs: dict[str, _Blob] = field(default_factory=dict)
    sdcard_dirs: dict[str, int] = field(default_factory=dict)  # explicit folders -> mtime
    private_files: dict[str, _Private] = field(default_factory=dict)
    private_dirs: dict[str, int] = field(default_factory=dict)
    index: _Index | None = None


class PhoneFS:
    """The served phone's file system; shared storage is ``phone.world.files``, and the
    folders made in Files (``phone.world.folders``), which a folder made here joins."""

    def __init__(self, phone: SimPhone) -> None:
        self.phone = phone
        # One lock per phone: adbd serves several connections at once and the phone is not
        # thread-safe, so the shell and the sync service take this lock around phone access.
        self.lock = threading.RLock()
        self._state = self._fresh()

    # ----- paths ---------------------------------------------------------------------------

    @staticmethod
    def canonical(path: str) -> str:
        """The absolute path with links resolved; shared storage is spelled ``/sdcard``."""
        path = posixpath.normpath("/" + path.lstrip("/")) if path else "/"
        if path.startswith("//"):
            path = "/" + path.lstrip("/")
        for alias in STORAGE_ALIASES:
            if under(path, alias):
                return SDCARD + path[len(alias) :]
        for link, target in LINKS.items():
            if under(path, link):
                return target + path[len(link) :]
        return path

    @staticmethod
    def in_storage(path: str) -> bool:
        """Whether a canonical path is in shared storage."""
        return under(path, SDCARD)

    def now(self) -> int:
        """The phone's clock in seconds since the epoch."""
        return iso_to_epoch(self.phone.now())

    # ----- the contract adbd's sync service uses -----------------------------------------

    def stat(self, path: str) -> FileStat | None:
        """The path's stat, following links; None if nothing is there."""
        with self.lock:
            return self._stat(self.canonical(path))

    def kind(self, path: str) -> Literal["file", "dir"] | None:
        """Whether the path (following links) is a file, a folder or nothing: what ``stat``
        tells of it, at a cost that does not grow with the files in a folder."""
        with self.lock:
            return self._kind(self.canonical(path))

    def listdir(self, path: str) -> list[tuple[str, FileStat]] | None:
        """A directory's entries (names with their stats) sorted by name; None if not a dir."""
        with self.lock:
            p = self.canonical(path)
            st = self._stat(p)
            if st is None or not st.is_dir:
                return None
            out: list[tuple[str, FileStat]] = []
            for name in sorted(self._children(p)):
                child = self._stat(self.canonical(posixpath.join(p, name)))
                if child is not None:
                    out.append((name, child))
            return out

    def read(self, path: str) -> bytes | None:
        """A regular file's bytes; None if the path is missing or not a file."""
        with self.lock:
            p = self.canonical(path)
            if p == "/dev/null":
                return b""
            if self.in_storage(p):
                entry = self._entry(p)
                return None if entry is None else self._bytes(p, entry)
            private = self._s.private_files.get(p)
            if private is not None:
                return private.data
            if posixpath.dirname(p) == "/system/bin" and posixpath.basename(p) in SYSTEM_BIN:
                return ELF_HEADER
            return None

    def write(self, path: str, data: bytes, mode: int = 0o660, mtime: int | None = None) -> None:
        """Create or replace a file, creating missing parent folders as adb push does.

        Raises ``OSError`` (EROFS, EISDIR, ENOTDIR) when the file cannot be written.
        """
        with self.lock:
            p = self.canonical(path)
            when = self.now() if mtime is None else mtime
            if p == "/dev/null":
                return
            self._check_writable(p)
            if self._kind(p) == "dir":
                raise _error(errno.EISDIR, path)
            self._makedirs(posixpath.dirname(p), when)
            if self.in_storage(p):
                self._write_storage(p, data, when)
            else:
                perms = stat.S_IMODE(mode) or 0o644
                self._s.private_files[p] = _Private(data, stat.S_IFREG | perms, when)

    def mkdir(self, path: str) -> None:
        """Create one folder; raises ``OSError`` (EEXIST, ENOENT, EROFS) as mkdir(2) does."""
        with self.lock:
            p = self.canonical(path)
            if self._kind(p) is not None:
                raise _error(errno.EEXIST, path)
            self._check_writable(p)
            parent = self._kind(posixpath.dirname(p))
            if parent is None:
                raise _error(errno.ENOENT, path)
            if parent != "dir":
                raise _error(errno.ENOTDIR, path)
            self._add_dir(p, self.now())

    def makedirs(self, path: str) -> None:
        """Create a folder and its missing parents (mkdir -p); raises ``OSError``."""
        with self.lock:
            p = self.canonical(path)
            existing = self._kind(p)
            if existing is not None:
                if existing != "dir":
                    raise _error(errno.EEXIST, path)
                return
            self._check_writable(p)
            self._makedirs(p, self.now())

    def remove(self, path: str, recursive: bool = False) -> bool:
        """Delete a file (or a folder with ``recursive``); False if it could not be removed."""
        try:
            self.delete(path, recursive)
        except OSError:
            return False
        return True

    def delete(self, path: str, recursive: bool = False) -> None:
        """Delete a file, an empty folder, or with ``recursive`` a whole tree; raises OSError."""
        with self.lock:
            p = self.canonical(path)
            kind = self._kind(p)
            if kind is None:
                raise _error(errno.ENOENT, path)
            if p in SKELETON_DIRS or p == SDCARD or p == "/dev/null" or _read_only(p):
                raise _error(errno.EROFS if _read_only(p) else errno.EACCES, path)
            if kind == "dir":
                if not recursive and self._children(p):
                    raise _error(errno.ENOTEMPTY, path)
                self._remove_tree(p)
            else:
                self._remove_file(p)

    def glob(self, pattern: str) -> list[str]:
        """Paths matching a shell pattern (``*``, ``?``, ``[...]`` per component), sorted.

        The matches keep the pattern's spelling of their folders, as a shell's do; names
        starting with a dot match only a component that starts with a dot.
        """
        with self.lock:
            absolute = pattern.startswith("/")
            parts = [c for c in pattern.split("/") if c]
            found = ["/" if absolute else ""]
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                nxt: list[str] = []
                for base in found:
                    if not _has_magic(part):
                        candidate = _join(base, _unescape(part))
                        if self._kind(self.canonical(candidate or "/")) is not None:
                            nxt.append(candidate)
                        continue
                    listing = self.listdir(base or "/") or []
                    for name, st in listing:
                        if name.startswith(".") and not part.startswith("."):
                            continue
                        if fnmatchcase(name, part) and (last or st.is_dir):
                            nxt.append(_join(base, name))
                found = nxt
            return sorted(found)

    # ----- more of what the shell needs -----------------------------------------------------

    def touch(self, path: str, mtime: int | None = None) -> None:
        """Set a path's mtime, creating an empty file if nothing is there; raises OSError."""
        with self.lock:
            p = self.canonical(path)
            when = self.now() if mtime is None else mtime
            if self._kind(p) is None:
                if self._kind(posixpath.dirname(p)) != "dir":
                    raise _error(errno.ENOENT, path)
                self.write(p, b"", 0o644, when)
                return
            self._check_writable(p)
            if self.in_storage(p):
                entry = self._entry(p)
                if entry is not None:
                    entry.modified = epoch_to_iso(when)
                elif p in self._s.sdcard_dirs:
                    self._s.sdcard_dirs[p] = when
            elif p in self._s.private_files:
                self._s.private_files[p].mtime = when
            elif p in self._s.private_dirs:
                self._s.private_dirs[p] = when

    def move(self, src: str, dst: str) -> None:
        """Rename a file or folder (mv); a file keeps its world entry. Raises OSError."""
        with self.lock:
            s, d = self.canonical(src), self.canonical(dst)
            st = self._stat(s)
            if st is None:
                raise _error(errno.ENOENT, src)
            if s == d:
                return
            if st.is_dir and under(d, s):
                raise _error(errno.EINVAL, dst)
            self._check_writable(d)
            if st.is_dir:
                for name in sorted(self._children(s)):
                    self.move(posixpath.join(s, name), posixpath.join(d, name))
                self._add_dir(d, st.mtime)
                self._remove_tree(s)
                return
            entry = self._entry(s) if self.in_storage(s) else None
            if entry is not None and self.in_storage(d):
                self._makedirs(posixpath.dirname(d), self.now())
                self._remove_file(d)
                blob = self._s.blobs.pop(s, None)
                entry.path = d
                self._s.index = None  # the entry moved in place: positions are found anew
                if blob is not None:
                    self._s.blobs[d] = blob
                return
            data = self.read(s) or b""
            self.write(d, data, st.mode, st.mtime)
            self._remove_file(s)

    # ----- internals ------------------------------------------------------------------------

    @property
    def _s(self) -> _State:
        if self._state.world is not self.phone.world:
            self._state = self._fresh()
        return self._state

    def _fresh(self) -> _State:
        state = _State(self.phone.world)
        now = iso_to_epoch(self.phone.world.clock)
        for name in STANDARD_FOLDERS:
            state.sdcard_dirs[f"{SDCARD}/{name}"] = now
        return state

    def _key(self) -> tuple[object, ...]:
        """What the index was built from (see ``_Index``)."""
        world = self._s.world
        events = self.phone.events
        return (
            *(id(world.files), len(world.files), id(world.folders), len(world.folders)),
            *(id(events), len(events), self.phone.now()),
        )

    def _index(self) -> _Index:
        """The index of shared storage, rebuilt if the world changed behind it."""
        s = self._s
        key = self._key()
        if s.index is not None and s.index.key == key:
            return s.index
        index = _Index(key, {}, {}, set(s.world.folders))
        for position, entry in enumerate(s.world.files):
            p = _entry_path(entry)
            if p not in index.files:
                index.files[p] = position
            for folder in _folders_above(p):
                index.dirs[folder] = index.dirs.get(folder, 0) + 1
        s.index = index
        return index

    def _entry(self, p: str) -> FileEntry | None:
        position = self._index().files.get(p)
        if position is None:
            return None
        entry = self._s.world.files[position]
        if _entry_path(entry) != p:  # renamed in place behind the index: look again
            self._s.index = None
            position = self._index().files.get(p)
            return None if position is None else self._s.world.files[position]
        return entry

    def _kind(self, p: str) -> Literal["file", "dir"] | None:
        """Whether a canonical path is a file, a folder or nothing; unlike ``_stat`` it
        costs the same however many files lie in a folder (it needs no folder's mtime)."""
        if p == SDCARD:
            return "dir"
        if not self.in_storage(p):
            st = self._stat(p)
            return None if st is None else "dir" if st.is_dir else "file"
        if self._entry(p) is not None:
            return "file"
        index = self._index()
        if p in self._s.sdcard_dirs or p in index.folders or p in index.dirs:
            return "dir"
        return None

    def _bytes(self, p: str, entry: FileEntry) -> bytes:
        blob = self._s.blobs.get(p)
        if blob is not None and blob.entry is entry and blob.content == entry.content:
            return blob.data
        return entry.content.encode("utf-8")

    def _stat(self, p: str) -> FileStat | None:
        s = self._s
        if p == "/dev/null":
            return FileStat(NULL_MODE, 0, 0)
        if self.in_storage(p):
            if p == SDCARD:
                return FileStat(SDCARD_DIR_MODE, 4096, self._dir_mtime(p))
            entry = self._entry(p)
            if entry is not None:
                when = iso_to_epoch(entry.modified, iso_to_epoch(s.world.clock))
                return FileStat(SDCARD_FILE_MODE, len(self._bytes(p, entry)), when)
            if self._kind(p) == "dir":
                return FileStat(SDCARD_DIR_MODE, 4096, self._dir_mtime(p))
            return None
        if p in SKELETON_DIRS or p in s.private_dirs:
            return FileStat(DIR_MODE, 4096, s.private_dirs.get(p, self._boot_time()))
        private = s.private_files.get(p)
        if private is not None:
            return FileStat(private.mode, len(private.data), private.mtime)
        if posixpath.dirname(p) == "/system/bin" and posixpath.basename(p) in SYSTEM_BIN:
            return FileStat(BIN_MODE, len(ELF_HEADER), self._boot_time())
        return None

    def _boot_time(self) -> int:
        return iso_to_epoch(self._s.world.clock)

    def _dir_mtime(self, p: str) -> int:
        s = self._s
        if p in s.sdcard_dirs:
            return s.sdcard_dirs[p]
        boot = self._boot_time()
        times = [iso_to_epoch(f.modified, boot) for f in s.world.files if under(_entry_path(f), p)]
        return max(times, default=boot)

    def _children(self, p: str) -> set[str]:
        s = self._s
        names: set[str] = set()
        if self.in_storage(p):
            paths = [_entry_path(f) for f in s.world.files] + list(s.sdcard_dirs)
            paths += s.world.folders
            for child in paths:
                if child != p and under(child, p):
                    names.add(child[len(p) + 1 :].split("/", 1)[0])
            return names
        for d in list(SKELETON_DIRS) + list(s.private_dirs) + list(s.private_files):
            if d != p and posixpath.dirname(d) == p:
                names.add(posixpath.basename(d))
        if p == "/":
            names |= {"sdcard", *(link.lstrip("/") for link in LINKS)}
        elif p == "/storage/emulated":
            names.add("0")
        elif p == "/storage/self":
            names.add("primary")
        elif p == "/dev":
            names.add("null")
        elif p == "/system/bin":
            names |= set(SYSTEM_BIN)
        return names

    def _check_writable(self, p: str) -> None:
        if self.in_storage(p):
            return
        if _read_only(p) or not any(under(p, root) for root in WRITABLE):
            raise _error(errno.EROFS, p)

    def _add_dir(self, p: str, when: int) -> None:
        if self.in_storage(p):
            if p != SDCARD:
                self._s.sdcard_dirs[p] = when
                index = self._index()
                if p not in index.folders:  # Files lists it, as MediaStore would
                    self._s.world.folders.append(p)
                    index.folders.add(p)
                    index.key = self._key()
        elif p not in SKELETON_DIRS:
            self._s.private_dirs[p] = when

    def _makedirs(self, p: str, when: int) -> None:
        missing: list[str] = []
        while (kind := self._kind(p)) is None:
            missing.append(p)
            p = posixpath.dirname(p)
        if kind != "dir":
            raise _error(errno.ENOTDIR, p)
        for d in reversed(missing):
            self._check_writable(d)
            self._add_dir(d, when)

    def _write_storage(self, p: str, data: bytes, when: int) -> None:
        s = self._s
        try:
            content = data.decode("utf-8")
            binary = False
        except UnicodeDecodeError:
            content, binary = "", True
        entry = FileEntry(path=p, content=content, size=len(data), modified=epoch_to_iso(when))
        old = self._entry(p)  # first: it may find the index stale and rebuild it
        index = self._index()
        position = index.files.get(p) if old is not None else None
        if position is not None:
            s.world.files[position] = entry
        else:
            index.files[p] = len(s.world.files)
            s.world.files.append(entry)
            for folder in _folders_above(p):
                index.dirs[folder] = index.dirs.get(folder, 0) + 1
            index.key = self._key()
        if binary:
            s.blobs[p] = _Blob(entry, content, data)
        else:
            s.blobs.pop(p, None)

    def _remove_file(self, p: str) -> None:
        s = self._s
        if self.in_storage(p):
            if self._entry(p) is None:
                return  # nothing to remove: the files (and the index) stay as they are
            s.world.files = [f for f in s.world.files if _entry_path(f) != p]
            s.index = None  # later files moved up a place
            s.blobs.pop(p, None)
        else:
            s.private_files.pop(p, None)

    def _remove_tree(self, p: str) -> None:
        s = self._s
        if self.in_storage(p):
            s.world.files = [f for f in s.world.files if not under(_entry_path(f), p)]
            s.index = None
            for key in [k for k in s.blobs if under(k, p)]:
                del s.blobs[key]
            for key in [k for k in s.sdcard_dirs if under(k, p)]:
                del s.sdcard_dirs[key]
            s.world.folders = [d for d in s.world.folders if not under(d, p)]
            return
        for key in [k for k in s.private_files if under(k, p)]:
            del s.private_files[key]
        for key in [k for k in s.private_dirs if under(k, p)]:
            del s.private_dirs[key]


def _entry_path(entry: FileEntry) -> str:
    return _canonical_entry_path(entry.path)


@functools.lru_cache(maxsize=1 << 16)
def _canonical_entry_path(path: str) -> str:
    # Cached: rebuilding the index reads every entry's path, mostly the same strings again.
    return PhoneFS.canonical(path if path.startswith("/") else f"{SDCARD}/{path}")


def _folders_above(p: str) -> list[str]:
    """The folders of shared storage a file at ``p`` lies in (``/sdcard`` itself aside)."""
    out: list[str] = []
    folder = posixpath.dirname(p)
    while folder != SDCARD and under(folder, SDCARD):
        out.append(folder)
        folder = posixpath.dirname(folder)
    return out


def _read_only(p: str) -> bool:
    return any(under(p, root) for root in READ_ONLY)


def _has_magic(part: str) -> bool:
    return any(ch in part for ch in "*?[")


def _unescape(part: str) -> str:
    # Quoted glob characters reach the file system escaped as [*], [?] and [[].
    return part.replace("[*]", "*").replace("[?]", "?").replace("[[]", "[")


def _join(base: str, name: str) -> str:
    if not base:
        return name
    return base + name if base.endswith("/") else f"{base}/{name}"
