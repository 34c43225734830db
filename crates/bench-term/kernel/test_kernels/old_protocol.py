"""Announces protocol 2."""
from common import send

send({"event": "ready", "protocol": 2, "python": "3.0.0-test"})
input()
