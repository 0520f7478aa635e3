"""Masking values: what a person may see of tool arguments and free text.

The default mask (:func:`redact_secrets`) hides the value of every secret-looking key;
an agent's redactor (``ApprovalPolicy(redactor=...)``) adds masks on top, never removes
one (a sub-agent's redactors add up with its parents': :class:`Chained`). What a mask hid
is remembered and scrubbed from every other text and from the shown arguments of every
call (:class:`Masker`, :class:`Scrubbing` for a row filed in an agent tree), and free
text is also cleared of secret-looking tokens (:func:`redact_text`). The views
built from these are in :mod:`tether.governance.redaction`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from tether.durable.approval_types import args_sha256

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable.approval_types import Approval, Redactor
    from tether.messages import ContentBlock, Message, ToolCall
    from tether.models.base import Model

MASK: Final = "***"
SECRET_KEY = re.compile(
    r"(token|secret|passw|pwd|key|authori[sz]ation|auth|credential|cookie|signature|private)",
    re.IGNORECASE,
)

_TOKENS = re.compile(
    r"(?P<bearer>\b(?:bearer|basic)\s+)(?=[A-Za-z._~+/-]*[0-9=])[A-Za-z0-9._~+/-]{8,}=*"
    r"|\bsk-[A-Za-z0-9_-]{8,}"
    r"|(?P<key>api[_-]?key|token|secret|passw(?:or)?d|pwd|credential)"
    r"(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\s\"',;&}\]]{4,})",
    re.IGNORECASE,
)
"""Secret-looking tokens in free text: ``Bearer <token>`` / ``Basic <token>`` (a token with a
digit or ``=``: "a basic implementation" is prose), ``sk-...`` keys, and the value of
``api_key=...`` / ``"password": "..."`` (a key ending like a secret; ``tokens: 12`` is not).
Linear time: every branch starts with a literal and never backtracks over a long run."""


_TRIGGERS = ("bearer", "basic", "sk-", "api", "token", "secret", "passw", "pwd", "credential")


def redact_secrets(tool: str | None, arguments: dict[str, Any]) -> dict[str, Any]:
    """The default redactor: mask the value of every key that looks secret, at any depth."""
    return _mask(arguments)  # type: ignore[no-any-return]


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (MASK if isinstance(k, str) and SECRET_KEY.search(k) else _mask(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_mask(v) for v in value]
    return value


def shown_arguments(
    tool: str | None, real: dict[str, Any], redactor: Redactor | None = None
) -> dict[str, Any]:
    """Tool arguments as a person may see them: the custom redactor, then the default mask."""
    shown = redactor(tool, real) if redactor is not None else real
    return redact_secrets(tool, shown)


class Chained:
    """Several redactors as one, each applied to what the one before showed: the masks of
    every agent on a sub-agent's path add up (the innermost first; none can unmask)."""

    __slots__ = ("redactors",)
    redactors: tuple[Redactor, ...]

    def __init__(self, redactors: Iterable[Redactor]) -> None:
        flat: list[Redactor] = []
        for redactor in redactors:
            for one in redactor.redactors if isinstance(redactor, Chained) else (redactor,):
                if all(one is not r for r in flat):
                    flat.append(one)
        self.redactors = tuple(flat)

    def __call__(self, tool: str | None, arguments: dict[str, Any]) -> dict[str, Any]:
        for redactor in self.redactors:
            arguments = redactor(tool, arguments)
        return arguments


def chained(*redactors: Redactor | None) -> Redactor | None:
    """The redactors given (None ones left out) as one; None when there are none."""
    given = Chained(r for r in redactors if r is not None)
    if not given.redactors:
        return None
    return given.redactors[0] if len(given.redactors) == 1 else given


class Scrubbing:
    """A row's redaction in an agent tree: ``redactor`` masks by name, then every shown
    value is scrubbed of ``hidden`` (the tree's strings a mask hid: a call quoting a
    secret another call's mask hid) and of secret-looking tokens. ``hidden`` is shared,
    not copied (the tree's live set)."""

    __slots__ = ("hidden", "redactor")

    def __init__(self, redactor: Redactor | None, hidden: set[str]) -> None:
        self.redactor = redactor
        self.hidden = hidden

    def __call__(self, tool: str | None, arguments: dict[str, Any]) -> dict[str, Any]:
        masked = arguments if self.redactor is None else self.redactor(tool, arguments)
        return Masker(None, {}, self.hidden).scrub(masked)  # type: ignore[no-any-return]


