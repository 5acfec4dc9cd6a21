"""eval_npy.py: a run's saved model evaluated with NumPy alone, from its
model.npy and model.json, on an IDX test set: what a researcher without
asgd can do with a run folder. Prints the test accuracy.

    python3 tests/eval_npy.py RUN_DIR DATA_DIR"""
import gzip
import json
import os
import sys

import numpy as np


def idx(path):
    """An IDX file of unsigned bytes (gzip or plain) as an array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def find(folder, stem):
    plain = os.path.join(folder, stem)
    return plain if os.path.exists(plain) else plain + ".gz"


def block(params, spec):
    size = int(np.prod(spec["shape"]))
    return params[spec["offset"]: spec["offset"] + size].reshape(spec["shape"])


def conv(x, w, b, pad):
    """'same' convolution, NHWC input, HWIO weights, stride 1."""
    k = w.shape[0]
    n, h, wd, c = x.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh, ow = h + 2 * pad - k + 1, wd + 2 * pad - k + 1
    cols = np.empty((n, oh, ow, k, k, c), x.dtype)
    for di in range(k):
        for dj in range(k):
            cols[:, :, :, di, dj, :] = xp[:, di: di + oh, dj: dj + ow, :]
    return cols.reshape(n, oh, ow, k * k * c) @ w.reshape(k * k * c, -1) + b


def maxpool(x, s):
    n, h, w, c = x.shape
    x = x[:, : h // s * s, : w // s * s, :]
    return x.reshape(n, h // s, s, w // s, s, c).max(axis=(2, 4))


def main():
    run, data = sys.argv[1], sys.argv[2]
    with open(os.path.join(run, "model.json")) as f:
        desc = json.load(f)
    params = np.load(os.path.join(run, desc["file"])).astype(np.float64)
    assert params.shape == (desc["params"],)
    # the first test_examples of the file: the set the run's accuracy is of
    # (data.test_size; all 10,000 were read against a run of 1,000)
    n = desc["test_examples"]
    images = idx(find(data, "t10k-images-idx3-ubyte"))[:n].astype(np.float64) / 255
    labels = idx(find(data, "t10k-labels-idx1-ubyte"))[:n]
    inputs = (images.reshape(len(labels), -1) - desc["input"]["mean"]) / desc["input"]["std"]
    correct = 0
    for start in range(0, len(labels), 500):
        x = inputs[start: start + 500]
        correct += (forward(desc, params, x).argmax(axis=1) == labels[start: start + 500]).sum()
    print(f"{correct / len(labels):.6f}")


def forward(desc, params, x):
    """The logits of a batch of examples (rows)."""
    for layer in desc["layers"]:
        h, w, c = layer["input"]
        if layer["kind"] == "dense":
            x = x.reshape(len(x), -1) @ block(params, layer["W"]) + block(params, layer["b"])
        elif layer["kind"] == "conv":
            x = conv(x.reshape(len(x), h, w, c), block(params, layer["W"]),
                     block(params, layer["b"]), layer["padding"])
        else:
            x = maxpool(x.reshape(len(x), h, w, c), layer["window"])
        if layer["relu"]:
            x = np.maximum(x, 0)
    return x.reshape(len(x), -1)


main()
