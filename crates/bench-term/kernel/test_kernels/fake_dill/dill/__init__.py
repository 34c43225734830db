"""A stand-in for dill (its dumps/loads are pickle's), so the reference kernel's
dill branch is tested where dill is not installed. Put its parent folder on
PYTHONPATH."""

from pickle import HIGHEST_PROTOCOL, dumps, loads  # noqa: F401
