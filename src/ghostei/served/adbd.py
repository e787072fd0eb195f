"""The device side of the adb transport protocol over TCP: what ``adbd`` is to the adb server.

The adb server connects to a device's TCP port and speaks the transport protocol of AOSP's
``protocol.txt``: 24-byte little-endian headers (command, arg0, arg1, payload length, payload
checksum, ``command ^ 0xffffffff``) followed by the payload. The server sends CNXN; we answer
with our own CNXN (no AUTH, as an emulator's adbd with ``ro.adb.secure=0`` does). Each OPEN
starts a service on a stream; data flows in WRTE packets, each acknowledged by OKAY before the
next one is sent on that stream; CLSE ends a stream.

Services: ``shell:`` (raw, stdout and stderr merged), ``shell,v2,…:`` (AOSP's
``shell_protocol.h`` packets: 1 stdout, 2 stderr, 3 exit code), ``exec:`` (raw, binary-safe),
``sync:`` (SYNC.TXT version 1: STAT, LIST, SEND, RECV, QUIT), ``root:`` and ``reverse:``
(refused with a reason: the phone opens no sockets); any other service is refused. The banner
advertises only ``shell_v2`` and ``fixed_push_mkdir``, so clients use sync v1.

A command runs as soon as its stream opens, with empty stdin: clients such as adbutils never
close stdin on a v2 stream, so waiting for it would hang them (and what ``exec-in`` streams is
not read). ``adb shell`` with no command gets a session that runs one line at a time, with a
prompt, echo and line editing when the client asked for a pty. Every use of the phone holds
the phone's lock; the shell takes it for one command at a time, so a long command line of one
client never keeps another's waiting. What a client sends is bounded: a stream's unread input
waits in the host (its OKAY is held back, as adb's flow control allows), and an interactive
line longer than a command may be is refused.
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import stat
import struct
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from .tcp import ThreadedTcpServer

log = logging.getLogger(__name__)

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_AUTH = 0x48545541
A_STLS = 0x534C5453
COMMANDS = frozenset({A_SYNC, A_CNXN, A_OPEN, A_OKAY, A_CLSE, A_WRTE, A_AUTH, A_STLS})

A_VERSION_MIN = 0x01000000
A_VERSION_SKIP_CHECKSUM = 0x01000001  # peers at this version send 0 as the checksum
A_VERSION = A_VERSION_SKIP_CHECKSUM
MAX_PAYLOAD = 1024 * 1024  # what a current adbd accepts in one packet
HEADER = struct.Struct("<6I")

SYNC_DATA_MAX = 64 * 1024  # the largest DATA chunk of the sync protocol
# Unread input a stream holds before it stops acknowledging the host's writes (the host then
# waits to send more): a service that does not read its input cannot make adbd hold it all.
INBOX_MAX = MAX_PAYLOAD
# The longest line the interactive shell takes: the longest command adbd can run, as the
# kernel bounds ``sh -c COMMAND`` (MAX_ARG_STRLEN, 128 KiB with the NUL); a longer line is
# dropped as it comes and refused at its end, never held whole.
LINE_MAX = 128 * 1024 - 1
SYNC_PATH_MAX = 1024

FEATURES = ("shell_v2", "fixed_push_mkdir")
BANNER = (
    "device::ro.product.name=sdk_gphone64_x86_64;ro.product.model=sdk_gphone64_x86_64;"
    "ro.product.device=emu64x;features=" + ",".join(FEATURES)
)

# Shell protocol packet ids (shell_protocol.h).
SHELL_STDIN, SHELL_STDOUT, SHELL_STDERR, SHELL_EXIT = 0, 1, 2, 3
SHELL_CLOSE_STDIN, SHELL_WINDOW_SIZE = 4, 5
SHELL_PROMPT = b"emu64x:/ # "


# ----- what adbd needs of the phone it serves -------------------------------------------------


class ShellOutput(Protocol):
    """The outcome of one shell command line."""

    @property
    def stdout(self) -> bytes: ...
    @property
    def stderr(self) -> bytes: ...
    @property
    def exit_code(self) -> int: ...


class Shell(Protocol):
    """Runs a command line on the phone (``AndroidShell``), taking the phone's lock itself."""

    def run(self, command: str, stdin: bytes = b"") -> ShellOutput: ...


