#!/usr/bin/env python3
"""Packs demo-agent's release artifact: dist/demo-agent-VERSION.tar.gz.

The archive is reproducible (sorted entries, fixed owner and times, gzip without a
timestamp), so the same source always gives the same bytes and the same SHA-256.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import tarfile

FILES = ("demo_agent.py", "kernel.py", "VERSION")
EXECUTABLE = ("demo_agent.py",)


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "VERSION")) as stream:
        version = stream.read().strip()
    out = os.path.join(here, "dist")
    os.makedirs(out, exist_ok=True)
    missing = [name for name in FILES if not os.path.isfile(os.path.join(here, name))]
    if missing:
        print(f"build.py: missing source files: {', '.join(missing)}", file=sys.stderr)
        return 1
    prefix = f"demo-agent-{version}"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name in sorted(FILES):
            with open(os.path.join(here, name), "rb") as stream:
                data = stream.read()
            info = tarfile.TarInfo(f"{prefix}/{name}")
            info.size = len(data)
            info.mode = 0o755 if name in EXECUTABLE else 0o644
            info.mtime = 946684800
            info.uname = info.gname = "root"
            archive.addfile(info, io.BytesIO(data))
    target = os.path.join(out, f"{prefix}.tar.gz")
    with open(target, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
        packed.write(buffer.getvalue())
    print(f"built {os.path.relpath(target, here)} ({os.path.getsize(target)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
