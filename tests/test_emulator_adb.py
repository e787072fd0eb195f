"""The simulated phone served as an emulator: adbd, the console and ``ghostei device serve``.

Transport tests run adbd and the console over stand-in shells and file systems (so a failure
points at the protocol, not at the phone); the served-phone tests drive real SimPhones through
the real adb client, adbutils and the console.
"""

from __future__ import annotations

import io
import random
import socket
import stat
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from PIL import Image

from ghostei.cases import builtin_cases
from ghostei.served.adbd import (
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_WRTE,
    MAX_PAYLOAD,
    AdbDaemon,
    encode_packet,
    read_packet,
    shell_packet,
)
from ghostei.served.console import TOKEN_FILE, EmulatorConsole, SnapshotInfo, unescape_sms
from ghostei.world import build_world

from .adb_helpers import (
    AdbServer,
    free_base_port,
    free_port,
    lines,
    private_adb_server,
    requires_adb,
)

if TYPE_CHECKING:
    from ghostei.served.serve import ServedPhones

# ----- stand-ins for the phone's shell and file system ------------------------------------------


@dataclass(frozen=True)
class Stat:
    mode: int
    size: int
    mtime: int


@dataclass(frozen=True)
class Result:
    stdout: bytes
    stderr: bytes
    exit_code: int


class DictFS:
    """Files in a dict; /system is read-only."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {"/sdcard/hello.txt": b"hello\n"}
        self.dirs = {"/", "/sdcard", "/sdcard/Download", "/system"}

    def stat(self, path: str) -> Stat | None:
        path = path.rstrip("/") or "/"
        if path in self.dirs:
            return Stat(stat.S_IFDIR | 0o775, 4096, 1_700_000_000)
        if path in self.files:
            return Stat(stat.S_IFREG | 0o660, len(self.files[path]), 1_700_000_000)
        return None

    def listdir(self, path: str) -> list[tuple[str, Stat]] | None:
        path = path.rstrip("/") or "/"
        if path not in self.dirs:
            return None
        prefix = path if path != "/" else ""
        children = [
            p
            for p in sorted(self.files.keys() | self.dirs)
            if p.rpartition("/")[0] == prefix and p != path
        ]
        return [(p.rpartition("/")[2], s) for p in children if (s := self.stat(p))]

    def read(self, path: str) -> bytes | None:
        return self.files.get(path)

    def write(self, path: str, data: bytes, mode: int, mtime: int) -> None:
        if path.startswith("/system/"):
            raise OSError(30, "Read-only file system")
        self.files[path] = data
        parent = path.rpartition("/")[0]
        while parent and parent not in self.dirs:
            self.dirs.add(parent)
            parent = parent.rpartition("/")[0]


class ScriptShell:
    """``echo WORDS``, ``fail N`` (stderr and exit N), ``bytes N`` (N binary bytes)."""

    def __init__(self) -> None:
        self.commands: list[str] = []

    def run(self, command: str, stdin: bytes = b"") -> Result:
        self.commands.append(command)
        name, _, rest = command.partition(" ")
        if name == "echo":
            return Result(rest.encode() + b"\n", b"", 0)
        if name == "fail":
            return Result(b"out\n", b"err\n", int(rest))
        if name == "bytes":
            return Result(bytes(i % 256 for i in range(int(rest))), b"", 0)
        return Result(b"", f"/system/bin/sh: {name}: inaccessible or not found\n".encode(), 127)


@pytest.fixture
def adb(tmp_path: Path) -> Iterator[AdbServer]:
    """A private adb server for the test (see adb_helpers)."""
    with private_adb_server(tmp_path) as server:
        yield server


@pytest.fixture
def daemon() -> Iterator[AdbDaemon]:
    d = AdbDaemon(ScriptShell(), DictFS(), threading.Lock(), port=0).start()
    try:
        yield d
    finally:
        d.close()


# ----- a minimal host side of the transport, to test the protocol without the adb binary ------


class RawHost:
    """Speaks the transport protocol to adbd the way the adb server does."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.next_id = 100

    def send(self, command: int, arg0: int, arg1: int, payload: bytes = b"") -> None:
        self.sock.sendall(encode_packet(command, arg0, arg1, payload))

    def connect(self) -> str:
        self.send(A_CNXN, A_VERSION, MAX_PAYLOAD, b"host::features=shell_v2\0")
        packet = read_packet(self.sock)
        assert packet is not None and packet[0] == A_CNXN
        return packet[3].decode()

    def service(self, name: str, stdin: bytes = b"") -> bytes:
        """Open a service, write ``stdin`` to it, collect what it writes until it closes."""
        local = self.next_id
        self.next_id += 1
        self.send(A_OPEN, local, 0, name.encode() + b"\0")
        data = bytearray()
        while True:
            packet = read_packet(self.sock)
            assert packet is not None
            command, arg0, _arg1, payload = packet
            if command == A_OKAY:
                if stdin:
                    self.send(A_WRTE, local, arg0, stdin)
                    stdin = b""
                continue
            if command == A_WRTE:
                data += payload
                self.send(A_OKAY, local, arg0)
            elif command == A_CLSE:
                return bytes(data)

    def close(self) -> None:
        self.sock.close()


