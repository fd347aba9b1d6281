#!/usr/bin/env python3
"""A trellis peer in Python, for the interop test (cluster/interop_test.go).

It speaks to a trellis node through real libzmq (python3-zmq) and signs and
verifies with Ed25519ctx (RFC 8032) built from libsodium's group operations
(python3-nacl). It plays node ME of the run: binds a PULL socket at its
endpoint, connects a PUSH socket to the trellis node, and every round
receives the node's model message and phase marker, checks both signatures,
and answers with a signed model message of its own and its marker.

With "curve" last, both sockets use libzmq's CURVE mechanism: its PULL
socket is a CURVE server and its PUSH socket a CURVE client of the node,
each with the X25519 key libsodium derives from the Ed25519 keys
(crypto_sign_ed25519_sk_to_curve25519 of its own seed,
crypto_sign_ed25519_pk_to_curve25519 of the node's public key), as
trellis derives them.

usage: peer.py MY_ENDPOINT NODE_ENDPOINT MY_KEY_FILE NODE_PUBKEY_HEX ME NODE ROUNDS [curve]
"""
import hashlib
import struct
import sys

import zmq
from nacl import bindings as na

L = 2**252 + 27742317777372353535851937790883648493
MESSAGE_CTX = b"trellis/wire/v1 message"
MARKER_CTX = b"trellis/cluster/v1 phase marker"
BROADCAST = 0xFFFFFFFF


def dom2(ctx):
    return b"SigEd25519 no Ed25519 collisions" + bytes([0, len(ctx)]) + ctx


def scalar(x):
    return (x % L).to_bytes(32, "little")


def keypair(seed):
    h = hashlib.sha512(seed).digest()
    a = bytearray(h[:32])
    a[0] &= 248
    a[31] &= 127
    a[31] |= 64
    a = int.from_bytes(a, "little")
    return a, h[32:], na.crypto_scalarmult_ed25519_base_noclamp(scalar(a))


def sign(seed, ctx, msg):
    a, prefix, pub = keypair(seed)
    r = int.from_bytes(hashlib.sha512(dom2(ctx) + prefix + msg).digest(), "little") % L
    R = na.crypto_scalarmult_ed25519_base_noclamp(scalar(r))
    k = int.from_bytes(hashlib.sha512(dom2(ctx) + R + pub + msg).digest(), "little") % L
    return R + scalar(r + k * a)


def verify(pub, ctx, msg, sig):
    R, S = sig[:32], int.from_bytes(sig[32:], "little")
    if len(sig) != 64 or S >= L or not na.crypto_core_ed25519_is_valid_point(R):
        return False
    k = int.from_bytes(hashlib.sha512(dom2(ctx) + R + pub + msg).digest(), "little") % L
    try:
        sB = na.crypto_scalarmult_ed25519_base_noclamp(scalar(S))
        kA = na.crypto_scalarmult_ed25519_noclamp(scalar(k), pub)
    except Exception:
        return False
    return na.crypto_core_ed25519_add(R, kA) == sB


def vector_message(seed, frm, to, rnd, seq, tag, floats):
    t = tag.encode()
    pad = (-(5 + len(t))) % 4
    body = struct.pack("<IB", len(floats), len(t)) + t + b"\0" * pad + struct.pack("<%df" % len(floats), *floats)
    head = struct.pack("<BBHIIQQI", 1, 1, 0, frm, to, rnd, seq, len(body))
    unsigned = head + body
    return unsigned + sign(seed, MESSAGE_CTX, hashlib.sha256(unsigned).digest())


def parse_vector(b):
    version, kind, flags, frm, to, rnd, seq, n = struct.unpack_from("<BBHIIQQI", b, 0)
    assert version == 1 and kind == 1 and flags == 0 and len(b) == 32 + n + 64, "not a vector message"
    count, tlen = struct.unpack_from("<IB", b, 32)
    tag = b[37:37 + tlen].decode()
    start = 32 + ((5 + tlen + 3) & ~3)
    floats = struct.unpack_from("<%df" % count, b, start)
    return frm, to, rnd, seq, tag, floats


def marker(seed, frm, to, rnd, phase, count, last):
    b = bytes([0xC1, ord("P")]) + struct.pack("<IIQII", frm, to, rnd, phase, count) + bytes([1 if last else 0])
    return b + sign(seed, MARKER_CTX, b)


def main():
    my_ep, node_ep, key_file, node_pub_hex, me, node, rounds = sys.argv[1:8]
    curve = sys.argv[8:] == ["curve"]
    me, node, rounds = int(me), int(node), int(rounds)
    fields = open(key_file).read().split()
    assert int(fields[0]) == me, "key file of another node"
    seed = bytes.fromhex(fields[1])
    node_pub = bytes.fromhex(node_pub_hex)
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    push = ctx.socket(zmq.PUSH)
    if curve:
        pk, sk = na.crypto_sign_seed_keypair(seed)
        for s in (pull, push):
            s.curve_secretkey = na.crypto_sign_ed25519_sk_to_curve25519(sk)
            s.curve_publickey = na.crypto_sign_ed25519_pk_to_curve25519(pk)
        pull.curve_server = True
        push.curve_serverkey = na.crypto_sign_ed25519_pk_to_curve25519(node_pub)
    pull.bind(my_ep)
    push.setsockopt(zmq.LINGER, 5000)
    push.connect(node_ep)
    pull.setsockopt(zmq.RCVTIMEO, 120000)
    for r in range(rounds):
        vec, mk = None, None
        while vec is None or mk is None:
            b = pull.recv()
            if b[0] == 1:
                frm, to, rnd, seq, tag, floats = parse_vector(b)
                assert frm == node and rnd == r, "message of node %d round %d, want node %d round %d" % (frm, rnd, node, r)
                assert verify(node_pub, MESSAGE_CTX, hashlib.sha256(b[:-64]).digest(), b[-64:]), "bad message signature"
                vec = (tag, floats)
            elif b[0] == 0xC1 and b[1] == ord("P"):
                assert verify(node_pub, MARKER_CTX, b[:27], b[27:]), "bad marker signature"
                frm, to, rnd, phase, count = struct.unpack_from("<IIQII", b, 2)
                assert frm == node and to == me and rnd == r, "marker for the wrong round or node"
                mk = (phase, b[26] == 1)
        tag, floats = vec
        mine = [0.5 * x for x in floats]
        push.send(vector_message(seed, me, BROADCAST, r, 1, tag, mine))
        push.send(marker(seed, me, node, r, mk[0], 1, mk[1]))
        print("round %d: verified the node's model (%d floats) and marker; sent ours" % (r, len(floats)), flush=True)
    push.close()
    pull.close()
    ctx.term()


if __name__ == "__main__":
    main()
