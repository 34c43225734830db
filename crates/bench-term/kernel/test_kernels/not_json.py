"""Answers the first request with a line that is not JSON."""
from common import ready, requests
import sys

ready()
for request in requests():
    sys.stdout.write("Traceback (most recent call last): oops\n")
    sys.stdout.flush()
