"""The frontend's settings (docs/frontends.md, "Process settings"): flags
win over the environment, which wins over the defaults.

    -listen       A2A_LISTEN           host:port to serve on (default 127.0.0.1:3000)
    -pactd        PACTD_URL            pactd's base URL: its main port
                                       (default http://127.0.0.1:7070)
    -transport    A2A_TRANSPORT        how pactd's RPCs are called: grpc (gRPC on PACTD_URL's
                                       main port, h2c; the default) or grpc-native (pactd's
                                       native gRPC port, -pactd-grpc)
    -pactd-grpc   A2A_PACTD_GRPC       pactd's native gRPC port for grpc-native
                                       (default 127.0.0.1:7071)
    -demo         A2A_DEMO=true        serve the demo Brand: its agent and its sign-in page at
                                       /demo/{brandId}/login, which also signs Users in for the
                                       consent pages
    -agent-url    A2A_AGENT_URL        run each turn by an agent in another process over HTTP
                                       (remote.py); wins over -demo's agent
    -public-url   A2A_PUBLIC_URL       this frontend's public base URL; when set, POST
                                       /api/platforms (self-service PA registration) goes
                                       to pactd, which checks its aud against its own
                                       PACT_PUBLIC_URL
                  PACT_FRONTEND_TOKEN  the frontend credential pactd knows (required)

Its own settings avoid the PACT_ prefix, which pactd reserves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

TRANSPORTS = ("grpc", "grpc-native")


class SettingsError(ValueError):
    """A setting is missing or malformed."""


@dataclass(frozen=True, slots=True)
class Settings:
    """The parsed settings."""

    listen: str
    pactd: str
    transport: str
    pactd_grpc: str
    demo: bool
    agent_url: str
    token: str
    #: The public base URL; empty: no self-service registration.
    public_url: str = ""


def parse(args: Sequence[str], env: Mapping[str, str]) -> Settings:
    """Reads flags (-name value, -name=value, --name …) over the environment."""
    o = {
        "listen": env.get("A2A_LISTEN") or "127.0.0.1:3000",
        "pactd": env.get("PACTD_URL") or "http://127.0.0.1:7070",
        "transport": env.get("A2A_TRANSPORT") or "grpc",
        "pactd-grpc": env.get("A2A_PACTD_GRPC") or "127.0.0.1:7071",
        "agent-url": env.get("A2A_AGENT_URL") or "",
        "public-url": env.get("A2A_PUBLIC_URL") or "",
    }
    demo = env.get("A2A_DEMO") == "true"
    i = 0
    while i < len(args):
        m = re.fullmatch(r"--?([a-z-]+)(?:=(.*))?", args[i], re.S)
        if m is None:
            raise SettingsError(f"unexpected argument {args[i]!r}")
        name, value = m.group(1), m.group(2)
        i += 1
        if name == "demo":
            demo = value is None or value == "true"
            continue
        if name not in o:
            raise SettingsError(f"flag provided but not defined: -{name}")
        if value is None:
            if i >= len(args):
                raise SettingsError(f"flag needs a value: -{name}")
            value = args[i]
            i += 1
        o[name] = value
    if o["transport"] not in TRANSPORTS:
        raise SettingsError("-transport must be one of " + ", ".join(TRANSPORTS))
    token = env.get("PACT_FRONTEND_TOKEN") or ""
    if not token:
        raise SettingsError("a2a: need pactd's URL and a frontend token (set PACT_FRONTEND_TOKEN)")
    split_host_port(o["listen"])
    return Settings(o["listen"], o["pactd"], o["transport"], o["pactd-grpc"], demo, o["agent-url"], token, o["public-url"])


def split_host_port(s: str) -> tuple[str, int]:
    """Splits host:port ([v6]:port too); an empty host is every address."""
    host, sep, port = s.rpartition(":")
    if not sep or not re.fullmatch(r"[0-9]{1,5}", port) or int(port) > 65535:
        raise SettingsError("-listen must be host:port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)
