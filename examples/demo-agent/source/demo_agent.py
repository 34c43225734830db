#!/usr/bin/env python3
"""demo-agent: the small agent CLI that clibench's built-in demo benchmarks.

It behaves like the agent CLIs clibench is for, with the Python 3 standard library only:

* `demo-agent` is a full-screen TUI: it switches to the alternate screen, enters raw
  mode, asks the terminal for the cursor position (DSR 6) and its device attributes
  (DA1) and waits for both answers, starts a background session daemon, then paints
  with synchronized updates and echoes what is typed at a `> ` prompt.
* `demo-agent list --json` / `demo-agent stop ID --json` list and stop the background
  sessions (`{"sessions": [{"activeSessionId": ...}]}`), as real agents do.
* `demo-agent kernel` runs the REPL kernel (protocol 3) shipped next to it.
* `demo-agent --version` prints `demo-agent VERSION`.

`DEMO_AGENT_STARTUP_DELAY_MS=N` makes the TUI wait N ms before it draws anything: a
start-up regression to see offline (`clibench ab --head measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300`).

Flags for fault tests: `--never-ready` (paints, enters raw mode, never shows input),
`--crash-after SECONDS` (exits with status 3 before it is ready), `--no-daemon`, and
`--daemon-ignore-sigterm` (the daemon ignores SIGTERM, so `stop` cannot stop it).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import select
import signal
import socket
import sys
import termios
import time
import tty

HERE = os.path.dirname(os.path.realpath(__file__))
DSR_ANSWER = re.compile(rb"\x1b\[(\d+);(\d+)R")
DA1_ANSWER = re.compile(rb"\x1b\[\?[\d;]*c")
QUERY_TIMEOUT_SECONDS = 5.0
DAEMON_START_TIMEOUT_SECONDS = 5.0
STOP_TIMEOUT_SECONDS = 3.0
# The daemon holds a working set, as a real agent's session daemon holds its context.
DAEMON_WORKING_SET_BYTES = 8 * 1024 * 1024


def version() -> str:
    with open(os.path.join(HERE, "VERSION")) as stream:
        return stream.read().strip()


def state_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".demo-agent")


def sessions_dir() -> str:
    return os.path.join(state_dir(), "sessions")


def socket_address(session: str) -> str:
    # An abstract socket: no path length limit, nothing left on disk.
    return f"\0demo-agent-{os.getuid()}-{session}"


def alive(pid: int) -> bool:
    """True when `pid` runs and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as stream:
            state = stream.read().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


# ---------------------------------------------------------------- daemon


def daemon(session: str, ignore_sigterm: bool) -> int:
    os.makedirs(sessions_dir(), exist_ok=True)
    record = os.path.join(sessions_dir(), f"{session}.json")
    working_set = bytearray(DAEMON_WORKING_SET_BYTES)
    for offset in range(0, len(working_set), 4096):
        working_set[offset] = 1

    def finish(_signum: int, _frame: object) -> None:
        try:
            os.unlink(record)
        except FileNotFoundError:
            pass
        os._exit(0)

    signal.signal(signal.SIGTERM, signal.SIG_IGN if ignore_sigterm else finish)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_address(session))
    server.listen(8)
    temporary = record + ".tmp"
    with open(temporary, "w") as stream:
        json.dump({"activeSessionId": session, "pid": os.getpid(), "started": time.time()}, stream)
    os.replace(temporary, record)
    pings = 0
    while True:
        connection, _ = server.accept()
        with connection:
            request = connection.makefile("r").readline().split()
            if not request:
                continue
            if request[0] == "ping":
                pings += 1
                answer = f"pong {pings} from session {session} (pid {os.getpid()})"
            elif request[0] == "work" and len(request) == 2 and request[1].isdigit():
                count = int(request[1])
                total = sum(i * i for i in range(count))
                answer = f"work {count}: sum of squares = {total}"
            else:
                answer = f"unknown request: {' '.join(request)}"
            connection.sendall((answer + "\n").encode())


def ask_daemon(session: str | None, request: str) -> str:
    if session is None:
        return "no session daemon (started with --no-daemon)"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(socket_address(session))
        client.sendall((request + "\n").encode())
        return client.makefile("r").readline().strip()


