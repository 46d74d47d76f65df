"""The frontend as the e2e suite and pact-demo start it: python3 -m pact_a2a_py."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def test_serves_logs_json_and_stops_on_sigterm() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "PACT"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(REPO / "frontends" / "python"), str(REPO / "frontends" / "pacta2a-py" / "src")]),
        PACT_FRONTEND_TOKEN="tok-0123456789",
        PACTD_URL=f"http://127.0.0.1:{closed_port()}",  # no pactd: every RPC fails
        A2A_LISTEN="127.0.0.1:0",
        A2A_DEMO="true",
    )
    proc = subprocess.Popen([sys.executable, "-m", "pact_a2a_py"], env=env, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if '"msg":"pact-a2a serving"' in line:
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert ready.wait(20), "".join(lines)
        serving = json.loads(lines[-1])
        assert serving["level"] == "INFO" and serving["transport"] == "grpc"
        port = int(serving["addr"].rsplit(":", 1)[1])
        # pactd unreachable: INTERNAL, logged once as a JSON line naming the RPC.
        out = exchange(port, b"GET /a2a/acme/tasks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 500 ") and b'"reason":"INTERNAL"' in out and b"server:" not in out.lower()
        time.sleep(0.2)
        errors = [json.loads(x) for x in lines if '"level":"ERROR"' in x]
        assert len(errors) == 1 and errors[0]["msg"] == "serve" and "VerifyAgentRequest: UNAVAILABLE" in errors[0]["error"]
        # The demo sign-in page, a bare 404 elsewhere.
        assert exchange(port, b"GET /demo/shop/login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").startswith(b"HTTP/1.1 200 ")
        out = exchange(port, b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 404 ") and out.endswith(b"\r\n\r\n")
        # Request headers: 40 KiB pass (h11 alone stops at 16 KiB), past 64 KiB are refused.
        def head(pad: int) -> bytes:
            return b"GET /nowhere HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * pad + b"\r\nConnection: close\r\n\r\n"

        assert exchange(port, head(40 << 10)).startswith(b"HTTP/1.1 404 ")
        assert exchange(port, head(70 << 10)).startswith(b"HTTP/1.1 431 ")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0, "".join(lines)


def test_refuses_to_start_without_a_token() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "PACT"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "frontends" / "python"), str(REPO / "frontends" / "pacta2a-py" / "src")])
    r = subprocess.run([sys.executable, "-m", "pact_a2a_py"], env=env, capture_output=True, text=True, timeout=20)
    assert r.returncode == 1 and "PACT_FRONTEND_TOKEN" in r.stderr