def hidden_strings(real: Any, shown: Any, out: set[str]) -> None:
    """Add to ``out`` the strings (and numbers, as text) present in ``real`` that the
    redactor removed from ``shown``; shorter than 4 characters they are not scrubbed from
    other text."""
    if isinstance(real, int | float) and not isinstance(real, bool):
        if real != shown and len(str(real)) >= 4:
            out.add(str(real))
    elif isinstance(real, str):
        if real != shown and len(real) >= 4:
            out.add(real)
    elif isinstance(real, dict):
        for key, item in real.items():
            hidden_strings(item, shown.get(key) if isinstance(shown, dict) else None, out)
    elif isinstance(real, list | tuple):
        for index, item in enumerate(real):
            other = shown[index] if isinstance(shown, list) and index < len(shown) else None
            hidden_strings(item, other, out)


def scrub(value: Any, hidden: set[str]) -> Any:
    """Replace every hidden secret inside ``value`` (the reason text, say) by the mask."""
    if not hidden:
        return value
    if isinstance(value, str):
        for secret in sorted(hidden, key=len, reverse=True):
            value = value.replace(secret, MASK)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, hidden) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, hidden) for v in value]
    return value


def _token(match: re.Match[str]) -> str:
    if match.group("bearer"):
        return match.group("bearer") + MASK
    if match.group("key"):
        return match.group("key") + match.group("sep") + MASK
    return MASK


class Hidden:
    """A set of hidden strings indexed by their last 4 characters (secrets share prefixes
    such as ``sk-`` or a card's, rarely endings), so a text is scanned for the few that
    can occur in it (those ending with one of the text's 4-grams), longest first: a view of
    N calls hiding N strings is not N x N scans. Rebuilt when the set has grown (hidden
    sets only ever grow)."""

    __slots__ = ("_by_end", "_short", "_size", "strings")

    def __init__(self, strings: set[str]) -> None:
        self.strings = strings
        self._size = -1
        self._by_end: dict[str, list[str]] = {}
        self._short: list[str] = []

    def within(self, text: str) -> list[str]:
        """The hidden strings that may occur in ``text``, longest first."""
        if self._size != len(self.strings):
            index: dict[str, list[str]] = {}
            short: list[str] = []
            for secret in self.strings:
                if len(secret) < 4:
                    short.append(secret)  # (given so: never learned) looked up as it is
                else:
                    index.setdefault(secret[-4:], []).append(secret)
            self._by_end, self._short, self._size = index, short, len(self.strings)
        by_end = self._by_end
        if len(by_end) * 4 < len(text):  # few keys: look each up (str.find is fast)
            keys = [k for k in by_end if k in text]
        else:  # the text's 4-grams, each looked up
            keys = list({text[i : i + 4] for i in range(len(text) - 3)} & by_end.keys())
        found = [secret for key in keys for secret in by_end[key]]
        found += [secret for secret in self._short if secret in text]
        return sorted(found, key=len, reverse=True)


def redact_text(text: str, hidden: Iterable[str] | Hidden = ()) -> str:
    """Free text as a person may see it: every ``hidden`` string masked (longest first),
    then every secret-looking token (see ``_TOKENS``)."""
    if isinstance(hidden, Hidden):
        ordered = hidden.within(text)
    else:
        ordered = sorted(hidden, key=len, reverse=True)
    for secret in ordered:
        text = text.replace(secret, MASK)
    lowered = text.lower()
    if any(word in lowered for word in _TRIGGERS):  # re is slow to scan: most text has none
        text = _TOKENS.sub(_token, text)
    return text


def model_keys(model: Model) -> set[str]:
    """The API keys configured on ``model`` (and the models of a chain), to mask them in
    provider error texts that echo them."""
    keys: set[str] = set()
    for key in getattr(model, "_keys", None) or ():  # ResilientModel's rotation list
        if isinstance(key, str) and len(key) >= 4:
            keys.add(key)
    for inner in getattr(model, "models", None) or ():
        keys |= model_keys(inner)
    return keys


def provider_text(text: str, model: Model) -> str:
    """A failure text to journal: the model's API keys and secret-looking tokens masked."""
    return redact_text(text, model_keys(model))