def start_daemon(ignore_sigterm: bool) -> str:
    import subprocess

    session = secrets.token_hex(6)
    args = [sys.executable, os.path.realpath(__file__), "daemon", session]
    if ignore_sigterm:
        args.append("--ignore-sigterm")
    with open(os.devnull, "r+b") as null:
        # A new session: the daemon outlives the TUI, as agents' background sessions do.
        subprocess.Popen(args, stdin=null, stdout=null, stderr=null, start_new_session=True)
    record = os.path.join(sessions_dir(), f"{session}.json")
    deadline = time.monotonic() + DAEMON_START_TIMEOUT_SECONDS
    while not os.path.exists(record):
        if time.monotonic() > deadline:
            raise RuntimeError(f"session daemon {session} did not start within {DAEMON_START_TIMEOUT_SECONDS} s")
        time.sleep(0.01)
    return session


# ---------------------------------------------------------------- list / stop


def live_sessions() -> list[dict]:
    sessions = []
    try:
        names = sorted(os.listdir(sessions_dir()))
    except FileNotFoundError:
        return sessions
    for name in names:
        if not name.endswith(".json"):
            continue
        path = os.path.join(sessions_dir(), name)
        try:
            with open(path) as stream:
                item = json.load(stream)
        except (FileNotFoundError, json.JSONDecodeError):
            continue
        if alive(int(item.get("pid", 0))):
            sessions.append(item)
        else:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    return sessions


def list_command(as_json: bool) -> int:
    sessions = live_sessions()
    if as_json:
        print(json.dumps({"sessions": sessions}))
    else:
        for item in sessions:
            print(f"{item['activeSessionId']}  pid {item['pid']}")
    return 0


def stop_command(session: str, as_json: bool) -> int:
    item = next((s for s in live_sessions() if s["activeSessionId"] == session), None)
    if item is None:
        print(f"Error: Unknown active session: {session}", file=sys.stderr)
        return 1
    pid = int(item["pid"])
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    while alive(pid):
        if time.monotonic() > deadline:
            print(f"Error: session {session} (pid {pid}) did not stop within {STOP_TIMEOUT_SECONDS} s", file=sys.stderr)
            return 2
        time.sleep(0.02)
    try:
        os.unlink(os.path.join(sessions_dir(), f"{session}.json"))
    except FileNotFoundError:
        pass
    print(json.dumps({"stopped": session}) if as_json else f"stopped {session}")
    return 0


# ---------------------------------------------------------------- TUI


class Screen:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = b""

    def write(self, data: str) -> None:
        raw = data.encode()
        while raw:
            written = os.write(self.fd, raw)
            raw = raw[written:]

    def read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return b""
        data = os.read(self.fd, 4096)
        if not data:
            raise EOFError("terminal closed")
        return data

    def query(self) -> tuple[int, int]:
        """Asks for the cursor position and the device attributes, and waits for both."""
        self.write("\x1b[6n\x1b[c")
        buffer = b""
        deadline = time.monotonic() + QUERY_TIMEOUT_SECONDS
        while True:
            position = DSR_ANSWER.search(buffer)
            attributes = DA1_ANSWER.search(buffer)
            if position and attributes:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the terminal did not answer DSR and DA1 within {QUERY_TIMEOUT_SECONDS} s (saw {buffer!r})")
            buffer += self.read(deadline - time.monotonic())
        # Whatever was typed meanwhile stays: it is shown once the prompt is up.
        rest = DA1_ANSWER.sub(b"", DSR_ANSWER.sub(b"", buffer, count=1), count=1)
        self.pending = rest
        return int(position.group(1)), int(position.group(2))


def paint(screen: Screen, title: str, lines: list[str], prompt: str, size: os.terminal_size) -> None:
    # A terminal that reports no size (0x0) gets the classic 80x24.
    rows, cols = size.lines or 24, size.columns or 80
    body_rows = max(rows - 4, 1)
    shown = lines[-body_rows:]
    frame = ["\x1b[?2026h", "\x1b[H\x1b[2J", "\x1b[7m", title[:cols].ljust(cols), "\x1b[0m"]
    for index, line in enumerate(shown):
        frame.append(f"\x1b[{index + 2};1H{line[:cols]}")
    frame.append(f"\x1b[{rows - 1};1H" + "-" * cols)
    text = ("> " + prompt)[: cols - 1]
    frame.append(f"\x1b[{rows};1H{text}")
    frame.append("\x1b[?2026l")
    screen.write("".join(frame))


def run_command(command: str, session: str | None) -> list[str]:
    words = command.split()
    if not words:
        return []
    head, rest = words[0], command.partition(" ")[2]
    if head == "help":
        return ["commands: help, echo TEXT, env NAME, ping, work N, clear, exit"]
    if head == "echo":
        return [rest]
    if head == "env" and len(words) == 2:
        value = os.environ.get(words[1])
        return [f"{words[1]} is not set" if value is None else f"{words[1]}={value}"]
    if head == "ping":
        return [ask_daemon(session, "ping")]
    if head == "work" and len(words) == 2 and words[1].isdigit():
        return [ask_daemon(session, f"work {words[1]}")]
    return [f"unknown command: {head} (try help)"]


