"""`models.http_lib`: httpcore imported without trio, and a client under a trio loop as before."""

import json
import subprocess
import sys

import pytest

pytest.importorskip("trio")  # (without trio installed there is nothing to defer)

_SERVER = """
import http.server, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=server.serve_forever, daemon=True).start()
URL = f"http://127.0.0.1:{server.server_address[1]}/"
"""


def _run(code: str) -> object:
    out = subprocess.run([sys.executable, "-c", _SERVER + code], capture_output=True, text=True,
                         check=True, timeout=60)
    return json.loads(out.stdout)


def test_an_asyncio_call_does_not_import_trio() -> None:
    # httpcore imports trio for its locks under a trio loop: about 130 ms of an HTTP run's
    # start-up that an asyncio run never uses.
    code = """
import asyncio, json, sys
from agenteval.models.http_lib import httpx
async def main():
    async with httpx.AsyncClient() as client:
        return (await client.get(URL)).text
print(json.dumps([asyncio.run(main()), "trio" in sys.modules]))
"""
    assert _run(code) == ["ok", False]


def test_a_call_under_a_trio_loop_works_as_before() -> None:
    code = """
import json, sys
from agenteval.models.http_lib import httpx
import trio
async def main():
    async with httpx.AsyncClient() as client:
        return [(await client.get(URL)).text for _ in range(2)]
print(json.dumps(trio.run(main)))
"""
    assert _run(code) == ["ok", "ok"]
