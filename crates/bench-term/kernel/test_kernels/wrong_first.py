"""Prints output before the handshake."""
from common import ready, send

send({"event": "stdout", "id": None, "text": "banner\n"})
ready()
input()
