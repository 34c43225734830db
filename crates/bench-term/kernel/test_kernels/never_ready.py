"""Never sends `ready`, and ignores stdin closing."""
import time

time.sleep(3600)
