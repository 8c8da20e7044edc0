"""Run a command with stdout or stderr on a pseudo-terminal of a given width (tests of what the CLI
prints for a person: tables fitted to the terminal, progress lines, colour)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_on_pty(
    cmd: list[str], cols: int = 100, tty: str = "stdout", env: dict | None = None, timeout=300, cwd=None
):
    """``(status, what the terminal showed, the other stream)``: ``tty`` ("stdout" or "stderr") is a
    pseudo-terminal ``cols`` wide, the other stream a pipe. The environment drops COLUMNS, LINES,
    NO_COLOR and FORCE_COLOR (the terminal decides) and adds ``env``; PYTHONPATH is the repository."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    e = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
    e.update(TERM="xterm", PYTHONPATH=str(REPO), **(env or {}))
    streams = (
        {"stdout": slave, "stderr": subprocess.PIPE}
        if tty == "stdout"
        else {"stdout": subprocess.PIPE, "stderr": slave}
    )
    p = subprocess.Popen([str(c) for c in cmd], env=e, cwd=cwd, **streams)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    other = p.communicate(timeout=timeout)[0 if tty == "stderr" else 1]
    os.close(master)
    return p.returncode, b"".join(chunks).decode().replace("\r\n", "\n"), other.decode()
