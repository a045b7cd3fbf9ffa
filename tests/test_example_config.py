#!/usr/bin/python3
"""test_example_config.py - the shipped example configuration
rig/examples/stadium5.conf (what tools/run-main runs) against the real
panocap, so that it cannot rot:

  - `--check-config` accepts it, started where its relative paths lead (the
    repository's top: here a folder with `rig` linked to the source's),
    and prints the stitched size from the .pto and its virtual camera;
  - started elsewhere it is refused (exit 78) naming panorama.rig: relative
    paths resolve against the working folder, as the file says;
  - a short run on the fake cameras showing the stadium, reduced as run-main
    reduces it on a CPU (10 fps, bilinear, a 640 wide panorama, a 640x360
    view, a short scene loop): the web page of the file answers with the
    view in follow mode, it stops on SIGTERM once 10 frame sets were in (an
    event: a --duration could end before a busy machine got there; --duration
    itself is daemon-e2e-signals'), the panorama file decodes (ffprobe, every packet
    decoded) at the stitched size the .pto's crop gives for that width, with
    as many frames as the summary says were encoded; the view's file
    likewise at 640x360.
Usage: test_example_config.py PANOCAP SRCDIR"""
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from web_testutil import (Daemon, check, diag, done, free_port, get_json, probe_video, sanitized, skip_all,  # noqa: E402
                          tmpdir, wait_for)

if len(sys.argv) < 3:
    skip_all("usage: test_example_config.py PANOCAP SRCDIR")
if not shutil.which("ffprobe"):
    skip_all("ffprobe not installed (Debian package ffmpeg; tools/install-deps installs it)")
EXE = os.path.abspath(sys.argv[1])
SRC = os.path.abspath(sys.argv[2])
CONF = "rig/examples/stadium5.conf"
PTO = os.path.join(SRC, "rig", "examples", "stadium5.pto")
DIR = tmpdir("example-config")
os.symlink(os.path.join(SRC, "rig"), os.path.join(DIR, "rig"))
SLOW = 4 if sanitized() else 1


def run(args, cwd):
    p = subprocess.run([EXE] + args, cwd=cwd, capture_output=True, text=True, timeout=60 * SLOW)
    return p.returncode, p.stdout, p.stderr


def pto_crop_size():
    """The .pto's output size after its crop (p line: S l,r,t,b)."""
    with open(PTO) as f:
        for line in f:
            if line.startswith("p "):
                m = re.search(r"\bS(\d+),(\d+),(\d+),(\d+)", line)
                l, r, t, b = map(int, m.groups())
                return r - l, b - t
    raise RuntimeError("no p line in " + PTO)


# --- the check ------------------------------------------------------------------

ow, oh = pto_crop_size()
rc, out, err = run(["--config", CONF, "--check-config"], DIR)
check(rc == 0 and re.search(r"^%s: OK \(" % re.escape(CONF), out, re.M),
      "--check-config accepts %s (exit %d: %s%s)" % (CONF, rc, out.strip(), err.strip()))
check("panorama %dx%d stitched from rig/examples/stadium5.pto" % (ow // 2 * 2, oh) in out,
      "it prints the stitched size, the .pto's crop %dx%d (even width): %s" % (ow, oh, out.strip()))
check("virtual camera: main 1280x720 follow" in out, "it names the view: main 1280x720 follow")
# the capacity warning (issue 29) says what this machine's cores hold: it
# depends on the machine by design, not on the file
other = "\n".join(l for l in err.splitlines() if "warning: encode: capacity:" not in l)
check("warning" not in other, "no warnings (nothing clamped, nothing ignored; the machine's capacity "
      "warning aside)%s" % (": " + other.strip() if other.strip() else ""))

elsewhere = tmpdir("example-config-elsewhere")
rc, out, err = run(["--config", os.path.join(DIR, CONF), "--check-config"], elsewhere)
check(rc == 78 and re.search(r"stadium5\.conf:\d+: error: panorama\.rig: rig/examples/stadium5\.pto: cannot open", err),
      "started in another folder: exit 78 naming panorama.rig (relative to the working folder) (exit %d: %s)"
      % (rc, err.strip().splitlines()[0] if err.strip() else ""))

# --- a short run --------------------------------------------------------------------

WIDTH = 640
expect_h = int(math.floor(WIDTH * oh / ow / 2 + 0.5)) * 2
port = free_port()
d = Daemon(EXE, DIR, "run", ["--config", CONF, "--stats-interval", "0",
                             "-s", "capture.fps=10", "--algo", "bilinear", "-s", "capture.scene_seconds=1",
                             "-s", "panorama.width=%d" % WIDTH, "-s", "virtual_cameras[0].width=640",
                             "-s", "virtual_cameras[0].height=360", "-s", "daemon.http_listen=127.0.0.1:%d" % port],
           port=port)
ready = d.wait_ready(90 * SLOW)
check(ready, "the daemon runs the example and its web page answers /healthz on 127.0.0.1:%d" % port)
if ready:
    st = get_json(port, "/api/status") or {}
    views = st.get("views") or []
    check(len(views) == 1 and views[0].get("name") == "main" and views[0].get("mode") == "follow",
          "GET /api/status: one view, main, in follow mode (%s)" % [(v.get("name"), v.get("mode")) for v in views])
    n_in = wait_for(lambda: ((get_json(port, "/api/status") or {}).get("pipeline") or {}).get("frames_in", 0) >= 10,
                    60 * SLOW, 0.2)
    check(n_in, "10 frame sets in")
rc = d.stop(60 * SLOW)
log = d.log()
with open(d.out) as f:
    summary = f.read()
check(rc == 0, "it stops on SIGTERM, exit 0 (exit %s)" % rc)
m = re.search(r"^summary: (\d+) frame sets in, (\d+) encoded, (\d+) dropped", summary, re.M)
check(m is not None, "the summary's first line: %s" % (summary.splitlines()[:1]))
encoded = int(m.group(2)) if m else -1
if m:
    diag("summary: %s in, %s encoded, %s dropped" % m.groups())

pano = os.path.join(DIR, "stadium-panorama.ts")
perr = []
w, h, frames = probe_video(pano, perr)
check((w, h) == (WIDTH, expect_h), "stadium-panorama.ts decodes at %dx%d: panorama.width %d, the height from the "
      ".pto's %dx%d crop (got %sx%s)" % (WIDTH, expect_h, WIDTH, ow, oh, w, h))
check(frames == encoded and frames > 0 and not perr,
      "stadium-panorama.ts: every frame decodes, as many as the summary encoded (%d of %d)%s"
      % (frames, encoded, ": " + " ".join(perr) if perr else ""))

view = os.path.join(DIR, "stadium-main.ts")
m = re.search(r"^picture \d+ vcam:main (\d+)x(\d+): \S+, (\d+) frames", summary, re.M)
check(m is not None and m.group(1, 2) == ("640", "360"), "the summary has the view's picture, vcam:main 640x360: %s"
      % (m.group(0) if m else None))
view_encoded = int(m.group(3)) if m else -1
perr = []
w, h, frames = probe_video(view, perr)
check((w, h) == (640, 360) and frames == view_encoded and frames > 0 and not perr,
      "stadium-main.ts (the view) decodes at 640x360, every frame the summary encoded: %sx%s, %d of %d%s"
      % (w, h, frames, view_encoded, ": " + " ".join(perr) if perr else ""))
done()