def learned_masks(
    approvals: Sequence[Approval], calls: dict[str, ToolCall | None]
) -> dict[str, set[str]]:
    """Per tool, the top-level keys an approval row shows changed from the real call: the
    agent's redactor masked them, so they are masked in every call of that tool."""
    masks: dict[str, set[str]] = {}
    for approval in approvals:
        call = calls.get(approval.interrupt_id)
        if call is None or approval.tool != call.name:
            continue
        real = dict(call.arguments)
        if args_sha256(real) != approval.args_sha256:
            continue
        for key, value in real.items():
            shown = approval.arguments.get(key, MASK)
            if isinstance(value, dict | list) and isinstance(shown, dict | list):
                continue  # masked inside: the default mask and the scrub cover it
            if shown != value and not _scrubbed(value, shown):
                masks.setdefault(call.name, set()).add(key)
    return masks


def _scrubbed(real: Any, shown: Any) -> bool:
    """Whether ``shown`` is ``real`` with some parts replaced by the mask (a quote of a
    secret scrubbed out, not the key masked by a redactor): a wildcard match, greedy."""
    if not isinstance(real, str) or not isinstance(shown, str) or shown == MASK:
        return False
    parts = shown.split(MASK)
    if len(parts) < 2 or not real.startswith(parts[0]) or not real.endswith(parts[-1]):
        return False
    at, end = len(parts[0]), len(real) - len(parts[-1])
    for part in parts[1:-1]:
        found = real.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return at <= end


class Masker:
    """Redacts tool calls and remembers what it hid, to scrub it from every other string
    (a :class:`~tether.governance.redaction.ShownSession` keeps the one that made it, for
    views built from the journal, such as the timeline)."""

    def __init__(
        self,
        redactor: Redactor | None,
        masks: dict[str, set[str]],
        hidden: set[str] | None = None,
    ) -> None:
        self.redactor = redactor
        self.masks = masks
        self.hidden: set[str] = set() if hidden is None else hidden
        """What the masks hid (shared with others when given: an agent tree's set)."""
        self._hidden: Hidden | None = None

    def _index(self) -> Hidden:
        if self._hidden is None or self._hidden.strings is not self.hidden:
            self._hidden = Hidden(self.hidden)
        return self._hidden

    def arguments(self, tool: str | None, real: dict[str, Any]) -> dict[str, Any]:
        """A call's arguments as shown: masked by name (the redactor, the default mask, the
        learned ``masks``; what they hid is learned), then every shown value scrubbed of
        what any mask hid (a task quoting another call's secret) and of secret tokens."""
        shown = self.learn(tool, real)
        return self.scrub(shown)  # type: ignore[no-any-return]

    def learn(self, tool: str | None, real: dict[str, Any]) -> dict[str, Any]:
        """Learn what the masks hide in one call (a view's pre-pass over a journal, before
        it shows anything); its arguments masked by name only (not yet scrubbed)."""
        shown = shown_arguments(tool, real, self.redactor)
        for key in self.masks.get(tool or "", ()):
            if key in shown:
                shown[key] = MASK
        # learned before the scrub: a value quoting a secret is not itself a secret
        hidden_strings(real, shown, self.hidden)
        return shown

    def call(self, call: ToolCall) -> ToolCall:
        return replace(call, arguments=self.arguments(call.name, dict(call.arguments)))

    def scrub(self, value: Any) -> Any:
        """``value`` (text, or JSON-like data) with every hidden string and secret-looking
        token masked (:func:`redact_text` on each string)."""
        if isinstance(value, str):
            return redact_text(value, self._index())
        if isinstance(value, dict):
            return {k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        return value

    def text(self, value: str) -> str:
        """One text (a span's status, a reason) as it may be shown."""
        return redact_text(value, self._index())

    def block(self, block: ContentBlock) -> ContentBlock:
        if block.type == "tool_call":
            return self.call(block)
        if block.type == "tool_result":
            return replace(block, content=self.scrub(block.content))
        return replace(block, text=self.scrub(block.text))

    def message(self, message: Message) -> Message:
        return replace(message, content=[self.block(b) for b in message.content])

    def interrupt(self, interrupt: Interrupt) -> Interrupt:
        call = interrupt.tool_call
        return replace(
            interrupt,
            reason=self.scrub(interrupt.reason),
            tool_call=None if call is None else self.call(call),
        )
