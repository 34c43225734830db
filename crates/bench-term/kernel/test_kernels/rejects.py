"""Answers every request with a ProtocolError that names no request, as a kernel does for a
request line it cannot read; never sends `done`."""
from common import ready, requests, send

ready()
for request in requests():
    send({"event": "error", "id": None, "ename": "ProtocolError",
          "evalue": "cannot read the request", "traceback": []})
