"""A log of its own, fed to a C2SP tlog-witness with aics-witness's client (aics_witness.feeder).

    feed-witness.py keygen DIR                 writes DIR/log.key (seed) and DIR/log.vkey
    feed-witness.py feed DIR URL WITNESS_VKEY  submits growing checkpoints, then two that must be
                                               refused; prints one JSON object of what happened

Written from the C2SP specs (tlog-checkpoint, signed-note, RFC 6962 proofs), not from Handover.
"""
import base64, hashlib, json, os, sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from aics_witness.feeder import WitnessClient, WitnessRejected, WitnessAhead

ORIGIN = "example.test/feeder-log"


def leaf(data): return hashlib.sha256(b"\x00" + data).digest()
def node(l, r): return hashlib.sha256(b"\x01" + l + r).digest()


def mth(leaves):
    if len(leaves) == 1: return leaves[0]
    k = 1
    while k * 2 < len(leaves): k *= 2
    return node(mth(leaves[:k]), mth(leaves[k:]))


def subproof(m, leaves, complete):                      # RFC 6962 2.1.2
    n = len(leaves)
    if m == n: return [] if complete else [mth(leaves)]
    k = 1
    while k * 2 < n: k *= 2
    if m <= k: return subproof(m, leaves[:k], complete) + [mth(leaves[k:])]
    return subproof(m - k, leaves[k:], False) + [mth(leaves[:k])]


def key_id(name, kind, public): return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public).digest()[:4]


def load(directory):
    seed = base64.b64decode(open(os.path.join(directory, "log.key")).read())
    return Ed25519PrivateKey.from_private_bytes(seed)


def checkpoint(key, leaves):
    body = f"{ORIGIN}\n{len(leaves)}\n{base64.b64encode(mth(leaves)).decode()}\n".encode()
    public = key.public_key().public_bytes_raw()
    blob = key_id(ORIGIN, 1, public) + key.sign(body)
    return body + b"\n" + f"\u2014 {ORIGIN} {base64.b64encode(blob).decode()}\n".encode()


def main():
    command, directory = sys.argv[1], sys.argv[2]
    if command == "keygen":
        key = Ed25519PrivateKey.generate()
        seed = key.private_bytes_raw()
        public = key.public_key().public_bytes_raw()
        open(os.path.join(directory, "log.key"), "w").write(base64.b64encode(seed).decode())
        vkey = f"{ORIGIN}+{key_id(ORIGIN, 1, public).hex()}+{base64.b64encode(bytes([1]) + public).decode()}"
        open(os.path.join(directory, "log.vkey"), "w").write(vkey + "\n")
        return
    url, witness_vkey = sys.argv[3], sys.argv[4]
    key = load(directory)
    leaves = [leaf(b"entry %d" % i) for i in range(200)]
    proofs = lambda ls: (lambda old, new: subproof(old, ls[:new], True))
    result = {"cosigned": [], "refused": {}}
    client = WitnessClient(url, witness_vkey)
    for size in (5, 17, 40, 100):
        line = client.submit(checkpoint(key, leaves[:size]), proofs(leaves))
        result["cosigned"].append({"size": size, "lines": line})
    # Another history after entry 60, signed with the same key: it does not extend size 100.
    forked = leaves[:60] + [leaf(b"forged %d" % i) for i in range(60, 200)]
    try:
        client.submit(checkpoint(key, forked[:150]), proofs(forked))
        result["refused"]["forked"] = None
    except WitnessRejected as e:
        result["refused"]["forked"] = e.status
    # A smaller checkpoint after the larger one: the witness names the size it holds.
    try:
        WitnessClient(url, witness_vkey).submit(checkpoint(key, leaves[:50]), proofs(leaves), old_size=40)
        result["refused"]["smaller"] = None
    except WitnessAhead as e:
        result["refused"]["smaller"] = e.known_size
    print(json.dumps(result))


main()
