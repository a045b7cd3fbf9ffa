#!/usr/bin/env python3
# test_rooms.py - the kernels' rooms include one way only (README.md,
# "Layout"): every #include "x.h" in core/, kernels/, render/ and device/
# that names a header of another room must follow an allowed arrow:
#   device -> render, kernels, core;  render -> core;  kernels -> core;
#   core -> none of them.
# Usage: test_rooms.py SOURCE_ROOT. TAP output, one check per room.
import os
import re
import sys

ALLOWED = {
    'core': set(),
    'kernels': {'core'},
    'render': {'core'},
    'device': {'render', 'kernels', 'core'},
}
SUFFIXES = ('.c', '.h', '.cu', '.cuh', '.cc')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    headers = {}
    for room in ALLOWED:
        for name in os.listdir(os.path.join(root, room)):
            headers.setdefault(name, set()).add(room)
    print('1..%d' % len(ALLOWED))
    failed = 0
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for n, room in enumerate(ALLOWED, 1):
        bad = []
        folder = os.path.join(root, room)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(SUFFIXES):
                continue
            with open(os.path.join(folder, name), encoding='utf-8', errors='replace') as f:
                for lineno, line in enumerate(f, 1):
                    m = inc.match(line)
                    if not m:
                        continue
                    owners = headers.get(os.path.basename(m.group(1)), set())
                    if room in owners or not owners:
                        continue
                    wrong = owners - ALLOWED[room]
                    if wrong:
                        bad.append('%s/%s:%d includes %s (room %s)' % (room, name, lineno, m.group(1),
                                                                      ', '.join(sorted(wrong))))
        if bad:
            failed += 1
            print('not ok %d - %s/ includes only %s' % (n, room, ', '.join(sorted(ALLOWED[room])) or 'common/'))
            for b in bad:
                print('# ' + b)
        else:
            print('ok %d - %s/ includes only %s' % (n, room, ', '.join(sorted(ALLOWED[room])) or 'common/'))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
