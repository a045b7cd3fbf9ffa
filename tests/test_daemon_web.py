#!/usr/bin/python3
"""test_daemon_web.py - the web page's JSON API (daemon.http_listen) of the
real panocap: fake cameras (small), the GPU where there is one (else the
CPU), libx264 in five bands into
one recording with a retention limit, a preview rendition, automatic white
balance, a control socket.

  - the token file is made (mode 0600, 64 hex digits) and the token is in
    the log exactly once;
  - each endpoint's answer against the daemon's state: GET /api/status
    (cameras counting frames, layout, encoders, outputs and the recording's
    folder and limits, white balance) against the control socket's status,
    the Prometheus metrics and the configuration; /api/algos against the
    `algos` command; the live picture and thumbnails are JPEGs of the sizes
    the status gives and change between two reads; the page's own files;
  - control: an algorithm switch shows in the control socket's `status`; a
    forced IDR adds a keyframe to every band; white balance freeze and auto;
    a snapshot is written and downloaded (a PNG of the panorama's size);
    the snapshot folder keeps only the 8 the API serves (older files
    removed, counted in the status);
  - refusals, each with a 4xx and a reason, and nothing changes: no token,
    a wrong token, unknown paths, wrong methods, an oversized body (with and
    without Content-Length), a body that is not JSON or not an object,
    another content type, unknown keys, values out of range;
  - per-address rate limits: 429 with Retry-After past the burst, and
    answers again after a pause;
  - a second daemon without a usable token file (mode 0644): control over
    HTTP is off (403 with the reason) and metrics_listen = http_listen is
    one listener; a third with the first one's token file: not shown again;
  - the keys' checks (--check-config);
  - the server's front door, on a fourth daemon with
    daemon.http_allowed_hosts: a Host that is not a name of the server
    (DNS rebinding) gets 421 on the page, the API, the pictures and a POST,
    its own names and addresses and the configured ones are served; a path
    holding an encoded NUL is 404; two Content-Lengths, one beside
    Transfer-Encoding, and a folded header are 400, a Content-Length past
    2^64 gets one 413 (one status line); heads and bodies up to their
    limits served, past them 431 and 413; a chunked body far over the limit
    is answered 413 and closed while most of it is still unsent; ten
    clients trickling an unfinished request from the page's address, more
    than its 8 connections, neither keep another client from being served
    nor keep their own connections past the request deadline (408, or 503
    with Retry-After when one had to make room).
Usage: test_daemon_web.py PANOCAP"""
import io
import os
import re
import select
import socket
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from web_testutil import (Daemon, check, control, diag, done, free_port, get_json, post_json, raw,  # noqa: E402
                          raw_status, request, sanitized, skip, skip_all, tmpdir, wait_for)

try:
    from PIL import Image
except ImportError:
    Image = None

if len(sys.argv) < 2:
    skip_all("usage: test_daemon_web.py PANOCAP")
EXE = os.path.abspath(sys.argv[1])
DIR = tmpdir("web")
W, H = (320, 180) if sanitized() else (640, 360)


def image_size(data, fmt):
    if Image is None:
        return None
    im = Image.open(io.BytesIO(data))
    return im.size if im.format == fmt else None


def control_algo(sock):
    """The algorithm in the control socket's status line ("edge/cpu | ...")."""
    m = re.match(r"(\S+?)/", control(sock, "status"))
    return m.group(1) if m else None


def metric(port, name):
    r = request(port, "GET", "/metrics")
    m = re.search(r"^%s (\S+)$" % re.escape(name), r.body.decode(), re.M)
    return float(m.group(1)) if m else None


