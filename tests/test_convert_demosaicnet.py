#!/usr/bin/python3
"""test_convert_demosaicnet.py - tools/convert-demosaicnet on checkpoints
written here the way torch.save writes them, without torch: stand-in
modules named torch and torch._utils give the pickles the same globals
(torch.FloatStorage, torch._utils._rebuild_tensor_v2) and persistent ids.

  - a small BayerDemosaick state dict (depth 2, width 3; two tensors sharing
    one storage at an offset) in the legacy format (the published file's:
    pickles, then each storage's count and bytes) and in the zip format
    (data.pkl + data/KEY): both convert, to the same bytes, twice alike;
  - the file read back with struct (the layout of docs/net.md): the header,
    every tensor's name, shape and values, the digest;
  - a tensor of the wrong shape, a double tensor and a file that is no
    checkpoint are refused (exit 1, the message says what);
  - the committed data/demosaicnet-bayer.pcnet passes --dump (digest
    checked).

  test_convert_demosaicnet.py CONVERTER WEIGHTS
Standard library only."""
import collections
import hashlib
import io
import os
import pickle
import random
import struct
import subprocess
import sys
import tempfile
import types
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap_util as tap  # noqa: E402

# --- stand-ins for what torch.save pickles -------------------------------------------------------
torch = types.ModuleType("torch")
torch_utils = types.ModuleType("torch._utils")


class FloatStorage:
    pass


class DoubleStorage:
    pass


FloatStorage.__module__ = DoubleStorage.__module__ = "torch"
torch.FloatStorage, torch.DoubleStorage = FloatStorage, DoubleStorage


def _rebuild_tensor_v2(*a):
    raise AssertionError("never called when writing")


_rebuild_tensor_v2.__module__ = "torch._utils"
torch_utils._rebuild_tensor_v2 = _rebuild_tensor_v2
torch._utils = torch_utils
sys.modules["torch"], sys.modules["torch._utils"] = torch, torch_utils


class Storage:
    def __init__(self, key, values, stype=FloatStorage):
        self.key, self.values, self.stype = key, values, stype

    def raw(self):
        return struct.pack("<%d%s" % (len(self.values), "f" if self.stype is FloatStorage else "d"), *self.values)


class Tensor:
    def __init__(self, storage, offset, shape):
        self.storage, self.offset, self.shape = storage, offset, tuple(shape)

    def __reduce__(self):
        stride, s = [], 1
        for d in reversed(self.shape):
            stride.insert(0, s)
            s *= d
        return (_rebuild_tensor_v2, (self.storage, self.offset, self.shape, tuple(stride), False,
                                     collections.OrderedDict()))


def model_shapes(depth, width):
    s = collections.OrderedDict()
    s["main_processor.pack_mosaic.weight"] = (4, 3, 2, 2)
    s["main_processor.pack_mosaic.bias"] = (4,)
    for i in range(depth):
        cin, cout = (4 if i == 0 else width), (2 * width if i == depth - 1 else width)
        s["main_processor.conv%d.weight" % (i + 1)] = (cout, cin, 3, 3)
        s["main_processor.conv%d.bias" % (i + 1)] = (cout,)
    s["residual_predictor.weight"] = (12, width, 1, 1)
    s["residual_predictor.bias"] = (12,)
    s["upsampler.weight"] = (12, 1, 2, 2)
    s["upsampler.bias"] = (3,)
    s["fullres_processor.post_conv.weight"] = (width, 6, 3, 3)
    s["fullres_processor.post_conv.bias"] = (width,)
    s["fullres_processor.output.weight"] = (3, width, 1, 1)
    s["fullres_processor.output.bias"] = (3,)
    return s


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def make_state(depth=2, width=3, bad=None):
    """The state dict (OrderedDict of Tensor), its storages and the values
    of every tensor (what the file must hold)."""
    rnd = random.Random(7)
    shapes = model_shapes(depth, width)
    if bad == "shape":
        shapes["main_processor.conv2.weight"] = (2 * width, width, 3, 2)
    state, storages, values = collections.OrderedDict(), [], {}
    names = list(shapes)
    i = 0
    while i < len(names):
        n = names[i]
        vals = [struct.unpack("<f", struct.pack("<f", rnd.uniform(-2, 2)))[0] for _ in range(numel(shapes[n]))]
        if n.endswith(".weight") and i + 1 < len(names) and names[i + 1].endswith(".bias") and n.startswith("main"):
            # weight and bias in one storage, the bias at an offset
            b = names[i + 1]
            bvals = [struct.unpack("<f", struct.pack("<f", rnd.uniform(-1, 1)))[0] for _ in range(numel(shapes[b]))]
            st = Storage(str(len(storages)), vals + bvals)
            storages.append(st)
            state[n], state[b] = Tensor(st, 0, shapes[n]), Tensor(st, len(vals), shapes[b])
            values[n], values[b] = vals, bvals
            i += 2
            continue
        st = Storage(str(len(storages)), vals, DoubleStorage if bad == "double" and n == "upsampler.bias" else
                     FloatStorage)
        storages.append(st)
        state[n] = Tensor(st, 0, shapes[n])
        values[n] = vals
        i += 1
    return state, storages, values


