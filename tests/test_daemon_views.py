#!/usr/bin/python3
"""test_daemon_views.py - the virtual cameras' pictures of the real panocap,
end to end: fake cameras (small) showing the simulated stadium through a
rig written for them, the render step drawing the panorama, two views and
the unstitched cameras, each encoded by libx264 to its own file.

  - each picture's stream decodes (ffprobe, every frame counted) at its
    size with as many frames as frame sets were taken, and the summary
    names each with that count;
  - the pictures are pictures (not flat): the views show the pitch;
  - the follow view moved from where it started towards the play (the
    activity map counted players) while the manual one stayed put;
  - panorama.enabled = false with a view: the main picture is the stacked
    cameras, the view still drawn from the rig;
  - --algo net (the learned demosaic, each camera on its own): the
    panorama, the views and the unstitched cameras decode at their sizes
    with every frame set taken (a few: about a second each on the CPU).
Usage: test_daemon_views.py PANOCAP"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap_util import check, diag, done, skip_all  # noqa: E402
from web_testutil import probe_video as probe, tmpdir  # noqa: E402

if len(sys.argv) < 2:
    skip_all("usage: test_daemon_views.py PANOCAP")
if not shutil.which("ffprobe"):
    skip_all("ffprobe not installed (tools/install-deps installs ffmpeg)")
EXE = os.path.abspath(sys.argv[1])
DIR = tmpdir("views")
W, H = 320, 180
# 1.5 s of the match at 50 fps: the follow view needs about a second to
# settle on the play (the background's first set, the target's smoothing,
# the motion's acceleration), whatever the build's speed (time is the sets'
# numbers)
FRAMES = 75
RIG = os.path.join(DIR, "rig.pto")


def write_rig():
    with open(RIG, "w") as f:
        f.write('p f1 w2000 h800 v170 E0 R0 n"TIFF_m c:LZW"\nm i0\n\n')
        for i in range(5):
            f.write('i w%d h%d f0 v60 Ra0 Rb0 Rc0 Rd0 Re0 Eev0 Er1 Eb1 r0 p-10 y%d TrX0 TrY0 TrZ0 Tpy0 Tpp0 j0 a0 b0 '
                    'c0 d0 e0 g0 t0 Va1 Vb0 Vc0 Vd0 Vx0 Vy0 Vm5 n"cam%d.png"\n' % (W, H, -60 + 30 * i, i))


def write_conf(path, enabled=True, unstitched=True):
    with open(path, "w") as f:
        f.write('capture = { width = %d; height = %d; scene = "stadium"; };\n' % (W, H))
        f.write('panorama = { rig = "%s"; width = 640; enabled = %s; %s };\n'
                % (RIG, "true" if enabled else "false",
                   'unstitched_outputs = ( "%s/unstitched.ts" );' % DIR if unstitched else ""))
        f.write('virtual_cameras = (\n'
                '  { name = "main"; width = 320; height = 180; pan = 30.0; tilt = -12.0; hfov = 30.0;\n'
                '    mode = "follow";\n'
                '    outputs = ( "%s/main.ts" ); },\n'
                '  { name = "wide"; width = 256; height = 144; pan = -20.0; tilt = -12.0; hfov = 40.0;\n'
                '    outputs = ( "%s/wide.ts" ); }\n'
                ');\n' % (DIR, DIR))


def run(conf, out, frames=FRAMES, extra=()):
    for f in os.listdir(DIR):
        if f.endswith(".ts"):
            os.unlink(os.path.join(DIR, f))
    cmd = [EXE, "-c", conf, "--source", "fake", "--frames", str(frames), "--output", out, "--control", "",
           "--encoder", "libx264"] + list(extra)
    diag(" ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    p.log = p.stdout + p.stderr  # the summary goes to stdout, the log to stderr
    if p.returncode != 0:
        diag(p.log[-3000:])
    return p


def luma_spread(path, w, h, frames=FRAMES):
    """Standard deviation of the last frame's luma (a flat picture: ~0)."""
    last = "select=eq(n\\,%d)" % (frames - 1)
    p = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-vf", last, "-frames:v", "1", "-f", "rawvideo",
                        "-pix_fmt", "gray", "-"], capture_output=True, timeout=120)
    y = p.stdout[:w * h]
    if len(y) < w * h:
        return 0.0
    mean = sum(y) / len(y)
    return (sum((v - mean) ** 2 for v in y[::7]) / len(y[::7])) ** 0.5


def summary_pictures(err):
    """{name: (w, h, frames)} from the summary's "picture N NAME WxH: ENC, F frames" lines."""
    out = {}
    for m in re.finditer(r"^picture (\d+) (\S+) (\d+)x(\d+): \S+, (\d+) frames", err, re.M):
        out[m.group(2)] = (int(m.group(3)), int(m.group(4)), int(m.group(5)))
    return out


