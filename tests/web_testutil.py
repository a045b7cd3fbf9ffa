"""web_testutil.py - shared helpers of the web page's tests (test_daemon_web.py,
test_web_browser.py), which run the real panocap as a child process with its
web page on a free port of 127.0.0.1: TAP output (tap_util.py), the child (killed with the
test however it ends: PR_SET_PDEATHSIG and atexit), its log, raw HTTP
requests (every header and byte as the test says), the control socket, and a
temp dir removed at the end. Standard library only; Debian's python3."""
import atexit
import ctypes
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# --- TAP (tap_util.py; the web tests take them from here) -------------------

from tap_util import check, diag, done, skip, skip_all  # noqa: E402,F401


def sanitized():
    """A sanitizer build (tools/run-tests sets PC_TEST_SANITIZE): slower."""
    return os.environ.get("PC_TEST_SANITIZE", "0") not in ("", "0")


# --- temp dir, ports -----------------------------------------------------------

def tmpdir(name):
    d = tempfile.mkdtemp(prefix="pc-%s-" % name, dir=os.environ.get("TMPDIR") or "/tmp")
    atexit.register(shutil.rmtree, d, True)
    return d


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --- the daemon -----------------------------------------------------------------

_children = []


def _kill_children():
    for p in _children:
        if p.poll() is None:
            p.kill()
            p.wait()


atexit.register(_kill_children)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))


def _die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Daemon:
    """panocap with args, its stdout/stderr in dir/<name>.out/.err."""

    def __init__(self, exe, dir, name, args, port=None):
        self.dir = dir
        self.port = port
        self.out = os.path.join(dir, name + ".out")
        self.err = os.path.join(dir, name + ".err")
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
        with open(self.out, "wb") as o, open(self.err, "wb") as e:
            self.proc = subprocess.Popen([os.path.abspath(exe)] + args, cwd=dir, stdout=o, stderr=e, env=env,
                                         preexec_fn=_die_with_parent)
        _children.append(self.proc)

    def log(self):
        with open(self.err, errors="replace") as f:
            return f.read()

    def running(self):
        return self.proc.poll() is None

    def wait_ready(self, timeout=60):
        """Until /healthz answers 200 (frame sets flow); True when it did."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.running():
            try:
                r = request(self.port, "GET", "/healthz")
                if r.status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.2)
        return False

    def wait_log(self, needle, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if needle in self.log():
                return True
            if not self.running():
                return needle in self.log()
            time.sleep(0.1)
        return False

    def stop(self, timeout=60):
        """SIGTERM, then the exit code (None if it had to be killed)."""
        if self.running():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


# --- the daemon's files -------------------------------------------------------------

def probe_video(path, errors=None):
    """(width, height, frames) of the first video stream of a file, every frame
    decoded by ffprobe ((0, 0, 0) when it cannot read one); what ffprobe
    reports as errors is appended to the list errors when one is given."""
    p = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                        "stream=width,height,nb_read_frames", "-of", "csv=p=0", path],
                       capture_output=True, text=True, timeout=120)
    if errors is not None and p.stderr.strip():
        errors.append(p.stderr.strip())
    m = re.match(r"(\d+),(\d+),(\d+)", p.stdout.strip())
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0)


# --- HTTP -------------------------------------------------------------------------

class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case names
        self.body = body

    def json(self):
        try:
            return json.loads(self.body.decode())
        except ValueError:
            return None

    def error(self):
        """The reason of a JSON error answer, or ""."""
        j = self.json()
        return j.get("error", "") if isinstance(j, dict) else ""


def request(port, method, path, body=None, headers=None, timeout=10):
    """One request on its own connection; body bytes sent as they are (a
    Host in headers replaces the one http.client would send)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        hs = dict(headers or {})
        c.putrequest(method, path, skip_host="Host" in hs, skip_accept_encoding=True)
        if body is not None and "Transfer-Encoding" not in hs:
            hs.setdefault("Content-Length", str(len(body)))
        for k, v in hs.items():
            c.putheader(k, v)
        c.endheaders()
        if body is not None:
            if hs.get("Transfer-Encoding") == "chunked":
                for i in range(0, len(body), 1000):
                    part = body[i:i + 1000]
                    c.send(b"%x\r\n%s\r\n" % (len(part), part))
                c.send(b"0\r\n\r\n")
            else:
                c.send(body)
        r = c.getresponse()
        data = r.read()
        return Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
    finally:
        c.close()


def raw(port, data, timeout=10):
    """data sent as it is on a connection of its own; what comes back until
    the server closes it (or timeout seconds), as bytes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        s.sendall(data)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                chunk = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            out += chunk
    finally:
        s.close()
    return out


def raw_status(answer):
    """The status code of a raw answer's first status line, or 0."""
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return int(m.group(1)) if m else 0


def post_json(port, path, obj, token=None, raw=None, content_type="application/json"):
    body = raw if raw is not None else json.dumps(obj).encode()
    headers = {"Content-Type": content_type} if content_type else {}
    if token is not None:
        headers["X-Panocap-Token"] = token
    return request(port, "POST", path, body, headers)


def get_json(port, path):
    r = request(port, "GET", path)
    return r.json() if r.status == 200 else None


# --- the control socket ---------------------------------------------------------------

def control(path, command, timeout=10):
    """Sends one command line; the answer up to its OK/ERR line."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(command.encode() + b"\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            lines = data.decode(errors="replace").splitlines()
            if lines and (lines[-1].startswith("OK") or lines[-1].startswith("ERR")) and data.endswith(b"\n"):
                break
        return data.decode(errors="replace")
    finally:
        s.close()


def wait_for(pred, timeout, step=0.1):
    """pred() until it is true or the time is up; its last value."""
    end = time.monotonic() + timeout
    v = pred()
    while not v and time.monotonic() < end:
        time.sleep(step)
        v = pred()
    return v


# --- a reverse proxy ------------------------------------------------------------------

def reverse_proxy(prefix, port):
    """Serves http://127.0.0.1:<its port>/<prefix>/... from 127.0.0.1:port/...,
    as a site's reverse proxy would (headers passed on, the prefix cut).
    Returns (server, its port); server.shutdown() ends it."""
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def forward(self):
            if not self.path.startswith(prefix + "/"):
                self.send_error(404)
                return
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            hs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "content-length")}
            try:
                r = request(port, self.command, self.path[len(prefix):], body, hs)
            except OSError:
                self.send_error(502)
                return
            self.send_response(r.status)
            for k, v in r.headers.items():
                if k not in ("connection", "content-length", "transfer-encoding", "date", "server"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(r.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(r.body)

        do_GET = do_POST = do_HEAD = forward

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]
