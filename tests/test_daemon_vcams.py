#!/usr/bin/python3
"""test_daemon_vcams.py - the virtual cameras' control plane of the real
panocap: fake cameras (small) seen through a rig written for them (five
cameras 60 degrees wide, 30 apart, 10 down; its cylindrical panorama
rendered at 800 pixels wide), two views, the control socket and the web API.

  - set-up: the views start where the file says (the log, `status`, `vcam`);
  - the control socket's `vcam`: a move at a speed answered with the pose it
    goes to, the view getting there (status lines), a clamp with its reason,
    refusals each naming what is wrong (unknown view, verb, bad numbers,
    NaN, out of range, extra words), nothing changed by them;
  - each view's live picture: GET /api/views/NAME/picture.jpg (the URL in
    its status) a JPEG of the view's aspect, none made before someone
    asked, changing between two reads; an unknown view 404 with the reason;
  - the web API: GET /api/status's views (pose, goal, mode, presets, the
    last clamp, the frame on the live picture), GET /api/picture/map against
    the rig (the live picture is the panorama: its projection), POST /api/views/NAME with each action (goto, zoom, move,
    preset, save, follow, stop) answered with the clamped goal and the
    reason; refusals 4xx with the reason (no token, unknown view, wrong
    method, bad JSON, wrong types, two actions, out of range) changing
    nothing;
  - the metrics: panocap_vcam_* as the status says, `promtool check metrics`;
  - reload (SIGHUP): a changed pose and presets applied, the saved preset gone;
  - the summary at exit: each view's final pose and counters;
  - the rig for the views only (panorama.enabled = false): the live picture
    is the cameras side by side, the map a tile per camera, a view's frame
    a polyline in each camera that sees it;
  - without views: `vcam` and POST /api/views/... say none are configured.
Usage: test_daemon_vcams.py PANOCAP"""
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from web_testutil import (Daemon, check, control, diag, done, free_port, get_json, post_json, request,  # noqa: E402
                          sanitized, skip, skip_all, tmpdir, wait_for)

try:
    from PIL import Image
except ImportError:
    Image = None

if len(sys.argv) < 2:
    skip_all("usage: test_daemon_vcams.py PANOCAP")
EXE = os.path.abspath(sys.argv[1])
DIR = tmpdir("vcams")
SLOW = 3 if sanitized() else 1
WAIT_S = 60  # the bound of a wait for an event (x SLOW): only a run that is stuck reaches it
W, H = 320, 180
RIG = os.path.join(DIR, "rig.pto")
CONF = os.path.join(DIR, "views.conf")


def write_rig():
    with open(RIG, "w") as f:
        f.write('p f1 w2000 h800 v170 E0 R0 n"TIFF_m c:LZW"\nm i0\n\n')  # 60 degrees tall: the cameras' 36
        for i in range(5):
            f.write('i w%d h%d f0 v60 Ra0 Rb0 Rc0 Rd0 Re0 Eev0 Er1 Eb1 r0 p-10 y%d TrX0 TrY0 TrZ0 Tpy0 Tpp0 j0 a0 b0 c0 '
                    'd0 e0 g0 t0 Va1 Vb0 Vc0 Vd0 Vx0 Vy0 Vm5 n"cam%d.png"\n' % (W, H, -60 + 30 * i, i))


def write_conf(main_pan=0.0, extra_preset=""):
    with open(CONF, "w") as f:
        f.write('panorama = { rig = "%s"; };\n'
                'virtual_cameras = (\n'
                '  { name = "main"; width = 640; height = 360; pan = %.1f; tilt = -10.0; hfov = 30.0;\n'
                '    outputs = ( "null" );\n'
                '    presets = ( { name = "left"; pan = -30.0; tilt = -12.0; hfov = 25.0; }%s ); },\n'
                '  { name = "side"; width = 320; height = 240; pan = 30.0; tilt = -10.0; hfov = 20.0; mode = "follow";\n'
                '    outputs = ( "null" ); }\n'
                ');\n' % (RIG, main_pan, extra_preset))


def view(port, name="main"):
    s = get_json(port, "/api/status")
    return next((v for v in (s or {}).get("views", []) if v["name"] == name), None)


