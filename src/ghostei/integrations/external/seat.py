"""A seat: one served phone and a private adb server that knows that phone alone.

A program is given a seat for its episode, so ``adb devices`` lists exactly one device (its
own), as on a machine with one phone plugged in: programs that pick "the only device" (the
paper's AppAgent asks on stdin when it sees two) find it. Before each episode the seat is made
ready again, whatever the program before did to it: an adb server it killed (``adb
kill-server``) is started anew, a phone it disconnected (``adb disconnect``) is announced to
the server again.
"""

from __future__ import annotations

from pathlib import Path

from ...served.serve import ServedPhone, adb_devices
from .adb import AdbServer


class Seat:
    """A served phone and its private adb server (started by ``open``, stopped by ``close``)."""

    def __init__(self, phone: ServedPhone, binary: Path) -> None:
        self.phone = phone
        self.adb = AdbServer(binary)

    @property
    def serial(self) -> str:
        return self.phone.serial

    @property
    def adb_port(self) -> int:
        """The port of the seat's adb server (``ANDROID_ADB_SERVER_PORT`` for its program)."""
        return self.adb.port

    def open(self) -> Seat:
        self.adb.start()
        self.adb.attach([self.phone.adb_port], [self.serial])
        return self

    def ready(self) -> None:
        """Make the seat as a program expects it: its adb server up, its phone listed online.
        Raises RuntimeError (naming adb's complaint) when that cannot be done."""
        if not self.adb.running:
            self.adb.kill()
            self.adb.start()
        if adb_devices(self.adb.port).get(self.serial) != "device":
            self.adb.attach([self.phone.adb_port], [self.serial])

    def close(self) -> None:
        self.adb.kill()