def main_daemon():
    port = free_port()
    sock = os.path.join(DIR, "ctl.sock")
    token_file = os.path.join(DIR, "http.token")
    rec = os.path.join(DIR, "rec.ts")
    args = ["--source", "fake", "--fps", "25", "-s", "outputs[0].url=" + rec, "--encoder", "libx264", "--stats-interval", "0",
            "-s", "capture.width=%d" % W, "-s", "capture.height=%d" % H, "-s", "capture.wb_gains=auto",
            "-s", "debayer.backend=auto", "-s", "encode.gop=3000", "-s", "encode.bitrate=2M",
            "-s", "encode.layout=bands", "-s", "encode.bands=5", "-s", "encode.preview_scale=4",
            "-s", "encode.preview_url=" + os.path.join(DIR, "preview.ts"),
            "-s", "outputs[0].segment=3600", "-s", "outputs[0].max_bytes=500M",
            "-s", "daemon.control=" + sock, "-s", "daemon.http_listen=127.0.0.1:%d" % port,
            "-s", "daemon.http_token_file=" + token_file, "-s", "daemon.snapshot_dir=" + DIR]
    d = Daemon(EXE, DIR, "web", args, port)
    if not check(d.wait_ready(90), "panocap serves its web page on 127.0.0.1:%d, frame sets flow" % port):
        diag(d.log()[-3000:])
        return
    token = open(token_file).read().strip()
    mode = stat.S_IMODE(os.stat(token_file).st_mode)
    check(re.fullmatch(r"[0-9a-f]{64}", token) and mode == 0o600,
          "the token file was made: 64 hex digits, mode %04o" % mode)
    check(d.log().count(token) == 1, "the token is in the log once (%d times)" % d.log().count(token))

    # --- GET /api/status against the daemon's state ---------------------------
    r = request(port, "GET", "/api/status")
    s1 = r.json()
    check(r.status == 200 and r.headers.get("content-type", "").startswith("application/json") and s1,
          "GET /api/status: 200, JSON (%d bytes)" % len(r.body))
    if not s1:
        return
    # the cameras' rates are measured over at least 1 s between two status requests (sleep: the
    # window); then until every camera has counted more frames (a wait for that, not a guess)
    time.sleep(1.2)
    s2 = wait_for(lambda: (lambda s: s if s and all(b["frames"] > a["frames"] for a, b in zip(
        s1["cameras"], s["cameras"])) else None)(get_json(port, "/api/status")), 60) or get_json(port, "/api/status")
    cams1, cams2 = s1["cameras"], s2["cameras"]
    check(len(cams2) == 5 and [c["name"] for c in cams2] == ["PCFAKE%d" % i for i in range(1, 6)]
          and all(c["connected"] and c["state"] == "streaming" for c in cams2),
          "status: the 5 configured cameras, connected: %s" % [c["name"] for c in cams2])
    check(all(b["frames"] > a["frames"] for a, b in zip(cams1, cams2)),
          "status: every camera's frames count up (%s -> %s)" % ([c["frames"] for c in cams1],
                                                                  [c["frames"] for c in cams2]))
    # (the rate is the frames a camera completed between two status requests over the time
    # between them: how close to 25 it comes is the machine's speed, fake cameras on a busy
    # machine skip frame times; more than 25 would be a miscount)
    fps = [c["fps"] for c in cams2]
    check(all(0 < f <= 30 for f in fps), "status: cameras' measured rates, counting and never above the "
          "configured 25 fps: %s" % fps)
    check(all(c["last_frame_age_s"] is not None and c["last_frame_age_s"] < 5 for c in cams2) and
          all(c["packets_missing"] == 0 and c["frames_substituted"] >= 0 for c in cams2),
          "status: last frame ages, each a recent frame (under 5 s): %s" % [c["last_frame_age_s"] for c in cams2])
    pl = s2["pipeline"]
    check(pl["camera_size"] == {"width": W, "height": H} and pl["picture_size"] == {"width": W, "height": 5 * H}
          and pl["cameras"] == 5, "status: cameras of %dx%d, picture %dx%d" % (W, H, W, 5 * H))
    check(pl["algo"] == "edge" and control_algo(sock) == "edge", "status: algo edge, as the control socket says")
    m = metric(port, "panocap_frames_in_total")
    check(m is not None and m >= pl["frames_in"] > 0,
          "status frames_in %d <= panocap_frames_in_total %s read after it" % (pl["frames_in"], m))
    layout = re.search(r'panocap_layout_info\{layout="(\w+)",bands="(\d+)"\}', request(port, "GET", "/metrics").body.decode())
    check(layout and pl["layout"] == layout.group(1) and pl["bands"] == int(layout.group(2)) and pl["bands"] >= 1,
          "status: layout %s x%d, as panocap_layout_info" % (pl["layout"], pl["bands"]))
    check(set(pl["stages"]) == {"queue", "debayer", "encode", "total"} and pl["stages"]["debayer"]["count"] > 0
          and pl["stages"]["debayer"]["p99_ms"] >= pl["stages"]["debayer"]["p50_ms"] > 0,
          "status: stage times p50/p99 (debayer p50 %.2f p99 %.2f ms)" % (pl["stages"]["debayer"]["p50_ms"],
                                                                           pl["stages"]["debayer"]["p99_ms"]))
    enc = [e for e in s2["encoders"] if not e["preview"]]
    prev = [e for e in s2["encoders"] if e["preview"]]
    check(pl["layout"] == "bands" and len(enc) == pl["bands"] == 5 and [e["band"] for e in enc] == list(range(5))
          and all(e["encoder"] == "libx264" and e["frames"] > 0 and e["rows"] == H and e["first_row"] == i * H
                  for i, e in enumerate(enc)),
          "status: 5 band encoders, libx264, %d rows each, encoding" % H)
    # the encoder headroom (issue 29): each band's picture's mean encode time
    # over the frame period, a positive figure once frames were encoded
    check(all(e.get("encode_ms", 0) > 0 and abs(e["encode_load"] - e["encode_ms"] * pl["fps_nominal"] / 1e3) < 0.01
              for e in enc) if "fps_nominal" in pl else
          all(e.get("encode_ms", 0) > 0 and e.get("encode_load", 0) > 0 for e in enc),
          "status: each encoder's load (encode_ms %s, encode_load %s)" %
          (enc[0].get("encode_ms") if enc else None, enc[0].get("encode_load") if enc else None))
    check(len(prev) == 1 and prev[0]["width"] == (W // 4) & ~1 and prev[0]["height"] == (5 * H // 4) & ~1
          and prev[0]["frames"] > 0,
          "status: the preview's encoder, %sx%s" % (prev[0].get("width") if prev else None,
                                                   prev[0].get("height") if prev else None))
    outs = s2["outputs"]
    o = ([x for x in outs if not x["preview"]] or [{}])[0]
    recd = o.get("recording") or {}
    check(len(outs) == 2 and o["url"] == rec and o["band"] == -1 and o["state"] == "ok" and o["packets_written"] > 0
          and o["errors"] == 0 and any(x["preview"] and x["url"].endswith("preview.ts") for x in outs),
          "status: the recording (the 5 bands' streams, listed once): %s, state %s, %s packets written; and the "
          "preview's output" % (o.get("url"), o.get("state"), o.get("packets_written")))
    check(recd.get("folder") == DIR and recd.get("max_bytes") == 500000000 and recd.get("segment_s") == 3600
          and (recd.get("used_bytes") or 0) > 0 and recd.get("free_bytes", 0) > 0,
          "status: the recording folder, its limit 500 MB, %s bytes used, %s free" % (recd.get("used_bytes"),
                                                                                    recd.get("free_bytes")))
    files = [f for f in os.listdir(DIR) if f.startswith("rec-") and f.endswith(".ts")]  # one segment so far
    size = sum(os.path.getsize(os.path.join(DIR, f)) for f in files)
    check(recd.get("used_bytes") and recd.get("segments") == len(files) == 1 and
          abs(recd["used_bytes"] - size) < 2 * 1024 * 1024,
          "status: used %s bytes in %s segments; the folder has %d in %s" % (recd.get("used_bytes"),
                                                                          recd.get("segments"), size, files))
    sk = s2["pipeline"].get("skew") or {}
    offs = [c.get("skew_offset_ms") for c in cams2]
    check(sk.get("sets", 0) > 0 and sk.get("limit_ms") == 20.0 and sk.get("max_ms") is not None
          and sk["max_ms"] < sk["limit_ms"] and sk.get("sets_over") == 0 and all(o is not None for o in offs),
          "status: frame-set skew over %s sets, max %s ms (limit %s ms, half the 40 ms period), camera offsets %s"
          % (sk.get("sets"), sk.get("max_ms"), sk.get("limit_ms"), offs))
    skc = metric(port, "panocap_frameset_skew_seconds_count")
    check(skc is not None and skc >= sk.get("sets", 0) and metric(port, "panocap_frameset_skew_limit_seconds") == 0.02,
          "metrics: panocap_frameset_skew_seconds histogram (%s sets), limit 0.02 s" % skc)
    wb = s2["white_balance"]["cameras"]
    check(len(wb) == 5 and all(c["auto"] and not c["frozen"] for c in wb),
          "status: white balance automatic on all 5 cameras")
    check(s2["views"] == [] and s2["control"]["enabled"] and s2["control"]["token_header"] == "X-Panocap-Token",
          "status: no virtual cameras yet; control enabled, token header named")
    al = get_json(port, "/api/algos")
    names = [a["name"] for a in al["algos"]] if al else []
    ctl = [ln.split()[0] for ln in control(sock, "algos").splitlines() if ln and not ln.startswith("OK")]
    check(names and names == ctl, "GET /api/algos: %s, as the control socket's algos" % names)

    # --- the live picture --------------------------------------------------------
    pic = s2["picture"]
    gpu = pl["backend"] == "cuda"
    check(pic["available"] and pic["url"] == "api/picture.jpg" and pic["source"].startswith(
        "GPU box downscale" if gpu else "sampled"), "status: a live picture (%s, %s backend)" % (pic.get("source"),
                                                                                           pl["backend"]))
    t0 = time.monotonic()
    first = request(port, "GET", "/api/picture.jpg")
    check(first.status == 200 and first.headers.get("content-type") == "image/jpeg",
          "the first ask waits for the first picture: %d after %.2f s" % (first.status, time.monotonic() - t0))
    a = wait_for(lambda: (lambda r: r if r.status == 200 else None)(request(port, "GET", "/api/picture.jpg")), 60)
    # until a newer picture is served (how soon is the machine's speed)
    b = wait_for(lambda: (lambda r: r if r.status == 200 and a and int(r.headers.get("x-panocap-picture", "0")) > int(
        a.headers.get("x-panocap-picture", "0")) else None)(request(port, "GET", "/api/picture.jpg")), 60, 0.2) \
        or request(port, "GET", "/api/picture.jpg")
    status_pic = get_json(port, "/api/status")["picture"]
    ok = a and b.status == 200 and a.headers.get("content-type") == "image/jpeg"
    sz = image_size(a.body, "JPEG") if ok else None
    check(ok and (sz is None or sz == (status_pic["width"], status_pic["height"])),
          "GET /api/picture.jpg: a %s JPEG, the size the status gives (%dx%d)" % (sz, status_pic["width"],
                                                                                  status_pic["height"]))
    check(ok and a.body != b.body and int(b.headers["x-panocap-picture"]) > int(a.headers["x-panocap-picture"]),
          "the live picture changes between two reads (pictures %s -> %s)" % (
              a.headers.get("x-panocap-picture") if a else None, b.headers.get("x-panocap-picture")))
    # the main path's cost: the stage thread's time per picture, spread over
    # the frames (4 pictures a second of 25 frames), against the demosaic's
    per_frame = status_pic["stage_ms_mean"] * status_pic["fps"] / 25
    deb = get_json(port, "/api/status")["pipeline"]["stages"]["debayer"]["p50_ms"]
    if sanitized():
        skip("skipped under sanitizer: the stage thread's time per picture (%.3f ms) measures speed" %
             status_pic["stage_ms_mean"])
    else:
        check(per_frame < 0.05 * deb, "the stage thread spends %.3f ms per picture (at most %.3f), %.4f ms per frame: "
              "under 5%% of the demosaic's %.2f ms" % (status_pic["stage_ms_mean"], status_pic["stage_ms_max"],
                                                      per_frame, deb))
    t = request(port, "GET", "/api/cameras/4/picture.jpg")
    tsz = image_size(t.body, "JPEG") if t.status == 200 else None
    check(t.status == 200 and (tsz is None or tsz == (status_pic["thumb_width"], status_pic["thumb_height"])),
          "GET /api/cameras/4/picture.jpg: the thumbnail, %s" % (tsz,))
    for path, code in (("/api/cameras/5/picture.jpg", 404), ("/api/cameras/x/picture.jpg", 404),
                       ("/api/cameras/01/picture.jpg", 404)):
        r = request(port, "GET", path)
        check(r.status == code and r.error(), "GET %s: %d \"%s\"" % (path, r.status, r.error()))

    # --- the page's files, the metrics paths ----------------------------------------
    r = request(port, "GET", "/")
    page = r.body.decode()
    check(r.status == 200 and r.headers.get("content-type", "").startswith("text/html") and "panocap" in page
          and "default-src 'none'" in r.headers.get("content-security-policy", ""),
          "GET /: the page, text/html, with a Content-Security-Policy")
    check(not re.search(r'(src|href|action)\s*=\s*"(/|[a-z]+:)', page),
          "the page's URLs are relative (it works under a reverse proxy's prefix)")
    js = request(port, "GET", "/panocap.js")
    check(js.status == 200 and js.headers.get("content-type", "").startswith("text/javascript")
          and not re.search(r"""fetch\(\s*['"`]/""", js.body.decode()),
          "GET /panocap.js: the script, relative fetches only")
    r304 = request(port, "GET", "/panocap.js", headers={"If-None-Match": js.headers.get("etag", "x")})
    check(r304.status == 304 and not r304.body, "GET /panocap.js with its ETag: 304")
    for path in ("/metrics", "/status", "/healthz"):
        check(request(port, "GET", path).status == 200, "GET %s on the web listener: 200" % path)
    h = request(port, "HEAD", "/api/status")
    check(h.status == 200 and not h.body, "HEAD /api/status: 200, no body")

    # --- control with the token ---------------------------------------------------------
    r = post_json(port, "/api/algo", {"algo": "bilinear", "variant": "auto"}, token)
    check(r.status == 200 and r.json() == {"ok": True, "algo": "bilinear", "variant": "auto"},
          "POST /api/algo bilinear: 200 %s" % r.body.decode())
    check(wait_for(lambda: control_algo(sock) == "bilinear", 5), "the switch shows in the control socket's status")
    check(wait_for(lambda: get_json(port, "/api/status")["pipeline"]["algo"] == "bilinear", 5),
          "... and in /api/status")

    kf = lambda: sum(e["keyframes"] for e in get_json(port, "/api/status")["encoders"] if not e["preview"])  # noqa: E731
    k0 = kf()
    r = post_json(port, "/api/idr", None, token, raw=b"")
    check(r.status == 200 and wait_for(lambda: kf() >= k0 + len(enc), 5),
          "POST /api/idr: 200, a keyframe more in every band (%d -> %d)" % (k0, kf()))

    gains = [c["gains"] for c in get_json(port, "/api/status")["white_balance"]["cameras"]]
    r = post_json(port, "/api/wb", {"mode": "freeze"}, token)
    wb = wait_for(lambda: (lambda c: c if all(x["frozen"] for x in c) else None)(
        get_json(port, "/api/status")["white_balance"]["cameras"]), 5)
    check(r.status == 200 and "cameras[4].wb_gains" in r.json().get("gains", "") and wb
          and not any(c["auto"] for c in wb),
          "POST /api/wb freeze: 200 with the gains as config lines; every camera frozen")
    check(wb and all(abs(g - h) < 0.05 for c, old in zip(wb, gains) for g, h in zip(c["gains"], old)),
          "frozen at the gains they had: %s" % ([c["gains"] for c in wb] if wb else None))
    wbtext = control(sock, "wb")
    check(wb and all(("%.4f" % c["gains"][0]) in wbtext for c in wb), "the control socket's wb says the same")
    r = post_json(port, "/api/wb", {"mode": "freeze"}, token)
    time.sleep(0.5)
    wb2 = get_json(port, "/api/status")["white_balance"]["cameras"]
    check(r.status == 200 and wb and all(c["frozen"] and c["gains"] == old["gains"] for c, old in zip(wb2, wb)),
          "a second freeze keeps them frozen at the same gains")
    r = post_json(port, "/api/wb", {"mode": "auto"}, token)
    check(r.status == 200 and wait_for(lambda: all(c["auto"] and not c["frozen"] for c in get_json(
        port, "/api/status")["white_balance"]["cameras"]), 5), "POST /api/wb auto: automatic again")

    r = post_json(port, "/api/snapshot", {}, token)
    sj = r.json() or {}
    check(r.status == 202 and re.fullmatch(r"api/snapshots/panocap-[0-9-]+\.png", sj.get("url", "")),
          "POST /api/snapshot: 202, %s" % sj.get("url"))
    if sj.get("url"):
        seen503 = []

        def fetch():
            x = request(port, "GET", "/" + sj["url"])
            if x.status == 503:
                seen503.append(x.headers.get("retry-after"))
            return x if x.status == 200 else None
        png = wait_for(fetch, 60, 0.2)
        psz = image_size(png.body, "PNG") if png else None
        check(png and png.headers.get("content-type") == "image/png" and
              'attachment; filename="%s"' % sj["file"] in png.headers.get("content-disposition", "")
              and (psz is None or psz == (W, 5 * H)),
              "GET %s: the PNG as an attachment, %s (503 with Retry-After %s while written)" % (
                  sj["url"], psz, seen503[:1]))
        check(os.path.exists(os.path.join(DIR, sj["file"])), "the snapshot is in daemon.snapshot_dir")
    # the folder keeps only the snapshots the API serves, its last 8: an
    # older one's file goes as a newer one takes its place, counted (30
    # POSTs left 13 PNGs of 5 MB while 8 were served: a token holder could
    # fill the disk)
    made = [sj["file"]] if sj.get("file") else []
    for _ in range(10):
        time.sleep(0.3)
        r = post_json(port, "/api/snapshot", {}, token)
        f = (r.json() or {}).get("file")
        if r.status != 202 or not f:
            diag("POST /api/snapshot: %d %s" % (r.status, r.error()))
            break
        made.append(f)
        wait_for(lambda: any(x["file"] == f and x["state"] != "writing"
                             for x in get_json(port, "/api/status")["snapshots"]), 60, 0.2)
    on_disk = sorted(x for x in os.listdir(DIR) if re.fullmatch(r"panocap-[0-9-]+\.png", x))
    st = get_json(port, "/api/status")
    served = sorted(x["file"] for x in st["snapshots"])
    check(len(made) == 11 and on_disk == served and set(on_disk) == set(made[-8:]) and
          st["snapshot_files"] == {"kept": 8, "limit": 8, "removed": 3},
          "11 snapshots: the folder holds the 8 the API serves (%d files), 3 removed (%s)" % (
              len(on_disk), st["snapshot_files"]))
    if made:
        r = request(port, "GET", "/api/snapshots/" + made[0])
        check(r.status == 404 and "keeps its last 8" in r.error() and not os.path.exists(os.path.join(DIR, made[0])),
              "the first one: gone from the folder, 404 \"%s\"" % r.error())
    r = request(port, "GET", "/api/snapshots/panocap-19700101-000000-9.png")
    check(r.status == 404 and r.error(), "GET an unknown snapshot: 404 \"%s\"" % r.error())

    # --- refusals: 4xx with a reason, nothing changes ------------------------------------
    time.sleep(4.5)  # a full POST burst again
    before = control(sock, "status").split("|")[0].strip()
    big = b'{"algo":"' + b"x" * 5000 + b'"}'
    cases = [
        ("POST", "/api/algo", {"Content-Type": "application/json"}, b'{"algo":"hq-linear"}', 403, "no token",
         "header X-Panocap-Token"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": "0" * 64},
         b'{"algo":"hq-linear"}', 403, "a wrong token", "wrong token"),
        ("POST", "/api/idr", {}, b"", 403, "IDR without a token", "token"),
        ("GET", "/api/nope", {}, None, 404, "an unknown API path", "no such path"),
        ("GET", "/nope", {}, None, 404, "an unknown path", None),
        ("DELETE", "/api/status", {}, None, 405, "DELETE of the status", "GET, HEAD"),
        ("GET", "/api/algo", {}, None, 405, "GET of a control path", "takes POST"),
        ("PUT", "/api/algo", {"X-Panocap-Token": token}, b"{}", 405, "PUT", "takes POST"),
        ("OPTIONS", "/api/algo", {}, None, 405, "a CORS preflight", "takes POST"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token}, big, 413,
         "a 5 kB body", "at most 4096"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token,
                               "Transfer-Encoding": "chunked"}, big, 413, "a 5 kB chunked body", "longer than 4096"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token}, b'{"algo":', 400,
         "malformed JSON", "malformed JSON"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token}, b'["hq-linear"]', 400,
         "an array", "must be a JSON object"),
        ("POST", "/api/algo", {"Content-Type": "text/plain", "X-Panocap-Token": token}, b'{"algo":"hq-linear"}',
         415, "text/plain", "application/json"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token}, b'{"algo":"nope"}',
         400, "an unknown algorithm", "unknown algorithm"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token},
         b'{"algo":"hq-linear","variant":"8px"}', 400, "variant 8px", "unknown variant"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token}, b'{"algo":7}', 400,
         "a number for the name", "must be a string"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token}, b'{}', 400,
         "no algo", "missing"),
        ("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token},
         b'{"algo":"hq-linear","speed":11}', 400, "an unknown key", "unknown key"),
        ("POST", "/api/wb", {"Content-Type": "application/json", "X-Panocap-Token": token}, b'{"mode":"sideways"}',
         400, "white balance sideways", "freeze"),
        ("POST", "/api/idr", {"Content-Type": "application/json", "X-Panocap-Token": token}, b'{"now":true}', 400,
         "IDR with a key", "unknown key"),
    ]
    variants = {a["name"]: a["variants"] for a in al["algos"]} if al else {}
    no4 = [n for n, v in variants.items() if "4px" not in v]
    if no4:
        cases.append(("POST", "/api/algo", {"Content-Type": "application/json", "X-Panocap-Token": token},
                      b'{"algo":"%s","variant":"4px"}' % no4[0].encode(), 400, "a variant %s lacks" % no4[0],
                      "no 4px variant"))
    for method, path, hs, body, code, what, needle in cases:
        r = request(port, method, path, body, hs)
        reason = r.error() if path.startswith("/api/") else r.body.decode(errors="replace").strip()
        check(r.status == code and reason and (needle is None or needle in reason + r.headers.get("allow", "")),
              "%s: %d \"%s\"" % (what, r.status, reason))
    time.sleep(0.5)
    after = control(sock, "status").split("|")[0].strip()
    s3 = get_json(port, "/api/status")
    check(before == after and before.startswith("bilinear/") and
          all(c["auto"] and not c["frozen"] for c in s3["white_balance"]["cameras"]),
          "nothing changed: still %s, white balance automatic" % after)
    check(d.running(), "the daemon runs on")

    # --- rate limits -------------------------------------------------------------------------
    # As fast as four clients on one address can ask, until the first 429 (how many that takes
    # is the machine's speed): the first 50 answered, and never more answered than the limiter's
    # burst plus its rate over the time it took (PC_HTTP_RATE_BURST 100, PC_HTTP_RATE_PER_S 50,
    # daemon/http.h), whatever that time was.
    codes, lock, t0 = [], threading.Lock(), time.monotonic()

    def asker():
        while True:
            with lock:
                if 429 in codes or len(codes) >= 5000:
                    return
            st = request(port, "GET", "/api/algos").status
            with lock:
                codes.append(st)

    askers = [threading.Thread(target=asker) for _ in range(4)]
    for t in askers:
        t.start()
    for t in askers:
        t.join()
    took = time.monotonic() - t0
    n200, n429 = codes.count(200), codes.count(429)
    r429 = request(port, "GET", "/api/algos")
    # (a 503 is the per-address connection limit, not the rate limiter: four
    # clients closing and reopening at once can meet it on a slow machine)
    n503 = codes.count(503)
    check(n429 > 0 and 429 not in codes[:50] and n200 + n429 + n503 == len(codes) and
          n200 <= 100 + 50 * took + 1,
          "%d requests at once: none of the first 50 refused by the rate limiter, %d answered in %.2f s (at most "
          "100 + 50/s), then 429 (%d with 503: the connection limit)" % (len(codes), n200, took, n503))
    check(r429.status != 429 or (r429.headers.get("retry-after") == "1" and "too many" in r429.error()),
          "429 says why, with Retry-After: 1")
    time.sleep(2.5)
    check(request(port, "GET", "/api/algos").status == 200, "after a pause: 200 again")

    rc = d.stop()
    check(rc == 0, "SIGTERM: exit %s" % rc)
    if rc != 0:
        diag(d.log()[-3000:])
    return token_file


