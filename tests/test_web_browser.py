#!/usr/bin/python3
"""test_web_browser.py - the operator page in a real browser: Debian's
chromium, headless, driven through chromium-driver by python3-selenium, on
the real panocap (fake cameras, the GPU where there is one, libx264 into a file, automatic
white balance, its control socket).

  - the page loads without a console error or warning;
  - the camera table shows the configured cameras, their frames counting up;
  - the live picture changes between two reads (pixels, not only its number);
  - an algorithm switch made in the page (token saved in the page, algorithm
    chosen, Switch) shows in the control socket's `status`;
  - a control request without the token is refused (403) and changes
    nothing, sent by the page with a wrong token too (it says so);
  - a snapshot asked for in the page is downloaded (a PNG);
  - the page says plainly when the daemon is gone, and carries on by itself
    when it is back (restarted on the same port: new figures, the notice);
  - behind a reverse proxy, under a path prefix, it works the same;
  - on a phone's width the page fits without sideways scrolling;
  - the virtual cameras (the restarted daemon: a rig written for the fake
    cameras, its panorama rendered, one view): its card shows the view's own
    live picture (loaded, the view's size, refreshing; behind the reverse
    proxy too); its frame is drawn on the
    live picture (the panorama); a drag on its card's picture moves the view
    by the pan and tilt the picture's map gives between the two points
    (api/status's goal, then its pose); a click aims it at the point; a
    preset button; follow on and off; a refused command shows the daemon's
    reason and changes nothing, a clamped one says why; the arrow keys and
    the wheel on the focused picture.
The screenshots are kept: ARTEFACTS/web-page.png (laptop),
ARTEFACTS/web-page-views.png (with the virtual camera) and
ARTEFACTS/web-page-phone.png.
Usage: test_web_browser.py PANOCAP ARTEFACT_DIR"""
import math
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from web_testutil import (Daemon, check, control, diag, done, free_port, get_json, reverse_proxy,  # noqa: E402
                          sanitized, skip_all, tmpdir, wait_for)

if len(sys.argv) < 3:
    skip_all("usage: test_web_browser.py PANOCAP ARTEFACT_DIR")
EXE, ARTEFACTS = os.path.abspath(sys.argv[1]), sys.argv[2]
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select
except ImportError:
    skip_all("python3-selenium is not installed (tools/install-deps installs it)")
for prog in (CHROMIUM, DRIVER):
    if not os.access(prog, os.X_OK):
        skip_all("%s is not installed (Debian packages chromium and chromium-driver: tools/install-deps)" % prog)

DIR = tmpdir("browser")
SLOW = 3 if sanitized() else 1
# The bound of a wait for something the page shows (x SLOW): a wait ends when it shows, so
# only a page that is stuck reaches it; a browser and the daemon on a busy 2-core machine
# may take many seconds.
WAIT_S = 60
W, H = (320, 180) if sanitized() else (640, 360)
PORT = free_port()
SOCK = os.path.join(DIR, "ctl.sock")
TOKEN_FILE = os.path.join(DIR, "http.token")
DOWNLOADS = os.path.join(DIR, "downloads")
os.makedirs(DOWNLOADS)
URL = "http://127.0.0.1:%d/" % PORT
RIG = os.path.join(DIR, "rig.pto")
CONF = os.path.join(DIR, "views.conf")


def write_config():
    """A rig for the five fake cameras (60 degrees wide, 30 apart, 10
    down) and one virtual camera with a preset."""
    with open(RIG, "w") as f:
        f.write('p f1 w2000 h800 v170 E0 R0 n"TIFF_m c:LZW"\nm i0\n\n')  # 60 degrees tall: the cameras' 36
        for i in range(5):
            f.write('i w%d h%d f0 v60 Ra0 Rb0 Rc0 Rd0 Re0 Eev0 Er1 Eb1 r0 p-10 y%d TrX0 TrY0 TrZ0 Tpy0 Tpp0 j0 a0 b0 '
                    'c0 d0 e0 g0 t0 Va1 Vb0 Vc0 Vd0 Vx0 Vy0 Vm5 n"cam%d.png"\n' % (W, H, -60 + 30 * i, i))
    with open(CONF, "w") as f:
        f.write('panorama = { rig = "%s"; };\n'
                'virtual_cameras = ( { name = "main"; width = 640; height = 360; pan = 0.0; tilt = -10.0; hfov = 30.0;\n'
                '  outputs = ( "null" ); presets = ( { name = "left"; pan = -30.0; tilt = -12.0; hfov = 25.0; } ); } );\n'
                % RIG)


