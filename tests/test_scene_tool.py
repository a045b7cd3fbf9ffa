#!/usr/bin/python3
# test_scene_tool.py - panocap-scene on the example rig: --coverage gives the
# crop the example's p line has; the pictures, rig.pto, panorama, view and
# objects.csv it writes have the sizes and rows they should; and Hugin's
# own renderer, nona, remapping the camera pictures through rig.pto (and
# undoing their exposure, white balance, vignetting and response) lands on
# panocap-scene's direct rendering of the panorama (the ground truth)
# within a stated PSNR and with no brightness or colour offset, while the
# same layers against the ground truth moved by one pixel fall well below
# it (the check sees geometry).
# TAP. Arguments: PANOCAP-SCENE RIG.pto. Needs hugin-tools, numpy, PIL and
# tifffile (tools/install-deps installs them).
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap_util import check, done, skip_all

try:
    import numpy as np
    import tifffile
    from PIL import Image
except ImportError as e:
    skip_all("numpy, PIL or tifffile missing (%s): tools/install-deps installs them" % e)
if not shutil.which("nona"):
    skip_all("nona (hugin-tools) is not installed: tools/install-deps installs it")

tool, rig = sys.argv[1], sys.argv[2]
text = open(rig).read()
pline = [l for l in text.splitlines() if l.startswith("p ")][0]
crop = tuple(int(v) for v in re.search(r" S(\d+),(\d+),(\d+),(\d+)", pline).groups())

r = subprocess.run([tool, "--rig", rig, "--coverage"], capture_output=True, text=True)
check(r.returncode == 0 and r.stdout.strip() == "S%d,%d,%d,%d" % crop,
      "--coverage on the example rig: %s (its p line: S%d,%d,%d,%d)" % (r.stdout.strip() or r.stderr.strip(), *crop))

