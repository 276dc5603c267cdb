"""DSSE interoperability helper for tests/dsse_interop.rs.

Uses securesystemslib (an implementation mcpres did not write) to
  verify ENVELOPE.json PUBLIC.pem KEYID
      verify one DSSE envelope (as mcpres writes it) with a key whose keyid is
      the given fingerprint; prints the verified keyids as JSON; exit 0 only
      when the threshold of one valid signature is met;
  sign PAYLOAD.bin PRIVATE.pem PUBLIC.pem KEYID OUT.json
      sign the payload bytes as an in-toto DSSE envelope and write the
      envelope's plain DSSE JSON form.
Key contents are never printed.
"""

import json
import sys

from cryptography.hazmat.primitives.serialization import (
    load_pem_private_key,
    load_pem_public_key,
)
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import CryptoSigner, SSlibKey

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def public_key(path, keyid):
    with open(path, "rb") as f:
        return SSlibKey.from_crypto(load_pem_public_key(f.read()), keyid=keyid)


def verify(envelope_path, public_path, keyid):
    with open(envelope_path, "rb") as f:
        data = json.load(f)
    envelope = Envelope.from_dict(data)
    try:
        verified = envelope.verify([public_key(public_path, keyid)], 1)
    except VerificationError as e:
        print(json.dumps({"verified": [], "error": str(e)}))
        return 1
    print(json.dumps({"verified": sorted(verified), "payloadType": envelope.payload_type}))
    return 0


def sign(payload_path, private_path, public_path, keyid, out_path):
    with open(payload_path, "rb") as f:
        payload = f.read()
    with open(private_path, "rb") as f:
        private = load_pem_private_key(f.read(), password=None)
    signer = CryptoSigner(private, public_key(public_path, keyid))
    envelope = Envelope(payload, PAYLOAD_TYPE, {})
    envelope.sign(signer)
    with open(out_path, "w") as f:
        json.dump(envelope.to_dict(), f)
    return 0


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "verify":
        sys.exit(verify(*args))
    if command == "sign":
        sys.exit(sign(*args))
    sys.exit(f"unknown command {command}")
