#!/usr/bin/python3
"""PyTorch's figure for tg_bench's loader_digits_crop_flip_b128_w2 (bench/bench_loader.c): one
epoch of torch.utils.data.DataLoader(num_workers=2, batch_size=128, shuffle=True) over the
1,500 training digits (examples/train_cnn.c's split of sklearn's digits.csv.gz), each sample a
(1, 8, 8) float32 image randomly cropped from its zero-padded (padding 1) copy and flipped
horizontally with probability 1/2, as nn/data/digits.c does, and an int64 label. The workers
are persistent (started once, outside the timing), as tensorgen's threads cost nothing to start;
the batches are dropped at once. One JSON line in torch_bench.py's format ("src": "torch"),
samples/s.

Usage: /usr/bin/python3 bench/torch_loader.py [--threads 2] [--repeats 7] [--only a,b]"""
import argparse
import gzip
import json
import statistics
import time

DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
NAME = "loader_digits_crop_flip_b128_w2"


def train_split():
    """train_cnn's split: Fisher-Yates over 0..1796 with its LCG seeded 12345; first 1,500."""
    order = list(range(1797))
    state = 12345
    for i in range(1796, 0, -1):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        j = (state >> 33) % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order[:1500]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = [w for w in args.only.split(",") if w]
    if only and not any(w in NAME for w in only):
        return

    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, Dataset
    torch.set_num_threads(args.threads)

    with gzip.open(DIGITS, "rt") as f:
        rows = [[float(v) for v in line.split(",")] for line in f if line.strip()]
    idx = train_split()
    images = torch.tensor([rows[i][:64] for i in idx]).div_(16).view(-1, 1, 8, 8)
    labels = torch.tensor([int(rows[i][64]) for i in idx])

    class Digits(Dataset):
        def __len__(self):
            return len(labels)

        def __getitem__(self, i):
            img = F.pad(images[i], (1, 1, 1, 1))
            dy, dx = torch.randint(0, 3, (2,)).tolist()
            img = img[:, dy:dy + 8, dx:dx + 8]
            if torch.rand(()) < 0.5:
                img = img.flip(2)
            return img, labels[i]

    loader = DataLoader(Digits(), batch_size=128, shuffle=True, num_workers=2,
                        persistent_workers=True)

    def epoch():
        for x, y in loader:
            pass

    epoch()  # warm-up: starts the workers
    vals = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        epoch()
        vals.append(len(labels) / (time.perf_counter() - t))
    med = statistics.median(vals)
    print(json.dumps({"name": NAME, "unit": "samples/s", "value": round(med, 4),
                      "best": round(max(vals), 4), "median": round(med, 4), "n": len(vals),
                      "threads": args.threads, "src": "torch"}), flush=True)


if __name__ == "__main__":
    main()
