"""Reads requests and never answers them."""
from common import ready, requests

ready()
for request in requests():
    pass
