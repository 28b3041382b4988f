"""A bearer-token service for the test registry, as Docker Hub and GHCR run one.

The registry (distribution's `token` auth) answers 401 with a Bearer challenge
naming this realm; the client fetches a JWT here (anonymously, or with basic
auth) and retries with it. Repositories under `public/` are pulled by anyone;
the rest need USER:PASSWORD. Tokens are ES256 JWTs whose `x5c` header carries
a self-signed certificate the registry trusts (its `rootcertbundle`).
"""

from __future__ import annotations

import base64
import datetime
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

SERVICE, ISSUER = "npaflow-test-registry", "npaflow-test-issuer"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TokenService:
    """Issues pull (and, for the user, push) tokens; `bundle` is the certificate the registry trusts."""

    def __init__(self, root: Path, user: str, password: str) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "npaflow test token signer")])
        now = datetime.datetime.now(datetime.UTC)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.bundle = root / "token-signer.pem"
        self.bundle.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        self.basic = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.user = user
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.realm = f"http://127.0.0.1:{self.server.server_address[1]}/token"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def token(self, subject: str, access: list[dict[str, object]]) -> str:
        """A signed JWT granting `access` to `subject`."""
        der = self.cert.public_bytes(serialization.Encoding.DER)
        header = {"typ": "JWT", "alg": "ES256", "x5c": [base64.b64encode(der).decode()]}
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": subject,
            "aud": SERVICE,
            "exp": now + 300,
            "nbf": now - 10,
            "iat": now,
            "jti": uuid.uuid4().hex,
            "access": access,
        }
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        r, s = decode_dss_signature(self.key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        return f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"

    def grant(self, authorization: str, scopes: list[str]) -> tuple[int, str]:
        """(HTTP status, token): wrong credentials 401; anonymous gets `public/` pulls only."""
        if authorization and authorization != self.basic:
            return 401, ""
        user = self.user if authorization else ""
        access = []
        for scope in scopes:
            kind, name, actions = [*scope.split(":", 2), "", ""][:3]
            allowed = [a for a in actions.split(",") if user or (a == "pull" and name.startswith("public/"))]
            access.append({"type": kind, "name": name, "actions": allowed})
        return 200, self.token(user or "anonymous", access)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = parse_qs(urlparse(self.path).query)
                status, token = service.grant(self.headers.get("Authorization", ""), query.get("scope", []))
                body = json.dumps({"token": token, "access_token": token}).encode() if token else b"{}"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        return Handler

    def registry_auth(self) -> dict[str, object]:
        """The registry's `auth:` section for this service."""
        return {
            "token": {
                "realm": self.realm,
                "service": SERVICE,
                "issuer": ISSUER,
                "rootcertbundle": str(self.bundle),
            }
        }

    def stop(self) -> None:
        """Stop serving tokens."""
        self.server.shutdown()
        self.server.server_close()
