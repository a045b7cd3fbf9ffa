#!/usr/bin/python3
"""test_net_numpy.py - the learned demosaic's C reference (and the CPU
backend) against an independent forward pass in numpy, written from
demosaicnet's modules.py (BayerDemosaick.forward, _crop_like, bayer()) and
docs/net.md's padding rule, in float64, on crops of the sample photograph:
every CFA phase, a two-camera stack, small and odd-shaped crops.

  test_net_numpy.py NET_DUMP WEIGHTS SAMPLE.png

The weights are read from panocap's file here with struct (its layout,
docs/net.md), not through the C loader. Needs numpy and PIL (Debian's
python3-numpy, python3-pil; tools/install-deps); skips without them.
"""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap_util as tap  # noqa: E402

try:
    import numpy as np
    from PIL import Image
except ImportError as e:
    tap.skip_all("numpy or PIL missing (%s)" % e)


def read_weights(path):
    b = open(path, "rb").read()
    magic, ver, n, depth, width, total, name = struct.unpack_from("<8sIIIIQ32s", b, 0)
    assert magic == b"PCNETWTS" and ver == 1 and total == len(b)
    t = {}
    for i in range(n):
        e = struct.unpack_from("<48sI4IIQ", b, 64 + 80 * i)
        nm, nd, dims, off = e[0].rstrip(b"\0").decode(), e[1], e[2:2 + e[1]], e[7]
        cnt = int(np.prod(dims))
        t[nm] = np.frombuffer(b, "<f4", cnt, off).reshape(dims).astype(np.float64)
    return depth, width, t


def conv(x, w, b, stride=1):
    """nn.Conv2d without padding: x [C, H, W], w [O, C, k, k]."""
    o, c, k, _ = w.shape
    h = (x.shape[1] - k) // stride + 1
    wd = (x.shape[2] - k) // stride + 1
    out = np.zeros((o, h, wd)) + b[:, None, None]
    for ky in range(k):
        for kx in range(k):
            patch = x[:, ky:ky + stride * (h - 1) + 1:stride, kx:kx + stride * (wd - 1) + 1:stride]
            out += np.tensordot(w[:, :, ky, kx], patch, axes=([1], [0]))
    return out


def conv_transpose_g3(x, w, b):
    """nn.ConvTranspose2d(12, 3, 2, stride=2, groups=3): w [12, 1, 2, 2]."""
    _, h, wd = x.shape
    out = np.zeros((3, 2 * h, 2 * wd))
    for g in range(3):
        for ky in range(2):
            for kx in range(2):
                out[g, ky::2, kx::2] = b[g] + sum(w[ci, 0, ky, kx] * x[ci] for ci in range(4 * g, 4 * g + 4))
    return out


def crop_like(src, tgt):
    crop = np.array(src.shape[-2:]) - np.array(tgt.shape[-2:])
    t, l = crop[0] // 2, crop[1] // 2
    return src[..., t:src.shape[-2] - (crop[0] - t), l:src.shape[-1] - (crop[1] - l)]


def forward(depth, width, t, mosaic):
    x = conv(mosaic, t["main_processor.pack_mosaic.weight"], t["main_processor.pack_mosaic.bias"], 2)
    for i in range(1, depth + 1):
        x = np.maximum(conv(x, t["main_processor.conv%d.weight" % i], t["main_processor.conv%d.bias" % i]), 0)
    filtered = x[:width] * x[width:2 * width]
    residual = conv(filtered, t["residual_predictor.weight"], t["residual_predictor.bias"])
    up = conv_transpose_g3(residual, t["upsampler.weight"], t["upsampler.bias"])
    packed = np.concatenate([crop_like(mosaic, up), up], 0)
    y = np.maximum(conv(packed, t["fullres_processor.post_conv.weight"], t["fullres_processor.post_conv.bias"]), 0)
    return conv(y, t["fullres_processor.output.weight"], t["fullres_processor.output.bias"])


RED = {"RGGB": (0, 0), "GRBG": (1, 0), "GBRG": (0, 1), "BGGR": (1, 1)}


def colour_of(x, y, cfa):
    ox, oy = RED[cfa]
    sx, sy = (x - ox) % 2, (y - oy) % 2
    return 0 if (sx, sy) == (0, 0) else 2 if (sx, sy) == (1, 1) else 1


