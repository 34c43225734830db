#!/usr/bin/env python3
"""clibench reference kernel: the REPL kernel wire protocol, version 3, over stdio.

Python 3 standard library only (dill is used for snapshots when importable).
Run it as `python3 reference_kernel.py`; requests arrive as JSON lines on stdin,
events leave as JSON lines on stdout. See docs/kernel-protocol.md for the protocol.

How it is built:
- The protocol goes out on a duplicate of the original stdout. File descriptors
  1 and 2 are redirected to pipes read by two threads, so raw writes (child
  processes, C code, os.write) become `stdout`/`stderr` events with `id: null`
  and never corrupt the framing. fd 0 is replaced by /dev/null, so that cells
  and their children cannot read the request stream.
- A reader thread parses requests. `interrupt` and `host_reply` are handled on
  that thread; every other request is queued to the asyncio loop in the main
  thread, which runs them one at a time.
- Cells run on one persistent asyncio loop in one `__main__` namespace and may
  use top-level `await` (compiled with `ast.PyCF_ALLOW_TOP_LEVEL_AWAIT`).
- `interrupt` sends SIGINT to the main thread. The handler raises
  KeyboardInterrupt when the cell is running Python code, and cancels the
  cell's task when the cell is suspended in an `await`; either way the cell
  ends with a KeyboardInterrupt `error` event and `done` with status `error`.
  An interrupt that arrives right behind an `execute`, before that cell
  started, is kept for it: the cell ends the same way without running.
- Like a real kernel, it sends `ready` as soon as it can serve and loads
  optional libraries when first needed: the snapshot serializer (dill, when
  importable) is imported by the first `snapshot` or `restore`, so neither
  `kernel_start` nor `kernel_rss` pays for it.
"""

import ast
import asyncio
import builtins
import codecs
import importlib
import importlib.util
import itertools
import json
import linecache
import os
import pickle
import platform
import select
import signal
import socket
import sys
import threading
import time
import traceback
import types

PROTOCOL = 3
KERNEL_FILE = os.path.abspath(__file__) if "__file__" in globals() else "<kernel>"
SNAPSHOT_FORMAT = "clibench-reference-kernel-snapshot"

_SERIALIZER = None


def serializer():
    """(name, module) of the snapshot serializer, imported on first use: dill pickles
    more (lambdas, closures) and is preferred when importable; plain pickle otherwise."""
    global _SERIALIZER
    if _SERIALIZER is None:
        try:
            import dill

            _SERIALIZER = ("dill", dill)
        except ImportError:  # pragma: no cover - depends on the machine
            _SERIALIZER = ("pickle", pickle)
    return _SERIALIZER


def write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_file_atomic(path, data):
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    try:
        directory = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError:
        pass


class Wire:
    """Writes events, one JSON object per line, on the protocol descriptor."""

    def __init__(self, fd):
        self.fd = fd
        self.lock = threading.Lock()

    def send(self, event):
        line = json.dumps(event, ensure_ascii=True, separators=(",", ":"), default=repr)
        with self.lock:
            write_all(self.fd, line.encode("ascii") + b"\n")


class RawForwarder:
    """Forwards what is written to a file descriptor as events with `id: null`."""

    def __init__(self, wire, target_fd, event):
        self.wire = wire
        self.event = event
        self.lock = threading.Lock()
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        os.dup2(write_fd, target_fd)
        os.close(write_fd)
        self.read_fd = read_fd
        threading.Thread(target=self.run, name=f"forward-{event}", daemon=True).start()

    def run(self):
        while True:
            select.select([self.read_fd], [], [])
            if not self.drain():
                return

    def drain(self):
        """Reads what the pipe holds right now; False at end of file."""
        with self.lock:
            chunks = []
            open_ = True
            while True:
                try:
                    data = os.read(self.read_fd, 65536)
                except BlockingIOError:
                    break
                if not data:
                    open_ = False
                    break
                chunks.append(data)
            if chunks:
                text = self.decoder.decode(b"".join(chunks))
                if text:
                    self.wire.send({"event": self.event, "id": None, "text": text})
            return open_


