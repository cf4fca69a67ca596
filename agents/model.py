"""The model interface every agent talks to: one request in, one response out.

Agents program against it; `app` implements it. Two implementations sit behind it: the
OpenAI-compatible client (`app.llm.client`, the only module that imports `openai`) and the built-in
offline model (`agents.offline`). Tests add scripted ones.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from agents.requests import ModelHints, NodeHints, TaskHints
from agents.toolkit.tokens import count_tokens


@dataclass(frozen=True)
class Usage:
    """What one or more model calls cost: tokens from the provider, bytes on the wire."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    calls: int = 0
    seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def counted(cls, prompt: str, completion: str, **rest: Any) -> Usage:
        """A call's usage with its tokens counted by the project's tokenizer (`agents.toolkit.tokens`), for a
        server that reports none; `rest`: its other fields."""
        return cls(count_tokens(prompt), count_tokens(completion), **rest)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.bytes_sent + other.bytes_sent,
            self.bytes_received + other.bytes_received,
            self.calls + other.calls,
            self.seconds + other.seconds,
        )


@dataclass(frozen=True)
class Tool:
    """A function the model may call instead of (or besides) answering: OpenAI chat `tools`."""

    name: str
    description: str
    parameters: Mapping[str, Any]  # the JSON schema of its arguments (an object)


@dataclass(frozen=True)
class ToolCall:
    """A call the model made to one of the request's `tools`, with its parsed arguments."""

    name: str
    arguments: Mapping[str, Any]
    id: str = ""


@dataclass(frozen=True)
class ModelRequest:
    """One completion request.

    `purpose` names the call ("plan", "repair", "task", "final", "map", "reduce").
    `schema` asks for JSON output validated against it; with `validate=False` the client only
    parses the JSON (`data` is None when it cannot) and the caller validates and repairs.
    `hints` says what is asked, typed by kind (`agents.requests`): the offline model works from it
    alone; remote models read the messages. `temperature` is the call kind's default (a client
    setting for the agent overrides it). `tools` are offered to the model (`tool_choice`: "auto",
    "required", "none" or a tool's name, which forces that call); its calls come back in
    `ModelResponse.tool_calls`. A model that cannot call tools (the offline one) ignores them.
    """

    purpose: str
    messages: list[dict[str, str]]
    schema: Mapping[str, Any] | None = None
    schema_name: str = "output"
    agent: str | None = None
    hints: ModelHints | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    validate: bool = True
    tools: tuple[Tool, ...] = ()
    tool_choice: str = "auto"

    @classmethod
    def of_node(cls, node: str, prompt: str, system: str = "",
                schema: Mapping[str, Any] | None = None) -> ModelRequest:
        """The one call of a flow's `llm` node: its rendered `system` (none when blank) and `prompt` as the
        messages, JSON against its `schema` when it has one; the offline model reads the prompt from the hints."""
        messages = ([{"role": "system", "content": system}] if system.strip() else []) + \
            [{"role": "user", "content": prompt}]
        return cls(purpose="task", messages=messages, schema=schema, agent="llm",
                   hints=NodeHints(node=node, prompt=prompt))


@dataclass(frozen=True)
class ModelResponse:
    """The model's answer: its text, the parsed JSON when a schema was asked for, and the cost."""

    text: str
    data: Any = None
    usage: Usage = Usage()
    model: str = ""
    offline: bool = False
    finish_reason: str = ""  # "length": the answer was cut at max_tokens
    tool_calls: tuple[ToolCall, ...] = ()  # calls to the request's `tools`, in the order made


@runtime_checkable
class Model(Protocol):
    """Anything that answers a `ModelRequest`.

    `context_tokens` is the context window agents size their prompts to; None leaves it to
    the known size of the served model `model_for` names. What it can do, agents ask of it:
    `extractive` (it writes no words of its own: it quotes, extracts and plans by rule, so a
    translation, a tabulation of prose or a tool's arguments cannot be asked of it, and its answers
    need no finishing or checking) and `can_call_tools` (it may be offered `tools`, such as the
    question to the user). `offline` only labels what it wrote (the built-in offline model); no agent
    branches on it. An implementation may subclass `Model` to take the defaults: one model name for
    every agent, no declared window, a generative model that calls tools.
    """

    name: str
    offline: bool = False
    extractive: bool = False
    can_call_tools: bool = True
    context_tokens: int | None = None

    def model_for(self, agent: str | None) -> str:
        """The served model name an agent's requests go to."""
        return self.name

    async def complete(self, request: ModelRequest) -> ModelResponse: ...


class ModelError(Exception):
    """A model call failed for good (after retries, or on a non-retryable answer)."""

    code = "model_error"  # the outcome label of the model-call metrics

    def __init__(self, message: str, *, usage: Usage = Usage()) -> None:
        super().__init__(message)
        self.usage = usage


class ModelOutputError(ModelError):
    """The model answered, but not with output that parses and validates."""

    code = "model_output_invalid"  # the outcome label of the model-call metrics


class ModelBudgetError(ModelError):
    """The round's retry or token budget is spent."""

    code = "model_budget_exhausted"  # the outcome label of the model-call metrics


