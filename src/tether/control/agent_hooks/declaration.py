"""tether's host declaration side (AGENT-HOOKS section 7.7): its surface and registry.

The document itself (``agent-hooks.declaration.json``) is parsed, validated and
resolved by the SDK's loader (``InterceptionEmitter.from_declaration*``); a
refused document raises the loader's ``DeclarationError`` before any run.
What tether contributes is the :func:`tether_surface` (what its loop
implements) and the registry of names a document may reference:

- kind ``tether.python``: ``{"object": "package.module:attr", "options": {...}}``;
  ``attr`` is an interceptor, or a factory called with ``options`` that returns one;
- approval resolver ``tether-durable``: :class:`DurableApprovals`;
- whatever the caller adds with :func:`tether_registry` (kinds, resolvers,
  redactors, identity providers).
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent_hooks import (
    AgentContext,
    ApprovalResolver,
    BindingContext,
    HostRegistry,
    HostSurface,
    InterceptionEmitter,
    Interceptor,
    KindResolver,
)

from tether.control.agent_hooks.durable import DurableApprovals
from tether.errors import ConfigurationError

CAPABILITIES = ("bigint_json", "host_declaration", "int64_json", "model_calls", "tool_calls")
"""What tether's loop implements: all eight points, buffered output, posture "continue"."""
PYTHON_KIND = "tether.python"
DURABLE_RESOLVER = "tether-durable"


def tether_surface(tool_seam_host_error: str = "terminate") -> HostSurface:
    """The code surface a declaration is resolved against (tether implements both tool-seam
    postures; ``terminate``, failing closed, is the default)."""
    return HostSurface.from_capabilities(CAPABILITIES, tool_seam_host_error)


def tether_registry(
    *,
    kinds: Mapping[str, KindResolver] | None = None,
    approval_resolvers: Mapping[str, ApprovalResolver] | None = None,
    approval_redactors: Mapping[str, Callable[[AgentContext], AgentContext]] | None = None,
    identity_providers: Mapping[str, Callable[[AgentContext], str]] | None = None,
    surface: HostSurface | None = None,
) -> HostRegistry:
    """A HostRegistry with tether's built-in names plus the caller's."""
    registry = HostRegistry(surface or tether_surface())
    registry.kind(PYTHON_KIND, _python_kind)
    registry.approval_resolver(DURABLE_RESOLVER, DurableApprovals())
    for name, kind in (kinds or {}).items():
        registry.kind(name, kind)
    for name, resolver in (approval_resolvers or {}).items():
        registry.approval_resolver(name, resolver)
    for name, redactor in (approval_redactors or {}).items():
        registry.approval_redactor(name, redactor)
    for name, provider in (identity_providers or {}).items():
        registry.identity_provider(name, provider)
    return registry


def emitter_from_declaration(
    document: Any, registry: HostRegistry | None = None
) -> InterceptionEmitter:
    """Build a sealed emitter through the SDK loader from a path, JSON text or value.

    Without a registry, tether's is used with the tool-seam posture the document states
    (``configuration.posture.tool_seam_host_error``; ``continue`` when it states none,
    the contract's default): tether implements both."""
    if registry is None:
        registry = tether_registry(surface=tether_surface(_stated_posture(document)))
    if isinstance(document, os.PathLike):
        return InterceptionEmitter.from_declaration_path(document, registry)
    if isinstance(document, str):
        if document.lstrip().startswith("{"):
            return InterceptionEmitter.from_declaration_json(document, registry)
        return InterceptionEmitter.from_declaration_path(Path(document), registry)
    return InterceptionEmitter.from_declaration_value(document, registry)


def _stated_posture(document: Any) -> str:
    """The posture a declaration document states, read leniently (the loader judges the rest)."""
    value = document
    try:
        if isinstance(document, os.PathLike) or (
            isinstance(document, str) and not document.lstrip().startswith("{")
        ):
            value = json.loads(Path(document).read_text(encoding="utf-8"))
        elif isinstance(document, str):
            value = json.loads(document)
    except (OSError, ValueError):
        return "continue"  # unreadable: the loader reports it properly
    configuration = value.get("configuration") if isinstance(value, dict) else None
    posture = configuration.get("posture") if isinstance(configuration, dict) else None
    stated = posture.get("tool_seam_host_error") if isinstance(posture, dict) else None
    return stated if stated in ("terminate", "continue") else "continue"


def _python_kind(config: Any, binding: BindingContext) -> Interceptor:
    from tether.control.agent_hooks.interceptors import as_interceptor

    if not isinstance(config, dict) or not isinstance(config.get("object"), str):
        raise ConfigurationError(
            f'binding {binding.id}: config needs "object": "package.module:attr"'
        )
    unknown = set(config) - {"object", "options"}
    if unknown:
        raise ConfigurationError(
            f"binding {binding.id}: unknown config member(s) {sorted(unknown)}"
        )
    module, _, attr = config["object"].partition(":")
    if not module or not attr:
        raise ConfigurationError(
            f'binding {binding.id}: "object" must look like "package.module:attr"'
        )
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    options = config.get("options")
    if options is not None or isinstance(target, type):
        if options is not None and not isinstance(options, dict):
            raise ConfigurationError(f'binding {binding.id}: "options" must be an object')
        target = target(**(options or {}))
    return as_interceptor(target)