def start(name, views=False):
    """panocap on the fake cameras; views: with the rig, its panorama (800
    pixels wide) and the virtual camera."""
    args = (["--config", CONF, "-s", "panorama.width=800"] if views else []) + ["--source", "fake", "--fps", "25", "--encoder", "libx264", "--stats-interval", "0",
            "-s", "outputs[0].url=" + os.path.join(DIR, "rec.ts"),
            "-s", "capture.width=%d" % W, "-s", "capture.height=%d" % H, "-s", "capture.wb_gains=auto",
            "-s", "debayer.backend=auto", "-s", "encode.bitrate=2M",
            "-s", "daemon.control=" + SOCK, "-s", "daemon.http_listen=127.0.0.1:%d" % PORT,
            "-s", "daemon.http_token_file=" + TOKEN_FILE, "-s", "daemon.snapshot_dir=" + DIR]
    d = Daemon(EXE, DIR, name, args, PORT)
    ok = d.wait_ready(60 * SLOW)
    if not ok:
        diag(d.log()[-3000:])
    return d if ok else None


def browser():
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    # as root on a closed network: no sandbox, no GPU, and none of the
    # background connections (refused here) that would log errors
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-default-apps", "--disable-extensions", "--window-size=1280,1700",
              "--user-data-dir=" + os.path.join(DIR, "chromium-profile")):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(DRIVER, log_output=os.path.join(DIR, "chromedriver.log")), options=o)
    d.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": DOWNLOADS})
    d.set_script_timeout(20)
    return d


def console(drv):
    """The console entries since the last call: (level, message)."""
    return [(e["level"], e["message"]) for e in drv.get_log("browser")]


def frames(drv):
    return [int(re.sub(r"\D", "", td.text) or -1) for td in drv.find_elements(By.CSS_SELECTOR, "#camera-table td.c-frames")]


def text(drv, sel):
    return drv.find_element(By.CSS_SELECTOR, sel).text


def shown(drv, sel):
    return drv.find_element(By.CSS_SELECTOR, sel).is_displayed()


def control_algo():
    m = re.match(r"(\S+?)/", control(SOCK, "status"))
    return m.group(1) if m else None


def main():
    write_config()
    d = start("browser1")
    if not check(d, "panocap serves its page at %s" % URL):
        done()
    token = open(TOKEN_FILE).read().strip()
    drv = browser()
    try:
        run(drv, d, token)
    finally:
        drv.quit()
    done()


