"""The tests' scripted model: deterministic, behind the same `Model` interface the service calls."""

from __future__ import annotations

import json
from typing import Any

from agents.model import Model, ModelRequest, ModelResponse, Usage


class ScriptedModel(Model):
    """Answers from a script and keeps every request in `requests`.

    Each call takes the next of `answers`: a dict or list is JSON data, an exception is raised,
    anything else is the text. With none left, a model that answers all (`answer_all`, on when a
    `plan` is given) answers a plan or a plan repair with `plan` and any other call with
    "Done by <agent>."; otherwise the call fails the test, as one nobody scripted. Every answer
    costs `usage`.
    """

    name = "scripted"
    offline = False

    def __init__(self, *answers: Any, plan: dict[str, Any] | None = None, answer_all: bool | None = None,
                 usage: Usage = Usage(prompt_tokens=100, completion_tokens=20, calls=1)) -> None:
        self.answers = list(answers)
        self.plan = plan
        self.answer_all = plan is not None if answer_all is None else answer_all
        self.usage = usage
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self.answers:
            answer = self.answers.pop(0)
        elif not self.answer_all:
            raise AssertionError(f"unexpected model call: {request.purpose}")
        elif request.purpose in ("plan", "repair"):
            return ModelResponse(text=json.dumps(self.plan), data=self.plan, usage=self.usage, model=self.name)
        else:
            answer = f"Done by {request.agent or request.purpose}."
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, (dict, list)):
            return ModelResponse(text=json.dumps(answer), data=answer, usage=self.usage, model=self.name)
        return ModelResponse(text=str(answer), usage=self.usage, model=self.name)