def final_pose(err, name):
    m = re.search(r"^  %s \d+x\d+: pan (-?[\d.]+) tilt (-?[\d.]+) hfov ([\d.]+)(?:, going to [^,]*)?, (\w+)" % name,
                  err, re.M)
    return tuple(float(m.group(i)) for i in (1, 2, 3)) + (m.group(4),) if m else None


write_rig()
conf = os.path.join(DIR, "views.conf")
write_conf(conf)
p = run(conf, os.path.join(DIR, "pano.ts"))
check(p.returncode == 0, "panocap with the panorama, two views and the unstitched cameras ran %d frame sets (exit %d)"
      % (FRAMES, p.returncode))
pics = summary_pictures(p.log)
diag("summary pictures: %s" % pics)
expect = {"panorama": ("pano.ts", 640, None), "vcam:main": ("main.ts", 320, 180), "vcam:wide": ("wide.ts", 256, 144),
          "unstitched": ("unstitched.ts", W, 5 * H)}
for name, (f, w, h) in expect.items():
    got = probe(os.path.join(DIR, f))
    sw, sh, sf = pics.get(name, (0, 0, 0))
    hh = h if h is not None else sh
    check(got[0] == w and got[1] == hh and got[2] == FRAMES and sf == FRAMES and (sw, sh) == (w, hh),
          "%s: %s decodes at %dx%d, %d frames (summary: %dx%d, %d frames; expected %dx%d, %d)"
          % (name, f, got[0], got[1], got[2], sw, sh, sf, w, hh, FRAMES))
for name, f, w, h in (("vcam:main", "main.ts", 320, 180), ("vcam:wide", "wide.ts", 256, 144)):
    s = luma_spread(os.path.join(DIR, f), w, h)
    check(s > 8, "%s: its last frame is a picture of the stadium, not flat (luma spread %.1f)" % (name, s))
main = final_pose(p.log, "main")
wide = final_pose(p.log, "wide")
diag("final poses: main %s, wide %s" % (main, wide))
check(main is not None and main[3] == "follow" and abs(main[0]) < 25.0,
      "follow view: moved from pan 30.0 (the stands' end) towards the play round the pitch's middle, pan 0 "
      "(now %s)" % (main,))
check(wide is not None and wide[3] == "manual" and abs(wide[0] + 20.0) < 0.05,
      "manual view: stayed at pan -20.0 (now %s)" % (wide,))
check(re.search(r"render.*2 virtual cameras \(bilinear\)", p.log) is not None,
      "the stage's description names the render step with its 2 virtual cameras, sampled bilinear (sampler "
      "auto on the CPU backend)")

# the rig for the views only
write_conf(conf, enabled=False, unstitched=False)
p = run(conf, os.path.join(DIR, "cams.ts"))
pics = summary_pictures(p.log)
got = probe(os.path.join(DIR, "cams.ts"))
check(p.returncode == 0 and got == (W, 5 * H, FRAMES) and pics.get("cameras", (0, 0, 0))[2] == FRAMES,
      "panorama.enabled = false: the main picture is the stacked cameras, %dx%d, %d frames (got %s; summary %s)"
      % (W, 5 * H, FRAMES, got, pics.get("cameras")))
got = probe(os.path.join(DIR, "main.ts"))
check(got == (320, 180, FRAMES), "panorama.enabled = false: the view is still drawn from the rig: 320x180, %d frames "
      "(got %s)" % (FRAMES, got))

# --algo net: the same pictures from the learned demosaic
NET_FRAMES = 4
write_conf(conf)
p = run(conf, os.path.join(DIR, "pano-net.ts"), NET_FRAMES, ["--algo", "net", "--backend", "cpu"])
check(p.returncode == 0 and re.search(r"algorithm net\b", p.log) is not None,
      "--algo net: panocap ran %d frame sets with net (exit %d)" % (NET_FRAMES, p.returncode))
pics = summary_pictures(p.log)
expect["panorama"] = ("pano-net.ts", 640, None)
for name, (f, w, h) in expect.items():
    got = probe(os.path.join(DIR, f))
    sw, sh, sf = pics.get(name, (0, 0, 0))
    hh = h if h is not None else sh
    check(got[0] == w and got[1] == hh and got[2] == NET_FRAMES and sf == NET_FRAMES and (sw, sh) == (w, hh),
          "--algo net, %s: %s decodes at %dx%d, %d frames (summary: %dx%d, %d frames; expected %dx%d, %d)"
          % (name, f, got[0], got[1], got[2], sw, sh, sf, w, hh, NET_FRAMES))
s = luma_spread(os.path.join(DIR, "wide.ts"), 256, 144, NET_FRAMES)
check(s > 8, "--algo net, vcam:wide: a picture of the stadium, not flat (luma spread %.1f)" % s)
done()