def run(drv, d, token):
    drv.get(URL)
    check(drv.title == "panocap", "the page loads: title %r" % drv.title)
    rows = wait_for(lambda: drv.find_elements(By.CSS_SELECTOR, "#camera-table tbody tr"), WAIT_S * SLOW)
    names = [td.text.split("\n")[0] for td in drv.find_elements(By.CSS_SELECTOR, "#camera-table td.c-name")]
    check(len(rows) == 5 and names == ["PCFAKE%d" % i for i in range(1, 6)],
          "the camera table shows the 5 configured cameras: %s" % names)
    f1 = frames(drv)
    f2 = wait_for(lambda: (lambda f: f if len(f) == 5 and all(b > a for a, b in zip(f1, f)) else None)(frames(drv)),
                  WAIT_S * SLOW) or frames(drv)
    check(len(f1) == 5 and all(b > a > 0 for a, b in zip(f1, f2)), "their frames count up: %s -> %s" % (f1, f2))
    states = [td.text for td in drv.find_elements(By.CSS_SELECTOR, "#camera-table td.c-state")]
    check(states == ["streaming"] * 5, "each says streaming: %s" % states)
    check(text(drv, "#state") in ("Running", "Degraded") and (text(drv, "#state") == "Running") ==
          (text(drv, "#state-why") == ""), "the header says %s %s" % (text(drv, "#state"), text(drv, "#state-why")))

    # the live picture: two reads, different pixels
    img = drv.find_element(By.ID, "live-img")
    seq = lambda: int(img.get_attribute("data-seq") or 0)  # noqa: E731
    check(wait_for(lambda: seq() > 0 and drv.execute_script("return arguments[0].naturalWidth", img) > 0, WAIT_S * SLOW),
          "the live picture shows (picture %d, %d px wide)" % (seq(), drv.execute_script(
              "return arguments[0].naturalWidth", img)))
    s1, a = seq(), img.screenshot_as_png
    wait_for(lambda: seq() > s1 + 1, WAIT_S * SLOW)
    time.sleep(0.3)
    s2, b = seq(), img.screenshot_as_png
    check(s2 > s1 and a != b, "the live picture changes between two reads (pictures %d -> %d, pixels differ)" % (s1, s2))
    loaded = lambda: [t for t in drv.find_elements(By.CSS_SELECTOR, "#camera-table img.thumb")  # noqa: E731
                      if drv.execute_script("return arguments[0].naturalWidth", t) > 0]
    wait_for(lambda: len(loaded()) == 5, WAIT_S * SLOW)
    check(len(loaded()) == 5, "each camera's thumbnail shows (%d)" % len(loaded()))

    time.sleep(1)
    logs = [e for e in console(drv) if e[0] in ("SEVERE", "WARNING")]
    check(not logs, "no console error or warning since the page loaded%s" % (": %s" % logs[:3] if logs else ""))

    # the algorithm switch, made in the page
    check(control_algo() == "edge", "the control socket says edge before")
    drv.find_element(By.ID, "token").send_keys(token)
    drv.find_element(By.ID, "token-save").click()
    wait_for(lambda: drv.find_element(By.ID, "algo-apply").is_enabled(), WAIT_S * SLOW)
    Select(drv.find_element(By.ID, "algo")).select_by_value("hq-linear")
    drv.find_element(By.ID, "algo-apply").click()
    check(wait_for(lambda: control_algo() == "hq-linear", WAIT_S * SLOW),
          "an algorithm switch made in the page shows in the control socket's status (%s)" % control_algo())
    check(wait_for(lambda: "Switching to hq-linear" in text(drv, "#control-msg"), WAIT_S * SLOW),
          "the page says: %s" % text(drv, "#control-msg"))
    check(wait_for(lambda: "hq-linear" in text(drv, "#pipeline-facts"), WAIT_S * SLOW), "the pipeline card shows hq-linear")

    # without the token: refused, nothing changes
    res = drv.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch('api/algo', {method: 'POST', headers: {'Content-Type': 'application/json'},
                           body: JSON.stringify({algo: 'bilinear'})})
          .then(async (r) => done([r.status, (await r.json()).error])).catch((e) => done([0, String(e)]));""")
    time.sleep(0.5)
    check(res[0] == 403 and control_algo() == "hq-linear",
          "a control request without the token: %d \"%s\"; still hq-linear" % (res[0], res[1]))
    tok = drv.find_element(By.ID, "token")
    tok.clear()
    tok.send_keys("not-the-token-0123456789")
    drv.find_element(By.ID, "token-save").click()
    Select(drv.find_element(By.ID, "algo")).select_by_value("bilinear")
    drv.find_element(By.ID, "algo-apply").click()
    check(wait_for(lambda: "Refused" in text(drv, "#control-msg") and "wrong token" in text(drv, "#control-msg"), WAIT_S * SLOW),
          "with a wrong token the page says: %s" % text(drv, "#control-msg"))
    time.sleep(0.5)
    check(control_algo() == "hq-linear", "... and nothing changed (%s)" % control_algo())
    console(drv)  # the 403s above are expected in the console

    # a snapshot, downloaded by the page
    tok.clear()
    tok.send_keys(token)
    drv.find_element(By.ID, "token-save").click()
    drv.find_element(By.ID, "snapshot").click()
    got = wait_for(lambda: [f for f in os.listdir(DOWNLOADS) if f.endswith(".png")], 60 * SLOW, 0.25)
    size = os.path.getsize(os.path.join(DOWNLOADS, got[0])) if got else 0
    check(got and size > 1000, "the page's snapshot button downloads %s (%d bytes)" % (got, size))
    if got:
        with open(os.path.join(DOWNLOADS, got[0]), "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "... a PNG")

    # the page in use (token saved, a switch made, a snapshot taken)
    os.makedirs(ARTEFACTS, exist_ok=True)
    shot = os.path.join(ARTEFACTS, "web-page.png")
    drv.set_window_size(1280, drv.execute_script("return document.documentElement.scrollHeight") + 120)
    time.sleep(1.2)
    check(drv.save_screenshot(shot), "screenshot kept: %s" % shot)

    # the daemon goes away, and comes back
    rc = d.stop()
    check(rc == 0, "panocap stopped (exit %s)" % rc)
    check(wait_for(lambda: shown(drv, "#gone"), WAIT_S * SLOW), "the page says the daemon is gone: %s" % text(drv, "#gone"))
    check("not answering" in text(drv, "#gone") and text(drv, "#state") == "Not answering",
          "plainly: \"%s\" / %s" % (text(drv, "#gone").split(".")[0], text(drv, "#state")))
    gone_shot = os.path.join(ARTEFACTS, "web-page-gone.png")
    drv.save_screenshot(gone_shot)
    d2 = start("browser2", views=True)
    check(d2 is not None, "panocap started again on the same port (now with a rig and a virtual camera)")
    if d2:
        check(wait_for(lambda: not shown(drv, "#gone"), WAIT_S * SLOW), "the page carries on by itself: the banner is gone")
        check(wait_for(lambda: "restarted" in text(drv, "#notice"), WAIT_S * SLOW), "it says: %s" % text(drv, "#notice"))
        f1 = frames(drv)
        f2 = wait_for(lambda: (lambda f: f if len(f) == 5 and all(b > a for a, b in zip(f1, f)) else None)(
            frames(drv)), WAIT_S * SLOW) or frames(drv)
        check(len(f2) == 5 and all(b > a for a, b in zip(f1, f2)), "frames count up again: %s -> %s" % (f1, f2))
        check(wait_for(lambda: "edge" in text(drv, "#pipeline-facts"), WAIT_S * SLOW), "the new daemon's algorithm (edge) shows")
        views(drv)
        shot = os.path.join(ARTEFACTS, "web-page-views.png")
        drv.set_window_size(1280, drv.execute_script("return document.documentElement.scrollHeight") + 120)
        time.sleep(1.2)
        check(drv.save_screenshot(shot), "screenshot kept: %s" % shot)
        drv.set_window_size(1280, 1700)

    # behind a reverse proxy, under a prefix
    if d2:
        srv, pport = reverse_proxy("/site/panocap", PORT)
        try:
            console(drv)
            drv.get("http://127.0.0.1:%d/site/panocap/" % pport)
            ok = wait_for(lambda: len(frames(drv)) == 5 and min(frames(drv)) > 0, WAIT_S * SLOW)
            img = drv.find_element(By.ID, "live-img")
            pic = wait_for(lambda: int(img.get_attribute("data-seq") or 0) > 0, WAIT_S * SLOW)
            out = wait_for(lambda: drv.find_elements(By.CSS_SELECTOR, '.view[data-view="main"] img.view-out'),
                           10 * SLOW)
            if out:
                drv.execute_script("arguments[0][0].scrollIntoView({block: 'center'})", out)
            vpic = out and wait_for(lambda: drv.execute_script("return arguments[0].naturalWidth", out[0]) > 0,
                                    10 * SLOW)
            time.sleep(1)
            logs = [e for e in console(drv) if e[0] in ("SEVERE", "WARNING")]
            check(ok and pic and vpic and not logs, "behind a reverse proxy under /site/panocap/: the cameras, the "
                  "live picture, the view's own picture, no console error%s" % (": %s" % logs[:2] if logs else ""))
        finally:
            srv.shutdown()

    # a phone's width
    drv.set_window_size(390, 1400)
    time.sleep(1)
    sw, iw = drv.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    check(sw <= iw, "on a 390 px wide screen the page fits (%d <= %d px)" % (sw, iw))
    drv.set_window_size(390, drv.execute_script("return document.documentElement.scrollHeight") + 120)
    phone = os.path.join(ARTEFACTS, "web-page-phone.png")
    time.sleep(0.5)
    check(drv.save_screenshot(phone), "screenshot kept: %s" % phone)
    if d2:
        check(d2.stop() == 0, "SIGTERM: exit 0")


# --- the virtual cameras ---------------------------------------------------------------------

def wrap(p):
    p = (p + 180) % 360 - 180
    return 180.0 if p == -180 else p


def map_at(m, x, y):
    """The direction at live-picture point (x, y), as the page finds it."""
    for t in m["tiles"]:
        if not (t["x"] <= x <= t["x"] + t["w"] and t["y"] <= y <= t["y"] + t["h"]):
            continue
        u = (x - t["x"]) / t["w"] * (t["cols"] - 1)
        w = (y - t["y"]) / t["h"] * (t["rows"] - 1)
        i, j = min(int(u), t["cols"] - 2), min(int(w), t["rows"] - 2)
        u, w = u - i, w - j
        k = [j * t["cols"] + i, j * t["cols"] + i + 1, (j + 1) * t["cols"] + i, (j + 1) * t["cols"] + i + 1]
        wt = [(1 - u) * (1 - w), u * (1 - w), (1 - u) * w, u * w]
        if any(t["pan"][q] is None for q in k):
            return None
        p0 = t["pan"][k[0]]
        pan = sum(wt[q] * (p0 + wrap(t["pan"][k[q]] - p0)) for q in range(4))
        return wrap(pan), sum(wt[q] * t["tilt"][k[q]] for q in range(4))
    return None


def view_status():
    s = get_json(PORT, "/api/status")
    return s["views"][0] if s and s.get("views") else None


def settle(what):
    """Until the view stands still at its goal (the stage thread steps it)."""
    ok = wait_for(lambda: (lambda v: v and not v["moving"])(view_status()), WAIT_S * SLOW, 0.2)
    v = view_status()
    if not ok:
        diag("%s: still moving: %s" % (what, v))
    return v


POINTER_SPY = """
const pic = arguments[0];
window.pcSpy = [];
for (const t of ['pointerdown', 'pointerup'])
  pic.addEventListener(t, (ev) => { const r = pic.querySelector('canvas').getBoundingClientRect();
    window.pcSpy.push([t, ev.clientX, ev.clientY, r.left, r.top, r.width, r.height]); }, true);