def settle(port, name="main"):
    wait_for(lambda: (lambda v: v and not v["moving"])(view(port, name)), 20 * SLOW, 0.2)
    return view(port, name)


def metrics(port):
    return request(port, "GET", "/metrics").body.decode()


def metric(text, name, v):
    m = re.search(r'^%s\{view="%s"\} (\S+)$' % (re.escape(name), v), text, re.M)
    return float(m.group(1)) if m else None


def start(name, args, port):
    d = Daemon(EXE, DIR, name, ["--source", "fake", "--fps", "25", "--output", "null", "--stats-interval", "0",
                                "-s", "capture.width=%d" % W, "-s", "capture.height=%d" % H,
                                "-s", "panorama.width=800",
                                "-s", "daemon.http_listen=127.0.0.1:%d" % port] + args, port)
    if not d.wait_ready(60 * SLOW):
        diag(d.log()[-3000:])
        return None
    return d


def control_part(d, sock):
    log = d.log()
    check("virtual camera main 640x360: pan 0.0 tilt -10.0 hfov 30.0, manual, still" in log and
          "virtual camera side 320x240: pan 30.0 tilt -10.0 hfov 20.0, follow" in log,
          "the log says where each view starts")
    st = control(sock, "status")
    check(re.search(r"\nvcam main 640x360: pan 0\.0 tilt -10\.0 hfov 30\.0, manual, still; 0 commands", st) and
          "\nvcam side 320x240:" in st and st.endswith("OK\n"), "status: a line per view")
    a = control(sock, "vcam")
    check(a.startswith("main 640x360: ") and "\nside 320x240: " in a and a.endswith("\nOK 2 virtual cameras\n"),
          "vcam: a status line per view, then OK 2 virtual cameras")
    a = control(sock, "vcam main goto 12 -8 speed 10")
    check(a == "OK main goto -> pan 12.0 tilt -8.0 hfov 30.0 at 10.0 deg/s\n", "vcam main goto 12 -8 speed 10: %s"
          % a.strip())
    moving = control(sock, "vcam main")
    check("going to pan 12.0 tilt -8.0 hfov 30.0, manual, moving" in moving, "on its way: %s" % moving.strip())
    t0 = time.monotonic()
    ok = wait_for(lambda: "pan 12.0 tilt -8.0 hfov 30.0, manual, still" in control(sock, "vcam main"),
                  WAIT_S * SLOW, 0.1)
    check(ok and time.monotonic() - t0 > 0.8, "it gets there (12 degrees at 10 deg/s: %.1f s): %s" % (
        time.monotonic() - t0, control(sock, "vcam main").strip()))
    a = control(sock, "vcam main goto 150 -10")
    check(a.startswith("OK main goto -> pan ") and "; clamped: pan 150.0 -> " in a and
          "the cameras see nothing further right" in a, "a pose the cameras do not see: %s" % a.strip())
    wait_for(lambda: ", still;" in control(sock, "vcam main"), WAIT_S * SLOW, 0.1)
    before = control(sock, "vcam main")
    bad = [("vcam nope goto 0 0", "ERR unknown virtual camera \"nope\"; there are main, side"),
           ("vcam main fly", "ERR main: unknown command \"fly\" for main; one of goto, move, zoom, preset, save, "
            "follow, stop"),
           ("vcam main goto nan 0", "ERR main: PAN \"nan\" is not a number (degrees)"),
           ("vcam main goto 0 -10 inf", "ERR main: HFOV \"inf\" is not a number (degrees)"),
           ("vcam main goto 0 -100", "ERR main: TILT -100 is out of range: -90..90 degrees"),
           ("vcam main zoom 30 40", "ERR main: unexpected \"40\"; usage: zoom HFOV [speed S | time T]"),
           ("vcam main goto 1 2 time 0", "ERR main: time 0 is out of range: 0.05..600 seconds"),
           ("vcam main preset right", "ERR main has no preset \"right\"; its presets: left"),
           ("vcam main follow sometimes", "ERR main: follow needs on or off, not \"sometimes\"; usage: follow on|off")]
    for cmd, want in bad:
        a = control(sock, cmd)
        check(a == want + "\n", "%s: %s" % (cmd, a.strip()))
    after = control(sock, "vcam main")
    # the pose's last digit aside (a still view creeps by under 1e-3 degrees a set)
    pose = re.compile(r"pan -?[0-9.]+ tilt -?[0-9.]+ hfov [0-9.]+")
    check(pose.sub("POSE", after) == pose.sub("POSE", before.replace("0 refused", "8 refused")),
          "... nothing changed by them (8 counted as refused: the unknown view's is nobody's)")