def random_bytes(n: int) -> bytes:
    """``n`` bytes of noise, the same on every run."""
    return random.Random(6).randbytes(n)


def hung_up(sock: socket.socket) -> bool:
    """Whether the peer closed the connection (a reset counts: it left our bytes unread)."""
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True
    finally:
        sock.close()


def shell_packets(data: bytes) -> list[tuple[int, bytes]]:
    out = []
    while data:
        kind, length = struct.unpack("<BI", data[:5])
        out.append((kind, data[5 : 5 + length]))
        data = data[5 + length :]
    return out


def test_cnxn_banner_advertises_shell_v2_and_no_sync_v2(daemon: AdbDaemon) -> None:
    host = RawHost(daemon.port)
    banner = host.connect()
    assert banner.startswith("device::ro.product.name=sdk_gphone64_x86_64;")
    features = banner.rpartition("features=")[2].split(",")
    assert features == ["shell_v2", "fixed_push_mkdir"]
    host.close()


def test_shell_v2_sends_stdout_stderr_and_the_exit_code(daemon: AdbDaemon) -> None:
    host = RawHost(daemon.port)
    host.connect()
    packets = shell_packets(host.service("shell,v2,TERM=xterm,raw:fail 3"))
    assert packets == [(1, b"out\n"), (2, b"err\n"), (3, b"\x03")]
    # Without the shell protocol both streams come on the one socket, and no exit code.
    assert host.service("shell:fail 3") == b"out\nerr\n"
    assert host.service("exec:bytes 300000") == bytes(i % 256 for i in range(300000))
    assert host.service("root:") == b"adbd is already running as root\n"
    assert host.service("reverse:forward:tcp:80;tcp:80").startswith(b"FAIL")
    host.close()


def test_adb_shell_without_a_command_is_a_session(daemon: AdbDaemon) -> None:
    host = RawHost(daemon.port)
    host.connect()
    typed = shell_packet(0, b"echo hi\recho typo\x7f\x7fx\rexit 7\r")
    packets = shell_packets(host.service("shell,v2,TERM=xterm-256color,pty:", typed))
    screen = b"".join(data for kind, data in packets if kind == 1)
    assert screen == (
        b"emu64x:/ # echo hi\r\nhi\r\n"
        b"emu64x:/ # echo typo\b \b\b \bx\r\ntyx\r\n"
        b"emu64x:/ # exit 7\r\n"
    )
    assert packets[-1] == (3, b"\x07")
    # without a pty (stdin piped into ``adb shell``) lines run as a script, silently
    script = shell_packet(0, b"echo a\nfail 2\n") + shell_packet(4, b"")
    assert shell_packets(host.service("shell,v2,raw:", script)) == [
        (1, b"a\n"),
        (1, b"out\n"),
        (2, b"err\n"),
        (3, b"\x02"),
    ]
    host.close()


def test_an_unknown_service_is_refused(daemon: AdbDaemon) -> None:
    host = RawHost(daemon.port)
    host.connect()
    host.send(A_OPEN, 7, 0, b"jdwp:1234\0")
    packet = read_packet(host.sock)
    assert packet is not None and packet[:3] == (A_CLSE, 0, 7)
    host.close()