"""


def spied_points(drv, W, H):
    """The live-picture points of the last pointerdown and pointerup."""
    ev = drv.execute_script("return window.pcSpy")
    pts = {}
    for t, cx, cy, left, top, w, h in ev:
        pts[t] = ((cx - left) / w * W, (cy - top) / h * H)
    drv.execute_script("window.pcSpy = []")
    return pts.get("pointerdown"), pts.get("pointerup")


def card_msg(drv):
    return drv.find_element(By.CSS_SELECTOR, '.view[data-view="main"] .msg').text


def views(drv):
    console(drv)  # the restart's refused connections are expected there
    sel = '.view[data-view="main"]'
    card = wait_for(lambda: drv.find_elements(By.CSS_SELECTOR, sel), WAIT_S * SLOW)
    check(card, "the virtual camera's card shows")
    if not card:
        return
    # its own live picture (api/views/main/picture.jpg), fetched while the card is on screen
    out = drv.find_element(By.CSS_SELECTOR, sel + " img.view-out")
    drv.execute_script("arguments[0].scrollIntoView({block: 'center'})", out)
    size = lambda: drv.execute_script("return [arguments[0].naturalWidth, arguments[0].naturalHeight]", out)  # noqa
    loaded = wait_for(lambda: size()[0] > 0, WAIT_S * SLOW)
    src0 = out.get_attribute("src")
    fresh = wait_for(lambda: out.get_attribute("src") != src0 and size()[0] > 0, WAIT_S * SLOW)
    check(loaded and out.is_displayed() and size() == [640, 360] and fresh,
          "the card shows the view's own live picture: loaded at %s (the 640x360 view), refreshing (%s)" % (
              size(), "a new one came" if fresh else "no new one"))
    drawn = wait_for(lambda: drv.find_elements(By.CSS_SELECTOR, "#live-frames polyline") and
                     drv.find_elements(By.CSS_SELECTOR, sel + " .frames polyline"), WAIT_S * SLOW)
    check(drawn, "its frame is drawn on the live picture and on its card's (%d and %d lines)" % (
        len(drv.find_elements(By.CSS_SELECTOR, "#live-frames polyline")),
        len(drv.find_elements(By.CSS_SELECTOR, sel + " .frames polyline"))))
    m = get_json(PORT, "/api/picture/map")
    st = get_json(PORT, "/api/status")
    if not check(m and m["kind"] == "panorama" and len(m["tiles"]) == 1 and m["width"] == st["picture"]["width"],
                 "the live picture's map: %s, %s tile" % (m and m["kind"], len(m["tiles"]) if m else None)):
        return
    W, H = st["picture"]["width"], st["picture"]["height"]
    pic = drv.find_element(By.CSS_SELECTOR, sel + " .view-pic")
    drv.execute_script(POINTER_SPY, pic)
    canvas = pic.find_element(By.TAG_NAME, "canvas")
    cw, ch = canvas.rect["width"], canvas.rect["height"]
    css = lambda x, y: (int(round((x / W - 0.5) * cw)), int(round((y / H - 0.5) * ch)))  # noqa: E731 (from the centre)
    v0 = view_status()

    # a drag: the frame moves by what the map says lies between the two points
    x0, y0 = css(0.5 * W, 0.55 * H)
    x1, y1 = css(0.56 * W, 0.47 * H)
    ActionChains(drv).move_to_element_with_offset(canvas, x0, y0).click_and_hold() \
        .move_by_offset((x1 - x0) // 2, (y1 - y0) // 2).move_by_offset(x1 - x0 - (x1 - x0) // 2, y1 - y0 - (y1 - y0) // 2) \
        .release().perform()
    a, b = spied_points(drv, W, H)
    pa, pb = map_at(m, *a) if a else None, map_at(m, *b) if b else None
    want = (wrap(v0["goal"]["pan"] + pb[0] - pa[0]), v0["goal"]["tilt"] + pb[1] - pa[1]) if pa and pb else None
    got = wait_for(lambda: (lambda v: v if want and abs(v["goal"]["pan"] - want[0]) < 0.05 and
                            abs(v["goal"]["tilt"] - want[1]) < 0.05 else None)(view_status()), WAIT_S * SLOW)
    v = view_status()
    check(got, "a drag from %s to %s (live-picture pixels) moves the view by the map's %s: goal pan %.2f tilt %.2f "
          "(wanted %s)" % (a and tuple(round(q, 1) for q in a), b and tuple(round(q, 1) for q in b),
                           want and (round(want[0] - v0["goal"]["pan"], 2), round(want[1] - v0["goal"]["tilt"], 2)),
                           v["goal"]["pan"], v["goal"]["tilt"], want and tuple(round(q, 2) for q in want)))
    v = settle("the drag")
    check(want and abs(v["pan"] - want[0]) < 0.05 and abs(v["tilt"] - want[1]) < 0.05,
          "... and the view gets there: pan %.2f tilt %.2f; the page says: %s" % (v["pan"], v["tilt"], card_msg(drv)))

    # a click aims the view at the point (a quarter of the way: pan -42.5)
    cx, cy = css(0.25 * W, 0.55 * H)
    ActionChains(drv).move_to_element_with_offset(canvas, cx, cy).click().perform()
    a, b = spied_points(drv, W, H)
    want = map_at(m, *b) if b else None
    got = wait_for(lambda: (lambda v: want and abs(v["goal"]["pan"] - want[0]) < 0.05 and
                            abs(v["goal"]["tilt"] - want[1]) < 0.05)(view_status()), WAIT_S * SLOW)
    v = view_status()
    check(got and abs(want[0] + 42.5) < 0.5, "a click a quarter of the way across aims the view there: goal pan %.2f "
          "tilt %.2f (the map: %s)" % (v["goal"]["pan"], v["goal"]["tilt"], want and tuple(round(q, 2) for q in want)))

    # a preset
    drv.find_element(By.CSS_SELECTOR, sel + ' button[data-preset="left"]').click()
    got = wait_for(lambda: (lambda g: abs(g["pan"] + 30) < 1e-6 and abs(g["tilt"] + 12) < 1e-6 and
                            abs(g["hfov"] - 25) < 1e-6)(view_status()["goal"]), WAIT_S * SLOW)
    check(got, "the preset button \"left\" sends it to pan -30 tilt -12 hfov 25: %s; the page says: %s" % (
        view_status()["goal"], card_msg(drv)))
    settle("the preset")

    # follow on and off
    follow = drv.find_element(By.CSS_SELECTOR, sel + " .row button[aria-pressed]")
    follow.click()
    on = wait_for(lambda: view_status()["follow"] and follow.get_attribute("aria-pressed") == "true", WAIT_S * SLOW)
    check(on, "the follow button turns follow mode on (status: %s, the button: %s)" % (
        view_status()["mode"], follow.get_attribute("aria-pressed")))
    follow.click()
    off = wait_for(lambda: not view_status()["follow"] and follow.get_attribute("aria-pressed") == "false", WAIT_S * SLOW)
    check(off, "... and off again (%s)" % view_status()["mode"])

    # refused: the daemon's reason shown, nothing changed
    before = view_status()
    pan = drv.find_element(By.CSS_SELECTOR, sel + " .view-goto input[aria-label^=pan]")
    pan.send_keys(Keys.CONTROL, "a")  # replaced by typing (clear() would blur it: the status refills it)
    pan.send_keys("500")
    drv.find_element(By.CSS_SELECTOR, sel + " .view-goto button").click()
    refused = wait_for(lambda: "PAN 500 is out of range" in card_msg(drv), WAIT_S * SLOW)
    time.sleep(0.5)
    after = view_status()
    check(refused and "Refused" in card_msg(drv) and after["goal"] == before["goal"] and
          after["commands"] == before["commands"] and after["refused"] == before["refused"] + 1,
          "pan 500 in the form: the page shows \"%s\"; the goal stays %s" % (card_msg(drv), after["goal"]))
    check("bad" in drv.find_element(By.CSS_SELECTOR, sel + " .msg").get_attribute("class"), "... as an error")
    # clamped: the answer says why
    pan.send_keys(Keys.CONTROL, "a")
    pan.send_keys("170")
    drv.find_element(By.CSS_SELECTOR, sel + " .view-goto button").click()
    check(wait_for(lambda: "clamped: pan 170.0 ->" in card_msg(drv), WAIT_S * SLOW),
          "pan 170: the page says %s" % card_msg(drv))
    settle("the clamp")

    # the keyboard and the wheel on the focused picture
    drv.find_element(By.CSS_SELECTOR, sel + ' button[data-preset="left"]').click()
    wait_for(lambda: abs(view_status()["goal"]["pan"] + 30) < 1e-6, WAIT_S * SLOW)
    settle("the preset again")
    g = view_status()["goal"]
    drv.execute_script("arguments[0].focus()", pic)
    ActionChains(drv).send_keys(Keys.ARROW_RIGHT).send_keys(Keys.ARROW_RIGHT).perform()
    step = max(0.5, g["hfov"] / 10)
    got = wait_for(lambda: abs(view_status()["goal"]["pan"] - (g["pan"] + 2 * step)) < 0.02, WAIT_S * SLOW)
    check(got and drv.execute_script("return document.activeElement === arguments[0]", pic),
          "two right arrows on the focused picture: pan %.2f -> %.2f (%.2f a key)" % (
              g["pan"], view_status()["goal"]["pan"], step))
    drv.execute_script("arguments[0].dispatchEvent(new WheelEvent('wheel', {deltaY: 100, bubbles: true, "
                       "cancelable: true}))", pic)
    want = g["hfov"] * 1.15
    got = wait_for(lambda: abs(view_status()["goal"]["hfov"] - want) < 0.02, WAIT_S * SLOW)
    check(got, "a wheel notch down zooms out: hfov %.2f -> %.2f (%.2f)" % (g["hfov"], view_status()["goal"]["hfov"], want))
    logs = [e for e in console(drv) if e[0] in ("SEVERE", "WARNING") and "400 (Bad Request)" not in e[1]]
    check(not logs, "no console error but the refused command's 400%s" % (": %s" % logs[:3] if logs else ""))


if __name__ == "__main__":
    main()
