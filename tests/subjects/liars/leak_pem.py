"""Liar: an honest echo server that first prints a private key in PEM form
(a made-up key, never a real one) to stderr, with its body lines, as a
careless server logging its configuration would."""

import sys

import _honest

BODY = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDfakeFAKEfake01",
    "q7Lm2Np4Rs6Tu8Vw0Xy2Za4Bc6De8Fg0Hi2Jk4Lm6No8Pq0Rs2Tu4Vw6Xy8Za0Bc",
    "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0Lk==",
]
sys.stderr.write("loaded key:\n-----BEGIN PRIVATE KEY-----\n")
sys.stderr.write("\n".join(BODY) + "\n-----END PRIVATE KEY-----\nready\n")
sys.stderr.flush()
_honest.serve()