def jpeg_size(data):
    if Image is None:
        return None
    im = Image.open(io.BytesIO(data))
    return im.size if im.format == "JPEG" else (0, 0)


def view_picture_part(port):
    """Each view's own live picture, read before anything else asked for one."""
    s = get_json(port, "/api/status")
    vs = {v["name"]: v for v in (s or {}).get("views", [])}
    check([vs.get(n, {}).get("picture") for n in ("main", "side")] ==
          ["api/views/main/picture.jpg", "api/views/side/picture.jpg"],
          "GET /api/status: each view's picture is its live picture's URL (%s)"
          % [v.get("picture") for v in vs.values()])
    for name, (w, h) in (("main", (640, 360)), ("side", (320, 240))):
        url = "/" + vs.get(name, {}).get("picture", "api/views/%s/picture.jpg" % name)
        a = request(port, "GET", url)
        ok = a.status == 200 and a.headers.get("content-type") == "image/jpeg"
        sz = jpeg_size(a.body) if ok else None
        # a view 640 wide or less is shown at its size; the aspect is the view's
        check(ok and a.headers.get("x-panocap-picture") == "1" and sz in (None, (w, h)),
              "GET %s: %d, a %s JPEG of the %dx%d view, its picture %s: none made before someone asked%s" % (
                  url, a.status, sz, w, h, a.headers.get("x-panocap-picture"), "" if ok else " (%s)" % a.error()))
        # until a newer picture is served (made from a later frame set: how soon is the machine's
        # speed)
        b = wait_for(lambda: (lambda r: r if r.status == 200 and int(r.headers.get("x-panocap-picture", "0")) > int(
            a.headers.get("x-panocap-picture", "0")) else None)(request(port, "GET", url)), WAIT_S * SLOW, 0.2) \
            or request(port, "GET", url)
        check(ok and b.status == 200 and b.body != a.body and
              int(b.headers.get("x-panocap-picture", "0")) > int(a.headers.get("x-panocap-picture", "0")),
              "%s: the picture changes between two reads (pictures %s -> %s)" % (
                  name, a.headers.get("x-panocap-picture"), b.headers.get("x-panocap-picture")))
        check(b.headers.get("cache-control") == "no-store", "%s: not cached (Cache-Control: %s)" % (
            name, b.headers.get("cache-control")))
    main_pic = get_json(port, "/api/status")["picture"]
    check(main_pic["seq"] == 0, "the main live picture was not made meanwhile: nobody watched it (%d made)"
          % main_pic["seq"])
    for path, code, want in (("/api/views/nope/picture.jpg", 404, "no virtual camera named \"nope\""),
                             ("/api/views/main/picture.png", 404, "no such path"),
                             ("/api/views/../picture.jpg", 404, "no virtual camera named \"..\"")):
        r = request(port, "GET", path)
        check(r.status == code and want in r.error(), "GET %s: %d %s" % (path, r.status, r.error()[:120]))
    r = request(port, "POST", "/api/views/main/picture.jpg")
    check(r.status == 405 and r.headers.get("allow") == "GET, HEAD", "POST /api/views/main/picture.jpg: %d, Allow: %s"
          % (r.status, r.headers.get("allow")))


