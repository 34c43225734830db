"""Streams bytes without a newline, 16 KiB a millisecond for 20 s at most, and never
sends `ready`: a reader that waits for a line (or for the pipe to fall silent) never
times out. Writes `$HOME/stream-ended` when it stops streaming."""
import os
import sys
import time

chunk = "x" * (16 << 10)
end = time.monotonic() + 20
while time.monotonic() < end:
    sys.stdout.write(chunk)
    sys.stdout.flush()
    time.sleep(0.001)
open(os.path.join(os.environ["HOME"], "stream-ended"), "w").close()