class Pickler(pickle.Pickler):
    def __init__(self, f, legacy):
        super().__init__(f, protocol=2)
        self.legacy = legacy

    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            if self.legacy:
                return ("storage", obj.stype, obj.key, "cpu", len(obj.values), None)
            return ("storage", obj.stype, obj.key, "cpu", len(obj.values))
        return None


def write_legacy(path, state, storages):
    f = io.BytesIO()
    pickle.dump(0x1950A86A20F9469CFC6C, f, protocol=2)
    pickle.dump(1001, f, protocol=2)
    pickle.dump({"protocol_version": 1001, "little_endian": True,
                 "type_sizes": {"short": 2, "int": 4, "long": 4}}, f, protocol=2)
    Pickler(f, True).dump(state)
    keys = sorted(s.key for s in storages)
    pickle.dump(keys, f, protocol=2)
    by_key = {s.key: s for s in storages}
    for k in keys:
        f.write(struct.pack("<q", len(by_key[k].values)))
        f.write(by_key[k].raw())
    open(path, "wb").write(f.getvalue())


def write_zip(path, state, storages):
    f = io.BytesIO()
    Pickler(f, False).dump(state)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("bayer/data.pkl", f.getvalue())
        z.writestr("bayer/byteorder", "little")
        for s in storages:
            z.writestr("bayer/data/" + s.key, s.raw())
        z.writestr("bayer/version", "3\n")


def read_back(path):
    b = open(path, "rb").read()
    magic, ver, n, depth, width, total, name = struct.unpack_from("<8sIIIIQ32s", b, 0)
    tensors = collections.OrderedDict()
    for i in range(n):
        e = struct.unpack_from("<48sI4IIQ", b, 64 + 80 * i)
        nm, nd, dims, off = e[0].rstrip(b"\0").decode(), e[1], tuple(e[2:2 + e[1]]), e[7]
        tensors[nm] = (dims, list(struct.unpack_from("<%df" % numel(dims), b, off)), off)
    return magic, ver, depth, width, total, name.rstrip(b"\0"), tensors, b


def convert(conv, src, dst):
    p = subprocess.run([conv, src, dst], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    if len(sys.argv) != 3:
        print("usage: test_convert_demosaicnet.py CONVERTER WEIGHTS", file=sys.stderr)
        return 64
    conv, weights = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        state, storages, values = make_state()
        legacy, zipped = os.path.join(tmp, "legacy.pth"), os.path.join(tmp, "zip.pth")
        write_legacy(legacy, state, storages)
        write_zip(zipped, state, storages)
        outs = []
        for what, src in (("legacy", legacy), ("zip", zipped), ("legacy again", legacy)):
            dst = os.path.join(tmp, "%s.pcnet" % what.replace(" ", "_"))
            rc, msg = convert(conv, src, dst)
            tap.check(rc == 0, "%s checkpoint converts (exit %d): %s" % (what, rc, msg.strip().splitlines()[-1:]))
            outs.append(open(dst, "rb").read() if rc == 0 else b"")
        tap.check(outs[0] and outs[0] == outs[1] == outs[2],
                  "the legacy and the zip checkpoint give the same bytes, and a rerun the same again")
        magic, ver, depth, width, total, name, tensors, b = read_back(os.path.join(tmp, "legacy.pcnet"))
        tap.check(magic == b"PCNETWTS" and ver == 1 and depth == 2 and width == 3 and total == len(b) and
                  name == b"demosaicnet-bayer",
                  "header: magic, version 1, depth 2, width 3, size %d, name %s" % (total, name))
        tap.check(list(tensors) == list(values), "the tensors in the state dict's order (%d)" % len(tensors))
        bad = [n for n in values if tensors.get(n, ((), [], 0))[1] != values[n] or
               tensors[n][0] != tuple(state[n].shape)]
        tap.check(not bad, "every tensor's shape and float32 values as written (shared storage, offsets)%s"
                  % (": differ " + ", ".join(bad) if bad else ""))
        tap.check(all(t[2] % 64 == 0 for t in tensors.values()), "each tensor's data on a 64-byte boundary")
        tap.check(hashlib.sha256(b[:-32]).digest() == b[-32:], "the last 32 bytes are the SHA-256 of the rest")
        for kind, want in (("shape", "has shape"), ("double", "only float32")):
            st, sto, _ = make_state(bad=kind)
            src = os.path.join(tmp, "bad-%s.pth" % kind)
            write_legacy(src, st, sto)
            rc, msg = convert(conv, src, os.path.join(tmp, "bad.pcnet"))
            tap.check(rc == 1 and want in msg and src in msg,
                      "a checkpoint with a %s tensor is refused naming it (exit %d): %s" % (
                          "wrong-shape" if kind == "shape" else "double", rc, msg.strip()))
        junk = os.path.join(tmp, "junk.pth")
        open(junk, "wb").write(b"not a checkpoint at all")
        rc, msg = convert(conv, junk, os.path.join(tmp, "bad.pcnet"))
        tap.check(rc == 1 and junk in msg, "a file that is no checkpoint is refused (exit %d): %s" % (rc, msg.strip()))
        p = subprocess.run([conv, "--dump", weights], capture_output=True, text=True)
        tap.check(p.returncode == 0 and "(matches)" in p.stdout and "depth 15 width 64, 40 tensors" in p.stdout,
                  "the committed %s: --dump reads it, digest matches" % weights)
    tap.done()


if __name__ == "__main__":
    sys.exit(main())
