"""The frontend as the e2e suite and pact-demo start it, python3 -m
pact_a2a_py, against the fake pactd: what reaches pactd, what is written
back, the demo sign-in, the remote agent's turn, failures and shutdown."""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from fakepactd import FakePactd, brand_pb2, fake, response  # noqa: F401  (fake: the fixture)

from pacta2a._pb import frontdoor_pb2, verification_pb2

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


class Frontend:
    """A running python3 -m pact_a2a_py and its log lines."""

    def __init__(self, env: dict[str, str]) -> None:
        full = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "PACT"))}
        full.update(PYTHONPATH=os.pathsep.join([str(REPO / "frontends" / "python"), str(REPO / "frontends" / "pacta2a-py" / "src")]))
        full.update(env)
        self.proc = subprocess.Popen([sys.executable, "-m", "pact_a2a_py"], env=full, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        ready = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.lines.append(line)
                if '"msg":"pact-a2a serving"' in line:
                    ready.set()

        threading.Thread(target=read, daemon=True).start()
        assert ready.wait(20), "".join(self.lines)
        self.serving = json.loads(self.lines[-1])
        self.port = int(self.serving["addr"].rsplit(":", 1)[1])

    def get(self, target: str, head: str = "") -> bytes:
        return exchange(self.port, f"GET {target} HTTP/1.1\r\nHost: x\r\n{head}Connection: close\r\n\r\n".encode())

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(10)


def env_for(fake: FakePactd, **extra: str) -> dict[str, str]:
    return {"PACT_FRONTEND_TOKEN": fake.token, "PACTD_URL": fake.url, "A2A_LISTEN": "127.0.0.1:0", "A2A_DEMO": "true", **extra}


def test_pactd_answers_and_its_answer_is_written_as_given(fake: FakePactd) -> None:
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(
        response=response(418, [("Content-Type", "text/plain"), ("X-Path", req.path + "?" + req.query), ("X-Path", "again")], b"teapot")
    )
    fe = Frontend(env_for(fake))
    try:
        assert fe.serving["level"] == "INFO" and fe.serving["transport"] == "grpc"
        out = fe.get("/a2a/acme/message%3Asend?x=%2F", "Cookie: s=1\r\n")
        head, body = out.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        assert lines[0] == b"HTTP/1.1 418 I'm a Teapot" and body == b"teapot"
        assert [x for x in lines[1:] if not x.startswith(b"date: ")] == [
            b"content-type: text/plain",
            b"x-path: /a2a/acme/message%3Asend?x=%2F",
            b"x-path: again",
            b"content-length: 6",
            b"Connection: close",
        ]
        (req,) = fake.requests("Serve")
        assert [h.name for h in req.headers] == ["host"] and req.signs_in_users and req.client_address.startswith("127.0.0.1:")
        # Every path but the demo sign-in's goes to pactd (the root page, the HTML 404 are pactd's).
        for target in ["/", "/nowhere", "/a2a/"]:
            assert fe.get(target).startswith(b"HTTP/1.1 418 ")
        assert [r.path for r in fake.requests("Serve")[1:]] == ["/", "/nowhere", "/a2a/"]
        # Self-registration only with a public URL: without one the frontend answers a bare 404 itself.
        out = exchange(fe.port, b"POST /api/platforms HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        assert out.startswith(b"HTTP/1.1 404 ") and len(fake.requests("Serve")) == 4
    finally:
        assert fe.stop() == 0, "".join(fe.lines)
    fe = Frontend(env_for(fake, A2A_PUBLIC_URL="http://frontend.example"))
    try:
        out = exchange(fe.port, b"POST /api/platforms HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        assert out.startswith(b"HTTP/1.1 418 ") and fake.requests("Serve")[-1].body == b"{}"
    finally:
        assert fe.stop() == 0, "".join(fe.lines)


def test_demo_sign_in_and_the_user_pactd_asks_for(fake: FakePactd) -> None:
    fake.get_agent_card = lambda req, ctx: brand_pb2.GetAgentCardResponse(display_name="Shop Inc.")

    def serve(req: Any, ctx: Any) -> Any:
        if req.sign_in_url:
            return frontdoor_pb2.ServeResponse(response=response(303, [("Location", req.sign_in_url)]))
        if not req.brand_user:
            return frontdoor_pb2.ServeResponse(user_needed=frontdoor_pb2.UserNeeded(brand_id="shop", return_to="/a2a/shop/oauth/connected"))
        return frontdoor_pb2.ServeResponse(response=response(200, [], req.brand_user.encode()))

    fake.serve = serve
    fe = Frontend(env_for(fake))
    try:
        out = fe.get("/demo/shop/login?return_to=%2Fa2a%2Fshop%2Foauth%2Fconnected")
        assert out.startswith(b"HTTP/1.1 200 ") and b"<title>Sign in to Shop Inc.</title>" in out
        # Not signed in: pactd is told the sign-in URL, returning to pactd's return_to.
        out = fe.get("/a2a/shop/oauth/connected")
        assert out.startswith(b"HTTP/1.1 303 ") and b"location: /demo/shop/login?return_to=%2Fa2a%2Fshop%2Foauth%2Fconnected\r\n" in out
        form = b"username=alice&return_to=%2Fa2a%2Fshop%2Foauth%2Fconnected"
        out = exchange(fe.port, b"POST /demo/shop/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                       b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(form) + form)
        cookie = next(x for x in out.split(b"\r\n") if x.lower().startswith(b"set-cookie: ")).split(b": ", 1)[1].split(b";")[0]
        # Signed in: pactd is asked again with the User, and the cookie never reaches it.
        out = fe.get("/a2a/shop/oauth/connected", "Cookie: " + cookie.decode() + "\r\n")
        assert out.startswith(b"HTTP/1.1 200 ") and out.endswith(b"\r\n\r\nalice")
        last = fake.requests("Serve")[-1]
        assert last.brand_user == "alice" and all(h.name != "cookie" for h in last.headers)
    finally:
        assert fe.stop() == 0, "".join(fe.lines)


class AgentServer(http.server.ThreadingHTTPServer):
    """The remote agent (A2A_AGENT_URL): answers every turn with an action whose args hold 1.0."""

    daemon_threads = True

    def __init__(self) -> None:
        self.turns: list[Any] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                outer.turns.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                body = b'{"text":"done","scopesUsed":["orders:cancel"],"actions":[{"tool":"cancel_order","args":{"orderId":"1002","amount":1.0}}]}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


def test_a_turn_runs_on_the_remote_agent(fake: FakePactd) -> None:
    caller = verification_pb2.Caller(agent_id="agent-1", issuer="https://pa.example", subject="user-1", agent_display_name="PA")
    delegation = verification_pb2.DelegationInfo(grant_id="g-1", brand_user="alice", scopes=["orders:cancel"])
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(
        turn=frontdoor_pb2.Turn(handle="h-9", brand_id="shop", context_id="c", text="cancel 1002", caller=caller, delegation=delegation, turn_timeout_seconds=10)
    )
    fake.finish_turn = lambda req, ctx: frontdoor_pb2.FinishTurnResponse(response=response(200, [("Content-Type", "application/a2a+json")], b'{"message":{}}'))
    agent = AgentServer()
    threading.Thread(target=agent.serve_forever, daemon=True).start()
    fe = Frontend(env_for(fake, A2A_AGENT_URL=f"http://127.0.0.1:{agent.server_address[1]}/"))
    try:
        out = exchange(fe.port, b"POST /a2a/shop/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        assert out.startswith(b"HTTP/1.1 200 ") and out.endswith(b'\r\n\r\n{"message":{}}')
        (turn,) = agent.turns
        assert (turn["brandId"], turn["text"], turn["delegation"]["brandUser"]) == ("shop", "cancel 1002", "alice")
        (fin,) = fake.requests("FinishTurn")
        assert fin.handle == "h-9" and fin.reply.text == "done" and list(fin.reply.scopes_used) == ["orders:cancel"]
        ((tool, args_json, args_hash),) = [(a.tool, a.args_json, a.args_hash) for a in fin.reply.actions]
        assert (tool, json.loads(args_json), args_hash) == ("cancel_order", {"orderId": "1002", "amount": 1.0}, "")
    finally:
        assert fe.stop() == 0, "".join(fe.lines)
        agent.shutdown()


def test_pactd_unreachable_is_a_bare_502_logged_once() -> None:
    fe = Frontend({"PACT_FRONTEND_TOKEN": "tok-0123456789", "PACTD_URL": f"http://127.0.0.1:{closed_port()}", "A2A_LISTEN": "127.0.0.1:0"})
    try:
        out = fe.get("/a2a/acme/tasks", "Authorization: Bearer secret-pa-token\r\n")
        assert out.startswith(b"HTTP/1.1 502 ") and b"cache-control: no-store\r\n" in out and out.endswith(b"\r\n\r\n")
        assert b"server:" not in out.lower()
        time.sleep(0.2)
        errors = [json.loads(x) for x in fe.lines if '"level":"ERROR"' in x]
        assert len(errors) == 1 and errors[0]["msg"] == "pactd call failed"
        assert errors[0]["rpc"] == "pact.v1.FrontDoorService/Serve" and "UNAVAILABLE" in errors[0]["error"]
        assert not any("secret-pa-token" in x for x in fe.lines)
        # Request heads: 40 KiB pass (h11 alone stops at 16 KiB), past 64 KiB the frontend answers 431 without asking pactd.
        assert fe.get("/a2a/acme/tasks", "X-Pad: " + "a" * (40 << 10) + "\r\n").startswith(b"HTTP/1.1 502 ")
        assert fe.get("/a2a/acme/tasks", "X-Pad: " + "a" * (64 << 10) + "\r\n").startswith(b"HTTP/1.1 431 ")
        time.sleep(0.2)
        assert len([x for x in fe.lines if '"level":"ERROR"' in x]) == 2  # the 40 KiB head's 502; the 431 asked nobody
    finally:
        assert fe.stop() == 0, "".join(fe.lines)


def test_refuses_to_start_without_a_token() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "PACT"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "frontends" / "python"), str(REPO / "frontends" / "pacta2a-py" / "src")])
    r = subprocess.run([sys.executable, "-m", "pact_a2a_py"], env=env, capture_output=True, text=True, timeout=20)
    assert r.returncode == 1 and "PACT_FRONTEND_TOKEN" in r.stderr


def test_grpc_native_transport_reaches_pactd(fake: FakePactd) -> None:
    fake.serve = lambda req, ctx: frontdoor_pb2.ServeResponse(response=response(204))
    fe = Frontend(env_for(fake, A2A_TRANSPORT="grpc-native", A2A_PACTD_GRPC=fake.target, PACTD_URL=f"http://127.0.0.1:{closed_port()}"))
    try:
        assert fe.serving["transport"] == "grpc-native"
        assert fe.get("/").startswith(b"HTTP/1.1 204 ")
    finally:
        assert fe.stop() == 0, "".join(fe.lines)