class CellStream:
    """`sys.stdout`/`sys.stderr` while the kernel runs: text becomes events of the current request."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, kernel, event, fd):
        self.kernel = kernel
        self.event = event
        self.fd = fd
        self.parts = []
        self.size = 0
        self.scheduled = False

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not text:
            return 0
        kernel = self.kernel
        if threading.get_ident() != kernel.main_ident:
            kernel.wire.send({"event": self.event, "id": kernel.current_id, "text": text})
            return len(text)
        self.parts.append(text)
        self.size += len(text)
        if "\n" in text or self.size >= 65536:
            self.flush()
        elif not self.scheduled:
            # Text without a newline is sent as soon as the cell yields to the loop.
            self.scheduled = True
            kernel.loop.call_soon(self.flush)
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        self.scheduled = False
        if self.parts:
            text = "".join(self.parts)
            self.parts.clear()
            self.size = 0
            self.kernel.wire.send({"event": self.event, "id": self.kernel.current_id, "text": text})

    def fileno(self):
        return self.fd

    def isatty(self):
        return False

    def readable(self):
        return False

    def writable(self):
        return True

    def seekable(self):
        return False

    @property
    def closed(self):
        return False

    def close(self):
        pass


class BashResult:
    """What `await bash(command)` returns: the exit code and the captured output (stdout and stderr merged)."""

    def __init__(self, command, exit_code, output):
        self.command = command
        self.exit_code = exit_code
        self.output = output

    @property
    def returncode(self):
        return self.exit_code

    @property
    def stdout(self):
        return self.output

    @property
    def ok(self):
        return self.exit_code == 0

    def __str__(self):
        return self.output

    def __repr__(self):
        shown = self.output if len(self.output) <= 200 else self.output[:200] + "..."
        return f"BashResult(exit_code={self.exit_code!r}, output={shown!r})"


class Kernel:
    def __init__(self):
        self.protocol_fd = os.dup(1)
        self.diagnostic_fd = os.dup(2)
        self.request_fd = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        self.wire = Wire(self.protocol_fd)
        self.forwarders = [RawForwarder(self.wire, 1, "stdout"), RawForwarder(self.wire, 2, "stderr")]
        self.main_ident = threading.get_ident()
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.queue = asyncio.Queue()
        self.current_id = None
        self.cell_task = None
        self.serve_task = None
        self.interrupted_tasks = set()
        # Ids of requests accepted by the reader thread and not yet started, and those of
        # them an interrupt arrived for; both guarded by state_lock with cell_task.
        self.state_lock = threading.Lock()
        self.queued_ids = []
        self.interrupt_queued = set()
        self.host_waiters = {}
        self.host_ids = itertools.count(1)
        self.cell_numbers = itertools.count(1)
        self.children = set()
        self.spawning = 0
        self.shutting_down = False
        self.stdout = CellStream(self, "stdout", 1)
        self.stderr = CellStream(self, "stderr", 2)
        sys.stdout = self.stdout
        sys.stderr = self.stderr
        sys.stdin = open(os.devnull)
        self.helpers = {"bash": self.bash, "display": self.display, "host": self.host}
        self.namespace = self.fresh_namespace()
        self.install_rlm_module()
        signal.signal(signal.SIGINT, self.on_sigint)
        # A SIGINT that arrives just before the loop blocks in select() would only be
        # handled when select() returns, up to the 60 s of a sleeping cell later. The
        # C-level handler writes to this socket, which wakes the loop, and Python then
        # runs on_sigint.
        self.wakeup_reader, wakeup_writer = socket.socketpair()
        self.wakeup_reader.setblocking(False)
        wakeup_writer.setblocking(False)
        self.wakeup_writer = wakeup_writer
        self.loop.add_reader(self.wakeup_reader.fileno(), self.drain_wakeups)
        signal.set_wakeup_fd(wakeup_writer.fileno(), warn_on_full_buffer=False)

    # The namespace -------------------------------------------------------

    def fresh_namespace(self):
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = builtins
        main.__dict__.update(self.helpers)
        sys.modules["__main__"] = main
        return main.__dict__

    def install_rlm_module(self):
        # `from rlm import bash` is how cells of the prime-agent runtime get the helper;
        # make it work here too, unless a real `rlm` package is importable.
        if importlib.util.find_spec("rlm") is None:
            module = types.ModuleType("rlm")
            module.__dict__.update(self.helpers)
            sys.modules["rlm"] = module

    def user_names(self):
        for name, value in self.namespace.items():
            if name.startswith("_"):
                continue
            if name in self.helpers and value is self.helpers[name]:
                continue
            yield name, value

    # Helpers given to cells ----------------------------------------------

    async def bash(self, command, timeout=None, cwd=None):
        """Runs `command` with bash; returns a BashResult (exit code, merged stdout and stderr)."""
        shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        # A KeyboardInterrupt raised inside subprocess.Popen would orphan the child;
        # while spawning, an interrupt cancels the task instead (see on_sigint).
        self.spawning += 1
        try:
            process = await asyncio.create_subprocess_exec(
                shell,
                "-c",
                command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=cwd,
            )
        finally:
            self.spawning -= 1
        self.children.add(process)
        try:
            if timeout is None:
                output, _ = await process.communicate()
            else:
                output, _ = await asyncio.wait_for(process.communicate(), timeout)
        finally:
            if process.returncode is None:
                try:
                    process.kill()
                except ProcessLookupError:
                    pass
                await process.wait()
            self.children.discard(process)
        return BashResult(command, process.returncode, output.decode("utf-8", errors="replace"))

    def display(self, value):
        """Sends `value` as a `display` event with a text/plain representation."""
        self.stdout.flush()
        self.wire.send({"event": "display", "id": self.current_id, "data": {"text/plain": repr(value)}})

    async def host(self, data):
        """Asks the client something: sends a `host_request` and waits for its `host_reply`."""
        request_id = f"h{next(self.host_ids)}"
        future = self.loop.create_future()
        self.host_waiters[request_id] = future
        self.stdout.flush()
        self.wire.send({"event": "host_request", "id": request_id, "data": data})
        try:
            return await future
        finally:
            self.host_waiters.pop(request_id, None)

    # Requests ------------------------------------------------------------

    def read_requests(self):
        with os.fdopen(self.request_fd, "rb", buffering=65536) as stream:
            for raw in stream:
                self.accept(raw)
        # End of file on stdin means shutdown; a running cell is interrupted first.
        self.interrupt(None)
        self.loop.call_soon_threadsafe(self.queue.put_nowait, {"type": "shutdown"})

    def protocol_error(self, message, request_id=None):
        self.wire.send(
            {"event": "error", "id": request_id, "ename": "ProtocolError", "evalue": message, "traceback": []}
        )

    def accept(self, raw):
        try:
            request = json.loads(raw)
        except ValueError as error:
            text = raw.decode("utf-8", errors="replace").rstrip("\n")
            self.protocol_error(f"request is not JSON ({error}): {text[:200]}")
            return
        if not isinstance(request, dict) or not isinstance(request.get("type"), str):
            self.protocol_error(f"request is not an object with a string `type`: {raw[:200]!r}")
            return
        kind = request["type"]
        if kind == "interrupt":
            self.interrupt(request.get("id"))
        elif kind == "host_reply":
            self.loop.call_soon_threadsafe(self.resolve_host, request.get("id"), request.get("data"))
        elif kind != "shutdown" and not isinstance(request.get("id"), str):
            self.protocol_error(f"`{kind}` request without a string `id`")
        else:
            if kind != "shutdown":
                with self.state_lock:
                    self.queued_ids.append(request["id"])
            self.loop.call_soon_threadsafe(self.queue.put_nowait, request)

    def resolve_host(self, request_id, data):
        future = self.host_waiters.get(request_id)
        if future is not None and not future.done():
            future.set_result(data)

    def interrupt(self, request_id):
        with self.state_lock:
            if self.cell_task is not None and request_id in (None, self.current_id):
                signal.pthread_kill(self.main_ident, signal.SIGINT)
                return
            # No cell runs yet: the interrupt is for the request that is about to start
            # (it may have arrived right behind its `execute`), or for the one it names.
            waiting = [self.current_id] if self.current_id is not None else []
            waiting += self.queued_ids
            if request_id is None and waiting:
                self.interrupt_queued.add(waiting[0])
            elif request_id in waiting:
                self.interrupt_queued.add(request_id)

    def on_sigint(self, signum, frame):
        task = self.cell_task
        if task is None or task.done():
            return
        current = asyncio.current_task(self.loop)
        if current is not None and current is not self.serve_task and not self.spawning:
            # Python code of a task is running (a busy loop, a blocking call):
            # raise right there.
            raise KeyboardInterrupt
        # The cell is suspended in an `await`: cancel its task, and report the
        # cancellation as a KeyboardInterrupt.
        self.interrupted_tasks.add(task)
        self.loop.call_soon_threadsafe(self.cancel_cell, task)

    def drain_wakeups(self):
        try:
            while self.wakeup_reader.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def cancel_cell(self, task):
        if task is self.cell_task and not task.done():
            task.cancel()

    async def serve(self):
        while True:
            request = await self.queue.get()
            kind = request["type"]
            request_id = request.get("id")
            if kind == "shutdown":
                await self.shutdown(request_id)
                return
            handler = {
                "execute": self.execute,
                "snapshot": self.snapshot,
                "restore": self.restore,
                "list_names": self.list_names,
            }.get(kind)
            with self.state_lock:
                if request_id in self.queued_ids:
                    self.queued_ids.remove(request_id)
                self.current_id = request_id
            try:
                if handler is None:
                    self.protocol_error(f"unknown request type `{kind}`", request_id)
                    extras = {"status": "error"}
                else:
                    extras = await handler(request)
            except BaseException as error:  # a bug or a late interrupt must not stop the kernel
                self.send_error(request_id, error)
                extras = {"status": "error", "reason": f"{type(error).__name__}: {error}"}
            finally:
                self.stdout.flush()
                self.stderr.flush()
                for forwarder in self.forwarders:
                    forwarder.drain()
                with self.state_lock:
                    self.current_id = None
                    self.interrupt_queued.discard(request_id)
            self.wire.send({"event": "done", "id": request_id, **extras})

    def send_error(self, request_id, error):
        tb = error.__traceback__
        # Leave out the kernel's own frames: the traceback starts in the cell.
        while tb is not None and tb.tb_frame.f_code.co_filename == KERNEL_FILE:
            tb = tb.tb_next
        lines = traceback.format_exception(type(error), error, tb)
        self.stdout.flush()
        self.stderr.flush()
        self.wire.send(
            {
                "event": "error",
                "id": request_id,
                "ename": type(error).__name__,
                "evalue": str(error),
                "traceback": "".join(lines).rstrip("\n").split("\n"),
            }
        )

    # execute -------------------------------------------------------------

    async def execute(self, request):
        code = request.get("code")
        if not isinstance(code, str):
            self.protocol_error("`execute` request without a string `code`", request["id"])
            return {"status": "error"}
        with self.state_lock:
            if request["id"] in self.interrupt_queued:
                # Interrupted before it started: it ends as if interrupted at once.
                self.send_error(request["id"], KeyboardInterrupt())
                return {"status": "error"}
            self.cell_task = self.loop.create_task(self.run_cell(request["id"], code))
        task = self.cell_task
        try:
            return await task
        except asyncio.CancelledError:
            # Cancelled by an interrupt before its first step, so run_cell could not
            # turn the cancellation into a KeyboardInterrupt itself.
            if task not in self.interrupted_tasks:
                raise
            self.send_error(request["id"], KeyboardInterrupt())
            return {"status": "error"}
        finally:
            with self.state_lock:
                self.interrupted_tasks.discard(task)
                self.cell_task = None

    async def run_cell(self, request_id, code):
        filename = f"<cell-{next(self.cell_numbers)}>"
        try:
            try:
                body, last = self.compile_cell(code, filename)
                value = eval(body, self.namespace)
                if isinstance(value, types.CoroutineType):
                    await value
                if last is not None:
                    value = eval(last, self.namespace)
                    if isinstance(value, types.CoroutineType):
                        value = await value
                    if value is not None:
                        self.namespace["_"] = value
                        self.stdout.flush()
                        self.wire.send({"event": "result", "id": request_id, "text": repr(value)})
            except asyncio.CancelledError as error:
                if asyncio.current_task(self.loop) not in self.interrupted_tasks:
                    raise
                task = asyncio.current_task(self.loop)
                if hasattr(task, "uncancel"):  # Python 3.11 and later
                    task.uncancel()
                raise KeyboardInterrupt() from None
        except (Exception, KeyboardInterrupt, asyncio.CancelledError) as error:
            self.send_error(request_id, error)
            return {"status": "error"}
        except SystemExit as error:
            self.send_error(request_id, error)
            return {"status": "error"}
        return {"status": "ok"}

    def compile_cell(self, code, filename):
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        tree = ast.parse(code, filename, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            expression = ast.Expression(tree.body.pop().value)
            last = compile(expression, filename, "eval", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        body = compile(tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        return body, last

    # snapshot, restore, list_names ----------------------------------------

    async def snapshot(self, request):
        path = request.get("path")
        manifest_path = request.get("manifest_path")
        if not isinstance(path, str) or not isinstance(manifest_path, str):
            self.protocol_error("`snapshot` needs string `path` and `manifest_path`", request["id"])
            return {"status": "error", "reason": "missing path or manifest_path"}
        max_bytes = request.get("max_bytes")
        max_variable_bytes = request.get("max_variable_bytes")
        prune = bool(request.get("prune_oversized", False))
        entries = {}
        sizes = {}
        skipped = []
        pruned = []
        reasons = {}
        for name, value in sorted(self.user_names()):
            if isinstance(value, types.ModuleType):
                entries[name] = ("module", value.__name__)
                sizes[name] = 0
                continue
            try:
                blob = serializer()[1].dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as error:
                skipped.append(name)
                reasons[name] = f"{type(error).__name__}: {error}"
                continue
            if max_variable_bytes is not None and len(blob) > max_variable_bytes:
                if prune:
                    pruned.append(name)
                else:
                    skipped.append(name)
                    reasons[name] = f"{len(blob)} bytes is over max_variable_bytes {max_variable_bytes}"
                continue
            entries[name] = ("value", blob)
            sizes[name] = len(blob)

        def encode():
            return pickle.dumps(
                {"format": SNAPSHOT_FORMAT, "version": 1, "serializer": serializer()[0], "entries": entries},
                protocol=pickle.HIGHEST_PROTOCOL,
            )

        payload = encode()
        if max_bytes is not None and len(payload) > max_bytes:
            if not prune:
                return {
                    "status": "error",
                    "saved": [],
                    "skipped": skipped,
                    "pruned": pruned,
                    "bytes": 0,
                    "reason": f"snapshot of {len(payload)} bytes is over max_bytes {max_bytes}",
                }
            # Drop the largest values until the payload fits.
            for name in sorted(sizes, key=lambda n: sizes[n], reverse=True):
                if len(payload) <= max_bytes:
                    break
                del entries[name]
                pruned.append(name)
                payload = encode()
        saved = sorted(entries)
        manifest = {
            "format": SNAPSHOT_FORMAT,
            "version": 1,
            "serializer": serializer()[0],
            "python": platform.python_version(),
            "created_unix_seconds": time.time(),
            "path": path,
            "bytes": len(payload),
            "saved": saved,
            "skipped": skipped,
            "pruned": sorted(pruned),
            "reasons": reasons,
            "modules": {name: entry[1] for name, entry in entries.items() if entry[0] == "module"},
        }
        write_file_atomic(path, payload)
        write_file_atomic(manifest_path, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
        return {
            "status": "ok",
            "saved": saved,
            "skipped": skipped,
            "pruned": sorted(pruned),
            "bytes": len(payload),
            "reasons": reasons,
        }

    async def restore(self, request):
        path = request.get("path")
        if not isinstance(path, str):
            self.protocol_error("`restore` needs a string `path`", request["id"])
            return {"status": "error", "restored": [], "failed": [], "reason": "missing path"}
        if not os.path.exists(path):
            return {"status": "ok", "restored": [], "failed": [], "reason": f"no snapshot at {path}"}
        try:
            with open(path, "rb") as stream:
                payload = pickle.load(stream)
            if not isinstance(payload, dict) or payload.get("format") != SNAPSHOT_FORMAT:
                raise ValueError("not a snapshot written by this kernel")
            entries = payload["entries"]
            serializer = pickle
            if payload.get("serializer") == "dill":
                import dill as serializer  # noqa: F811 - loaded when first needed
        except Exception as error:
            return {"status": "error", "restored": [], "failed": [], "reason": f"{type(error).__name__}: {error}"}
        restored = []
        failed = []
        reasons = {}
        for name, (kind, data) in entries.items():
            try:
                value = importlib.import_module(data) if kind == "module" else serializer.loads(data)
            except Exception as error:
                failed.append(name)
                reasons[name] = f"{type(error).__name__}: {error}"
                continue
            self.namespace[name] = value
            restored.append(name)
        reply = {"status": "ok", "restored": sorted(restored), "failed": sorted(failed)}
        if failed:
            reply["reason"] = "; ".join(f"{name}: {reasons[name]}" for name in sorted(failed))
        return reply

    async def list_names(self, request):
        return {"status": "ok", "names": sorted(name for name, _ in self.user_names())}

    # shutdown ------------------------------------------------------------

    async def shutdown(self, request_id):
        self.shutting_down = True
        self.kill_children()
        if request_id is not None:
            self.stdout.flush()
            self.stderr.flush()
            for forwarder in self.forwarders:
                forwarder.drain()
            self.wire.send({"event": "done", "id": request_id, "status": "ok"})

    def kill_children(self):
        """Stops every descendant process: SIGTERM, a short grace period, then SIGKILL;
        reaps the kernel's own children."""
        for sig, grace in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 1.0)):
            for pid, _, zombie in descendants(os.getpid()):
                if zombie:
                    continue
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + grace
            while True:
                reap()
                # Done when nothing runs and no child of ours waits to be reaped.
                left = [
                    pid
                    for pid, parent, zombie in descendants(os.getpid())
                    if not zombie or parent == os.getpid()
                ]
                if not left:
                    return
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.005)

    def run(self):
        threading.Thread(target=self.read_requests, name="requests", daemon=True).start()
        self.wire.send({"event": "ready", "protocol": PROTOCOL, "python": platform.python_version()})
        self.serve_task = self.loop.create_task(self.serve())
        while not self.serve_task.done():
            try:
                self.loop.run_until_complete(self.serve_task)
            except KeyboardInterrupt:
                # A task the cell started was interrupted while running; the
                # cell awaiting it sees the KeyboardInterrupt. Keep serving.
                continue
        self.serve_task.result()  # re-raises what stopped serving, if anything


def descendants(root):
    """(pid, parent pid, is zombie) of every descendant of `root`, read from /proc."""
    children = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stream:
                stat = stream.read().decode("utf-8", errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) < 2:
            continue
        parent = int(fields[1])
        children.setdefault(parent, []).append((int(entry), parent, fields[0] == "Z"))
    found = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child[0])
    return found


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main():
    # The request thread needs the GIL to parse an `interrupt` while a cell spins in
    # Python code; the default 5 ms switch interval would add up to 5 ms to every
    # interrupt. Threads other than the cell's are idle almost always, so this costs
    # nothing measurable otherwise.
    sys.setswitchinterval(0.0005)
    kernel = Kernel()
    try:
        kernel.run()
    except BaseException:
        write_all(kernel.diagnostic_fd, traceback.format_exc().encode("utf-8", errors="replace"))
        os._exit(1)
    os._exit(0)


if __name__ == "__main__":
    main()