class RetryBudget:
    """What one round may still spend across all its model calls: retries, and tokens if capped.

    The object is shared by reference, so agent tasks started inside its `CallScope` draw on
    the same budget.
    """

    def __init__(self, retries: int, *, tokens: int | None = None) -> None:
        self.retries = retries
        self.tokens = tokens
        self.retries_spent = 0
        self.tokens_spent = 0

    @property
    def retries_left(self) -> int:
        return max(0, self.retries - self.retries_spent)

    @property
    def tokens_exhausted(self) -> bool:
        return self.tokens is not None and self.tokens_spent >= self.tokens

    def spend_retry(self) -> bool:
        """Take one retry; False (and nothing taken) when none are left."""
        if self.retries_spent >= self.retries:
            return False
        self.retries_spent += 1
        return True

    def charge(self, usage: Usage) -> None:
        """Count the tokens a finished call used."""
        self.tokens_spent += usage.total_tokens

    def __repr__(self) -> str:
        return (f"RetryBudget(retries={self.retries_spent}/{self.retries}, "
                f"tokens={self.tokens_spent}/{self.tokens})")


class TextSink(Protocol):
    """Where the text of a model call goes while it is written: the draft of the message it will
    become (`app.drafts`). A model client calls `text` with each piece as it arrives, and `retract`
    when what one call wrote will not be kept (the call is retried or asked again)."""

    def text(self, piece: str) -> None: ...

    def lead(self, text: str) -> None: ...

    def mark(self) -> int: ...

    def retract(self, mark: int) -> None: ...


# The calls whose text is the message's (or, for the plan, whose `STREAMED_FIELD` is):
# intermediate map calls and repairs of a tool's JSON are not.
STREAMED_PURPOSES = frozenset({"plan", "task", "final"})
STREAMED_FIELD = "objUserResponse"  # of a structured answer: the part the user reads


@dataclass(frozen=True)
class Stream:
    """Where one model call's text goes as it is written: into `sink`, all of it, or of a structured
    answer only its string `field`."""

    sink: TextSink
    field: str | None = None


@dataclass(frozen=True)
class CallScope:
    """What the model calls made in a context share, in one typed object: where they come from (the
    workflow, round, task and trace the model I/O log and the server log name; whether the round
    was resumed after a crash), the round's budget they draw on, and the draft of the message their
    prose streams into. The app enters a scope (`CallScope.entered`) where a round, a task or a
    message begins; the model client and the logs read the current one (`CallScope.current()`).
    Scopes nest, each changing only what it names; tasks started inside share it (asyncio copies
    the context), the budget by reference."""

    workflow: str | None = None
    round_no: int | None = None
    task: str | None = None
    trace: str | None = None
    resumed: bool = False
    budget: RetryBudget | None = None
    draft: TextSink | None = None

    @staticmethod
    def current() -> CallScope:
        """The scope the model calls of this context are made in."""
        return _scope.get()

    @staticmethod
    @contextmanager
    def entered(*, workflow: str | None = None, round_no: int | None = None, task: str | None = None,
                trace: str | None = None, resumed: bool | None = None, retries: int | None = None,
                tokens: int | None = None, draft: TextSink | None = None) -> Iterator[CallScope]:
        """The current scope with what is named changed, for the calls of this block. `retries`: they
        draw on a budget of their own, of that many retries (and `tokens`, if capped): a round's."""
        named = {"workflow": workflow, "round_no": round_no, "task": task, "trace": trace, "resumed": resumed,
                 "draft": draft}
        changes: dict[str, Any] = {k: v for k, v in named.items() if v is not None}
        if retries is not None:
            changes["budget"] = RetryBudget(retries, tokens=tokens)
        with _narrowed(**changes) as scope:
            yield scope

    def stream(self, request: ModelRequest) -> Stream | None:
        """Where the call's text streams: into this scope's draft if the call writes the message's prose
        (a reduce only when it is the last, `TaskHints.last`; of a plan, its `STREAMED_FIELD`)."""
        if self.draft is None:
            return None
        if request.schema is not None and request.schema_name != "plan":  # a tool's JSON is no prose
            return None
        if request.purpose in STREAMED_PURPOSES or (request.purpose == "reduce" and isinstance(request.hints, TaskHints)
                                                      and request.hints.last) or \
                (request.purpose == "repair" and request.schema_name == "plan"):
            return Stream(self.draft, STREAMED_FIELD if request.schema is not None else None)
        return None


_scope: ContextVar[CallScope] = ContextVar("foreman_call_scope", default=CallScope())


@contextmanager
def _narrowed(**changes: Any) -> Iterator[CallScope]:
    scope = replace(_scope.get(), **changes)
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


def lead(text: str) -> None:
    """Words of the message that come before the model's next streamed text (a heading)."""
    sink = _scope.get().draft
    if sink is not None:
        sink.lead(text)


@contextmanager
def no_draft() -> Iterator[None]:
    """Calls in this context do not stream (a task's helper calls whose text is not the message's)."""
    with _narrowed(draft=None):
        yield
