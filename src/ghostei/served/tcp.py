"""A small threaded TCP server: the adb daemon and the emulator console are both one."""

from __future__ import annotations

import contextlib
import socket
import threading


class ThreadedTcpServer:
    """Listens on 127.0.0.1 (by default); each client is handled by ``handle`` in a thread.

    ``close`` stops listening and hangs up on every client, so a test can tear a phone down
    without waiting for its clients.
    """

    name = "tcp"

    def __init__(self, *, port: int, host: str = "127.0.0.1") -> None:
        self._listener = socket.create_server((host, port))
        self.port: int = self._listener.getsockname()[1]
        self._clients: set[socket.socket] = set()
        self._clients_lock = threading.Lock()
        self._closing = False
        self._thread = threading.Thread(
            target=self._accept, name=f"{self.name}-{self.port}", daemon=True
        )

    def handle(self, sock: socket.socket) -> None:
        """Serve one client until it hangs up (subclasses)."""
        raise NotImplementedError

    def start_listening(self) -> None:
        """Accept clients in a background thread."""
        self._thread.start()

    def close(self) -> None:
        """Stop listening and hang up on every client."""
        self._closing = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._clients_lock:
            clients = list(self._clients)
        for sock in clients:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if self._thread.ident is not None:  # a server closed before it listened has none
            self._thread.join(timeout=5)

    def _accept(self) -> None:
        while not self._closing:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            # Small packets (OKAY, a prompt, short output) must not wait for Nagle's timer.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._clients_lock:
                self._clients.add(sock)
            threading.Thread(
                target=self._serve,
                args=(sock,),
                name=f"{self.name}-{self.port}-client",
                daemon=True,
            ).start()

    def _serve(self, sock: socket.socket) -> None:
        try:
            self.handle(sock)
        except OSError:
            pass  # the client went away
        finally:
            with self._clients_lock:
                self._clients.discard(sock)
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