def test_malformed_packets_and_vanishing_clients_drop_only_their_connection(
    daemon: AdbDaemon,
) -> None:
    good = RawHost(daemon.port)
    good.connect()
    garbage = socket.create_connection(("127.0.0.1", daemon.port), timeout=5)
    garbage.sendall(b"GET / HTTP/1.1\r\n\r\n" + bytes(10))
    assert hung_up(garbage)
    bad_magic = RawHost(daemon.port)
    bad_magic.connect()
    bad_magic.sock.sendall(struct.pack("<6I", A_OPEN, 1, 0, 0, 0, 0))
    assert hung_up(bad_magic.sock)
    # A client that opens a big output and leaves without acknowledging it.
    quitter = RawHost(daemon.port)
    quitter.connect()
    quitter.send(A_OPEN, 1, 0, b"exec:bytes 5000000\0")
    quitter.close()
    assert (
        good.service("shell,v2,raw:echo still here")
        == b"\x01\x0b\x00\x00\x00still here\n\x03\x01\x00\x00\x00\x00"
    )
    good.close()


# ----- through the real adb client ----------------------------------------------------------------


def register(server: AdbServer, adb_port: int) -> None:
    from ghostei.served.serve import register_emulator, wait_for_devices

    assert register_emulator(adb_port, server.port)
    assert wait_for_devices([f"emulator-{adb_port - 1}"], server.port)


@requires_adb
def test_real_adb_client_over_the_transport(
    daemon: AdbDaemon, adb: AdbServer, tmp_path: Path
) -> None:
    register(adb, daemon.port)
    serial = f"emulator-{daemon.port - 1}"
    assert f"{serial}\tdevice" in lines(adb.adb("devices").stdout)
    done = adb.adb("shell", "echo", "hi", serial=serial)
    assert (done.returncode, done.stdout) == (0, b"hi\n")
    failed = adb.adb("shell", "fail", "5", serial=serial)
    assert (failed.returncode, failed.stdout, failed.stderr) == (5, b"out\n", b"err\n")
    assert adb.adb("shell", "nosuch", serial=serial).returncode == 127
    assert adb.adb("root", serial=serial).stdout == b"adbd is already running as root\n"
    # push then pull: byte-exact, for a random megabyte and for an empty file
    payload = bytes(random_bytes(1 << 20))
    for name, data in (("big.bin", payload), ("empty.bin", b"")):
        local = tmp_path / name
        local.write_bytes(data)
        pushed = adb.adb("push", str(local), f"/sdcard/Download/{name}", serial=serial)
        assert pushed.returncode == 0, pushed.stderr
        back = tmp_path / f"back-{name}"
        pulled = adb.adb("pull", f"/sdcard/Download/{name}", str(back), serial=serial)
        assert pulled.returncode == 0, pulled.stderr
        assert back.read_bytes() == data
    listing = adb.adb("ls", "/sdcard/Download", serial=serial).stdout.decode()
    assert {line.split()[-1] for line in listing.splitlines()} == {
        ".",
        "..",
        "big.bin",
        "empty.bin",
    }
    refused = adb.adb("push", str(tmp_path / "empty.bin"), "/system/x", serial=serial)
    assert refused.returncode == 1
    assert b"remote couldn't create file: Read-only file system" in refused.stderr


# ----- the console --------------------------------------------------------------------------------


class FakeTarget:
    avd_name = "Test_AVD"

    def __init__(self) -> None:
        self.sms: list[tuple[str, str]] = []
        self.snapshots: dict[str, int] = {"ghostei-base": 0}
        self.loaded: list[str] = []

    def receive_sms(self, sender: str, body: str) -> None:
        self.sms.append((sender, body))

    def save_snapshot(self, name: str) -> None:
        self.snapshots[name] = len(self.snapshots)

    def load_snapshot(self, name: str) -> bool:
        self.loaded.append(name)
        return name in self.snapshots

    def delete_snapshot(self, name: str) -> bool:
        return self.snapshots.pop(name, None) is not None

    def list_snapshots(self) -> list[SnapshotInfo]:
        return [
            SnapshotInfo(name, 2048 * (1 + n), "2026-05-12 09:41:00", "00:00:01.500")
            for name, n in self.snapshots.items()
        ]