def second_daemon(old_token_file):
    port = free_port()
    tf = os.path.join(DIR, "open.token")
    with open(tf, "w") as f:
        f.write("0123456789abcdef0123456789abcdef\n")
    os.chmod(tf, 0o644)
    base = ["--source", "fake", "--output", "null", "--control", "", "--stats-interval", "0",
            "-s", "capture.width=256", "-s", "capture.height=128", "-s", "debayer.backend=cpu"]
    args = base + ["-s", "daemon.http_listen=127.0.0.1:%d" % port, "-s", "daemon.metrics_listen=127.0.0.1:%d" % port,
                   "-s", "daemon.http_token_file=" + tf]
    d = Daemon(EXE, DIR, "web2", args, port)
    if not check(d.wait_ready(60), "a second panocap with a token file of mode 0644"):
        diag(d.log()[-2000:])
        return
    log = d.log()
    check("chmod 600" in log and "control over HTTP off" in log, "the log says control over HTTP is off and why")
    check("metrics: served by the web page's listener" in log and request(port, "GET", "/metrics").status == 200,
          "metrics_listen = http_listen: one listener serves both")
    r = post_json(port, "/api/algo", {"algo": "bilinear"}, "0123456789abcdef0123456789abcdef")
    check(r.status == 403 and "control over HTTP is off" in r.error() and "chmod 600" in r.error(),
          "POST with the file's token: 403 \"%s\"" % r.error())
    check(get_json(port, "/api/status")["control"]["enabled"] is False, "status: control not enabled")
    check(d.stop() == 0, "SIGTERM: exit 0")

    # the first daemon's token file, kept: read, not shown again
    port = free_port()
    args = base + ["-s", "daemon.http_listen=127.0.0.1:%d" % port, "-s", "daemon.http_token_file=" + old_token_file]
    d = Daemon(EXE, DIR, "web3", args, port)
    if not check(d.wait_ready(60), "a third panocap with the first one's token file"):
        return
    token = open(old_token_file).read().strip()
    check(token not in d.log() and "control token from" in d.log(), "an existing token is not shown in the log")
    r = post_json(port, "/api/algo", {"algo": "bilinear"}, token)
    check(r.status == 200, "... and it works: %d" % r.status)
    check(d.stop() == 0, "SIGTERM: exit 0")


