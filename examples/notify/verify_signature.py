"""Check a contract-sync webhook notification's signature, in Python (standard library only).

X-Contract-Sync-Signature is "sha256=" and the hex HMAC-SHA256 of the exact body bytes, keyed with
the channel's secret. Verify before parsing the JSON, and compare in constant time.

    HOOK_SECRET=... python3 verify_signature.py "$SIGNATURE_HEADER" < body.json   # exit 0: genuine
"""
import hashlib
import hmac
import os
import sys


def verify(raw_body: bytes, header: str | None, secret: str) -> bool:
    expected = "sha256=" + hmac.new(secret.encode("utf-8"), raw_body, hashlib.sha256).hexdigest()
    return header is not None and hmac.compare_digest(header, expected)


if __name__ == "__main__":
    genuine = verify(sys.stdin.buffer.read(), sys.argv[1] if len(sys.argv) > 1 else None, os.environ["HOOK_SECRET"])
    print("genuine" if genuine else "forged or altered")
    sys.exit(0 if genuine else 1)
