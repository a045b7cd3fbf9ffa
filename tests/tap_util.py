"""tap_util.py - TAP output for the tests written in Python (the web
page's through web_testutil.py, test_scene_tool.py, test_eval_tool.py):
one check per line, skips, diagnostics, a skip of the whole file, and the
plan line with the exit status at the end. Standard library only;
Debian's python3."""
import sys

_count = 0
_failed = 0


def check(ok, what):
    """One TAP check (what on one line); returns ok."""
    global _count, _failed
    _count += 1
    if not ok:
        _failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", _count, " | ".join(str(what).splitlines())), flush=True)
    return bool(ok)


def skip(why):
    global _count
    _count += 1
    print("ok %d # SKIP %s" % (_count, why), flush=True)


def diag(text):
    for line in str(text).splitlines():
        print("# " + line, flush=True)


def skip_all(why):
    """Nothing to run here (a missing tool): the plan 1..0 with the reason."""
    print("1..0 # SKIP %s" % why, flush=True)
    sys.exit(0)


def done():
    """The plan line; exits 1 if a check failed."""
    print("1..%d" % _count, flush=True)
    sys.exit(1 if _failed else 0)
