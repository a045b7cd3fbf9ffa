#!/usr/bin/python3
# test_eval_tool.py - panocap-eval on the example rig shrunk 8 times (the
# panorama 1088x130, views 240x134, the follow mode on 10 s of the match
# with cameras 16 times smaller): it runs every part, writes its table,
# Markdown block, figures.txt, follow.csv and follow.png, and its figures
# meet the quality targets where they do not depend on the picture's size,
# and stay within stated regression bounds where they do (each bound says
# what it was measured at and why it differs from the full-size target);
# then the panorama part with --sampler bicubic (panorama.sampler's other
# value) and a bad --sampler refused.
# TAP. Arguments: PANOCAP-EVAL RIG.pto. Needs hugin-tools and enblend
# (tools/install-deps installs them).
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from tap_util import check, done, skip_all

for t in ("nona", "enblend", "pano_trafo", "pano_modify"):
    if not shutil.which(t):
        skip_all("%s (hugin-tools, enblend) is not installed: tools/install-deps installs it" % t)

tool, rig = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="pc-eval-tool-")
try:
    out = os.path.join(tmp, "eval")
    cmd = [tool, "--rig", rig, "--out", out, "--scale", "8", "--algos", "edge", "--follow-seconds", "10",
           "--follow-camera-scale", "16", "--threads", "2", "--sampler", "bilinear"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if not check(r.returncode == 0, "%s: exit %d %s" % (" ".join(cmd[3:]), r.returncode, r.stderr[-400:])):
        print(r.stdout[-3000:])
        done()  # the plan so far, exit 1
    check("== summary" in r.stdout and "| part | what | figure | target |" in r.stdout,
          "the table and the Markdown block are printed")
    md = open(os.path.join(out, "report.md")).read()
    check(md.startswith("### Quality of the panorama") and "Reproduce: `panocap-eval --rig" in md
          and "CPU figures (" in md, "report.md: the Markdown block with the machine and the command")
    check("$ nona -c -o geo5_ geo_i5.pto" in r.stdout and "--rotate=" in r.stdout,
          "the Hugin commands are printed (nona -c, pano_modify --rotate)")
    fig = {}
    for line in open(os.path.join(out, "figures.txt")):
        k, v = line.split()
        fig[k] = float(v)
    check(len(fig) > 40, "figures.txt: %d figures" % len(fig))

    def at_least(name, lo, why):
        v = fig.get(name, float("nan"))
        check(v >= lo, "%s = %.3f >= %g (%s)" % (name, v, lo, why))

    def at_most(name, hi, why):
        v = fig.get(name, float("nan"))
        check(v <= hi, "%s = %.3f <= %g (%s)" % (name, v, hi, why))

    # (a) geometry: the targets themselves (bilinear against bilinear:
    # the size does not matter; measured about 90 dB and 55 dB at 1/4 and 1/8)
    target = "the target"
    at_least("geometry.remap.worst_cam_psnr_i5", 40, target)
    at_least("geometry.photo.worst_cam_psnr_i5", 40, target)
    at_most("geometry.coord_excess_px", 0.1, target)
    at_most("geometry.trafo_max_px", 0.1, target)
    # (c) views against nona: the target
    for k in range(4):
        at_least("views.%d.vs_nona_i5" % k, 40, target)
    # (b) against the scene. At 1/8 every pixel holds 64 times the
    # detail of a full-size one: all stitchers lose more, the demosaic
    # most (edge: 4.9 dB below nona + enblend at 1/4, 4.1 at 1/8, within
    # 3 dB only at full size), so the bounds here are regression bounds.
    e = fig["panorama.enblend_psnr"]
    check(fig["panorama.rgb_feather_psnr"] >= e - 1.5,
          "panocap from RGB %.2f dB within 1.5 dB of nona + enblend %.2f dB (measured 0.5 below at 1/8: bilinear "
          "against nona's cubic)" % (fig["panorama.rgb_feather_psnr"], e))
    check(fig["panorama.edge.feather.psnr"] >= e - 5.5,
          "Bayer edge, feather: %.2f dB within 5.5 dB of nona + enblend %.2f dB at 1/8 (measured 4.1; the 3 dB "
          "target is for full size)" % (fig["panorama.edge.feather.psnr"], e))
    for b in ("feather", "seam"):
        d = fig["panorama.edge.%s.rest_psnr" % b] - fig["panorama.edge.%s.zone_psnr" % b]
        check(d <= 1.0, "%s: the blend zones %.2f dB worse than elsewhere (<= 1: the target)" % (b, d))
    at_most("panorama.step_after", 2.0, "the .pto's photometry: 1.6 levels at 1/8 and 1/4, 0.17 at full size: "
            "the overlap samples of gain compensation see more demosaic colour error when small")
    at_least("panorama.step_uncal_before", 20, "without the .pto's exposures there is a step to remove")
    at_most("panorama.step_uncal_after_unclipped", 2.0, "compensation removes over 90 % of it (1.4 at 1/8)")
    # (d) follow: the motion's bounds are exact; 10 s with cameras of
    # 128x68 is short and coarse, so the ball's share is a regression bound
    # (91 % measured; the target, >= 90 % over 90 s, is BENCHMARKS.md's)
    at_most("follow.max_pan_speed", fig["follow.pan_speed_limit"] * 1.001, "the speed limit")
    at_most("follow.max_pan_accel", fig["follow.pan_accel_limit"] * 1.001, "the acceleration limit")
    at_least("follow.ball_in_view_pct", 95, "the ball in the view (100 % measured)")
    at_least("follow.ball_mid60_pct", 80, "the ball in the middle 60 % (91 % measured)")
    rows = open(os.path.join(out, "follow.csv")).read().splitlines()
    check(len(rows) == 501 and rows[0].startswith("t,pan,tilt,hfov,ball_pan"),
          "follow.csv: a header and 500 frames (%d lines)" % len(rows))
    png = open(os.path.join(out, "follow.png"), "rb").read(24)
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1600, 600),
          "follow.png: a 1600x600 PNG")
    for a in ("edge",):
        check(fig.get("panorama.%s.cameras_psnr" % a, 0) > 20 and fig.get("panorama.%s.cameras_edge_psnr" % a, 0) > 20
              and fig.get("panorama.%s.cameras_inside_psnr" % a, 0) > 20,
              "figures.txt: %s against the RGB pictures, at the cameras' edges and inside" % a)
    check("the panorama sampled bilinear" in md, "report.md: the panorama sampled bilinear (--sampler bilinear: the daemon's CPU backend)")
    # --sampler bicubic: the panorama part as panorama.sampler = "bicubic"
    # (feather and seam; multiband bilinear)
    out2 = os.path.join(tmp, "cubic")
    cmd = [tool, "--rig", rig, "--out", out2, "--scale", "8", "--algos", "edge", "--only", "panorama", "--sampler",
           "bicubic", "--threads", "2"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check(r.returncode == 0, "%s: exit %d %s" % (" ".join(cmd[3:]), r.returncode, r.stderr[-400:])):
        fig2 = {}
        for line in open(os.path.join(out2, "figures.txt")):
            k, v = line.split()
            fig2[k] = float(v)
        check("the panorama sampled bicubic" in open(os.path.join(out2, "report.md")).read()
              and "feather   bicubic" in r.stdout and "multiband bilinear" in r.stdout,
              "--sampler bicubic: feather and seam sampled bicubic, multiband bilinear, report.md says so")
        check(fig2.get("panorama.rgb_feather_psnr") == fig2.get("panorama.rgb_feather_bicubic_psnr")
              and fig.get("panorama.rgb_feather_psnr") == fig.get("panorama.rgb_feather_bilinear_psnr"),
              "panorama.rgb_feather_psnr is the evaluated sampler's")
        # what the sampler buys: the RGB pictures' panorama level with nona's
        # cubic (measured 0.6 dB above bilinear, 0.1 above nona + enblend, at
        # 1/8; 1.4 and 0.2 at full size). Not asked of edge's at 1/8: sharper
        # sampling shows its artefacts too (0.02 dB below bilinear there).
        rb, rc = fig2["panorama.rgb_feather_bilinear_psnr"], fig2["panorama.rgb_feather_bicubic_psnr"]
        check(rc >= rb + 0.3 and rc >= fig2["panorama.enblend_psnr"] - 0.5,
              "panocap from RGB: bicubic %.2f dB >= bilinear %.2f + 0.3, and within 0.5 dB of nona + enblend %.2f"
              % (rc, rb, fig2["panorama.enblend_psnr"]))
    r = subprocess.run([tool, "--rig", rig, "--out", out, "--sampler", "nearest"], capture_output=True, text=True)
    check(r.returncode == 64 and "--sampler" in r.stderr and "nearest" in r.stderr,
          "--sampler nearest: exit %d, '%s'" % (r.returncode, r.stderr.strip()[:120]))
    r = subprocess.run([tool, "--rig", rig, "--out", out, "--only", "geometry,nothing"], capture_output=True,
                       text=True)
    check(r.returncode == 64 and "--only" in r.stderr and "nothing" in r.stderr,
          "--only geometry,nothing: exit %d, '%s'" % (r.returncode, r.stderr.strip()[:120]))
    r = subprocess.run([tool, "--rig", os.path.join(tmp, "missing.pto"), "--out", out, "--only", "geometry"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "missing.pto" in r.stderr,
          "a missing rig: exit %d, '%s'" % (r.returncode, r.stderr.strip()[:120]))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
done()
