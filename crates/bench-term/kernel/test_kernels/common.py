"""Helpers shared by the misbehaving test kernels."""
import json
import sys


def send(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def ready():
    send({"event": "ready", "protocol": 3, "python": "3.0.0-test"})


def requests():
    for line in sys.stdin:
        yield json.loads(line)
