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
  - on a phone's width the page fits without sideways scrolling.
The screenshots are kept: ARTEFACTS/web-page.png (laptop) and
ARTEFACTS/web-page-phone.png.
Usage: test_web_browser.py PANOCAP ARTEFACT_DIR"""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from web_testutil import (Daemon, check, control, diag, done, free_port, reverse_proxy, sanitized,  # noqa: E402
                          skip_all, tmpdir, wait_for)

if len(sys.argv) < 3:
    skip_all("usage: test_web_browser.py PANOCAP ARTEFACT_DIR")
EXE, ARTEFACTS = os.path.abspath(sys.argv[1]), sys.argv[2]
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
except ImportError:
    skip_all("python3-selenium is not installed (tools/install-deps installs it)")
for prog in (CHROMIUM, DRIVER):
    if not os.access(prog, os.X_OK):
        skip_all("%s is not installed (Debian packages chromium and chromium-driver: tools/install-deps)" % prog)

DIR = tmpdir("browser")
SLOW = 3 if sanitized() else 1
W, H = (320, 180) if sanitized() else (640, 360)
PORT = free_port()
SOCK = os.path.join(DIR, "ctl.sock")
TOKEN_FILE = os.path.join(DIR, "http.token")
DOWNLOADS = os.path.join(DIR, "downloads")
os.makedirs(DOWNLOADS)
URL = "http://127.0.0.1:%d/" % PORT


def start(name):
    args = ["--source", "fake", "--fps", "25", "--encoder", "libx264", "--stats-interval", "0",
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
    rows = wait_for(lambda: drv.find_elements(By.CSS_SELECTOR, "#camera-table tbody tr"), 10 * SLOW)
    names = [td.text.split("\n")[0] for td in drv.find_elements(By.CSS_SELECTOR, "#camera-table td.c-name")]
    check(len(rows) == 5 and names == ["PCFAKE%d" % i for i in range(1, 6)],
          "the camera table shows the 5 configured cameras: %s" % names)
    f1 = frames(drv)
    time.sleep(2)
    f2 = frames(drv)
    check(len(f1) == 5 and all(b > a > 0 for a, b in zip(f1, f2)), "their frames count up: %s -> %s" % (f1, f2))
    states = [td.text for td in drv.find_elements(By.CSS_SELECTOR, "#camera-table td.c-state")]
    check(states == ["streaming"] * 5, "each says streaming: %s" % states)
    check(text(drv, "#state") in ("Running", "Degraded") and (text(drv, "#state") == "Running") ==
          (text(drv, "#state-why") == ""), "the header says %s %s" % (text(drv, "#state"), text(drv, "#state-why")))

    # the live picture: two reads, different pixels
    img = drv.find_element(By.ID, "live-img")
    seq = lambda: int(img.get_attribute("data-seq") or 0)  # noqa: E731
    check(wait_for(lambda: seq() > 0 and drv.execute_script("return arguments[0].naturalWidth", img) > 0, 10 * SLOW),
          "the live picture shows (picture %d, %d px wide)" % (seq(), drv.execute_script(
              "return arguments[0].naturalWidth", img)))
    s1, a = seq(), img.screenshot_as_png
    wait_for(lambda: seq() > s1 + 1, 5 * SLOW)
    time.sleep(0.3)
    s2, b = seq(), img.screenshot_as_png
    check(s2 > s1 and a != b, "the live picture changes between two reads (pictures %d -> %d, pixels differ)" % (s1, s2))
    loaded = lambda: [t for t in drv.find_elements(By.CSS_SELECTOR, "#camera-table img.thumb")  # noqa: E731
                      if drv.execute_script("return arguments[0].naturalWidth", t) > 0]
    wait_for(lambda: len(loaded()) == 5, 10 * SLOW)
    check(len(loaded()) == 5, "each camera's thumbnail shows (%d)" % len(loaded()))

    time.sleep(1)
    logs = [e for e in console(drv) if e[0] in ("SEVERE", "WARNING")]
    check(not logs, "no console error or warning since the page loaded%s" % (": %s" % logs[:3] if logs else ""))

    # the algorithm switch, made in the page
    check(control_algo() == "edge", "the control socket says edge before")
    drv.find_element(By.ID, "token").send_keys(token)
    drv.find_element(By.ID, "token-save").click()
    wait_for(lambda: drv.find_element(By.ID, "algo-apply").is_enabled(), 5)
    Select(drv.find_element(By.ID, "algo")).select_by_value("hq-linear")
    drv.find_element(By.ID, "algo-apply").click()
    check(wait_for(lambda: control_algo() == "hq-linear", 5 * SLOW),
          "an algorithm switch made in the page shows in the control socket's status (%s)" % control_algo())
    check(wait_for(lambda: "Switching to hq-linear" in text(drv, "#control-msg"), 5),
          "the page says: %s" % text(drv, "#control-msg"))
    check(wait_for(lambda: "hq-linear" in text(drv, "#pipeline-facts"), 5 * SLOW), "the pipeline card shows hq-linear")

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
    check(wait_for(lambda: "Refused" in text(drv, "#control-msg") and "wrong token" in text(drv, "#control-msg"), 5),
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
    check(wait_for(lambda: shown(drv, "#gone"), 10), "the page says the daemon is gone: %s" % text(drv, "#gone"))
    check("not answering" in text(drv, "#gone") and text(drv, "#state") == "Not answering",
          "plainly: \"%s\" / %s" % (text(drv, "#gone").split(".")[0], text(drv, "#state")))
    gone_shot = os.path.join(ARTEFACTS, "web-page-gone.png")
    drv.save_screenshot(gone_shot)
    d2 = start("browser2")
    check(d2 is not None, "panocap started again on the same port")
    if d2:
        check(wait_for(lambda: not shown(drv, "#gone"), 15 * SLOW), "the page carries on by itself: the banner is gone")
        check(wait_for(lambda: "restarted" in text(drv, "#notice"), 5), "it says: %s" % text(drv, "#notice"))
        f1 = frames(drv)
        time.sleep(2)
        f2 = frames(drv)
        check(len(f2) == 5 and all(b > a for a, b in zip(f1, f2)), "frames count up again: %s -> %s" % (f1, f2))
        check(wait_for(lambda: "edge" in text(drv, "#pipeline-facts"), 5), "the new daemon's algorithm (edge) shows")

    # behind a reverse proxy, under a prefix
    if d2:
        srv, pport = reverse_proxy("/site/panocap", PORT)
        try:
            console(drv)
            drv.get("http://127.0.0.1:%d/site/panocap/" % pport)
            ok = wait_for(lambda: len(frames(drv)) == 5 and min(frames(drv)) > 0, 10 * SLOW)
            img = drv.find_element(By.ID, "live-img")
            pic = wait_for(lambda: int(img.get_attribute("data-seq") or 0) > 0, 10 * SLOW)
            time.sleep(1)
            logs = [e for e in console(drv) if e[0] in ("SEVERE", "WARNING")]
            check(ok and pic and not logs, "behind a reverse proxy under /site/panocap/: the cameras, the live "
                  "picture, no console error%s" % (": %s" % logs[:2] if logs else ""))
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


if __name__ == "__main__":
    main()
