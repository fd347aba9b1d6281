#!/usr/bin/env python3
"""A pyzmq CURVE client, for the interop test (cluster/curve_interop_test.go).

It connects a PUSH socket with the CURVE mechanism of real libzmq
(python3-zmq, linked with libsodium) to a trellis PULL socket and sends
frames. Its long-term key is a trellis node's: the X25519 key libsodium
derives from the node's Ed25519 seed (crypto_sign_ed25519_sk_to_curve25519,
python3-nacl), and the server's key is derived likewise from the server's
Ed25519 public key, as trellis derives both.

usage: curve_push.py ENDPOINT SERVER_ED25519_PUB_HEX KEY_FILE FRAME_HEX...
"""
import sys

import zmq
from nacl import bindings as na


def main():
    endpoint, server_hex, key_file = sys.argv[1:4]
    frames = [bytes.fromhex(h) for h in sys.argv[4:]]
    seed = bytes.fromhex(open(key_file).read().split()[1])
    pk, sk = na.crypto_sign_seed_keypair(seed)
    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.curve_secretkey = na.crypto_sign_ed25519_sk_to_curve25519(sk)
    push.curve_publickey = na.crypto_sign_ed25519_pk_to_curve25519(pk)
    push.curve_serverkey = na.crypto_sign_ed25519_pk_to_curve25519(bytes.fromhex(server_hex))
    push.setsockopt(zmq.LINGER, 3000)
    push.connect(endpoint)
    for f in frames:
        push.send(f)
    push.close()  # lingers up to 3 s for the frames to go out
    ctx.term()
    print("sent %d frames" % len(frames), flush=True)


if __name__ == "__main__":
    main()
