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

With `DEMO_AGENT_MODEL_URL=URL` (a base URL without `/v1`, e.g. clibench's model endpoint), a
line that is not a built-in command is a chat message: it is sent, streamed, to
`URL/v1/chat/completions` (OpenAI Chat Completions, one `bash` tool), the reply is drawn as it
arrives while the prompt keeps taking keys, a tool call's command runs in the current folder
and its output goes back to the model, and the history is kept for the next message. Ctrl-C
during a turn cancels it. Without the variable a chat line says "no model configured".
Two knobs make regressions to see offline: `DEMO_AGENT_LEAK_BYTES_PER_TURN=N` keeps (and
touches) N more bytes after every chat turn, and `DEMO_AGENT_RENDER_DELAY_MS=N` sleeps N ms
before drawing each streamed chunk. `DEMO_AGENT_STARTUP_WORK_MS=N` is a start-up regression
in CPU: it computes for N ms of its own CPU time before drawing (where the delay sleeps).
Two more make the costs that grow over a long session: `DEMO_AGENT_KEY_COST_US_PER_TURN=N`
computes (busy, not asleep) for N µs times the chat turns done so far before it echoes each
key, as a TUI that re-renders its whole transcript on every key does; and
`DEMO_AGENT_IDLE_SPINNER_MS=N` redraws a spinner every N ms while idle at the prompt.
Two make big inputs cost: `DEMO_AGENT_OUTPUT_COST_US_PER_KB=N` computes for N µs of CPU time
per KB a tool printed before showing it (as a TUI that highlights a tool's output does), and
`DEMO_AGENT_PASTE_COST_US_PER_KB=N` for N µs per KB of a bracketed paste before adding it to
the prompt (as one that re-wraps its input box does). `DEMO_AGENT_PASTE_FOLD_LINES=N` shows a
paste of more than N lines as a placeholder (`[Pasted text #1 +711 lines]`), as claude-code,
gemini-cli, pi and codex do, and sends its text with the message.

The TUI turns on bracketed paste: a paste goes into the prompt whole, its newlines kept (Enter
inside a paste does not send it), and a prompt too long for its line shows its end.

Flags for fault tests: `--never-ready` (paints, enters raw mode, never shows input),
`--crash-after SECONDS` (exits with status 3 before it is ready), `--no-daemon`, and
`--daemon-ignore-sigterm` (the daemon ignores SIGTERM, so `stop` cannot stop it).
"""

from __future__ import annotations

import json
import os
import queue
import re
import select
import signal
import socket
import subprocess
import sys
import termios
import textwrap
import threading
import time
import tty
import urllib.parse

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
    session = os.urandom(6).hex()
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


# ---------------------------------------------------------------- chat

# How long the model may stay silent (connect, or between two reads) before the turn fails.
MODEL_READ_TIMEOUT_SECONDS = 60.0
# A whole turn (every request and tool run in it) ends by then, however the model trickles.
TURN_TIMEOUT_SECONDS = 300.0
# Tool calls answered in one turn before it is cut short: a model that only ever calls tools
# must not keep the agent busy for ever.
MAX_TOOL_ROUNDS = 8
# The bytes of streamed answer read per request; past that the answer is refused.
MAX_ANSWER_BYTES = 8 * 1024 * 1024
TOOL_TIMEOUT_SECONDS = 30.0
# Of a tool's output, this much goes back to the model; the rest is counted and dropped.
TOOL_OUTPUT_BYTES = 16 * 1024
TOOL_OUTPUT_SHOWN_LINES = 8
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command in the workspace and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command to run with /bin/sh -c."}},
            "required": ["command"],
        },
    },
}
INERT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """`text` with control characters and bidirectional overrides shown escaped, so nothing a
    model or a command printed can drive the terminal."""
    return INERT.sub(lambda match: f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100 else f"\\u{ord(match.group()):04x}", text)


def millis_knob(name: str) -> int | None:
    """A non-negative whole number of milliseconds (or bytes) from the environment (0 when
    unset); None, after saying why, when it is not one."""
    text = os.environ.get(name, "").strip() or "0"
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        print(f"demo-agent: {name}={text!r} is not a whole number", file=sys.stderr)
        return None
    return value


def cpu_cost(microseconds: float) -> None:
    """Computes for `microseconds` of this thread's own CPU time (the knobs of a cost that
    shows in CPU time however busy the machine is)."""
    if microseconds <= 0:
        return
    until = time.thread_time() + microseconds / 1_000_000
    while time.thread_time() < until:
        pass


class TurnCancelled(Exception):
    pass


class Chat:
    """The conversation with the model. A turn runs in a worker thread and reports what it
    sees as events on `events` (and a byte on `wake`, so the TUI's select wakes up):
    ("text", delta), ("tool", command), ("output", lines), ("error", message),
    ("done", seconds)."""

    def __init__(self, url: str, wake: int) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"DEMO_AGENT_MODEL_URL={url!r} is not an http(s) URL")
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = parsed.port
        self.path = parsed.path.rstrip("/") + "/v1/chat/completions"
        self.history: list[dict] = []
        self.events: queue.Queue = queue.Queue()
        self.wake = wake
        self.busy = False
        self.cancelled = threading.Event()
        self.lock = threading.Lock()
        self.connection: http.client.HTTPConnection | None = None
        self.process: subprocess.Popen | None = None
        # DEMO_AGENT_OUTPUT_COST_US_PER_KB.
        self.output_cost_us = 0

    def post(self, *event: object) -> None:
        self.events.put(event)
        try:
            os.write(self.wake, b"!")
        except BlockingIOError:
            # The pipe is full of wake-ups already: the TUI is awake and will drain the queue.
            pass

    def start(self, message: str) -> None:
        self.busy = True
        self.cancelled.clear()
        threading.Thread(target=self.turn, args=(message,), daemon=True).start()

    def cancel(self) -> None:
        """Stops the running turn: its connection is shut and its tool's process group killed."""
        self.cancelled.set()
        with self.lock:
            if self.connection is not None and self.connection.sock is not None:
                try:
                    self.connection.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            if self.process is not None:
                kill_group(self.process)

    def turn(self, message: str) -> None:
        started = time.monotonic()
        kept = len(self.history)
        self.history.append({"role": "user", "content": message})
        try:
            for _ in range(MAX_TOOL_ROUNDS + 1):
                text, calls = self.request(started + TURN_TIMEOUT_SECONDS)
                reply: dict = {"role": "assistant", "content": text or None}
                if calls:
                    reply["tool_calls"] = calls
                self.history.append(reply)
                if not calls:
                    break
                for call in calls:
                    self.history.append({"role": "tool", "tool_call_id": call["id"], "content": self.run_tool(call)})
            else:
                self.post("error", f"stopped after {MAX_TOOL_ROUNDS} rounds of tool calls")
        except TurnCancelled:
            del self.history[kept:]
            self.post("error", "cancelled")
        except Exception as error:  # noqa: BLE001 - whatever failed, the TUI must say it and go on
            del self.history[kept:]
            self.post("error", f"model request failed: {error}")
        self.post("done", time.monotonic() - started)

    def request(self, deadline: float) -> tuple[str, list[dict]]:
        """One streamed request with the whole history; returns the reply's text and tool calls."""
        body = json.dumps(
            {
                "model": "demo-agent-model",
                "messages": self.history,
                "tools": [BASH_TOOL],
                "stream": True,
                "stream_options": {"include_usage": True},
            }
        ).encode()
        # Imported on the first turn, not at start: http.client (with email and ssl) is
        # 40 of the 70 ms every demo-agent process spends importing, and `list`, `stop`,
        # the daemon and a TUI that never chats do not need it.
        import http.client

        kind = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        connection = kind(self.host, self.port, timeout=MODEL_READ_TIMEOUT_SECONDS)
        with self.lock:
            if self.cancelled.is_set():
                raise TurnCancelled()
            self.connection = connection
        try:
            headers = {"Content-Type": "application/json", "Accept": "text/event-stream", "Authorization": "Bearer demo-agent"}
            connection.request("POST", self.path, body=body, headers=headers)
            response = connection.getresponse()
            if response.status != 200:
                detail = inert(response.read(2000).decode("utf-8", "replace").strip())
                raise RuntimeError(f"HTTP {response.status} {inert(response.reason)}: {detail}")
            text = ""
            calls: dict[int, dict] = {}
            read = 0
            while True:
                if self.cancelled.is_set():
                    raise TurnCancelled()
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the turn took longer than {TURN_TIMEOUT_SECONDS:.0f} s")
                line = response.readline(65536)
                if not line:
                    if self.cancelled.is_set():
                        raise TurnCancelled()
                    raise RuntimeError("the stream ended before [DONE]")
                read += len(line)
                if read > MAX_ANSWER_BYTES:
                    raise RuntimeError(f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
                line = line.strip()
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    break
                chunk = json.loads(data)
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    if delta.get("content"):
                        text += delta["content"]
                        self.post("text", delta["content"])
                    for part in delta.get("tool_calls") or []:
                        call = calls.setdefault(int(part.get("index", 0)), {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
                        call["id"] = part.get("id") or call["id"]
                        function = part.get("function") or {}
                        call["function"]["name"] += function.get("name") or ""
                        call["function"]["arguments"] += function.get("arguments") or ""
            return text, [calls[index] for index in sorted(calls)]
        finally:
            with self.lock:
                self.connection = None
            connection.close()

    def run_tool(self, call: dict) -> str:
        """Runs a `bash` call's command in the current folder; returns what goes back to the model."""
        name = call["function"]["name"]
        try:
            arguments = json.loads(call["function"]["arguments"] or "{}")
        except json.JSONDecodeError as error:
            arguments = None
            result = f"error: the arguments are not JSON ({error})"
        if arguments is not None:
            command = arguments.get("command") if isinstance(arguments, dict) else None
            if name != "bash":
                result = f"error: there is no tool {name!r} (the only tool is bash)"
            elif not isinstance(command, str):
                result = "error: bash needs a `command` string"
            else:
                self.post("tool", command)
                result, printed = self.shell(command)
                cpu_cost(self.output_cost_us * printed / 1024)
                shown = result.splitlines()
                more = len(shown) - TOOL_OUTPUT_SHOWN_LINES
                shown = shown[:TOOL_OUTPUT_SHOWN_LINES] + ([f"... ({more} more lines)"] if more > 0 else [])
                self.post("output", shown)
        return result

    def shell(self, command: str) -> tuple[str, int]:
        """`/bin/sh -c COMMAND` in its own session, output (both streams) bounded in bytes and
        the whole process group bounded in time; what goes back to the model, and the bytes
        the command printed."""
        with self.lock:
            if self.cancelled.is_set():
                raise TurnCancelled()
            process = subprocess.Popen(
                ["/bin/sh", "-c", command],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
            self.process = process
        output = b""
        dropped = 0
        deadline = time.monotonic() + TOOL_TIMEOUT_SECONDS
        timed_out = False
        try:
            # Until the pipe's end of file: a background child that keeps it open is waited
            # for too, up to the deadline, then killed with the group.
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                ready, _, _ = select.select([process.stdout], [], [], left)
                if not ready:
                    continue
                data = os.read(process.stdout.fileno(), 65536)
                if not data:
                    break
                room = TOOL_OUTPUT_BYTES - len(output)
                output += data[:room]
                dropped += max(len(data) - room, 0)
        finally:
            kill_group(process)
            process.stdout.close()
            status = process.wait()
            with self.lock:
                self.process = None
        if self.cancelled.is_set():
            raise TurnCancelled()
        text = output.decode("utf-8", "replace")
        if dropped:
            text += f"\n[{dropped} more bytes of output dropped]"
        if timed_out:
            text += f"\n[killed after {TOOL_TIMEOUT_SECONDS:.0f} s]"
        elif status != 0:
            text += f"\n[exit status {status}]"
        return text, len(output) + dropped


def kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Leak:
    """DEMO_AGENT_LEAK_BYTES_PER_TURN: memory kept for ever, every page written so that it is
    resident (RSS) and private to the process (PSS)."""

    def __init__(self, bytes_per_turn: int) -> None:
        self.bytes_per_turn = bytes_per_turn
        self.kept: list[bytearray] = []

    def turn(self) -> None:
        if self.bytes_per_turn <= 0:
            return
        block = bytearray(self.bytes_per_turn)
        for offset in range(0, len(block), 4096):
            block[offset] = 1
        self.kept.append(block)


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


def last_rows(lines: list[str], cols: int, count: int) -> list[str]:
    """The last `count` rows of the body's lines wrapped at word boundaries to the
    terminal's width. Only the lines that reach the screen are wrapped, from the end: a
    frame costs the screen, not the session, so the only cost that grows with the session
    is the one a knob plants (DEMO_AGENT_KEY_COST_US_PER_TURN); wrapping the whole
    transcript every frame made a 1,000-turn session's frames 100 times dearer than its
    first ones, a slope nobody asked for."""
    wrapped: list[list[str]] = []
    total = 0
    for line in reversed(lines):
        line = line.expandtabs()
        if len(line) <= cols:
            rows = [line]
        else:
            rows = textwrap.wrap(line, cols, drop_whitespace=True, break_long_words=True, break_on_hyphens=False) or [""]
        wrapped.append(rows)
        total += len(rows)
        if total >= count:
            break
    shown = [row for rows in reversed(wrapped) for row in rows]
    return shown[-count:] if count > 0 else []


def paint(screen: Screen, title: str, lines: list[str], prompt: str, size: os.terminal_size, status: str = "") -> None:
    # A terminal that reports no size (0x0) gets the classic 80x24.
    rows, cols = size.lines or 24, size.columns or 80
    body_rows = max(rows - 4, 1)
    shown = last_rows(lines, cols, body_rows)
    frame = ["\x1b[?2026h", "\x1b[H\x1b[2J", "\x1b[7m", title[:cols].ljust(cols), "\x1b[0m"]
    for index, line in enumerate(shown):
        frame.append(f"\x1b[{index + 2};1H{line[:cols]}")
    # While a turn runs the rule says so; back to a plain rule means the turn is over.
    rule = f"-- {status} " if status else ""
    frame.append(f"\x1b[{rows - 1};1H" + (rule + "-" * cols)[:cols])
    # A prompt longer than its line (a paste) shows its end, where the cursor is.
    flat = inert(prompt.replace("\n", " "))
    text = ("> " + flat)[: cols - 1] if len(flat) + 3 <= cols else "> ..." + flat[-(cols - 6) :]
    frame.append(f"\x1b[{rows};1H{text}")
    frame.append("\x1b[?2026l")
    screen.write("".join(frame))


BUILT_IN = ("help", "echo", "env", "ping", "work")


def run_command(command: str, session: str | None) -> list[str] | None:
    """A built-in command's output, or None when the line is a chat message."""
    words = command.split()
    if not words:
        return []
    head, rest = words[0], command.partition(" ")[2]
    if head == "help":
        return ["commands: help, echo TEXT, env NAME, ping, work N, clear, exit; anything else is a chat message"]
    if head == "echo":
        return [rest]
    if head == "env" and len(words) == 2:
        value = os.environ.get(words[1])
        return [f"{words[1]} is not set" if value is None else f"{words[1]}={value}"]
    if head == "ping":
        return [ask_daemon(session, "ping")]
    if head == "work" and len(words) == 2 and words[1].isdigit():
        return [ask_daemon(session, f"work {words[1]}")]
    return None


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


class Transcript:
    """The body's lines, and where the reply being streamed starts in them."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.reply_start: int | None = None
        self.reply = ""

    def add(self, *lines: str) -> None:
        self.end_reply()
        self.lines.extend(lines)

    def stream(self, delta: str) -> None:
        if self.reply_start is None:
            self.reply_start = len(self.lines)
            self.reply = ""
        self.reply += delta
        self.lines[self.reply_start :] = inert_lines(self.reply)

    def end_reply(self) -> None:
        self.reply_start = None
        self.reply = ""


def inert_lines(text: str) -> list[str]:
    return [inert(line) for line in text.split("\n")]


SPINNER = "|/-\\"


def key_cost(microseconds: int) -> None:
    """DEMO_AGENT_KEY_COST_US_PER_TURN: computes for `microseconds` of wall time before a key
    is handled (busy, as a re-render is, not asleep)."""
    if microseconds <= 0:
        return
    until = time.perf_counter() + microseconds / 1_000_000
    while time.perf_counter() < until:
        pass


PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"


def pasted(raw: bytes, cost_us_per_kb: int) -> str:
    """A bracketed paste's text for the prompt (Latin-1, as typed keys are; carriage
    returns as the newlines they were), after DEMO_AGENT_PASTE_COST_US_PER_KB."""
    cpu_cost(cost_us_per_kb * len(raw) / 1024)
    return raw.decode("latin-1").replace("\r\n", "\n").replace("\r", "\n")


class Pastes:
    """Pastes of more than `fold_lines` lines, each shown in the prompt as a placeholder
    (0: none folded) and put back in the message when it is sent."""

    def __init__(self, fold_lines: int) -> None:
        self.fold_lines = fold_lines
        self.folded: dict[str, str] = {}

    def add(self, text: str) -> str:
        """What the prompt gets for a paste of `text`."""
        lines = text.count("\n") + 1
        if self.fold_lines <= 0 or lines <= self.fold_lines:
            return text
        placeholder = f"[Pasted text #{len(self.folded) + 1} +{lines} lines]"
        self.folded[placeholder] = text
        return placeholder

    def expand(self, message: str) -> str:
        for placeholder, text in self.folded.items():
            message = message.replace(placeholder, text)
        return message


def with_queue(status: str, waiting: list[str]) -> str:
    return f"{status}, {len(waiting)} queued" if waiting else status


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
    render_delay_ms = millis_knob("DEMO_AGENT_RENDER_DELAY_MS")
    leak_bytes = millis_knob("DEMO_AGENT_LEAK_BYTES_PER_TURN")
    work_ms = millis_knob("DEMO_AGENT_STARTUP_WORK_MS")
    key_cost_us = millis_knob("DEMO_AGENT_KEY_COST_US_PER_TURN")
    spinner_ms = millis_knob("DEMO_AGENT_IDLE_SPINNER_MS")
    output_cost_us = millis_knob("DEMO_AGENT_OUTPUT_COST_US_PER_KB")
    paste_cost_us = millis_knob("DEMO_AGENT_PASTE_COST_US_PER_KB")
    fold_lines = millis_knob("DEMO_AGENT_PASTE_FOLD_LINES")
    knobs = (delay_ms, render_delay_ms, leak_bytes, work_ms, key_cost_us, spinner_ms, output_cost_us, paste_cost_us, fold_lines)
    if any(knob is None for knob in knobs):
        return 2
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    chat = None
    model_url = os.environ.get("DEMO_AGENT_MODEL_URL", "").strip()
    if model_url:
        try:
            chat = Chat(model_url, wake_write)
            chat.output_cost_us = output_cost_us or 0
        except ValueError as error:
            print(f"demo-agent: {error}", file=sys.stderr)
            return 2
    leak = Leak(leak_bytes)
    saved = termios.tcgetattr(fd)
    screen = Screen(sys.stdout.fileno())
    screen.write("\x1b[?1049h\x1b[?2004h\x1b[H\x1b[2J")
    try:
        tty.setraw(fd)
        # A knob for seeing a regression offline: a slower start-up, same memory. It waits
        # in raw mode, so that nothing typed meanwhile is echoed by the terminal.
        time.sleep(delay_ms / 1000.0)
        # And one in CPU: N ms of this process's own CPU time, however long the machine
        # makes that take.
        until = time.process_time() + work_ms / 1000.0
        spin = 0
        while time.process_time() < until:
            spin += 1
        row, col = screen.query()
        if crash_after is not None:
            screen.write("demo-agent: starting...")
            time.sleep(crash_after)
            raise SystemExit(3)
        session = None
        if "--no-daemon" not in args:
            session = start_daemon("--daemon-ignore-sigterm" in args)
        title = f" demo-agent {version()}  session {session or 'none'}  terminal {row};{col}"
        transcript = Transcript(["Welcome to demo-agent. Type `help` and press Enter."])
        if never_ready:
            paint(screen, title, transcript.lines + ["loading the model... (this never finishes)"], "", os.get_terminal_size(fd))
            while True:
                screen.read(1.0)
        prompt = ""
        status = ""
        # Messages typed while a turn runs wait for it, in order.
        waiting: list[str] = []
        last_interrupt = 0.0
        pending = screen.pending
        # Chat turns finished: what DEMO_AGENT_KEY_COST_US_PER_TURN multiplies.
        turns_done = 0
        spinner = 0
        # A bracketed paste read so far, when its end has not arrived yet.
        paste: bytes | None = None
        pastes = Pastes(fold_lines or 0)

        def submit(message: str) -> None:
            nonlocal status
            transcript.add(f"> {message}")
            if chat is None:
                transcript.add("no model configured (set DEMO_AGENT_MODEL_URL)")
            else:
                status = "working (Ctrl-C cancels)"
                chat.start(message)

        while True:
            data, pending = pending, b""
            if paste is not None:
                paste += data
                end = paste.find(PASTE_END)
                if end < 0:
                    data = b""
                else:
                    prompt += pastes.add(pasted(paste[:end], paste_cost_us))
                    data = paste[end + len(PASTE_END) :]
                    paste = None
            index = 0
            while index < len(data):
                byte = data[index : index + 1]
                index += 1
                if byte == b"\x1b" and data.startswith(PASTE_START, index - 1):
                    rest = data[index - 1 + len(PASTE_START) :]
                    end = rest.find(PASTE_END)
                    if end < 0:
                        paste = rest
                        break
                    prompt += pastes.add(pasted(rest[:end], paste_cost_us))
                    data = rest[end + len(PASTE_END) :]
                    index = 0
                elif byte == b"\x1b":
                    # Skip an escape sequence (arrow keys and other unsolicited input).
                    while index < len(data) and not data[index : index + 1].isalpha() and data[index : index + 1] != b"~":
                        index += 1
                    index += 1
                elif byte in (b"\r", b"\n"):
                    command = pastes.expand(prompt).strip()
                    prompt = ""
                    if command in ("exit", "quit"):
                        return 0
                    if command == "clear":
                        transcript = Transcript([])
                    elif command:
                        output = run_command(command, session)
                        # Typed as Latin-1 bytes one key at a time; the model gets the UTF-8 text.
                        message = command.encode("latin-1").decode("utf-8", "replace")
                        if output is not None:
                            transcript.add(f"> {command}", *output)
                        elif chat is not None and chat.busy:
                            # Shown in the rule, not the body, so the reply being streamed
                            # stays in one piece.
                            waiting.append(message)
                        else:
                            submit(message)
                elif byte in (b"\x7f", b"\x08"):
                    key_cost(key_cost_us * turns_done)
                    prompt = prompt[:-1]
                elif byte == b"\x03":
                    now = time.monotonic()
                    if chat is not None and chat.busy and not prompt:
                        chat.cancel()
                        waiting.clear()
                    elif not prompt and now - last_interrupt < 1.0:
                        return 0
                    prompt = ""
                    last_interrupt = now
                elif byte == b"\x04" and not prompt:
                    return 0
                elif byte >= b" ":
                    key_cost(key_cost_us * turns_done)
                    prompt += byte.decode("latin-1")
            size = os.get_terminal_size(fd)
            # What the turn's worker saw, in order; each streamed chunk is drawn on its own.
            while chat is not None:
                # Keys typed meanwhile are handled before the next chunk is drawn: a stream
                # that arrives faster than it is drawn must not starve the prompt.
                if select.select([fd], [], [], 0)[0]:
                    break
                try:
                    event = chat.events.get_nowait()
                except queue.Empty:
                    break
                kind = event[0]
                if kind == "text":
                    if render_delay_ms:
                        time.sleep(render_delay_ms / 1000.0)
                    transcript.stream(event[1])
                    status = "streaming (Ctrl-C cancels)"
                    paint(screen, title, transcript.lines, prompt, size, with_queue(status, waiting))
                elif kind == "tool":
                    transcript.add(f"$ {inert(event[1])}")
                    status = "running a tool (Ctrl-C cancels)"
                elif kind == "output":
                    transcript.add(*[f"  {inert(line)}" for line in event[1]])
                    status = "working (Ctrl-C cancels)"
                elif kind == "error":
                    transcript.add(f"error: {event[1]}")
                elif kind == "done":
                    transcript.add(f"[done in {event[1]:.1f}s]")
                    leak.turn()
                    turns_done += 1
                    chat.busy = False
                    status = ""
                    if waiting:
                        submit(waiting.pop(0))
            idle = chat is None or not chat.busy
            shown_title = f"{title}  {SPINNER[spinner % len(SPINNER)]}" if spinner_ms and idle else title
            paint(screen, shown_title, transcript.lines, prompt, size, with_queue(status, waiting))
            data = b""
            # With the spinner knob, the idle prompt wakes up every N ms to redraw.
            wait = spinner_ms / 1000.0 if spinner_ms and idle else 1.0
            while not data:
                ready, _, _ = select.select([fd, wake_read], [], [], wait)
                if not ready and spinner_ms and idle:
                    spinner += 1
                    break
                # Keys first: a stream that keeps the wake-up pipe busy must not starve them.
                if fd in ready:
                    data = screen.read(0)
                if wake_read in ready:
                    try:
                        while os.read(wake_read, 4096):
                            pass
                    except BlockingIOError:
                        pass
                    break
            pending = data
    finally:
        if chat is not None and chat.busy:
            chat.cancel()
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        screen.write("\x1b[?2004l\x1b[?1049l")


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
