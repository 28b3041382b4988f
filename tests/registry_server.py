"""A real container registry for tests: Debian's `docker-registry` (the distribution registry) on loopback.

Images are pushed by the tests themselves through the registry's own API
(blob uploads, then a manifest PUT): small OCI images and multi-arch indexes
whose content the test chooses, so a re-tag to new content is one call.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import free_port, require_tool
from tests.registry_tokens import TokenService

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
USER, PASSWORD = "alice", "s3cret-pass"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class Registry:
    """One running registry; `host` is what image references name (`127.0.0.1:PORT`)."""

    host: str
    process: subprocess.Popen[bytes]
    protected: bool
    tokens: TokenService | None = None

    def authorization(self, repository: str) -> str:
        """What the test's own pushes send: basic auth, or a push token from the token service."""
        basic = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if self.tokens is not None:
            _, token = self.tokens.grant(basic, [f"repository:{repository}:pull,push"])
            return f"Bearer {token}"
        return basic if self.protected else ""

    def _request(
        self, method: str, path: str, data: bytes = b"", content_type: str = ""
    ) -> tuple[int, dict[str, str]]:
        url = path if path.startswith("http") else f"http://{self.host}{path}"
        request = urllib.request.Request(url, data=data or None, method=method)
        if content_type:
            request.add_header("Content-Type", content_type)
        repository = re.split(r"/(?:blobs|manifests)/", path.split("/v2/", 1)[-1])[0]
        if authorization := self.authorization(repository):
            request.add_header("Authorization", authorization)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers)
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"{method} {url}: {exc.code} {exc.read()[:300]!r}") from None

    def push_blob(self, repository: str, data: bytes) -> dict[str, object]:
        """Upload one blob (monolithic: POST for an upload URL, PUT with the digest)."""
        _, headers = self._request("POST", f"/v2/{repository}/blobs/uploads/")
        location = headers["Location"]
        separator = "&" if "?" in location else "?"
        self._request("PUT", f"{location}{separator}digest={_digest(data)}", data, "application/octet-stream")
        return {"digest": _digest(data), "size": len(data)}

    def push_image(self, repository: str, tag: str, content: str, arch: str = "amd64") -> str:
        """Push a one-layer OCI image whose layer holds `content`; return its manifest digest."""
        config = json.dumps(
            {"architecture": arch, "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}
        )
        config_ref = self.push_blob(repository, config.encode())
        layer_ref = self.push_blob(repository, content.encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config_ref},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", **layer_ref}],
        }
        return self.put_manifest(repository, tag, json.dumps(manifest).encode(), OCI_MANIFEST)

    def push_index(self, repository: str, tag: str, content: str) -> str:
        """Push a multi-arch index (amd64, arm64) under `tag`; return the index digest."""
        manifests = []
        for arch in ("amd64", "arm64"):
            digest = self.push_image(repository, f"{tag}-{arch}", f"{content}-{arch}", arch)
            size = len(self.manifest_bytes(repository, digest))
            platform = {"architecture": arch, "os": "linux"}
            manifests.append(
                {"mediaType": OCI_MANIFEST, "digest": digest, "size": size, "platform": platform}
            )
        index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}
        return self.put_manifest(repository, tag, json.dumps(index).encode(), OCI_INDEX)

    def put_manifest(self, repository: str, tag: str, body: bytes, media_type: str) -> str:
        """PUT a manifest under a tag; return the digest the registry gives it."""
        _, headers = self._request("PUT", f"/v2/{repository}/manifests/{tag}", body, media_type)
        digest = headers["Docker-Content-Digest"]
        assert digest == _digest(body)
        return digest

    def manifest_bytes(self, repository: str, reference: str) -> bytes:
        """The manifest as stored (for sizes in an index)."""
        request = urllib.request.Request(f"http://{self.host}/v2/{repository}/manifests/{reference}")
        request.add_header("Accept", OCI_MANIFEST)
        if authorization := self.authorization(repository):
            request.add_header("Authorization", authorization)
        with urllib.request.urlopen(request, timeout=30) as response:
            body: bytes = response.read()
            return body

    def stop(self) -> None:
        """Stop this registry (only the process this test started)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_registry(
    root: Path, *, protected: bool = False, tokens: TokenService | None = None, port: int = 0
) -> Registry:
    """Start `docker-registry serve` on a free loopback port (htpasswd auth when `protected`,
    bearer tokens from `tokens` when given)."""
    binary = require_tool("docker-registry", package="docker-registry")
    root.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    config = {
        "version": 0.1,
        "log": {"level": "error", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(root / "data")}, "delete": {"enabled": True}},
        "http": {"addr": f"127.0.0.1:{port}"},
    }
    if protected:
        htpasswd = require_tool("htpasswd", package="apache2-utils")
        line = subprocess.run([htpasswd, "-Bbn", USER, PASSWORD], capture_output=True, text=True, check=True)
        (root / "htpasswd").write_text(line.stdout)
        config["auth"] = {"htpasswd": {"realm": "npaflow-test", "path": str(root / "htpasswd")}}
    if tokens is not None:
        config["auth"] = tokens.registry_auth()
    (root / "config.yml").write_text(json.dumps(config))  # JSON is YAML
    log = (root / "registry.log").open("ab")
    process = subprocess.Popen([binary, "serve", str(root / "config.yml")], stdout=log, stderr=log)
    registry = Registry(host=f"127.0.0.1:{port}", process=process, protected=protected, tokens=tokens)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://{registry.host}/v2/", timeout=2):
                return registry
        except urllib.error.HTTPError as exc:
            if exc.code == 401:
                return registry
        except OSError:
            pass
        if process.poll() is not None:
            raise RuntimeError(f"docker-registry exited: {(root / 'registry.log').read_text()[-2000:]}")
        time.sleep(0.1)
    registry.stop()
    raise RuntimeError("docker-registry did not answer within 30 s")


def docker_config(directory: Path, host: str) -> Path:
    """A Docker `config.json` with the protected registry's credentials; returns its directory."""
    directory.mkdir(parents=True, exist_ok=True)
    auth = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    (directory / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))
    return directory
