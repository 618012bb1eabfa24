#!/usr/bin/env python3
"""serve as a C2SP tlog-witness under load: one log's checkpoints, sequential as a log sends them.

    tools/bench-witness.py [--requests N] [--handover PATH]

Makes a recipient ledger in a temporary directory, starts `handover serve --witness-log` on it
(the release build by default), and submits N checkpoints of a log of its own (RFC 6962 tree,
Ed25519 signed note), each growing the log by 1 to 20 entries and carrying the consistency proof
from the one before, each answer required to be 200 with a cosignature line. Prints requests a
second, p50, p99 and the largest latency, and checks the ledger recorded N "checkpoint witnessed"
events. Run with the transparency tools' Python (tools/setup --transparency), which has
`cryptography`: /opt/handover-transparency/bin/python3 tools/bench-witness.py
"""
import argparse, base64, hashlib, http.client, json, os, random, subprocess, sys, tempfile, time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ORIGIN = "bench.example/witnessed-log"


def node(l, r): return hashlib.sha256(b"\x01" + l + r).digest()
def leaf(data): return hashlib.sha256(b"\x00" + data).digest()


class Tree:
    """An append-only RFC 6962 tree keeping every level, so roots and proofs are cheap."""
    def __init__(self): self.levels = [[]]

    def append(self, h):
        self.levels[0].append(h)
        level = 0
        while len(self.levels[level]) % 2 == 0:
            if len(self.levels) == level + 1: self.levels.append([])
            self.levels[level + 1].append(node(*self.levels[level][-2:]))
            level += 1

    def subtree(self, start, size):                 # root of the leaves [start, start+size)
        if size & (size - 1) == 0 and start % size == 0:
            return self.levels[size.bit_length() - 1][start // size]
        k = 1
        while k * 2 < size: k *= 2
        return node(self.subtree(start, k), self.subtree(start + k, size - k))

    def root(self, n): return self.subtree(0, n)

    def proof(self, m, n, start=0, complete=True):  # RFC 6962 2.1.2, over [start, start+n)
        if m == n: return [] if complete else [self.subtree(start, n)]
        k = 1
        while k * 2 < n: k *= 2
        if m <= k: return self.proof(m, k, start, complete) + [self.subtree(start + k, n - k)]
        return self.proof(m - k, n - k, start + k, False) + [self.subtree(start, k)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--handover", default=os.path.join(os.path.dirname(__file__), "..", ".build", "release", "handover"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-witness-")
    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes_raw()
    key_id = hashlib.sha256(ORIGIN.encode() + b"\n\x01" + public).digest()[:4]
    with open(f"{work}/log.vkey", "w") as f:
        f.write(f"{ORIGIN}+{key_id.hex()}+{base64.b64encode(b'\x01' + public).decode()}\n")
    ledger = f"{work}/ledger"
    subprocess.run([args.handover, "init", "--ledger", ledger, "--team-id", "BBBB222222", "--client-id", "com.example.app",
                    "--role", "recipient"], check=True, capture_output=True)
    subprocess.run([args.handover, "checkpoint", "--ledger", ledger], check=True, capture_output=True)
    serve = subprocess.Popen([args.handover, "serve", "--ledger", ledger, "--port", "0", "--witness-log", f"{work}/log.vkey"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    banner = serve.stdout.readline()
    port = int(banner.split("http://127.0.0.1:")[1].split(" ")[0])
    connection = http.client.HTTPConnection("127.0.0.1", port)
    tree, size, latencies = Tree(), 0, []
    rng = random.Random(1)
    try:
        for i in range(args.requests):
            old = size
            for _ in range(rng.randint(1, 20)):
                tree.append(leaf(b"entry %d" % size))
                size += 1
            body = f"{ORIGIN}\n{size}\n{base64.b64encode(tree.root(size)).decode()}\n".encode()
            note = body + b"\n" + f"\u2014 {ORIGIN} {base64.b64encode(key_id + key.sign(body)).decode()}\n".encode()
            proof = tree.proof(old, size) if old else []
            request = b"old %d\n" % old + b"".join(base64.b64encode(h) + b"\n" for h in proof) + b"\n" + note
            started = time.perf_counter()
            connection.request("POST", "/witness/add-checkpoint", body=request, headers={"Content-Type": "text/plain"})
            response = connection.getresponse()
            answer = response.read()
            latencies.append(time.perf_counter() - started)
            if response.status != 200 or not answer.startswith("\u2014 ".encode()):
                sys.exit(f"request {i + 1}: {response.status} {answer!r}")
    finally:
        serve.terminate()
        serve.wait()
    events = subprocess.run([args.handover, "query", "events", "--ledger", ledger, "--type", "checkpoint-witnessed", "--format", "json"],
                            check=True, capture_output=True, text=True).stdout
    recorded = len(json.loads(events))
    latencies.sort()
    total = sum(latencies)
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
    print(f"serve as a witness: {args.requests} sequential add-checkpoint requests of one log (final size {size}), "
          f"{args.requests / total:.0f} requests/s; latency p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {latencies[-1] * 1000:.1f} ms; "
          f"{recorded} checkpoint-witnessed events recorded")
    if recorded != args.requests: sys.exit(f"expected {args.requests} recorded events, found {recorded}")


main()
