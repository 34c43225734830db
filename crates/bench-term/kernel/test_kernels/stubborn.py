"""Starts a child in its process group, writes the child's pid to argv[1], then ignores
shutdown requests, stdin closing and SIGTERM."""
import signal
import subprocess
import sys
import time
from common import ready

signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "300"])
with open(sys.argv[1], "w") as stream:
    stream.write(str(child.pid))
ready()
while True:
    time.sleep(1)
