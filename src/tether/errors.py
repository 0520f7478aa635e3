"""The exceptions tether raises. Every message says what happened, where, and what to do.

Every exception tether raises is a :class:`TetherError`. Where callers may already
catch a built-in exception for the same mistake, the built-in is a second base.

::

    TetherError
    ├── ConfigurationError (ValueError, TypeError)  bad configuration: Agent arguments,
    │                                               tools and their parameter types, hooks,
    │                                               interventions, limits, policies, AGENT-HOOKS
    ├── InputError (ValueError, TypeError)          a value passed to a call has the wrong form:
    │   │                                           a prompt, a message dict, a store request
    │   └── AnswerError                             an answer that does not fit its interrupt or
    │                                               approval (unknown id, malformed, bad edits)
    ├── ReadOnlyFieldError (AttributeError)         a hook wrote a field its event does not allow
    ├── InterceptorTimeout (TimeoutError)           a sync AGENT-HOOKS interceptor overran its
    │                                               timeout (the host applies the failure mode)
    ├── AgentBusyError                              an agent already runs an invocation
    ├── SessionStateError                           the session cannot do that now (resume of a
    │                                               run that is not suspended, interrupt()
    │                                               outside a run)
    ├── ScriptExhaustedError                        a ScriptedModel ran out of turns
    ├── ToolArgumentError                           (never escapes: goes back to the model)
    ├── SubAgentError                               a sub-agent stopped without an answer (goes
    │   │                                           back to its parent's model as a tool error)
    │   └── RemoteAgentError (tether.a2a)           a remote A2A task failed, was rejected or
    │                                               canceled, or its remote refused the call
    ├── CodeError (tether.tools.sandbox)            an execute_code program failed: syntax, a
    │                                               runtime error, a limit (goes back to the
    │                                               model as a tool error naming the line)
    ├── RunError                                    the run ended with stop reason ``error``;
    │   │                                           ``.result`` holds what was produced
    │   ├── HookError                               a hook or intervention raised
    │   ├── MiddlewareError                         a model or tool middleware broke its contract
    │   ├── ModelError                              the model failed or its answer is unusable
    │   │   └── ProviderError (tether.models)       classified provider failure (reason, status,
    │   │                                           provider, attempts)
    │   ├── RetryLimitError                         more hook retries than Execution.max_retries
    │   ├── OutputValidationError                   the final answer did not fit output_type
    │   │                                           after the bounded retries
    │   ├── PersistenceError                        the journal could not be written
    │   ├── ContextError                            context management failed: a manager broke
    │   │   │                                       the rules (split a tool call from its result)
    │   │   └── ContextOverflowError                the conversation stays too long for the model
    │   │                                           after the bounded compressions
    │   └── ToolLoopError                           the model kept calling unknown tools, or
    │                                               tools with arguments they refuse
    └── StoreError (tether.durable)                 StoreUnavailable, StoreBusy, StoreFull,
                                                    SessionConflict,
                                                    SessionBusy, LeaseLost, SchemaTooNew,
                                                    CorruptEntry, NotSerializable (TypeError),
                                                    SessionNotFound (KeyError), ApproverExists,
                                                    ApprovalError: ApprovalNotFound (KeyError),
                                                    ApprovalConflict (ApprovalStale: its
                                                    interrupt was answered another way)

Three Python protocols are kept as they are: a module's lazy ``__getattr__`` raises
``AttributeError`` for a name it does not have, a mapping's ``__missing__`` raises
``KeyError``, and an abstract method a subclass must override raises
``NotImplementedError``. Interrupts (``InterruptSignal``) are
control flow, not errors: they never leave a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tether.result import Result


class TetherError(Exception):
    """Base class of every error tether raises."""


class ConfigurationError(TetherError, ValueError, TypeError):
    """The agent or a component was configured in a way that cannot work."""


class InputError(TetherError, ValueError, TypeError):
    """A value passed to a tether call does not have an accepted form."""


class AnswerError(InputError):
    """An answer to an interrupt or approval does not fit it; nothing was changed."""


class ReadOnlyFieldError(TetherError, AttributeError):
    """A hook set or deleted a field its event does not let hooks write."""


class InterceptorTimeout(TetherError, TimeoutError):
    """A synchronous AGENT-HOOKS interceptor ran past its timeout; its verdict is discarded."""


class AgentBusyError(TetherError):
    """An invocation was started while another one is running on the same agent."""


class SessionStateError(TetherError):
    """The session is not in a state that allows the request (e.g. resume of a finished run)."""


class ScriptExhaustedError(TetherError):
    """A ScriptedModel was called more times than it has turns."""


class ToolArgumentError(TetherError):
    """Tool arguments from the model could not be parsed or validated.

    Never escapes the loop: the message goes back to the model as a tool error.
    """


class SubAgentError(TetherError):
    """A sub-agent stopped without an answer; its parent's model gets this as a tool error."""

    stop_reason: str | None = None
    """The sub-agent's stop reason (``budget_exhausted``, ``limit_turns``, ``error`` ...)."""
    reason: str | None = None
    """The sub-agent's ``Result.reason``, as it gave it."""


class RunError(TetherError):
    """The run ended with stop reason ``error``; ``result`` holds what was produced."""

    result: Result | None = None


class HookError(RunError):
    """A hook callback (or an intervention handler with ``on_error="throw"``) raised."""


class MiddlewareError(RunError):
    """A model or tool middleware did not end its chain with exactly one result."""


class ModelError(RunError):
    """The model failed or produced a response the loop cannot use."""


class RetryLimitError(RunError):
    """A hook or intervention asked for more retries than the configured bound."""


class OutputValidationError(RunError):
    """The final answer did not validate against ``output_type`` within the retry bound."""


class PersistenceError(RunError):
    """The session journal could not be written; what was acknowledged before is kept."""


class ContextError(RunError):
    """Context management failed (a context manager returned a view that breaks the rules)."""


class ContextOverflowError(ContextError):
    """The conversation is still too long for the model after the bounded compressions."""


class ToolLoopError(RunError):
    """The model kept calling tools that do not exist, or with arguments they refuse
    (three consecutive rounds)."""
