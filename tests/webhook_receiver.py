"""A webhook receiver on loopback for tests: Alertmanager's and npaflow's notifications post here."""

from __future__ import annotations

import http.server
import json
import threading


class Receiver(http.server.ThreadingHTTPServer):
    """A webhook receiver on loopback: keeps every JSON body posted to it."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        received = self.bodies

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook"