def api_part(port, token):
    s = get_json(port, "/api/status")
    vs = s["views"] if s else []
    check([v["name"] for v in vs] == ["main", "side"], "GET /api/status: views main and side")
    v = vs[0] if vs else {}
    keys = {"name", "url", "width", "height", "pan", "tilt", "hfov", "goal", "mode", "follow", "moving", "activity",
            "min_hfov", "max_hfov", "max_speed", "presets", "commands", "clamped", "refused", "last_clamp", "picture",
            "outline", "goal_outline"}
    check(set(v) == keys and v["url"] == "api/views/main" and v["presets"] == ["left"] and v["mode"] == "manual" and
          v["min_hfov"] == 5 and 40 < v["max_hfov"] < 70 and v["picture"] == "api/views/main/picture.jpg" and
          "the cameras see nothing further right" in v["last_clamp"],
          "main: %s, presets %s, zoom %s..%s, last clamp \"%s\"" % (v.get("mode"), v.get("presets"), v.get("min_hfov"),
                                                                   v.get("max_hfov"), v.get("last_clamp")))
    check(vs[1]["mode"] == "follow" and vs[1]["follow"], "side: in follow mode (the file's)")
    pic = s["picture"]
    m = get_json(port, "/api/picture/map")
    check(pic["available"] and pic["width"] == 800 and pic["height"] == 320 and pic["thumb_width"] == 0 and
          all(c["picture"] is None for c in s["cameras"]),
          "the live picture is the panorama: %sx%s, no camera thumbnails" % (pic["width"], pic["height"]))
    t = m["tiles"][0] if m and m.get("tiles") else None
    check(m and m["kind"] == "panorama" and m["width"] == pic["width"] and len(m["tiles"]) == 1 and
          t["w"] == pic["width"] and t["cols"] * t["rows"] == len(t["pan"]) and None not in t["pan"],
          "GET /api/picture/map: the panorama, one tile of %sx%s points" % (t and t["cols"], t and t["rows"]))
    if t:
        # the cylinder: 170 degrees across its width, pan linear in x; its
        # left and right edges at -85 and 85, its middle row at tilt 0
        row = t["pan"][:t["cols"]]
        lin = max(abs(row[q] - (-85 + 170 * q / (t["cols"] - 1))) for q in range(t["cols"]))
        mid = [t["tilt"][(t["rows"] // 2 - k) * t["cols"]] for k in (0, 1)] if t["rows"] % 2 == 0 else None
        check(lin < 0.05 and mid and mid[0] < 0 < mid[1] and abs(mid[0] + mid[1]) < 0.01,
              "its points: pan -85..85 across (off by %.3f at most), tilt 0 between the middle rows (%.2f, %.2f)" % (
                  lin, mid[1] if mid else 0, mid[0] if mid else 0))
    lines = v.get("outline") or []
    # pan is linear across the cylinder: the frame is centred on the pan's
    # column (at pan 74.8 it runs past the panorama's right edge at 85)
    xs = lines[0][0::2] if len(lines) == 1 else [0]
    cx, want = (min(xs) + max(xs)) / 2, (v["pan"] + 85) / 170 * pic["width"]
    check(len(lines) == 1 and len(lines[0]) >= 8 and abs(cx - want) < 1 and
          all(0 <= y <= pic["height"] for y in lines[0][1::2]),
          "main's frame on the panorama: one polyline, centred at x %.1f (pan %.1f: %.1f)" % (cx, v["pan"], want))

    url = "/api/views/main"
    r = post_json(port, url, {"pan": -20, "tilt": -12, "hfov": 28, "speed": 20}, token)
    j = r.json() or {}
    check(r.status == 200 and j.get("ok") and j["answer"] == "OK main goto -> pan -20.0 tilt -12.0 hfov 28.0 at 20.0 deg/s"
          and j["goal"] == {"pan": -20.0, "tilt": -12.0, "hfov": 28.0} and not j["clamped"] and j["reason"] == ""
          and j["status"]["goal"] == j["goal"], "POST {pan, tilt, hfov, speed}: %s %s" % (r.status, j.get("answer")))
    r = post_json(port, url, {"pan": 170, "tilt": 0}, token)
    j = r.json() or {}
    check(r.status == 200 and j["clamped"] and j["reason"].startswith("pan 170.0 -> ") and j["goal"]["pan"] < 90,
          "a clamped goto: goal pan %s, reason \"%s\"" % (j.get("goal", {}).get("pan"), j.get("reason")))
    r = post_json(port, url, {"hfov": 22, "time": 1}, token)
    check(r.status == 200 and r.json()["goal"]["hfov"] == 22 and "in 1.00 s" in r.json()["answer"],
          "POST {hfov, time}: %s" % r.json().get("answer"))
    g = r.json()["goal"]
    r = post_json(port, url, {"move": {"pan": -5, "tilt": 1.5}}, token)
    j = r.json() or {}
    check(r.status == 200 and abs(j["goal"]["pan"] - (g["pan"] - 5)) < 1e-6 and abs(j["goal"]["tilt"] - (g["tilt"] + 1.5))
          < 1e-6 and j["goal"]["hfov"] == 22, "POST {move: {pan: -5, tilt: 1.5}}: %s" % j.get("answer"))
    r = post_json(port, url, {"preset": "left", "time": 0.5}, token)
    check(r.status == 200 and r.json()["goal"] == {"pan": -30.0, "tilt": -12.0, "hfov": 25.0},
          "POST {preset: left}: %s" % r.json().get("answer"))
    settle(port)
    r = post_json(port, url, {"save": "here"}, token)
    check(r.status == 200 and "save here: pan -30.0 tilt -12.0 hfov 25.0 (new;" in r.json()["answer"] and
          view(port)["presets"] == ["left", "here"], "POST {save: here}: %s" % r.json().get("answer"))
    r = post_json(port, url, {"follow": True}, token)
    check(r.status == 200 and view(port)["follow"], "POST {follow: true}: %s" % r.json().get("answer"))
    r = post_json(port, url, {"pan": 0, "tilt": -10}, token)
    check(r.status == 200 and r.json()["follow_off"] and "follow off: an operator's command" in r.json()["answer"] and
          not view(port)["follow"], "an operator's goto in follow mode turns it off, and says so")
    r = post_json(port, url, {"stop": True}, token)
    check(r.status == 200 and r.json()["answer"].startswith("OK main stop -> "), "POST {stop: true}: %s" %
          r.json().get("answer"))
    settle(port)

    # refusals: 4xx with the reason, nothing changed
    before = view(port)
    big = b'{"save": "' + b"x" * 5000 + b'"}'
    bad = [
        (None, {"pan": 1, "tilt": 1}, None, 403, "send the token"),
        ("/api/views/nope", {"stop": True}, None, 404, "unknown virtual camera \"nope\"; there are main, side"),
        ("/api/views/a%20b", {"stop": True}, None, 404, "no such path"),
        (None, None, b"{\"pan\": 1,", 400, "malformed JSON"),
        (None, {"pan": "left", "tilt": 0}, None, 400, "\"pan\" must be a number"),
        (None, {"pan": 1}, None, 400, "\"pan\" and \"tilt\" go together"),
        (None, {"pan": 200, "tilt": 0}, None, 400, "main: PAN 200 is out of range: -180..180 degrees"),
        (None, {"hfov": 0.2}, None, 400, "main: HFOV 0.2 is out of range: 1..179 degrees"),
        (None, {"pan": 1, "tilt": 1, "speed": 0}, None, 400, "main: speed 0 is out of range"),
        (None, {"pan": 1, "tilt": 1, "speed": 5, "time": 2}, None, 400, "one of \"speed\" (deg/s) or \"time\""),
        (None, {"move": {"pan": 1}, "preset": "left"}, None, 400, "one action a request: move and preset"),
        (None, {"move": 3}, None, 400, "\"move\" must be an object"),
        (None, {"move": {}}, None, 400, "\"move\" needs \"pan\", \"tilt\" or \"hfov\""),
        (None, {"move": {"roll": 3}}, None, 400, "unknown key \"move.roll\""),
        (None, {"zoom": 3}, None, 400, "unknown key \"zoom\""),
        # a key of its own with a '.' passed for a member of "move"
        (None, {"move": {"pan": 1}, "move.speed": 5}, None, 400, "the key \"move.speed\" holds a '.'"),
        (None, {"pan": 1, "tilt": 1, "move.time": 2}, None, 400, "the key \"move.time\" holds a '.'"),
        (None, {"preset": "right"}, None, 400, "main has no preset \"right\"; its presets: left, here"),
        (None, {"preset": "a b"}, None, 400, "\"preset\" must be a preset name"),
        (None, {"follow": "yes"}, None, 400, "\"follow\" must be true or false"),
        (None, {"stop": False}, None, 400, "\"stop\" must be true"),
        (None, {"follow": True, "speed": 3}, None, 400, "\"speed\" and \"time\" go with a move"),
        (None, {}, None, 400, "nothing to do"),
        (None, None, big, 413, ""),
    ]
    time.sleep(1)
    for path, body, raw, code, want in bad:
        time.sleep(0.22)  # within the 5 POSTs a second an address may send
        r = post_json(port, path or url, body, None if code == 403 else token, raw=raw)
        check(r.status == code and want in r.error(), "POST %s %s: %d %s" % (
            path or url, (raw or b"")[:40].decode() if raw else body, r.status, r.error()[:160]))
    r = request(port, "GET", url)
    check(r.status == 405 and r.headers.get("allow") == "POST", "GET %s: 405, Allow: POST" % url)
    after = view(port)
    # (the pose still creeps by less than 1e-3 degrees a set once "still": the status shows 3 decimals)
    same = {k: before[k] for k in ("goal", "commands", "presets", "follow")} == \
           {k: after[k] for k in ("goal", "commands", "presets", "follow")} and \
        all(abs(before[k] - after[k]) < 0.01 for k in ("pan", "tilt", "hfov"))
    check(same and after["refused"] == before["refused"] + 4,
          "... nothing changed by them; the 4 the grammar refused counted (%d)" % (after["refused"] - before["refused"]))


def metrics_part(port):
    text = metrics(port)
    v = view(port)
    vals = {n: metric(text, "panocap_vcam_" + n, "main") for n in ("pan_degrees", "tilt_degrees", "hfov_degrees",
                                                                   "follow", "moving", "commands_total",
                                                                   "clamped_total", "refused_total")}
    check(None not in vals.values() and abs(vals["pan_degrees"] - v["pan"]) < 0.01 and
          abs(vals["hfov_degrees"] - v["hfov"]) < 0.01 and vals["follow"] == 0 and vals["moving"] == 0 and
          vals["commands_total"] == v["commands"] and vals["clamped_total"] == v["clamped"] and
          vals["refused_total"] == v["refused"],
          "metrics: panocap_vcam_* of main as the status says: %s" % vals)
    check(metric(text, "panocap_vcam_follow", "side") == 1, "panocap_vcam_follow{view=\"side\"} 1")
    check(text.count("# TYPE panocap_vcam_commands_total counter") == 1, "one TYPE line per family")
    if shutil.which("promtool"):
        f = os.path.join(DIR, "metrics.txt")
        with open(f, "w") as o:
            o.write(text)
        r = subprocess.run(["promtool", "check", "metrics"], stdin=open(f), capture_output=True, text=True)
        check(r.returncode == 0, "promtool check metrics: exit %d %s" % (r.returncode, (r.stdout + r.stderr)[-300:]))
    else:
        skip("promtool not installed (Debian package prometheus)")


def reload_part(d, port, sock):
    write_conf(main_pan=-15.0, extra_preset=', { name = "far"; pan = 20.0; tilt = -10.0; }')
    os.kill(d.proc.pid, signal.SIGHUP)
    ok = d.wait_log("reload: virtual cameras: main: 2 presets, to its new pose", WAIT_S * SLOW)
    v = view(port)
    check(ok and v["goal"]["pan"] == -15 and v["presets"] == ["left", "far"],
          "reload (SIGHUP) with main at pan -15 and a preset more: goal %s, presets %s (the saved one gone)" % (
              v["goal"], v["presets"]))
    v = settle(port)
    a = control(sock, "vcam main preset far")
    check(a.startswith("OK main preset far -> pan 20.0 tilt -10.0 hfov 30.0"), "the new preset: %s" % a.strip())
    return settle(port)


def main():
    write_rig()
    write_conf()
    port = free_port()
    sock = os.path.join(DIR, "ctl.sock")
    token_file = os.path.join(DIR, "http.token")
    d = start("vcams", ["--config", CONF, "-s", "daemon.control=" + sock, "-s", "daemon.http_token_file=" + token_file],
              port)
    if not check(d, "panocap runs with two virtual cameras on a 5-camera rig"):
        done()
    token = open(token_file).read().strip()
    view_picture_part(port)
    control_part(d, sock)
    api_part(port, token)
    metrics_part(port)
    last = reload_part(d, port, sock)
    rc = d.stop()
    out = open(d.out).read()
    m = re.search(r"virtual cameras \(final pose; commands\):\n  (main 640x360: [^\n]*)\n  (side 320x240: [^\n]*)\n",
                  out)
    want = "main 640x360: pan %.1f tilt %.1f hfov %.1f, manual, still; %d commands, %d clamped, %d refused" % (
        last["pan"], last["tilt"], last["hfov"], last["commands"], last["clamped"], last["refused"])
    check(rc == 0 and m and m.group(1).startswith(want), "the summary at exit: %s" % (m.group(1) if m else out[-400:]))

    # the rig for the views only: the live picture is the cameras side by side
    port3 = free_port()
    write_conf()
    d3 = start("strip", ["--config", CONF, "-s", "panorama.enabled=false"], port3)
    if check(d3, "panocap with the views and no panorama (panorama.enabled = false)"):
        s = get_json(port3, "/api/status")
        pic = s["picture"]
        m = get_json(port3, "/api/picture/map")
        check(pic["thumb_width"] > 0 and pic["width"] == 5 * pic["thumb_width"] and
              all(c["picture"] for c in s["cameras"]), "the live picture: the 5 cameras side by side, with thumbnails")
        ok = m and m["kind"] == "cameras" and len(m["tiles"]) == 5
        check(ok and all(abs(t["w"] - W / pic["scale"]) < 0.01 for t in m["tiles"]) and
              [round(t["x"]) for t in m["tiles"]] == [k * pic["thumb_width"] for k in range(5)],
              "GET /api/picture/map: a tile per camera at x %s" % ([round(t["x"]) for t in m["tiles"]] if ok else None))
        if ok:
            t = m["tiles"][2]
            mid = [t["pan"][(t["rows"] // 2) * t["cols"] + t["cols"] // 2 - k] for k in (0, 1)]
            corner = t["pan"][0], t["tilt"][0]
            # camera 2 looks at pan 0: its middle columns either side of 0;
            # its top-left corner 30 degrees left and above (60x36 degrees, 10 down)
            check(t["cols"] % 2 == 0 and mid[0] > 0 > mid[1] and abs(mid[0] + mid[1]) < 0.01 and
                  -33 < corner[0] < -27 and 5 < corner[1] < 12,
                  "tile 2 is camera 2: middle columns at pan %.2f and %.2f, top-left corner at pan %.1f tilt %.1f" % (
                      mid[1], mid[0], corner[0], corner[1]))
        v = view(port3)
        lines = v["outline"] if v else []
        xs = sorted(min(l[0::2]) for l in lines)
        check(len(lines) == 3 and [int(x // pic["thumb_width"]) for x in xs] == [1, 2, 3],
              "main (pan 0, 30 degrees wide) is framed in cameras 1, 2 and 3: polylines from x %s" % xs)
        r = request(port3, "GET", "/api/views/side/picture.jpg")
        check(r.status == 200 and jpeg_size(r.body) in (None, (320, 240)),
              "the view's own live picture beside the cameras': %d %s" % (r.status, jpeg_size(r.body) if
                                                                          r.status == 200 else r.error()))
        check(d3.stop() == 0, "SIGTERM: exit 0")

    # without virtual cameras
    port2 = free_port()
    sock2 = os.path.join(DIR, "ctl2.sock")
    d2 = start("none", ["-s", "daemon.control=" + sock2, "-s", "daemon.http_token_file=" + token_file], port2)
    if check(d2, "panocap without virtual cameras"):
        a = control(sock2, "vcam main goto 0 0")
        check(a.startswith("ERR no virtual cameras are configured"), "vcam: %s" % a.strip())
        r = post_json(port2, "/api/views/main", {"stop": True}, token)
        check(r.status == 404 and "no virtual cameras are configured" in r.error(), "POST /api/views/main: %d %s" % (
            r.status, r.error()))
        check(get_json(port2, "/api/status")["views"] == [] and "panocap_vcam" not in metrics(port2),
              "no views in the status, no panocap_vcam_* metrics")
        r = request(port2, "GET", "/api/picture/map")
        check(r.status == 404, "GET /api/picture/map: %d %s" % (r.status, r.error()))
        r = request(port2, "GET", "/api/views/main/picture.jpg")
        check(r.status == 404 and "no virtual cameras are configured" in r.error(),
              "GET /api/views/main/picture.jpg: %d %s" % (r.status, r.error()))
        check(d2.stop() == 0 and "virtual cameras" not in open(d2.out).read(), "no virtual cameras in its summary")
    done()


if __name__ == "__main__":
    main()