def demosaic_camera(depth, width, t, raw, cfa):
    """One camera: pad by reflection (numpy's 'reflect' = reflect-101) so
    that the padded frame starts on a G R / B G block (modules.py's bayer()
    pattern), at least the network's 2 depth + 1 on every side."""
    h, w = raw.shape
    m = 2 * depth + 1
    ox, oy = RED[cfa]
    # padded (1, 0) must be red: image x = 1 - px = ox, y = -py = oy (mod 2)
    px = next(p for p in (m, m + 1) if (1 - p - ox) % 2 == 0)
    py = next(p for p in (m, m + 1) if (-p - oy) % 2 == 0)
    big = np.pad(raw, ((py, py), (px, px)), mode="reflect") if max(px, py) < min(h, w) else None
    if big is None:  # repeated reflect-101 for crops smaller than the pad
        ys = [abs((i - py) % (2 * h - 2)) for i in range(h + 2 * py)]
        ys = [v if v < h else 2 * h - 2 - v for v in ys]
        xs = [abs((i - px) % (2 * w - 2)) for i in range(w + 2 * px)]
        xs = [v if v < w else 2 * w - 2 - v for v in xs]
        big = raw[np.ix_(ys, xs)]
    hh, ww = big.shape
    mosaic = np.zeros((3, hh, ww))
    for y in range(2):
        for x in range(2):
            c = [0, 1, 1, 2][(x - 1) % 2 + 2 * (y % 2)]  # GRBG: (0,0) G, (1,0) R, (0,1) B, (1,1) G
            mosaic[c, y::2, x::2] = big[y::2, x::2] / 255.0
    out = forward(depth, width, t, mosaic)
    out = out[:, py - m:py - m + h, px - m:px - m + w]
    return np.floor(np.clip(out, 0, 1) * 255 + 0.5).astype(np.int64).transpose(1, 2, 0)


def mosaic_of(rgb, cfa):
    h, w, _ = rgb.shape
    raw = np.zeros((h, w), np.uint8)
    for y in range(2):
        for x in range(2):
            raw[y::2, x::2] = rgb[y::2, x::2, colour_of(x, y, cfa)]
    return raw


def run_c(dump, weights, impl, cfa, cam_rows, raw, tmp):
    h, w = raw.shape
    src, dst = os.path.join(tmp, "in.raw"), os.path.join(tmp, "out.rgb")
    raw.tofile(src)
    p = subprocess.run([dump, weights, impl, cfa, str(cam_rows), str(w), str(h), src, dst],
                       capture_output=True, text=True)
    if p.returncode == 77:
        return None
    if p.returncode != 0:
        tap.diag(p.stderr)
        return "error"
    return np.fromfile(dst, np.uint8).reshape(h, w, 3).astype(np.int64)


def compare(what, c, ref):
    if c is None:
        tap.skip("%s: lanes not on this CPU" % what)
        return
    if isinstance(c, str):
        tap.check(False, "%s: net_dump failed" % what)
        return
    d = np.abs(c - ref)
    exact = float(np.mean(d == 0))
    tap.check(d.max() <= 1 and exact >= 0.999,
              "%s: %dx%d, max |C - numpy| %d, %.4f%% of samples equal" %
              (what, c.shape[1], c.shape[0], d.max(), 100 * exact))


def main():
    if len(sys.argv) != 4:
        print("usage: test_net_numpy.py NET_DUMP WEIGHTS SAMPLE.png", file=sys.stderr)
        return 64
    dump, weights, sample = sys.argv[1:]
    depth, width, t = read_weights(weights)
    img = np.asarray(Image.open(sample).convert("RGB"))
    tap.diag("weights %s: depth %d width %d; sample %s %dx%d" % (weights, depth, width, sample, img.shape[1],
                                                                img.shape[0]))
    with tempfile.TemporaryDirectory() as tmp:
        # every CFA phase on a 48x40 crop with detail (the reference and the CPU backend)
        crop = img[200:240, 300:348]
        for cfa in ("RGGB", "GRBG", "GBRG", "BGGR"):
            raw = mosaic_of(crop, cfa)
            ref = demosaic_camera(depth, width, t, raw, cfa)
            compare("reference, %s" % cfa, run_c(dump, weights, "ref", cfa, 0, raw, tmp), ref)
            compare("CPU backend, %s" % cfa, run_c(dump, weights, "cpu", cfa, 0, raw, tmp), ref)
        # a crop smaller than the padding (repeated reflection), and a wide one
        for (y, x, h, w) in ((120, 410, 8, 12), (60, 100, 16, 96)):
            raw = mosaic_of(img[y:y + h, x:x + w], "RGGB")
            compare("reference, RGGB %dx%d" % (w, h), run_c(dump, weights, "ref", "RGGB", 0, raw, tmp),
                    demosaic_camera(depth, width, t, raw, "RGGB"))
        # two stacked cameras: each demosaiced on its own
        a, b = mosaic_of(img[10:34, 20:60], "BGGR"), mosaic_of(img[300:324, 500:540], "BGGR")
        ref = np.concatenate([demosaic_camera(depth, width, t, a, "BGGR"),
                              demosaic_camera(depth, width, t, b, "BGGR")], 0)
        both = np.concatenate([a, b], 0)
        compare("reference, two 40x24 cameras stacked", run_c(dump, weights, "ref", "BGGR", 24, both, tmp), ref)
        for lanes in ("baseline", "avx2", "avx512"):
            compare("CPU backend (%s), two cameras stacked" % lanes,
                    run_c(dump, weights, "cpu:" + lanes, "BGGR", 24, both, tmp), ref)
    tap.done()


if __name__ == "__main__":
    sys.exit(main())
