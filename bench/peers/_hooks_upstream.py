"""What an SDK-side change would save: an emitter that serialises each context once.

Bench-only prototype for an upstream proposal to agent-hooks-sdk (not used by
tether). In 0.1.0b3 every emission encodes the context with `json.dumps` three
times and the Rust core parses it three times (`validate_envelope`,
`context_identity`, `finalize`), canonicalises and hashes it twice (the input
identity, then the enforced identity inside `finalize`, which ignores a
precomputed `enforced_identity` under jcs-sha256), even when no transform
folded and the context is byte-for-byte what was hashed before dispatch.

`OnePassEmitter` emulates the proposed core entry points on top of the shipped
core: ONE `dumps(ctx)` reused for the envelope check, the input identity and
`finalize`; and when nothing folded (the emitter knows: only `_fold_transform`
rewrites the context) the enforced identity is the input identity, so
`finalize` is asked for no second hash (it is called with no provider and the
record is then stamped with the jcs-sha256 provider and both identities, which
is what the proposed `finalize(..., enforced_identity=input)` would return).
Any transform, error or non-jcs provider takes the stock path. `check()` proves
the records equal the stock emitter's on the same contexts.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

from agent_hooks import InterceptionEmitter, InterceptionRecord, _core
from agent_hooks._marshal import dumps
from agent_hooks._types import JCS_SHA256


class OnePassEmitter(InterceptionEmitter):
    __slots__ = ("_folded",)

    def _fold_transform(self, ctx: dict[str, Any], v: Any) -> Any:
        self._folded = True
        return super()._fold_transform(ctx, v)

    async def emit_unchecked(self, ctx: dict[str, Any]) -> InterceptionRecord:
        if self._identity != JCS_SHA256:
            return await super().emit_unchecked(ctx)
        try:
            text = dumps(ctx)
            _core.validate_envelope(text)
            identity = _core.context_identity(text)
        except ValueError:  # the stock path builds the fail-closed record
            return await super().emit_unchecked(ctx)
        self._folded = False
        outcome = await self._dispatch(ctx)
        if self._folded:
            return self._append(self._finalize(ctx, outcome, identity))
        options: dict[str, Any] = {
            "input_identity": identity,
            "identity_provider": None,
            "enforced_identity": None,
            "decided_by": outcome.decided_by,
            "composition": self._composition.to_wire(),
            "verdicts": [s.to_wire() for s in outcome.verdicts],
            "fold_truncated": outcome.fold_truncated,
            "resolved_by": outcome.resolved_by,
            "interceptors_registered": len(self._active(ctx)),
        }
        self._stamp_declaration(options)
        verdict = dumps(outcome.combined.to_wire())
        raw = json.loads(_core.finalize(text, verdict, self._mode.value, dumps(options)))
        record = InterceptionRecord.from_core(raw)
        record = dataclasses.replace(
            record, identity_provider=JCS_SHA256, enforced_identity=identity
        )
        return self._append(record)


async def check(contexts: list[dict[str, Any]], interceptor: Any) -> None:
    """The prototype's records equal the stock emitter's on the same contexts."""
    stock, fast = InterceptionEmitter(timeout=5.0), OnePassEmitter(timeout=5.0)
    for emitter in (stock, fast):
        emitter.register(interceptor, name="allow-all")
    for ctx in contexts:
        a = await stock.emit_unchecked(copy.deepcopy(ctx))
        b = await fast.emit_unchecked(copy.deepcopy(ctx))
        if a.to_wire() != b.to_wire():
            raise SystemExit(f"prototype record differs:\n{a.to_wire()}\n{b.to_wire()}")