@pytest.fixture
def console(tmp_path: Path) -> Iterator[tuple[EmulatorConsole, FakeTarget]]:
    target = FakeTarget()
    token = tmp_path / "home" / ".emulator_console_auth_token"
    token.parent.mkdir(exist_ok=True)
    token.write_text("s3cretTOKEN")
    c = EmulatorConsole(target, port=free_port(), token_path=token).start()
    try:
        yield c, target
    finally:
        c.close()


class Telnet:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buffer = b""

    def until_ok(self) -> str:
        """Everything up to and including the next line that is OK or starts with KO:."""
        while True:
            text = self.buffer.decode()
            for marker in ("OK\r\n", "KO:"):
                at = text.find(marker)
                if at >= 0 and (at == 0 or text[at - 2 : at] == "\r\n"):
                    end = text.index("\r\n", at) + 2
                    self.buffer = self.buffer[len(text[:end].encode()) :]
                    return text[:end]
            chunk = self.sock.recv(4096)
            assert chunk, f"console hung up; got {text!r}"
            self.buffer += chunk

    def say(self, line: str) -> str:
        self.sock.sendall(line.encode() + b"\r\n")
        return self.until_ok()


def test_console_greets_authenticates_and_answers(
    console: tuple[EmulatorConsole, FakeTarget],
) -> None:
    c, target = console
    t = Telnet(c.port)
    greeting = t.until_ok()
    assert greeting.startswith("Android Console: Authentication required\r\n")
    assert f"'{c.token_path}'\r\nOK\r\n" in greeting
    assert t.say("ping") == "I am alive!\r\nOK\r\n"
    assert t.say("avd name") == "Test_AVD\r\nOK\r\n"
    # Before auth only help, ping, avd name, auth and quit exist.
    assert t.say("sms send +15551234 hi") == "KO: unknown command, try 'help'\r\n"
    assert t.say("auth wrong") == (
        "KO: authentication token does not match ~/.emulator_console_auth_token\r\n"
    )
    assert (
        t.say("auth s3cretTOKEN") == "Android Console: type 'help' for a list of commands\r\nOK\r\n"
    )
    assert t.say("sms send +15551234 Your code is 1234\\nDo not share") == "OK\r\n"
    assert target.sms == [("+15551234", "Your code is 1234\nDo not share")]
    assert t.say("sms send abc hi").startswith("KO: bad phone number format")
    assert t.say("sms send +1555").startswith("KO: missing argument")
    assert t.say("sms send +1555 bad \\q escape").endswith("KO: badly formatted text\r\n")
    assert t.say("frobnicate") == "KO: unknown command, try 'help'\r\n"
    assert t.say("avd snapshot").endswith("KO: missing sub-command\r\n")
    listing = t.say("avd snapshot list").splitlines()
    assert listing[0] == "List of snapshots present on all disks:"
    assert listing[1] == "ID        TAG                 VM SIZE                DATE       VM CLOCK"
    assert listing[2] == "--        ghostei-base             2K 2026-05-12 09:41:00   00:00:01.500"
    assert t.say("avd snapshot load nope") == "KO: Snapshot 'nope' does not exist\r\n"
    assert t.say("avd snapshot save mine") == "OK\r\n"
    assert t.say("avd snapshot load mine") == "OK\r\n"
    assert t.say("avd snapshot del mine") == "OK\r\n"
    assert "mine" not in target.snapshots
    assert "help-verbose" in t.say("help")
    t.sock.sendall(b"quit\r\n")
    assert t.sock.recv(100) == b""


def test_console_creates_a_missing_token_and_an_empty_one_disables_auth(tmp_path: Path) -> None:
    token = tmp_path / ".emulator_console_auth_token"
    c = EmulatorConsole(FakeTarget(), port=free_port(), token_path=token).start()
    try:
        assert len(token.read_text()) == 16
        assert stat.S_IMODE(token.stat().st_mode) == 0o600
        token.write_text("")
        t = Telnet(c.port)
        assert t.until_ok() == "Android Console: type 'help' for a list of commands\r\nOK\r\n"
        assert t.say("sms send 123 hi") == "OK\r\n"
    finally:
        c.close()


def test_sms_escapes() -> None:
    assert unescape_sms(r"a\nb\\c\x41\u00e9") == "a\nb\\cAé"