def settings():
    """The keys' checks, as --check-config and a start make them."""
    r = subprocess.run([EXE, "--check-config", "-s", "daemon.http_listen=localhost:8080"], capture_output=True,
                       text=True, cwd=DIR)
    check(r.returncode == 78 and 'daemon.http_listen: "localhost:8080": "localhost" is not a numeric' in r.stderr,
          "--check-config: a host name in http_listen is refused (78): %s" % r.stderr.strip().splitlines()[0])
    r = subprocess.run([EXE, "--check-config", "-s", "daemon.http_listen=127.0.0.1:8080",
                        "-s", "daemon.http_allowed_hosts=panocap.example.org, http://proxy.example:8080"],
                       capture_output=True, text=True, cwd=DIR)
    check(r.returncode == 78 and "daemon.http_allowed_hosts: entry 1:" in r.stderr and "without a scheme or a port"
          in r.stderr, "--check-config: a URL in http_allowed_hosts is refused (78): %s" % (
              r.stderr.strip().splitlines() or [""])[0])
    r = subprocess.run([EXE, "--check-config", "-s", "daemon.http_listen=127.0.0.1:8080",
                        "-s", "daemon.http_allowed_hosts=panocap.example.org, *.proxy.example, 192.0.2.7, [2001:db8::7]"],
                       capture_output=True, text=True, cwd=DIR)
    check(r.returncode == 0, "--check-config: names, *.domain and addresses in http_allowed_hosts pass %s" % (
        r.stderr.strip()[-200:]))
    r = subprocess.run([EXE, "--check-config", "-s", "daemon.http_token_file=" + os.path.join(DIR, "t")],
                       capture_output=True, text=True, cwd=DIR)
    check(r.returncode == 0 and "daemon.http_token_file: has no effect without daemon.http_listen" in r.stderr,
          "--check-config: a token file without http_listen is a warning")


