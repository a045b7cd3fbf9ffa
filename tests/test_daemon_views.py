#!/usr/bin/python3
"""test_daemon_views.py - the virtual cameras' pictures of the real panocap,
end to end: fake cameras (small) showing the simulated stadium through a
rig written for them, the render step drawing the panorama, two views and
the unstitched cameras, each encoded by libx264 to its own file.

  - each picture's stream decodes (ffprobe, every frame counted) at its
    size with as many frames as frame sets were taken, and the summary
    names each with that count;
  - the pictures are pictures (not flat): the views show the pitch;
  - the follow view moves from where it started towards the play (the
    activity map counted players) while the manual one stayed put;
  - panorama.enabled = false with a view: the main picture is the stacked
    cameras, the view still drawn from the rig;
  - --algo net (the learned demosaic, each camera on its own): the
    panorama, the views and the unstitched cameras decode at their sizes
    with every frame set taken (a few: about a second each on the CPU).
  - snapshots are what the streams show: --snapshot is the first set's
    panorama (its size, and within 30 dB of the stream's first frame,
    decoded by ffmpeg); a running daemon's control socket (`snapshot
    NAME.png`, `snapshot NAME.png VIEW`) and web API (POST /api/snapshot,
    with {"view": NAME}) write the panorama and the view, each matching a
    frame of its stream; snapshot-cameras still gives the cameras; an
    unknown view is refused.
Usage: test_daemon_views.py PANOCAP"""
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap_util import check, diag, done, skip_all  # noqa: E402
from web_testutil import control, sanitized, probe_video as probe, tmpdir  # noqa: E402
from web_testutil import Daemon, control, free_port, get_json, post_json, request, wait_for  # noqa: E402

if len(sys.argv) < 2:
    skip_all("usage: test_daemon_views.py PANOCAP")
if not shutil.which("ffprobe"):
    skip_all("ffprobe not installed (tools/install-deps installs ffmpeg)")
EXE = os.path.abspath(sys.argv[1])
DIR = tmpdir("views")
W, H = 320, 180
# 1.5 s of the match at 50 fps (the follow view's motion is checked in a
# run of its own that lasts until the view has moved: follow_moves)
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


def rgb_frames(path, w, h, pick=None):
    """The frames of a video (or a PNG: one) as RGB24 bytes, decoded by
    ffmpeg: YUV through the stream's BT.709 limited range, as a player."""
    vf = "scale=in_color_matrix=bt709:in_range=tv" if not path.endswith(".png") else "null"
    p = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-vf", vf, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                       capture_output=True, timeout=300)
    n = w * h * 3
    frames = [p.stdout[i:i + n] for i in range(0, len(p.stdout) - n + 1, n)]
    return frames if pick is None else [frames[k] for k in pick if k < len(frames)]


def psnr(a, b, step=5):
    """PSNR of two RGB24 pictures (every step-th byte)."""
    if not a or len(a) != len(b):
        return 0.0
    sse = sum((x - y) ** 2 for x, y in zip(a[::step], b[::step]))
    n = len(a[::step])
    return 99.0 if sse == 0 else 10 * math.log10(255.0 ** 2 * n / sse)