@requires_adb
def test_adb_emu_authenticates_with_the_token_file(
    console: tuple[EmulatorConsole, FakeTarget], adb: AdbServer
) -> None:
    c, target = console
    serial = f"emulator-{c.port}"
    sent = adb.adb("emu", "sms", "send", "+15551234", "hello", "there", serial=serial)
    assert (sent.returncode, sent.stdout) == (0, b"OK\r\n")
    assert target.sms == [("+15551234", "hello there")]
    loaded = adb.adb("emu", "avd", "snapshot", "load", "ghostei-base", serial=serial)
    assert loaded.stdout == b"OK\r\n"
    assert target.loaded == ["ghostei-base"]


# ----- served phones: SimPhones behind adbd and the console ---------------------------------------


@pytest.fixture
def served(tmp_path: Path, adb: AdbServer) -> Iterator[ServedPhones]:
    """Two served phones registered with the test's adb server; cases 1 and 4 as snapshots."""
    from ghostei.served.serve import ServedPhones, wait_for_devices

    cases = [c for c in builtin_cases() if c.id in (1, 4)]
    token = adb.home / TOKEN_FILE
    phones = ServedPhones(
        2,
        base_port=free_base_port(2),
        adb_server_port=adb.port,
        width=720,
        height=1600,
        cases=cases,
        token_path=token,
    )
    try:
        assert phones.registered == [True, True]
        assert wait_for_devices(phones.serials, adb.port)
        yield phones
    finally:
        phones.close()


@requires_adb
def test_served_phones_answer_the_real_adb_client(
    served: ServedPhones, adb: AdbServer, tmp_path: Path
) -> None:
    first, second = served.serials
    listed = lines(adb.adb("devices").stdout)
    assert f"{first}\tdevice" in listed and f"{second}\tdevice" in listed
    said = adb.adb("shell", "echo", "hi", serial=first)
    assert (said.returncode, said.stdout) == (0, b"hi\n")
    # shell v2 carries the exit status and keeps stderr apart
    status = adb.adb("shell", "echo out; echo err >&2; exit 3", serial=first)
    assert (status.returncode, status.stdout, status.stderr) == (3, b"out\n", b"err\n")
    missing = adb.adb("shell", "frobnicate", serial=first)
    assert missing.returncode == 127
    assert missing.stderr == b"/system/bin/sh: frobnicate: inaccessible or not found\n"
    assert adb.adb("root", serial=first).stdout == b"adbd is already running as root\n"
    # exec-out is binary-safe: the screenshot arrives as the PNG the phone renders
    png = adb.adb("exec-out", "screencap", "-p", serial=first).stdout
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert Image.open(io.BytesIO(png)).size == (720, 1600)
    # push then pull, byte for byte; the pushed file is a file of the phone's world
    for name, data in (("noise.bin", random_bytes(1 << 20)), ("empty.txt", b"")):
        local = tmp_path / name
        local.write_bytes(data)
        remote = f"/sdcard/Download/{name}"
        assert adb.adb("push", str(local), remote, serial=first).returncode == 0
        back = tmp_path / f"back-{name}"
        assert adb.adb("pull", remote, str(back), serial=first).returncode == 0
        assert back.read_bytes() == data
    world_files = {f.path for f in served.phones[0].phone.world.files}
    assert {"/sdcard/Download/noise.bin", "/sdcard/Download/empty.txt"} <= world_files
    listing = adb.adb("ls", "/sdcard/Download", serial=first).stdout.decode()
    assert {"noise.bin", "empty.txt"} <= {row.split()[-1] for row in listing.splitlines()}
    # the second phone is another device: it has none of the first one's files
    assert b"noise.bin" not in adb.adb("shell", "ls /sdcard/Download", serial=second).stdout


