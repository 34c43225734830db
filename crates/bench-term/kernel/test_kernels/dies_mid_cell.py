"""Starts the cell, says something on stderr, then exits with status 3."""
import sys
from common import ready, requests, send

ready()
for request in requests():
    send({"event": "stdout", "id": request["id"], "text": "starting\n"})
    sys.stderr.write("fatal: kernel fell over\n")
    sys.stderr.flush()
    sys.exit(3)
