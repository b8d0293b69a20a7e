"""Never announces itself (for the RefServer startup timeout test)."""
import sys
import time

print("starting, but never ready", file=sys.stderr, flush=True)
time.sleep(60)
