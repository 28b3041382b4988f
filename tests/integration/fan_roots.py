"""Where a fan-out test's run keeps its files: a local directory or an S3 bucket (SeaweedFS).

The same spec runs on both: its jobs move objects with `objects.py` (file://
or s3://, signed with the job's credentials), and the test reads and writes
them with `Root`.
"""

from __future__ import annotations

import functools
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.s3_server import BUCKET, S3Server

OBJECTS = '''"""objects.py ENDPOINT copy SRC DST | put DST TEXT: one object moved, file:// or s3://.

S3 requests are signed with botocore's signer and sent with urllib: no client to
build, so a member starts in a third of the time boto3 takes.
"""
import os, pathlib, sys, urllib.request


def s3(endpoint, method, uri, data=None):
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    url = f"{endpoint}/{uri[5:]}"
    request = AWSRequest(method=method, url=url, data=data)
    credentials = Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"])
    S3SigV4Auth(credentials, "s3", os.environ.get("AWS_DEFAULT_REGION", "us-east-1")).add_auth(request)
    headers = dict(request.prepare().headers)
    with urllib.request.urlopen(urllib.request.Request(url, data, headers, method=method)) as response:
        return response.read()


def read(endpoint, uri):
    return pathlib.Path(uri[7:]).read_bytes() if uri.startswith("file://") else s3(endpoint, "GET", uri)


def write(endpoint, uri, data):
    if uri.startswith("s3://"):
        s3(endpoint, "PUT", uri, data)
        return
    path = pathlib.Path(uri[7:])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


endpoint, verb, first, second = sys.argv[1:5]
write(endpoint, second, read(endpoint, first)) if verb == "copy" else write(endpoint, first, second.encode())
'''


@dataclass
class Root:
    """A run's storage root, and the bookkeeping directory its jobs write launches to."""

    kind: str  # "file" or "s3"
    base: str  # file:///tmp/... or s3://bucket
    local: Path  # launches.log, fail, objects.py: always on this host
    server: S3Server | None = None
    list_key: str = "list.json"  # the list the first stage copies into the run

    @classmethod
    def on(cls, kind: str, local: Path, server: S3Server | None) -> Root:
        (local / "objects.py").write_text(OBJECTS)
        if kind == "file":
            return cls(kind, f"file://{local}", local)
        return cls(kind, f"s3://{BUCKET}", local, server, f"lists/{uuid.uuid4().hex}.json")

    @property
    def config(self) -> str:
        """The spec's `config:` line: the bucket holds an S3 run's ledger."""
        return f"config: {{bucket: {BUCKET}}}" if self.server else ""

    @property
    def tool(self) -> str:
        endpoint = self.server.endpoint if self.server else "-"
        return f"{sys.executable} {self.local}/objects.py {endpoint}"

    def run_id(self, name: str) -> str:
        """A run id of its own on S3 (the bucket outlives the test), the name as is on file."""
        return f"{name}-{uuid.uuid4().hex[:6]}" if self.server else name

    def uri(self, key: str) -> str:
        return f"{self.base}/{key}"

    @functools.cached_property
    def client(self) -> Any:
        """One S3 client for the test (building one takes longer than a request)."""
        assert self.server is not None
        return self.server.client()

    def write(self, key: str, text: str) -> None:
        if self.server is None:
            path = self.local / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        else:
            self.client.put_object(Bucket=BUCKET, Key=key, Body=text.encode())

    def read_uri(self, uri: str) -> str:
        if self.server is None:
            return Path(uri.removeprefix("file://")).read_text()
        bucket, _, key = uri.removeprefix("s3://").partition("/")
        return self.client.get_object(Bucket=bucket, Key=key)["Body"].read().decode()

    def read(self, key: str) -> str:
        return self.read_uri(self.uri(key))
