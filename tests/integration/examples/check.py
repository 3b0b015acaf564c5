"""check.py NAME SAMPLE ACTUAL - runs tests/integration/examples/NAME.py's
check() on the sample tickets and the runner's ACTUAL document; prints what
it checked, exits 1 with the reason when the content is wrong."""
import importlib
import json
import sys
import traceback

name, sample, actual = sys.argv[1:4]
tickets = [json.loads(l) for l in open(sample) if l.strip()]
got = json.load(open(actual))
try:
    print(importlib.import_module(name).check(tickets, got))
except AssertionError as e:
    traceback.print_exc(limit=1)
    print("%s: the content is not what the example promises: %s" % (name, str(e)[:2000]))
    sys.exit(1)
