"""The generated pact.v1 modules (messages, type stubs and gRPC stubs).

buf generates them from proto/pact/v1 into pacta2a/_gen/pact/v1 with protoc's
own Python generators and the gRPC plugin (buf.gen.py.yaml), unedited. Those
generators name a proto's imports by their proto path, so the generated
verification_pb2.py says ``from pact.v1 import authorization_details_pb2``:
an absolute import of a top-level package ``pact``.

Putting _gen on sys.path would satisfy it, but it would create a top-level
``pact`` that belongs to no distribution (and is pact-python's name).
Rewriting the generated files would make buf's output something other than
what is committed. Instead, this module installs a finder for the names
under ``pacta2a._gen.pact.v1`` only: it loads those files with the normal
source loader, but gives each an ``__import__`` that reads ``pact.v1`` as
``pacta2a._gen.pact.v1``. Nothing is added to sys.path and no module named
``pact`` is ever created; the generated code runs as protoc wrote it.

Import the modules from here: ``from pacta2a._pb import frontdoor_pb2``, or
``load("brand_pb2")`` for one the package does not use itself.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any, Sequence

# The package the generated files live in, e.g. "pacta2a._gen".
_GEN = __name__.rpartition(".")[0] + "._gen"
# The generated modules' own name for their package.
_PROTO_PACKAGE = "pact.v1"


def _generated_import(
    name: str,
    globals: dict[str, Any] | None = None,
    locals: dict[str, Any] | None = None,
    fromlist: Sequence[str] = (),
    level: int = 0,
) -> types.ModuleType:
    """Is __import__ for generated code: "pact" and "pact.*" live under _GEN."""
    if level == 0 and (name == "pact" or name.startswith("pact.")):
        if not fromlist:
            # "import pact.v1.x" would bind the top-level name "pact"; protoc
            # never writes it, and honouring it would need a real "pact".
            raise ImportError(f"generated code may import {name!r} only with 'from ... import'")
        name = _GEN + "." + name
    return builtins.__import__(name, globals, locals, fromlist, level)


_BUILTINS = {**builtins.__dict__, "__import__": _generated_import}


class _GeneratedLoader(importlib.machinery.SourceFileLoader):
    """Loads a generated file with _generated_import as its __import__."""

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__["__builtins__"] = _BUILTINS
        super().exec_module(module)


class _GeneratedFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of _GEN's pact/v1 folder and loads them with _GeneratedLoader."""

    _prefix = _GEN + "." + _PROTO_PACKAGE + "."

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self._prefix):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _GeneratedLoader(spec.loader.name, spec.loader.path)
        return spec


if not any(isinstance(f, _GeneratedFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _GeneratedFinder())


def load(name: str) -> types.ModuleType:
    """Is one generated module, e.g. load("brand_pb2_grpc"), for RPCs the
    package does not wrap."""
    return importlib.import_module(f"{_GEN}.{_PROTO_PACKAGE}.{name}")


delegation_pb2 = load("delegation_pb2")
frontdoor_pb2 = load("frontdoor_pb2")
token_pb2 = load("token_pb2")
verification_pb2 = load("verification_pb2")

__all__ = ["delegation_pb2", "frontdoor_pb2", "load", "token_pb2", "verification_pb2"]