REQUEST_S = 5  # http.h PC_HTTP_REQUEST_S: a request's line, headers and body in within this
PER_ADDR = 8   # http.h PC_HTTP_CONN_PER_ADDR


def slow_clients(port, n, other):
    """n connections from 127.0.0.1 each send the start of a request for the
    page and then one more byte of an endless header every half second (the
    idle timeout would never end them). Once all trickle, other() is called
    (another client's request). Returns its result, the seconds it took, the
    seconds from the start to its answer, per slow client (seconds from the
    start to the server's close or None, what the server sent), and the
    seconds from the start to the first 408 (None: none)."""
    start = time.monotonic()
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port)
        socks.append(s)
    ends = [None] * n
    got = [b""] * n
    stop = threading.Event()

    def trickle():
        while not stop.is_set() and not all(ends):
            for i, s in enumerate(socks):
                if ends[i]:
                    continue
                try:
                    r, _, _ = select.select([s], [], [], 0)
                    if r:
                        data = s.recv(4096)
                        got[i] += data
                        if not data:
                            ends[i] = time.monotonic() - start
                            continue
                    s.send(b"a")
                except OSError:
                    ends[i] = time.monotonic() - start
            stop.wait(0.5)

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    time.sleep(1.2)  # every one has trickled a byte or two
    t0 = time.monotonic()
    res = other()
    took = time.monotonic() - t0
    t.join(30)
    stop.set()
    for s in socks:
        s.close()
    t408 = [e for e, g in zip(ends, got) if e and raw_status(g) == 408]
    first408 = min(t408) if t408 else None
    return res, took, t0 - start + took, list(zip(ends, got)), first408


