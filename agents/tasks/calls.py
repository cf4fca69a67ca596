"""Model calls for agents: a ledger that adds up usage, token budgets and map-reduce."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from msgspec import structs

from agents.model import Model, ModelError, ModelRequest, ModelResponse, Usage
from agents.requests import AnswerHints, DocFacts, SummaryHints
from agents.tasks.inputs import without_echo
from agents.tasks.questions import QuestionAsked, asked, offer
from agents.toolkit.cpu import off_gil_if_long, off_loop_if_long
from agents.toolkit.tokens import chunk_text, context_size, count_tokens, count_tokens_off_loop, fit_to_budget_off_loop

# Share of the context window kept free for the model's answer and the prompt's own wording.
OUTPUT_SHARE = 0.25
PROMPT_OVERHEAD = 600
MIN_INPUT = 256
MAP_CONCURRENCY = 4  # a long book must not fire dozens of calls at a provider at once
MESSAGE_TOKENS = 1500  # a chat message shows this much of a long result; the file has it all


@dataclass
class Ledger:
    """Makes model calls and keeps the sum of what they cost."""

    model: Model
    usage: Usage = Usage()
    model_name: str = ""
    offline: bool = False

    async def ask(self, request: ModelRequest) -> ModelResponse:
        """One model call; its usage is added even when it fails. A task's call offered `ask_user`
        (`agents.tasks.questions`) that calls it raises `QuestionAsked`: the task waits for the user."""
        request = offer(request)
        try:
            response = await self.model.complete(request)
        except ModelError as exc:
            self.usage = self.usage + exc.usage
            exc.usage = self.usage  # the engine books what the whole task cost up to the failure
            raise
        self.usage = self.usage + response.usage
        self.model_name = response.model or self.model.name
        self.offline = self.offline or response.offline
        if request.tools and (question := asked(response)):
            raise QuestionAsked(question, self.usage)
        if request.purpose == "task" and response.data is None and (text := without_echo(response.text)) != response.text:
            response = replace(response, text=text)
        return response


def context_tokens(model: Model, agent: str | None = None) -> int:
    """The model's context window: its own `context_tokens` if it declares one, else the toolkit's
    figure for the model name that serves `agent` (a client may route agents to other models)."""
    return model.context_tokens or context_size(model.model_for(agent))


def input_budget(model: Model, agent: str | None = None) -> int:
    """Tokens of document text one request may carry."""
    window = context_tokens(model, agent)
    return max(MIN_INPUT, window - int(window * OUTPUT_SHARE) - PROMPT_OVERHEAD)


def output_budget(model: Model, agent: str | None = None) -> int:
    """Tokens an answer may use."""
    return max(MIN_INPUT, int(context_tokens(model, agent) * OUTPUT_SHARE))


def messages(system: str, user: str) -> list[dict[str, str]]:
    """A system and a user message."""
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


Progress = Callable[[str], Awaitable[None]]


async def map_reduce(ledger: Ledger, *, agent: str, text: str, budget: int,
                     map_system: str, reduce_system: str, hints: SummaryHints | AnswerHints,
                     doc: DocFacts, chunks: list[str] | None = None,
                     progress: Progress | None = None) -> str:
    """Condense a text too long for one request: one "map" call per chunk (`chunks` when given,
    else the text cut to `budget`), then "reduce" calls until the partial results fit one request.
    `progress` hears "part 3 of 8 done" as map calls end and "merging ..." before reduce calls.
    Every call carries `hints` (their kind is the task's) with the part or the partials it works on.
    Returns the final reduced text."""
    if chunks is None:
        chunks = await off_gil_if_long(len(text), chunk_text, text, budget)
    parts = len(chunks)

    gate = asyncio.Semaphore(MAP_CONCURRENCY)
    told = asyncio.Lock()  # progress lines in the order the parts end
    done = 0

    async def tell(line: str) -> None:
        if progress is not None:
            async with told:
                await progress(line)

    async def one(index: int, chunk: str) -> str:
        facts = structs.replace(doc, text=chunk, part=index, parts=parts)
        request = ModelRequest(
            purpose="map",
            messages=messages(map_system, f"Part {index} of {parts} of {doc.name}:\n\n{chunk}"),
            agent=agent,
            hints=structs.replace(hints, documents=(facts,)),
            max_tokens=output_budget(ledger.model, agent),
        )
        nonlocal done
        async with gate:
            answer = (await ledger.ask(request)).text
        done += 1
        await tell(f"part {done} of {parts} done")
        return answer

    # Map calls are independent; gather keeps their results in document order.
    partials = list(await asyncio.gather(*(one(i, c) for i, c in enumerate(chunks, 1))))
    while True:
        groups = await off_loop_if_long(sum(map(len, partials)), _groups, partials, budget)
        await tell(f"merging {len(partials)} partial results in {len(groups)} call{'s' * (len(groups) != 1)}")
        reduced = []
        for group in groups:
            request = ModelRequest(
                purpose="reduce",
                messages=messages(reduce_system, "\n\n---\n\n".join(group)),
                agent=agent,
                hints=structs.replace(hints, partials=tuple(group), documents=(doc,), last=len(groups) == 1),
                max_tokens=output_budget(ledger.model, agent),
            )
            reduced.append((await ledger.ask(request)).text)
        if len(reduced) == 1:
            return reduced[0]
        if len(reduced) >= len(partials):  # a reduce that does not shrink would never end
            return "\n\n".join(reduced)
        partials = reduced


async def message_excerpt(text: str, limit: int = MESSAGE_TOKENS) -> str:
    """`text` cut to what a chat message should show (the cut is marked)."""
    if await count_tokens_off_loop(text) <= limit:
        return text
    return (await fit_to_budget_off_loop([text], limit))[0]


def _groups(partials: list[str], budget: int) -> list[list[str]]:
    groups: list[list[str]] = [[]]
    used = 0
    for partial in partials:
        size = count_tokens(partial)
        if groups[-1] and used + size > budget:
            groups.append([])
            used = 0
        groups[-1].append(partial)
        used += size
    return groups
