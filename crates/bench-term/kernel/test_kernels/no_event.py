"""Answers the first request with an object that has no `event` field."""
from common import ready, requests, send

ready()
for request in requests():
    send({"id": request["id"], "text": "hello"})