def startup_delay_ms() -> int | None:
    """DEMO_AGENT_STARTUP_DELAY_MS: how long to wait before drawing (0 when unset)."""
    text = os.environ.get("DEMO_AGENT_STARTUP_DELAY_MS", "").strip() or "0"
    try:
        delay = int(text)
    except ValueError:
        delay = -1
    if delay < 0:
        print(f"demo-agent: DEMO_AGENT_STARTUP_DELAY_MS={text!r} is not a number of milliseconds", file=sys.stderr)
        return None
    return delay


def tui(args: list[str]) -> int:
    never_ready = "--never-ready" in args
    crash_after = None
    if "--crash-after" in args:
        crash_after = float(args[args.index("--crash-after") + 1])
    fd = sys.stdin.fileno()
    if not os.isatty(fd):
        print("demo-agent: the TUI needs a terminal (try `demo-agent --help`)", file=sys.stderr)
        return 2
    delay_ms = startup_delay_ms()
    if delay_ms is None:
        return 2
    saved = termios.tcgetattr(fd)
    screen = Screen(sys.stdout.fileno())
    screen.write("\x1b[?1049h\x1b[H\x1b[2J")
    try:
        tty.setraw(fd)
        # A knob for seeing a regression offline: a slower start-up, same memory. It waits
        # in raw mode, so that nothing typed meanwhile is echoed by the terminal.
        time.sleep(delay_ms / 1000.0)
        row, col = screen.query()
        if crash_after is not None:
            screen.write("demo-agent: starting...")
            time.sleep(crash_after)
            raise SystemExit(3)
        session = None
        if "--no-daemon" not in args:
            session = start_daemon("--daemon-ignore-sigterm" in args)
        title = f" demo-agent {version()}  session {session or 'none'}  terminal {row};{col}"
        lines = ["Welcome to demo-agent. Type `help` and press Enter."]
        if never_ready:
            paint(screen, title, lines + ["loading the model... (this never finishes)"], "", os.get_terminal_size(fd))
            while True:
                screen.read(1.0)
        prompt = ""
        last_interrupt = 0.0
        pending = screen.pending
        while True:
            data, pending = pending, b""
            index = 0
            while index < len(data):
                byte = data[index : index + 1]
                index += 1
                if byte == b"\x1b":
                    # Skip an escape sequence (arrow keys and other unsolicited input).
                    while index < len(data) and not data[index : index + 1].isalpha() and data[index : index + 1] != b"~":
                        index += 1
                    index += 1
                elif byte in (b"\r", b"\n"):
                    command = prompt.strip()
                    prompt = ""
                    if command in ("exit", "quit"):
                        return 0
                    if command == "clear":
                        lines = []
                    elif command:
                        lines.append(f"> {command}")
                        lines.extend(run_command(command, session))
                elif byte in (b"\x7f", b"\x08"):
                    prompt = prompt[:-1]
                elif byte == b"\x03":
                    now = time.monotonic()
                    if not prompt and now - last_interrupt < 1.0:
                        return 0
                    prompt = ""
                    last_interrupt = now
                elif byte == b"\x04" and not prompt:
                    return 0
                elif byte >= b" ":
                    prompt += byte.decode("latin-1")
            paint(screen, title, lines, prompt, os.get_terminal_size(fd))
            data = b""
            while not data:
                data = screen.read(1.0)
            pending = data
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        screen.write("\x1b[?1049l")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:
        print(f"demo-agent {version()}")
        return 0
    if argv[:1] in (["--help"], ["-h"]):
        print(__doc__)
        return 0
    if argv[:1] == ["daemon"] and len(argv) >= 2:
        return daemon(argv[1], "--ignore-sigterm" in argv[2:])
    if argv[:1] == ["list"]:
        return list_command("--json" in argv[1:])
    if argv[:1] == ["stop"] and len(argv) >= 2:
        return stop_command(argv[1], "--json" in argv[2:])
    if argv[:1] == ["kernel"]:
        kernel = os.path.join(HERE, "kernel.py")
        os.execv(sys.executable, [sys.executable, kernel, *argv[1:]])
    if argv and not argv[0].startswith("--"):
        print(f"demo-agent: unknown command {argv[0]!r} (try --help)", file=sys.stderr)
        return 2
    return tui(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