def png_size(path):
    """(width, height) from a PNG's IHDR."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return (0, 0)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return (0, 0)
    return struct.unpack(">II", head[16:24])


def best_match(snap, frames):
    """(PSNR, index) of the frame the snapshot is closest to."""
    scores = [(psnr(snap, f, 11), k) for k, f in enumerate(frames)]
    return max(scores) if scores else (0.0, -1)


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
FIRST = os.path.join(DIR, "first.png")
def follow_moves():
    """The follow view moves from pan 30 (the stands' end) towards the play
    round the pitch's middle (pan 0): waited for on the control socket,
    then the daemon is stopped. How many sets that takes depends on the
    machine (a fake camera late under load repeats its last frame, which
    shows no play), so the run is not a fixed number of sets."""
    fconf = os.path.join(DIR, "follow.conf")
    with open(conf) as f:
        text = f.read()
    with open(fconf, "w") as f:
        f.write(text.replace("/main.ts", "/follow-main.ts").replace("/wide.ts", "/follow-wide.ts")
                .replace("/unstitched.ts", "/follow-unstitched.ts"))
    sock = os.path.join(DIR, "follow.sock")
    cmd = [EXE, "-c", fconf, "--source", "fake", "--output", os.path.join(DIR, "follow-pano.ts"), "--control", sock,
           "--encoder", "libx264", "--stats-interval", "0"]
    diag(" ".join(cmd))
    with open(os.path.join(DIR, "follow.err"), "wb") as err:
        d = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    bound = 60.0 * (4 if sanitized() else 1)
    t0 = time.monotonic()
    pan, answer = None, ""
    while time.monotonic() - t0 < bound and d.poll() is None:
        try:
            answer = control(sock, "vcam main")
            m = re.search(r"pan (-?[0-9.]+)", answer)
            if m:
                pan = float(m.group(1))
                if abs(pan) < 25.0:
                    break
        except OSError:
            pass
        time.sleep(0.2)
    took = time.monotonic() - t0
    d.send_signal(signal.SIGTERM)
    try:
        rc = d.wait(timeout=bound)
    except subprocess.TimeoutExpired:
        d.kill()
        rc = d.wait()
    check(pan is not None and abs(pan) < 25.0 and rc == 0,
          "follow view: moved from pan 30.0 (the stands' end) towards the play round the pitch's middle, pan 0 "
          "(pan %s after %.1f s, bound %.0f s: '%s'; exit %s)" % (pan, took, bound, answer.strip()[:100], rc))


p = run(conf, os.path.join(DIR, "pano.ts"), extra=["--snapshot", FIRST])
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
check(main is not None and main[3] == "follow", "follow view: still in follow mode at the end (%s)" % (main,))
follow_moves()
check(wide is not None and wide[3] == "manual" and abs(wide[0] + 20.0) < 0.05,
      "manual view: stayed at pan -20.0 (now %s)" % (wide,))
check(re.search(r"render.*2 virtual cameras \(bilinear\)", p.log) is not None,
      "the stage's description names the render step with its 2 virtual cameras, sampled bilinear (sampler "
      "auto on the CPU backend)")

# --snapshot: the first set's panorama, as the stream's first frame shows
# it (it wrote the five demosaiced cameras, 320x900, beside a 640x256
# panorama stream)
PW, PH = pics.get("panorama", (640, 256, 0))[:2]
snap = rgb_frames(FIRST, PW, PH)
frames = rgb_frames(os.path.join(DIR, "pano.ts"), PW, PH, pick=[0, 1, FRAMES // 2, FRAMES - 1])
first = psnr(snap[0], frames[0]) if snap and frames else 0.0
others = [psnr(snap[0], f) for f in frames[1:]] if snap else []
check(png_size(FIRST) == (PW, PH) and first > 30.0 and all(first >= o - 0.3 for o in others) and
      "snapshot written to %s (%dx%d, the panorama)" % (FIRST, PW, PH) in p.log,
      "--snapshot: the panorama, %s (%dx%d), %.1f dB against the stream's first frame (> 30; later frames %s)"
      % (png_size(FIRST), PW, PH, first, ["%.1f" % o for o in others]))


def live_snapshots():
    """A running daemon's snapshots through the control socket and the web
    API: the panorama and a view, each what its stream shows."""
    live = os.path.join(DIR, "live.conf")
    write_conf(live, unstitched=False)
    port = free_port()
    sock = os.path.join(DIR, "ctl.sock")
    token_file = os.path.join(DIR, "http.token")
    snaps = os.path.join(DIR, "snaps")
    os.makedirs(snaps, exist_ok=True)
    for f in os.listdir(DIR):
        if f.endswith(".ts"):
            os.unlink(os.path.join(DIR, f))
    d = Daemon(EXE, DIR, "live", ["-c", live, "--source", "fake", "--output", os.path.join(DIR, "live.ts"),
                                  "--encoder", "libx264", "--stats-interval", "0",
                                  "-s", "daemon.control=" + sock, "-s", "daemon.http_listen=127.0.0.1:%d" % port,
                                  "-s", "daemon.http_token_file=" + token_file, "-s", "daemon.snapshot_dir=" + snaps],
               port)
    if not check(d.wait_ready(120), "a running panocap with the panorama and two views, its control socket and web "
                                    "page"):
        diag(d.log()[-3000:])
        d.stop()
        return
    token = open(token_file).read().strip()
    a1 = control(sock, "snapshot live.png", 60)
    a2 = control(sock, "snapshot view.png wide", 60)
    a3 = control(sock, "snapshot bad.png nope", 10)
    a4 = control(sock, "snapshot-cameras cams", 60)
    check(a1.startswith("OK snapshot %s/live.png" % snaps) and a2.startswith("OK snapshot %s/view.png" % snaps),
          "control: snapshot live.png, snapshot view.png wide: %s / %s" % (a1.strip(), a2.strip()))
    check(a3.startswith("ERR ") and "nope" in a3 and "main, wide" in a3, "control: an unknown view refused: %s" %
          a3.strip())
    cams = [png_size(os.path.join(snaps, "cams", "cam%d.png" % k)) for k in range(5)]
    check(a4.startswith("OK snapshot-cameras") and cams == [(W, H)] * 5,
          "control: snapshot-cameras still gives the 5 cameras (%s)" % cams)

    def api(body):
        r = post_json(port, "/api/snapshot", body, token)
        url = (r.json() or {}).get("url")
        if r.status != 202 or not url:
            return r.status, None
        got = wait_for(lambda: (lambda x: x if x.status == 200 else None)(request(port, "GET", "/" + url)), 60, 0.2)
        if not got:
            return r.status, None
        path = os.path.join(DIR, os.path.basename(url))
        with open(path, "wb") as f:
            f.write(got.body)
        return r.status, path
    time.sleep(0.5)
    s5, web_pano = api({})
    time.sleep(0.5)
    s6, web_view = api({"view": "wide"})
    r = post_json(port, "/api/snapshot", {"view": "nope"}, token)
    check(s5 == 202 and s6 == 202 and r.status == 404 and "nope" in r.error(),
          "POST /api/snapshot {} and {\"view\": \"wide\"}: 202, downloaded; an unknown view: 404 (%s)" % r.error())
    rc = d.stop()
    check(rc == 0, "the daemon stops (exit %s)" % rc)
    pano_frames = rgb_frames(os.path.join(DIR, "live.ts"), 640, 256)
    wide_frames = rgb_frames(os.path.join(DIR, "wide.ts"), 256, 144)
    for what, path, size, frames in (("control: the panorama", os.path.join(snaps, "live.png"), (640, 256),
                                      pano_frames),
                                     ("control: the view wide", os.path.join(snaps, "view.png"), (256, 144),
                                      wide_frames),
                                     ("web: the panorama", web_pano, (640, 256), pano_frames),
                                     ("web: the view wide", web_view, (256, 144), wide_frames)):
        got = png_size(path) if path else (0, 0)
        snap = rgb_frames(path, *size) if path and got == size else []
        score, k = best_match(snap[0], frames) if snap else (0.0, -1)
        check(got == size and score > 30.0, "%s: %dx%d, %.1f dB against frame %d of its %d-frame stream (> 30)"
              % (what, got[0], got[1], score, k, len(frames)))


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
live_snapshots()
done()
