"""Answers with a `done` for a request id nobody sent."""
from common import ready, requests, send

ready()
for request in requests():
    send({"event": "done", "id": "999", "status": "ok"})