tmp = tempfile.mkdtemp(prefix="pc-scene-tool-")
try:
    out = os.path.join(tmp, "out")
    r = subprocess.run([tool, "--rig", rig, "--out", out, "--scale", "4", "--time", "12.5",
                        "--view", "10,-8,30,320x180", "--threads", "2"], capture_output=True, text=True)
    check(r.returncode == 0, "panocap-scene --scale 4 --time 12.5 --view ...: exit %d %s" % (r.returncode, r.stderr))

    sizes = [Image.open(os.path.join(out, "cam%d.png" % i)).size for i in range(5)]
    check(sizes == [(510, 270)] * 5, "cam0..4.png are 510x270 (2040x1080 / 4): %s" % sizes)
    want = (round(crop[1] / 4) - round(crop[0] / 4), round(crop[3] / 4) - round(crop[2] / 4))
    pano = np.asarray(Image.open(os.path.join(out, "panorama.png")).convert("RGB")).astype(np.float64)
    check((pano.shape[1], pano.shape[0]) == want, "panorama.png is the scaled crop: %dx%d (want %dx%d)"
          % (pano.shape[1], pano.shape[0], *want))
    check(Image.open(os.path.join(out, "view.png")).size == (320, 180), "view.png is 320x180")
    rows = list(csv.DictReader(open(os.path.join(out, "objects.csv"))))
    kinds = [row["kind"] for row in rows]
    check(len(rows) == 24 and kinds[0] == "ball" and kinds.count("player") == 20 and kinds.count("goalkeeper") == 2
          and kinds[-1] == "referee" and all(row["t"] == "12.5000" for row in rows),
          "objects.csv: the ball, 20 players, 2 goalkeepers, the referee at t = 12.5")
    ball = rows[0]
    seen = [i for i in range(5) if ball["cam%d_x" % i]]
    bx, by = float(ball["pano_x"]), float(ball["pano_y"])
    check(len(seen) >= 1 and 0 <= bx < want[0] and 0 <= by < want[1] and "view_x" in ball,
          "the ball: seen by camera(s) %s, at (%.1f, %.1f) in the panorama" % (seen, bx, by))

    # nona through the written rig.pto, layer by layer, against the ground truth
    r = subprocess.run(["nona", "-m", "TIFF_m", "-o", os.path.join(out, "layer"), os.path.join(out, "rig.pto")],
                       capture_output=True, text=True)
    check(r.returncode == 0, "nona renders rig.pto's pictures: exit %d %s" % (r.returncode, r.stderr[-300:]))
    p_scaled = [l for l in open(os.path.join(out, "rig.pto")) if l.startswith("p ")][0]
    L, R, T, B = (int(v) for v in re.search(r" S(\d+),(\d+),(\d+),(\d+)", p_scaled).groups())
    se = se_shift = count = 0.0
    offset = 0.0  # the largest mean difference of a layer's channel
    for i in range(5):
        with tifffile.TiffFile(os.path.join(out, "layer%04d.tif" % i)) as tf:
            page = tf.pages[0]
            a = page.asarray()
            res = page.tags["XResolution"].value
            res = res[0] / res[1]
            ox = round(page.tags["XPosition"].value[0] / page.tags["XPosition"].value[1] * res) \
                if "XPosition" in page.tags else 0
            oy = round(page.tags["YPosition"].value[0] / page.tags["YPosition"].value[1] * res) \
                if "YPosition" in page.tags else 0
        rgb = a[..., :3].astype(np.float64) / (257.0 if a.dtype == np.uint16 else 1.0)
        alpha = a[..., 3] > 0
        # two pixels in from every layer edge (nona's edge pixels are partial)
        for _ in range(2):
            e = alpha.copy()
            e[1:, :] &= alpha[:-1, :]
            e[:-1, :] &= alpha[1:, :]
            e[:, 1:] &= alpha[:, :-1]
            e[:, :-1] &= alpha[:, 1:]
            alpha = e
        h, w = alpha.shape
        x0, y0, x1, y1 = max(ox, L) + 1, max(oy, T), min(ox + w, R) - 1, min(oy + h, B)
        lay = rgb[y0 - oy:y1 - oy, x0 - ox:x1 - ox]
        m = alpha[y0 - oy:y1 - oy, x0 - ox:x1 - ox]
        g = pano[y0 - T:y1 - T, x0 - L:x1 - L]
        g1 = pano[y0 - T:y1 - T, x0 - L + 1:x1 - L + 1]  # the ground truth one pixel to the left
        se += ((lay - g)[m] ** 2).sum()
        offset = max(offset, np.abs((lay - g)[m].mean(axis=0)).max())
        se_shift += ((lay - g1)[m] ** 2).sum()
        count += m.sum() * 3
    psnr = 10 * np.log10(255.0 ** 2 * count / se)
    psnr_shift = 10 * np.log10(255.0 ** 2 * count / se_shift)
    # measured 35.3 dB at this size (41.2 dB at full size, where less of the
    # picture is detail of a pixel or two), means within 0.08 of a level
    check(psnr >= 34.0, "nona's layers against the direct rendering of the panorama: %.2f dB over %d pixels "
          "(>= 34)" % (psnr, count / 3))
    check(offset < 0.3, "no exposure or colour offset: every layer's channels within %.3f of a level of the "
          "ground truth on average (< 0.3)" % offset)
    check(psnr_shift < psnr - 3.0, "... against the ground truth moved by one pixel: %.2f dB (the check sees "
          "geometry)" % psnr_shift)

    r = subprocess.run([tool, "--rig", rig, "--out", out, "--only", "view"], capture_output=True, text=True)
    check(r.returncode == 64 and "--view" in r.stderr, "--only view without --view: exit 64, %s" % r.stderr.strip())
    r = subprocess.run([tool, "--rig", os.path.join(tmp, "missing.pto"), "--out", out], capture_output=True, text=True)
    check(r.returncode == 1 and "missing.pto" in r.stderr, "a missing rig: exit 1, %s" % r.stderr.strip())
finally:
    shutil.rmtree(tmp)

done()
