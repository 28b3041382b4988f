"""A TLS front for the plaintext dev server: `temporal server start-dev` has no TLS flags.

It terminates TLS (server certificate from a throwaway CA, ALPN h2, client
certificates required when asked) and pipes bytes to the dev server, so
clients exercise a real TLS / mTLS handshake against a real Temporal.
"""

from __future__ import annotations

import asyncio
import datetime
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Certificates:
    """PEM files: the CA, the server's pair (for localhost) and a client pair."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _issue(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    usage: ExtendedKeyUsageOID | None = None,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if usage == ExtendedKeyUsageOID.SERVER_AUTH:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def make_certificates(directory: Path) -> Certificates:
    """A CA plus server (localhost) and client certificates, written as PEM files."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _issue("npaflow test CA", ca_key, _name("npaflow test CA"), ca_key, ca=True)
    files: dict[str, Path] = {}

    def write(name: str, data: bytes) -> None:
        files[name] = directory / f"{name}.pem"
        files[name].write_bytes(data)

    write("ca", ca_cert.public_bytes(serialization.Encoding.PEM))
    for role, usage in (
        ("server", ExtendedKeyUsageOID.SERVER_AUTH),
        ("client", ExtendedKeyUsageOID.CLIENT_AUTH),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _issue(
            "localhost" if role == "server" else "npaflow-worker", key, ca_cert.subject, ca_key, usage=usage
        )
        write(f"{role}_cert", cert.public_bytes(serialization.Encoding.PEM))
        write(
            f"{role}_key",
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ),
        )
    return Certificates(
        ca=files["ca"],
        server_cert=files["server_cert"],
        server_key=files["server_key"],
        client_cert=files["client_cert"],
        client_key=files["client_key"],
    )


class TlsProxy:
    """Listen with TLS on 127.0.0.1:<port>, forward plaintext to `upstream` (host:port)."""

    def __init__(self, upstream: str, certificates: Certificates, *, require_client_cert: bool) -> None:
        self.upstream_host, port = upstream.rsplit(":", 1)
        self.upstream_port = int(port)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certificates.server_cert, certificates.server_key)
        context.set_alpn_protocols(["h2"])
        if require_client_cert:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(certificates.ca)
        self.context = context
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()

    @property
    def address(self) -> str:
        """`localhost:<port>` (the name the server certificate is issued for)."""
        assert self.server is not None
        return f"localhost:{self.server.sockets[0].getsockname()[1]}"

    async def start(self) -> None:
        """Begin listening."""
        self.server = await asyncio.start_server(
            self._serve, "127.0.0.1", 0, ssl=self.context, ssl_handshake_timeout=10
        )

    async def stop(self) -> None:
        """Stop listening and drop connections."""
        if self.server is not None:
            self.server.close()
            for writer in list(self.writers):
                writer.close()
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.upstream_host, self.upstream_port)
        except OSError:
            writer.close()
            return
        self.writers |= {writer, up_writer}
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            self.writers -= {writer, up_writer}


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    finally:
        writer.close()