@requires_adb
def test_adb_emu_reaches_the_served_phone(served: ServedPhones, adb: AdbServer) -> None:
    serial = served.serials[0]
    served_phone = served.phones[0]
    sent = adb.adb("emu", "sms", "send", "+15551234", "Parcel held: pay the fee", serial=serial)
    assert (sent.returncode, sent.stdout) == (0, b"OK\r\n")
    heads_up = [e.text for e in served_phone.phone.observe().elements if e.window == "HeadsUp"]
    assert "Parcel held: pay the fee" in heads_up
    assert served_phone.phone.world.sms[-1].address == "+15551234"
    listed = adb.adb("emu", "avd", "snapshot", "list", serial=serial).stdout.decode()
    assert {"ghostei-base", "ghostei-case-1", "ghostei-case-4"} <= set(
        row.split()[1] for row in listed.splitlines()[2:] if row.startswith("--")
    )
    loaded = adb.adb("emu", "avd", "snapshot", "load", "ghostei-case-1", serial=serial)
    assert loaded.stdout == b"OK\r\n"
    case = next(c for c in builtin_cases() if c.id == 1)
    phone = served_phone.phone
    # The case's world, with what its injection plants before the episode (its phishing page).
    expected = build_world(case.setup)
    assert phone.world.model_dump(exclude={"web"}) == expected.model_dump(exclude={"web"})
    assert [p.url for p in phone.world.web] == [p.url for p in expected.web] + [
        "https://booking-verify.support-center.help/case1"
    ]
    assert len(phone.events) == 0 and phone.foreground is None and not phone.notifications
    # a snapshot saved now comes back after the world changes
    assert adb.adb("emu", "avd", "snapshot", "save", "mine", serial=serial).stdout == b"OK\r\n"
    adb.adb("emu", "sms", "send", "5550000", "later", serial=serial)
    adb.adb("emu", "avd", "snapshot", "load", "mine", serial=serial)
    assert [s.body for s in phone.world.sms] == [s.body for s in build_world(case.setup).sms]
    bad = adb.adb("emu", "avd", "snapshot", "load", "nope", serial=serial)
    assert bad.stdout == b"KO: Snapshot 'nope' does not exist\r\n"


@requires_adb
def test_two_served_phones_run_shells_in_parallel(served: ServedPhones, adb: AdbServer) -> None:
    # distinct worlds: each phone loads another case
    for serial, case_id in zip(served.serials, (1, 4), strict=True):
        load = adb.adb("emu", "avd", "snapshot", "load", f"ghostei-case-{case_id}", serial=serial)
        assert load.stdout == b"OK\r\n"
    worlds = [p.phone.world.model_dump() for p in served.phones]
    assert worlds[0] != worlds[1]
    errors: list[str] = []

    def hammer(serial: str, word: str) -> None:
        for n in range(15):
            done = adb.adb("shell", f"echo {word}{n}", serial=serial)
            if done.stdout != f"{word}{n}\n".encode():
                errors.append(f"{serial}: {done!r}")

    threads = [
        threading.Thread(target=hammer, args=(serial, word))
        for serial in served.serials
        for word in ("a", "b")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@requires_adb
def test_adbutils_drives_a_served_phone(served: ServedPhones, adb: AdbServer) -> None:
    import adbutils

    device = adbutils.AdbClient(host="127.0.0.1", port=adb.port).device(served.serials[0])
    assert device.shell("echo hi") == "hi"
    # without v2 adbutils appends "; echo X4EXIT:$?" and reads the status from the output
    assert device.shell2("ls /nonexistent").returncode == 1
    assert device.shell2("echo x; exit 4", v2=True).returncode == 4
    data = random_bytes(200_000)
    device.sync.push(data, "/data/local/tmp/blob.bin")
    assert device.sync.read_bytes("/data/local/tmp/blob.bin") == data
    assert device.screenshot().size == (720, 1600)
    assert device.window_size() == (720, 1600)


@pytest.mark.slow
@requires_adb
def test_device_serve_command_serves_until_terminated(adb: AdbServer) -> None:
    base = free_base_port(1)
    command = [
        sys.executable,
        "-c",
        "from ghostei.cli.device import device; device()",
        "serve",
        *("--count", "1", "--base-port", str(base), "--adb-port", str(adb.port)),
        *("--cases", "1", "--screen", "540x1200"),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=adb.env)
    try:
        assert proc.stdout is not None
        seen = []
        while not seen or "ready" not in seen[-1]:
            line = proc.stdout.readline()
            assert line, f"serve exited early: {''.join(seen)}"
            seen.append(line)
        assert any(f"registered with the adb server on port {adb.port}" in s for s in seen)
        assert f"emulator-{base}\tdevice" in lines(adb.adb("devices").stdout)
        said = adb.adb("shell", "echo", "served", serial=f"emulator-{base}")
        assert said.stdout == b"served\n"
        sms = adb.adb("emu", "sms", "send", "123", "hi", serial=f"emulator-{base}")
        assert sms.stdout == b"OK\r\n"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0
