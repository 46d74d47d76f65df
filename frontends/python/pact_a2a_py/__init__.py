"""The Python A2A frontend of a PACT Provider, on pacta2a and Starlette.

Run it with ``python3 -m pact_a2a_py`` (see __main__.py and settings.py).
Modules: app (the composed ASGI app), settings (flags and environment),
server (the HTTP server's limits), demo_agent and demo_login (the demo
Brand; web holds the sign-in's HTTP helpers), remote (an agent in another
process, as the e2e suite runs its agent).
"""