def chunked_over_limit(port, token, total=64 << 20):
    """POST /api/algo with a chunked body of total bytes, sent while no answer
    has come: (the answer, bytes of the body sent by then, closed after it)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"POST /api/algo HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
              b"X-Panocap-Token: %s\r\nTransfer-Encoding: chunked\r\n\r\n" % (port, token.encode()))
    s.setblocking(False)
    piece = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    sent, out, answer = 0, b"", b""
    end = time.monotonic() + 120
    try:
        while sent < total and time.monotonic() < end:
            r, w, _ = select.select([s], [s] if sent < total else [], [], 5)
            if r:
                answer = s.recv(65536)
                break
            if w:
                if not out:
                    out = piece
                n = s.send(out)
                out = out[n:]
                sent += n
    except OSError:
        pass
    s.settimeout(10)
    closed = False
    try:
        while True:
            data = s.recv(65536)
            if not data:
                closed = True
                break
            answer += data
    except ConnectionResetError:
        closed = True
    except OSError:
        pass
    s.close()
    return answer, sent, closed


def front_door():
    port = free_port()
    tf = os.path.join(DIR, "front.token")
    base = ["--source", "fake", "--output", "null", "--control", "", "--stats-interval", "0",
            "-s", "capture.width=256", "-s", "capture.height=128", "-s", "debayer.backend=cpu"]
    args = base + ["-s", "daemon.http_listen=127.0.0.1:%d" % port, "-s", "daemon.http_token_file=" + tf,
                   "-s", "daemon.http_allowed_hosts=panocap.example.org, *.proxy.example"]
    d = Daemon(EXE, DIR, "web4", args, port)
    if not check(d.wait_ready(60), "a fourth panocap, http_allowed_hosts = panocap.example.org, *.proxy.example"):
        diag(d.log()[-2000:])
        return
    token = open(tf).read().strip()
    algo = get_json(port, "/api/status")["pipeline"]["algo"]

    # --- Host: DNS rebinding --------------------------------------------------------------
    evil = "evil.example:%d" % port
    for path in ("/api/status", "/api/picture.jpg", "/api/cameras/0/picture.jpg", "/", "/panocap.js", "/metrics"):
        r = request(port, "GET", path, headers={"Host": evil})
        reason = r.error() if path.startswith("/api/") else r.body.decode(errors="replace").strip()
        check(r.status == 421 and "not a name of this server" in reason and "http_allowed_hosts" in reason,
              "GET %s with Host: %s: 421 \"%s\"" % (path, evil, reason[:90]))
    r = request(port, "POST", "/api/algo", b'{"algo": "bilinear"}',
                {"Host": evil, "Content-Type": "application/json", "X-Panocap-Token": token})
    time.sleep(0.5)
    check(r.status == 421 and get_json(port, "/api/status")["pipeline"]["algo"] == algo,
          "POST /api/algo with the token but Host: %s: 421, the algorithm stays %s" % (evil, algo))
    hostname = socket.gethostname()
    for host in ("127.0.0.1:%d" % port, "localhost:%d" % port, "LocalHost", "[::1]:%d" % port, "127.0.0.1",
                 "localhost:9000", hostname, hostname.split(".")[0] + ":%d" % port, "panocap.example.org",
                 "PANOCAP.Example.org.:443", "a.proxy.example:8443"):
        r = request(port, "GET", "/api/status", headers={"Host": host})
        check(r.status == 200 and r.json(), "GET /api/status with Host: %s: 200" % host)
    for host in ("proxy.example", "panocap.example.org.evil.example", "127.0.0.2.evil.example", "192.0.2.1:%d" % port,
                 "[2001:db8::1]", "localhost:x", ""):
        r = request(port, "GET", "/api/status", headers={"Host": host})
        check(r.status in (400, 421) and r.error(), "GET /api/status with Host: \"%s\": %d \"%s\"" % (
            host, r.status, r.error()[:70]))
    a = raw(port, b"GET /api/status HTTP/1.0\r\n\r\n")
    check(raw_status(a) == 200, "HTTP/1.0 without Host: 200 (not a browser: HTTP/1.0 may leave Host out)")
    a = raw(port, b"GET /api/status HTTP/1.1\r\nConnection: close\r\n\r\n")
    check(raw_status(a) == 400 and b"needs a Host" in a, "HTTP/1.1 without Host: 400")
    a = raw(port, b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n")
    check(raw_status(a) == 400 and b"Host headers" in a, "two Host headers: 400")

    # --- an encoded NUL in the path -----------------------------------------------------------
    for method, path, body in (("GET", "/api/status%00junk", None), ("GET", "/index.html%00.png", None),
                               ("GET", "/api/picture.jpg%00", None), ("HEAD", "/panocap.js%00.txt", None),
                               ("POST", "/api/views/main%00x", b'{"stop": true}'),
                               ("POST", "/api/algo%00", b'{"algo": "bilinear"}')):
        hs = {"Content-Type": "application/json", "X-Panocap-Token": token} if body else {}
        r = request(port, method, path, body, hs)
        reason = r.error() if path.startswith("/api/") else r.body.decode(errors="replace")
        check(r.status == 404 and (method == "HEAD" or "encoded NUL" in reason),
              "%s %s: 404 \"%s\"" % (method, path, reason.strip()[:80]))
    time.sleep(0.5)
    check(get_json(port, "/api/status")["pipeline"]["algo"] == algo, "... and the algorithm stays %s" % algo)
    check(request(port, "GET", "/api/status?x=%00").status == 200, "GET /api/status?x=%00 (in the query): 200")

    # --- framing ---------------------------------------------------------------------------
    hdr = b"POST /api/algo HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n" \
          b"X-Panocap-Token: %s\r\n" % (port, token.encode())
    body = b'{"algo": "bilinear"}'
    cases = [
        (b"Content-Length: %d\r\nContent-Length: 0\r\n\r\n%s" % (len(body), body), 400, b"Content-Length headers",
         "two Content-Lengths"),
        (b"Content-Length: 0\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body), 400, b"Content-Length headers",
         "two Content-Lengths, the first 0"),
        (b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n%s\r\n0\r\n\r\n" % (len(body), body), 400,
         b"both Content-Length and Transfer-Encoding", "Content-Length and Transfer-Encoding"),
        (b"Transfer-Encoding: gzip, chunked\r\n\r\n", 501, b"only chunked", "Transfer-Encoding: gzip, chunked"),
        (b"Content-Length : %d\r\n\r\n%s" % (len(body), body), 400, b"before the colon", "a space before the colon"),
        (b"X-A: 1\r\n Content-Length: 5\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body), 400, b"folded",
         "a folded header line"),
        (b"Content-Length: %d\rX-B: 1\r\n\r\n%s" % (len(body), body), 400, b"lone CR", "a lone CR in a header"),
        (b"Content-Length: 18446744073709551616\r\n\r\n%s" % body, 413, b"at most 4096", "Content-Length 2^64"),
        (b"Content-Length: 99999999999999999999999999999999\r\n\r\n%s" % body, 413, b"at most 4096",
         "Content-Length of 32 digits"),
        (b"Content-Length: -1\r\n\r\n%s" % body, 400, b"not a number", "Content-Length -1"),
        (b"Transfer-Encoding: chunked\r\n\r\nzz\r\n%s\r\n0\r\n\r\n" % body, 400, b"hexadecimal", "chunk size zz"),
    ]
    for extra, code, needle, what in cases:
        a = raw(port, hdr + extra)
        check(raw_status(a) == code and needle in a and a.count(b"HTTP/1.") == 1,
              "%s: %d, one status line (%d), %s" % (what, raw_status(a), a.count(b"HTTP/1."),
                                                    a.split(b"\r\n\r\n", 1)[-1][:80].decode(errors="replace")))
    time.sleep(0.5)
    check(get_json(port, "/api/status")["pipeline"]["algo"] == algo, "none of them changed anything: still %s" % algo)
    a = raw(port, hdr + b"Transfer-Encoding: chunked\r\n\r\n5\r\n{\"alg\r\n%x;ext=1\r\n%s\r\n0\r\nX-T: 1\r\n\r\n" % (
        len(body) - 5, body[5:]))
    check(raw_status(a) == 200 and a.count(b"HTTP/1.") == 1, "a chunked body in two chunks, an extension and a "
          "trailer: 200 (%s)" % a.split(b"\r\n\r\n", 1)[-1][:60].decode(errors="replace"))
    check(wait_for(lambda: get_json(port, "/api/status")["pipeline"]["algo"] == "bilinear", 5),
          "... and it switched the algorithm")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(hdr + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % (
            len(body) + 1))
        first = c.recv(4096)
        c.sendall(body.replace(b"bilinear", b"hq-linear"))
        a = b""
        try:
            while not re.search(rb"HTTP/1\.1 [2-5]\d\d .*?\r\n\r\n\{.*\}", a, re.S):
                data = c.recv(65536)
                if not data:
                    break
                a += data
        except OSError:
            pass
    check(first == b"HTTP/1.1 100 Continue\r\n\r\n" and re.search(rb"HTTP/1\.1 200 ", a) and b"hq-linear" in a, "Expect: 100-continue: 100 Continue, then the body, then 200 (%s)" % (
              a[-60:].decode(errors="replace")))

    # the largest head and body taken, and past them
    get = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port
    a = raw(port, get + b"X-Big: %s\r\n\r\n" % (b"a" * 7900))
    check(raw_status(a) == 200, "a head of 8 KB: 200")
    a = raw(port, get + b"X-Big: %s\r\n\r\n" % (b"a" * 9000))
    check(raw_status(a) == 431 and b"longer than 8192" in a, "a head of 9 KB: 431")
    a = raw(port, get + b"".join(b"X-H%d: 1\r\n" % i for i in range(99)) + b"\r\n")
    check(raw_status(a) == 200, "100 header lines: 200")
    a = raw(port, get + b"".join(b"X-H%d: 1\r\n" % i for i in range(100)) + b"\r\n")
    check(raw_status(a) == 431 and b"more than 100 header lines" in a, "101 header lines: 431")
    padded = b'{"algo": "edge"' + b" " * (4096 - 16) + b"}"
    a = raw(port, hdr + b"X-Big: %s\r\nContent-Length: %d\r\n\r\n%s" % (b"a" * 7500, len(padded), padded))
    check(raw_status(a) == 200 and b'"algo":"edge"' in a, "a head of 8 KB and a body of 4096 bytes: 200 (%s)" % (
        a.split(b"\r\n\r\n", 1)[-1][:60].decode(errors="replace")))

    answer, sent, closed = chunked_over_limit(port, token)
    check(raw_status(answer) == 413 and b"longer than 4096" in answer and answer.count(b"HTTP/1.") == 1,
          "a chunked body of 64 MiB: 413 \"%s\"" % answer.split(b"\r\n\r\n", 1)[-1][:60].decode(errors="replace"))
    check(sent < (32 << 20) and closed, "... answered and closed with %.1f of its 64 MiB sent" % (sent / (1 << 20)))

    # --- slow clients ------------------------------------------------------------------------
    def other():
        try:
            return request(port, "GET", "/", timeout=30)
        except OSError as e:
            diag("GET / failed: %s" % e)
            return None

    res, took, at, slow, first408 = slow_clients(port, PER_ADDR + 2, other)
    check(res and res.status == 200 and b"panocap" in res.body,
          "%d slow clients trickle an unfinished request from 127.0.0.1: another one is served (200 in %.2f s)" % (
              PER_ADDR + 2, took))
    check(first408 is None or at < first408, "... while they still held their connections (served %.1f s after "
          "they started, the first 408 at %s s)" % (at, "%.1f" % first408 if first408 else "-"))
    codes = [raw_status(g) for e, g in slow]
    check(all(e is not None and e < REQUEST_S + 10 for e, g in slow),
          "every slow client's connection was closed by the server within %d s (at %s s)" % (
              REQUEST_S + 10, ", ".join("%.1f" % e if e else "never" for e, g in slow)))
    check(all(c in (408, 503) for c in codes) and codes.count(408) and codes.count(503),
          "... answered 408 (its request not in within %d s) or 503 (closed to make room): %s" % (REQUEST_S, codes))
    ok503 = [g for g in slow if raw_status(g[1]) == 503]
    check(ok503 and all(b"Retry-After: 1\r\n" in g and b"busy: too many connections" in g for e, g in ok503),
          "the 503s say why, with Retry-After: 1")
    check(all(b"did not come within %d s" % REQUEST_S in g for e, g in slow if raw_status(g) == 408),
          "the 408s say why")
    check(request(port, "GET", "/api/status").status == 200, "afterwards: served as before")
    log = d.log()
    check("not a name of this server" in log and "its request was not in within" in log,
          "the log says what was refused and why")
    check(d.stop() == 0, "SIGTERM: exit 0")


def main():
    settings()
    tf = main_daemon()
    if tf:
        second_daemon(tf)
    else:
        skip("the second daemon needs the first one's token file")
    front_door()
    done()


if __name__ == "__main__":
    main()
