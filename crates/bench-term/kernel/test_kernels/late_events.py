"""Answers each request with `done`, then sends one more stdout event of that request."""
from common import ready, requests, send

ready()
for request in requests():
    send({"event": "done", "id": request["id"], "status": "ok"})
    send({"event": "stdout", "id": request["id"], "text": "late\n"})