class FileStatus(Protocol):
    """What ``stat`` says of a path."""

    @property
    def mode(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def mtime(self) -> int: ...


class FileSystem(Protocol):
    """The phone's file system as the sync service sees it (``PhoneFS``)."""

    def stat(self, path: str) -> FileStatus | None: ...
    def listdir(self, path: str) -> Sequence[tuple[str, FileStatus]] | None: ...
    def read(self, path: str) -> bytes | None: ...
    def write(self, path: str, data: bytes, mode: int, mtime: int) -> None: ...


# ----- packets --------------------------------------------------------------------------------


class ProtocolError(Exception):
    """The peer broke the transport protocol; its connection is dropped."""


class StreamClosed(Exception):
    """The stream ended (closed by the host, or the connection dropped)."""


def encode_packet(
    command: int, arg0: int, arg1: int, payload: bytes = b"", checksum: bool = False
) -> bytes:
    """One packet on the wire. Old peers (before A_VERSION_SKIP_CHECKSUM) need the byte sum."""
    check = sum(payload) & 0xFFFFFFFF if checksum else 0
    header = HEADER.pack(command, arg0, arg1, len(payload), check, command ^ 0xFFFFFFFF)
    return header + payload


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    """Exactly ``n`` bytes, or None at a clean end of stream before the first byte."""
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            if not chunks:
                return None
            raise ProtocolError(f"connection closed inside a packet ({len(chunks)} of {n} bytes)")
        chunks += chunk
    return bytes(chunks)


def read_packet(sock: socket.socket) -> tuple[int, int, int, bytes] | None:
    """The next packet (command, arg0, arg1, payload), or None when the peer hung up."""
    raw = _recv_exact(sock, HEADER.size)
    if raw is None:
        return None
    command, arg0, arg1, length, _check, magic = HEADER.unpack(raw)
    if command not in COMMANDS or magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad packet header {raw.hex()}")
    if length > MAX_PAYLOAD:
        raise ProtocolError(f"payload of {length} bytes is over the limit of {MAX_PAYLOAD}")
    payload = _recv_exact(sock, length) if length else b""
    if payload is None:
        raise ProtocolError("connection closed before the payload")
    return command, arg0, arg1, payload


# ----- streams and connections ------------------------------------------------------------------


class Stream:
    """One open service on a connection: a byte pipe in each direction with adb's flow control."""

    def __init__(self, conn: _Connection, local_id: int, remote_id: int) -> None:
        self.conn = conn
        self.local_id = local_id
        self.remote_id = remote_id
        self._cond = threading.Condition()
        self._inbox = bytearray()
        self._closed = False
        self._may_write = True  # the host acknowledged our last WRTE
        self._owe_okay = False  # the host's last WRTE waits for room in the inbox

    # -- called by the connection's reader -------------------------------------------------

    def deliver(self, data: bytes) -> bool:
        """Bytes the host wrote (WRTE); False if the inbox is full: the OKAY that lets the
        host write again is then sent once the service has read some (``_taken``)."""
        with self._cond:
            self._inbox += data
            self._cond.notify_all()
            self._owe_okay = len(self._inbox) > INBOX_MAX
            return not self._owe_okay

    def _taken(self) -> None:
        """The service read from the inbox (under ``_cond``): acknowledge a held-back WRTE."""
        if self._owe_okay and len(self._inbox) <= INBOX_MAX:
            self._owe_okay = False
            self.conn.send(A_OKAY, self.local_id, self.remote_id)

    def acked(self) -> None:
        """The host took our last WRTE (OKAY): the next one may go."""
        with self._cond:
            self._may_write = True
            self._cond.notify_all()

    def end(self) -> None:
        """The host closed the stream, or the connection is gone."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- used by services ------------------------------------------------------------------

    def read_exact(self, n: int) -> bytes:
        """Exactly ``n`` bytes from the host; StreamClosed if the stream ends first."""
        with self._cond:
            self._cond.wait_for(lambda: len(self._inbox) >= n or self._closed)
            if len(self._inbox) < n:
                raise StreamClosed
            data = bytes(self._inbox[:n])
            del self._inbox[:n]
            self._taken()
            return data

    def read_some(self) -> bytes:
        """Whatever the host sent so far (at least one byte); StreamClosed at the end."""
        with self._cond:
            self._cond.wait_for(lambda: bool(self._inbox) or self._closed)
            if not self._inbox:
                raise StreamClosed
            data = bytes(self._inbox)
            self._inbox.clear()
            self._taken()
            return data

    def write(self, data: bytes) -> None:
        """Send bytes to the host, one WRTE per payload-sized piece, each waiting for its OKAY."""
        step = self.conn.max_payload
        for start in range(0, len(data), step):
            with self._cond:
                self._cond.wait_for(lambda: self._may_write or self._closed)
                if self._closed:
                    raise StreamClosed
                self._may_write = False
            self.conn.send(A_WRTE, self.local_id, self.remote_id, data[start : start + step])

    def close(self) -> None:
        """End the stream from our side (the host sees the service finish)."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
        self.conn.forget(self)
        self.conn.send(A_CLSE, self.local_id, self.remote_id)


Service = Callable[[Stream], None]


class _Connection:
    """One TCP connection from an adb server (or a client that speaks the transport itself)."""

    def __init__(self, sock: socket.socket, daemon: AdbDaemon) -> None:
        self.sock = sock
        self.daemon = daemon
        self.max_payload = MAX_PAYLOAD
        self.checksum = False
        self._send_lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._streams_lock = threading.Lock()
        self._next_id = 1
        self._connected = False

    def send(self, command: int, arg0: int, arg1: int, payload: bytes = b"") -> None:
        """Write one packet; a dead socket ends every stream instead of raising."""
        packet = encode_packet(command, arg0, arg1, payload, self.checksum)
        try:
            with self._send_lock:
                self.sock.sendall(packet)
        except OSError:
            self._end_all()

    def forget(self, stream: Stream) -> None:
        """Drop a finished stream."""
        with self._streams_lock:
            self._streams.pop(stream.local_id, None)

    def serve(self) -> None:
        """Read packets until the peer hangs up or breaks the protocol."""
        try:
            while True:
                packet = read_packet(self.sock)
                if packet is None:
                    break
                self._handle(*packet)
        except ProtocolError as exc:
            log.info("adbd %s: dropping connection: %s", self.daemon.port, exc)
        except OSError:
            pass  # the peer reset the connection
        finally:
            self._end_all()
            with contextlib.suppress(OSError):
                self.sock.close()
            if self._connected:
                self.daemon.transport_ended()

    def _end_all(self) -> None:
        with self._streams_lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for stream in streams:
            stream.end()

    def _handle(self, command: int, arg0: int, arg1: int, payload: bytes) -> None:
        if command == A_CNXN:
            self._end_all()  # a new CNXN restarts the transport
            if self._connected:
                self.daemon.transport_ended()
            version = min(arg0, A_VERSION)
            if version < A_VERSION_MIN:
                raise ProtocolError(f"unsupported protocol version {arg0:#x}")
            self.checksum = version < A_VERSION_SKIP_CHECKSUM
            self.max_payload = max(1024, min(arg1, MAX_PAYLOAD))
            self._connected = True
            self.send(A_CNXN, A_VERSION, MAX_PAYLOAD, self.daemon.banner.encode())
            return
        if not self._connected:
            raise ProtocolError(f"packet {command:#x} before CNXN")
        if command == A_OPEN:
            self._open(arg0, payload)
        elif command == A_WRTE:
            stream = self._stream(arg1, arg0)
            if stream is None:
                self.send(A_CLSE, 0, arg0)  # the host writes to a stream we no longer have
                return
            if stream.deliver(payload):
                self.send(A_OKAY, stream.local_id, stream.remote_id)
        elif command == A_OKAY:
            stream = self._stream(arg1, arg0)
            if stream is not None:
                stream.acked()
        elif command == A_CLSE:
            stream = self._stream(arg1, arg0)
            if stream is not None:
                self.forget(stream)
                stream.end()
        else:
            raise ProtocolError(f"unexpected packet {command:#x}")

    def _stream(self, local_id: int, remote_id: int) -> Stream | None:
        with self._streams_lock:
            stream = self._streams.get(local_id)
        if stream is None or stream.remote_id != remote_id:
            return None
        return stream

    def _open(self, remote_id: int, payload: bytes) -> None:
        name = payload.rstrip(b"\0").decode("utf-8", "replace")
        log.debug("adbd %s: OPEN %r", self.daemon.port, name)
        service = self.daemon.service_for(name)
        if service is None or remote_id == 0:
            log.info("adbd %s: no service %r", self.daemon.port, name)
            self.send(A_CLSE, 0, remote_id)
            return
        with self._streams_lock:
            local_id = self._next_id
            self._next_id = self._next_id % 0x7FFFFFFF + 1
            stream = Stream(self, local_id, remote_id)
            self._streams[local_id] = stream
        self.send(A_OKAY, local_id, remote_id)
        threading.Thread(
            target=_run_service, args=(service, stream), name=f"adbd-{name[:24]}", daemon=True
        ).start()


def _run_service(service: Service, stream: Stream) -> None:
    try:
        service(stream)
    except StreamClosed:
        pass
    except Exception:  # a bug in one service must not take the daemon down
        log.exception("adbd service failed")
    finally:
        stream.close()


# ----- the daemon -----------------------------------------------------------------------------


class AdbDaemon(ThreadedTcpServer):
    """adbd for one phone: listens on a TCP port, one thread per connection and per stream.

    ``lock`` serializes every use of the phone (the simulated phone is not thread-safe); the
    console of the same phone shares it.
    """

    name = "adbd"

    def __init__(
        self,
        shell: Shell,
        fs: FileSystem,
        lock: threading.Lock | threading.RLock,
        *,
        port: int,
        host: str = "127.0.0.1",
        banner: str = BANNER,
    ) -> None:
        super().__init__(port=port, host=host)
        self.shell = shell
        self.fs = fs
        self.lock = lock
        self.banner = banner
        # How many adb transports (connections past CNXN) ended: an adb server that hung up
        # (``adb disconnect``, ``adb kill-server``) or restarted its transport (``adb
        # reconnect``). A run reads it to tell a program that lost its phone; ``on_transport_end``
        # is told at once.
        self.transports_ended = 0
        self.on_transport_end: Callable[[], None] | None = None

    def start(self) -> AdbDaemon:
        """Accept connections in a background thread."""
        self.start_listening()
        return self

    def handle(self, sock: socket.socket) -> None:
        _Connection(sock, self).serve()

    def transport_ended(self) -> None:
        """An adb transport to this phone ended (see ``transports_ended``)."""
        self.transports_ended += 1
        if self.on_transport_end is not None:
            self.on_transport_end()

    # -- services ----------------------------------------------------------------------------

    def service_for(self, name: str) -> Service | None:
        """The service a stream named ``name`` runs, or None (the OPEN is refused)."""
        kind, sep, arg = name.partition(":")
        if not sep:
            return None
        if kind == "shell" or kind.startswith("shell,"):
            options = kind.split(",")[1:]
            v2 = "v2" in options
            pty = "pty" in options or ("raw" not in options and not arg)
            if not arg:
                return lambda s: self._interactive(s, v2=v2, pty=pty)
            return lambda s: self._command(s, arg, v2=v2)
        if kind == "exec":
            return lambda s: self._command(s, arg, v2=False)
        if kind == "sync":
            return self._sync
        if kind == "root":
            return lambda s: s.write(b"adbd is already running as root\n")
        if kind == "reverse":
            # adbd answers reverse requests with OKAY or FAIL and a message; the simulated phone
            # opens no network connections, so there is nothing a reverse rule could carry.
            message = b"reverse is not supported: the simulated phone opens no sockets"
            return lambda s: s.write(b"FAIL" + b"%04x" % len(message) + message)
        return None

    def _run(self, command: str) -> ShellOutput:
        # Not under the phone's lock: the shell takes it for each command of the line.
        return self.shell.run(command)

    def _command(self, stream: Stream, command: str, *, v2: bool) -> None:
        result = self._run(command)
        if not v2:
            # Without the shell protocol, adbd points the child's stdout and stderr at the socket.
            stream.write(merged_output(result))
            return
        out = b""
        if result.stdout:
            out += shell_packet(SHELL_STDOUT, result.stdout)
        if result.stderr:
            out += shell_packet(SHELL_STDERR, result.stderr)
        stream.write(out + shell_packet(SHELL_EXIT, bytes([result.exit_code & 0xFF])))

    def _interactive(self, stream: Stream, *, v2: bool, pty: bool) -> None:
        """``adb shell`` with no command: a prompt and line editing (pty), or a script on stdin."""
        session = _Interactive(self._run, pty=pty)
        if v2:
            _drive_v2(stream, session)
            return
        stream.write(_joined(session.start()))
        while not session.done:
            stream.write(_joined(session.feed(stream.read_some())))

    def _sync(self, stream: Stream) -> None:
        _SyncSession(stream, self.fs, self.lock).serve()


def merged_output(result: ShellOutput) -> bytes:
    """Stdout and stderr as one stream carries them: in the order written, when the shell kept
    it (``ShellResult.output``), else stdout then stderr."""
    output = getattr(result, "output", b"")
    return bytes(output) if output else result.stdout + result.stderr


def shell_packet(kind: int, data: bytes) -> bytes:
    """One shell-protocol packet: id byte, little-endian length, data."""
    return struct.pack("<BI", kind, len(data)) + data


Output = list[tuple[int, bytes]]  # (SHELL_STDOUT or SHELL_STDERR, bytes), in order


def _joined(output: Output) -> bytes:
    return b"".join(data for _, data in output)


def _drive_v2(stream: Stream, session: _Interactive) -> None:
    def send(output: Output) -> None:
        packets = b"".join(shell_packet(kind, data) for kind, data in output if data)
        if packets:
            stream.write(packets)

    send(session.start())
    pending = b""
    while not session.done:
        pending += stream.read_some()
        at = 0  # packets are taken from here on; the rest is kept once they are
        while len(pending) - at >= 5 and not session.done:
            kind, length = struct.unpack_from("<BI", pending, at)
            if length > MAX_PAYLOAD:  # no client sends more in one packet
                raise ProtocolError(f"shell packet of {length} bytes")
            if len(pending) - at < 5 + length:
                break
            data = pending[at + 5 : at + 5 + length]
            at += 5 + length
            if kind == SHELL_STDIN:
                send(session.feed(data))
            elif kind == SHELL_CLOSE_STDIN:
                send(session.feed(b"\x04") if session.pty else session.finish())
            # other packets (window size changes) do not matter to this shell
        pending = pending[at:]
    stream.write(shell_packet(SHELL_EXIT, bytes([session.exit_code & 0xFF])))


# The bytes the interactive shell acts on; text between them is taken a run at a time.
_PTY_CONTROLS = re.compile(rb"[\r\n\x7f\b\x04\x03]")
_LINE_ENDS = re.compile(rb"[\r\n]")
LINE_TOO_LONG = f"/system/bin/sh: line too long (over {LINE_MAX} bytes): not run\n".encode()


class _Interactive:
    """A session that runs one line at a time, each as its own command line (so ``cd`` and
    variables do not carry over). With a pty it prompts, echoes and edits as a terminal does
    (stdout and stderr on the one terminal); without one it runs stdin silently, as a script.
    A line over ``LINE_MAX`` bytes is not kept (nor echoed) past that, and is refused."""

    def __init__(self, run: Callable[[str], ShellOutput], *, pty: bool) -> None:
        self.run = run
        self.pty = pty
        self.line = bytearray()
        self.overflow = False  # the line went past LINE_MAX
        self.done = False
        self.exit_code = 0

    def start(self) -> Output:
        return [(SHELL_STDOUT, SHELL_PROMPT)] if self.pty else []

    def feed(self, data: bytes) -> Output:
        out: Output = []
        echo = bytearray()  # what the terminal shows of the typing, sent as one piece

        def flush() -> None:
            if echo:
                out.append((SHELL_STDOUT, bytes(echo)))
                echo.clear()

        controls = _PTY_CONTROLS if self.pty else _LINE_ENDS
        at = 0
        while at < len(data) and not self.done:
            found = controls.search(data, at)
            end = len(data) if found is None else found.start()
            taken = self._take(data[at:end])
            if self.pty:
                echo += taken
            if found is None:
                break
            at = end + 1
            char = data[end:at]
            if char in (b"\r", b"\n"):
                if self.pty:
                    echo += b"\r\n"
                flush()
                out += self._execute()
            elif char in (b"\x7f", b"\b"):
                if self.line:
                    del self.line[-1]
                    echo += b"\b \b"
            elif char == b"\x04":  # Ctrl-D on an empty line ends the session
                self.done = not self.line and not self.overflow
            else:  # Ctrl-C drops the line
                self.line.clear()
                self.overflow = False
                echo += b"^C\r\n" + SHELL_PROMPT
        flush()
        return out

    def _take(self, text: bytes) -> bytes:
        """Add typed text to the line, up to LINE_MAX; what was added."""
        room = LINE_MAX - len(self.line)
        if len(text) > room:
            text = text[: max(room, 0)]
            self.overflow = True
        self.line += text
        return text

    def finish(self) -> Output:
        """End of stdin: run what is left, then the session ends."""
        out = self._execute() if self.line or self.overflow else []
        self.done = True
        return out

    def _execute(self) -> Output:
        if self.overflow:
            self.line.clear()
            self.overflow = False
            self.exit_code = 126  # as for a command adbd cannot start
            if not self.pty:
                return [(SHELL_STDERR, LINE_TOO_LONG)]
            return [(SHELL_STDOUT, LINE_TOO_LONG.replace(b"\n", b"\r\n") + SHELL_PROMPT)]
        command = self.line.decode("utf-8", "replace").strip()
        self.line.clear()
        if command in ("exit", "logout") or command.startswith("exit "):
            word = command.partition(" ")[2].strip()
            self.exit_code = int(word) if word.isdigit() else self.exit_code
            self.done = True
            return []
        out: Output = []
        if command:
            result = self.run(command)
            self.exit_code = result.exit_code
            if self.pty:
                text = merged_output(result).replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
                out.append((SHELL_STDOUT, text))
            else:
                out += [(SHELL_STDOUT, result.stdout), (SHELL_STDERR, result.stderr)]
        if self.pty:
            out.append((SHELL_STDOUT, SHELL_PROMPT))
        return out


# ----- the sync service -----------------------------------------------------------------------


class _SyncFailed(Exception):
    """A sync request failed; FAIL was sent and the session ends, as adbd does."""


class _SyncSession:
    """One ``sync:`` stream: requests until QUIT (AOSP ``file_sync_service.cpp``, version 1)."""

    def __init__(self, stream: Stream, fs: FileSystem, lock: threading.Lock | threading.RLock):
        self.stream = stream
        self.fs = fs
        self.lock = lock

    def serve(self) -> None:
        try:
            while self._request():
                pass
        except _SyncFailed:
            pass

    def _fail(self, reason: str) -> _SyncFailed:
        message = reason.encode("utf-8", "replace")
        self.stream.write(b"FAIL" + struct.pack("<I", len(message)) + message)
        return _SyncFailed(reason)

    def _request(self) -> bool:
        ident, length = struct.unpack("<4sI", self.stream.read_exact(8))
        if length > SYNC_PATH_MAX:
            raise self._fail("path too long")
        path = self.stream.read_exact(length).decode("utf-8", "surrogateescape")
        if ident == b"STAT":
            self._stat(path)
        elif ident == b"LIST":
            self._list(path)
        elif ident == b"SEND":
            self._send(path)
        elif ident == b"RECV":
            self._recv(path)
        elif ident == b"QUIT":
            return False
        else:
            raise self._fail(f"unknown command {int.from_bytes(ident, 'little'):08x}")
        return True

    def _stat(self, path: str) -> None:
        with self.lock:
            st = self.fs.stat(path)
        mode, size, mtime = (st.mode, st.size, st.mtime) if st else (0, 0, 0)
        self.stream.write(b"STAT" + _u32s(mode, size, mtime))

    def _list(self, path: str) -> None:
        with self.lock:
            me = self.fs.stat(path)
            entries = self.fs.listdir(path) if me is not None else None
        out = bytearray()
        if me is not None and entries is not None:
            names = {name for name, _ in entries}
            dots = [(dot, me) for dot in (".", "..") if dot not in names]
            for name, st in [*dots, *entries]:
                raw = name.encode("utf-8", "surrogateescape")
                out += b"DENT" + _u32s(st.mode, st.size, st.mtime, len(raw)) + raw
        out += b"DONE" + bytes(16)
        self.stream.write(bytes(out))

    def _send(self, spec: str) -> None:
        path, comma, mode_text = spec.rpartition(",")
        if not comma:
            raise self._fail("missing , in ID_SEND_V1")
        mode = _parse_mode(mode_text)
        if mode is None:
            raise self._fail("bad mode")
        data = bytearray()
        while True:
            ident, size = struct.unpack("<4sI", self.stream.read_exact(8))
            if ident == b"DONE":
                mtime = size  # DONE carries the file's modification time
                break
            if ident != b"DATA":
                raise self._fail("invalid data message")
            if size > SYNC_DATA_MAX:
                raise self._fail("oversize data message")
            data += self.stream.read_exact(size)
        if stat.S_ISLNK(mode):
            raise self._fail("symlink failed: Operation not permitted")
        try:
            with self.lock:
                self.fs.write(path, bytes(data), mode & 0o7777, mtime)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise self._fail(f"couldn't create file: {reason}") from exc
        self.stream.write(b"OKAY" + bytes(4))

    def _recv(self, path: str) -> None:
        with self.lock:
            st = self.fs.stat(path)
            data = self.fs.read(path) if st is not None else None
        if st is None:
            raise self._fail("open failed: No such file or directory")
        if data is None or stat.S_ISDIR(st.mode):
            raise self._fail("read failed: Is a directory")
        out = bytearray()
        for start in range(0, len(data), SYNC_DATA_MAX):
            chunk = data[start : start + SYNC_DATA_MAX]
            out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
        out += b"DONE" + bytes(4)
        self.stream.write(bytes(out))


def _u32s(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}I", *(v & 0xFFFFFFFF for v in values))


def _parse_mode(text: str) -> int | None:
    """A mode as C's ``strtoul(text, 0)`` reads it: 0x… hex, 0… octal, else decimal."""
    text = text.strip()
    try:
        if text.lower().startswith("0x"):
            return int(text, 16)
        if text.startswith("0") and len(text) > 1:
            return int(text, 8)
        return int(text, 10)
    except ValueError:
        return None
