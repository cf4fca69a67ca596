"""The analyst agent: answers questions about the documents and analyses them."""

from __future__ import annotations

from agents.base import TaskContext, TaskResult, TaskSpec
from agents.calls import Ledger, input_budget, map_reduce, messages, output_budget
from agents.hints import doc_facts
from agents.inputs import base_hints, language_name, task_documents
from agents.outputs import text_files
from agents.toolkit.tokens import count_tokens, fit_to_budget
from app.model import ModelRequest


class Analyst:
    """Answers a question from the documents, citing the passages it relies on."""

    name = "analyst"
    description = (
        "Answers questions about the given documents and analyses them (facts, comparisons, "
        "figures), quoting the passages it relies on. Put the question in the instructions."
    )

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        ledger = Ledger(context.model)
        docs = task_documents(task, context)
        question = task.instructions.strip() or context.prompt
        language = language_name(context.language)
        hints = dict(base_hints(task, context, self.name, "answer"), question=question)
        budget = input_budget(context.model, self.name)
        per_doc = budget // max(1, len(docs))
        material = []
        for doc in docs:
            text = doc.text
            if count_tokens(text) > per_doc:
                # Keep only what bears on the question, so every document fits the final call.
                text = await map_reduce(
                    ledger, agent=self.name, kind="answer", text=text, budget=budget,
                    map_system=f"Quote verbatim the passages of this part that help answer: "
                               f"{question}\nAnswer NONE if there are none.",
                    reduce_system=f"Merge these quoted passages, keeping those that help answer: "
                                  f"{question}",
                    hints=hints, doc=doc_facts(doc),
                )
            material.append(doc_facts(doc, text=text))
        # Condensed documents can still add up to more than one request holds.
        for facts, text in zip(material, fit_to_budget([m["text"] for m in material], budget), strict=True):
            facts["text"] = text
        sources = "\n\n".join(f"Document {m['name']}:\n\n{m['text']}" for m in material)
        system = (f"You are the {self.name} agent. Answer in {language} from the documents only, "
                  "quote the passages you rely on, and say so when the documents do not tell.")
        request = ModelRequest(
            purpose="task",
            messages=messages(system, f"Question: {question}\n\n{sources or 'No documents.'}"),
            agent=self.name,
            hints=dict(hints, documents=material),
            max_tokens=output_budget(context.model, self.name),
        )
        text = (await ledger.ask(request)).text
        return TaskResult(text=text, files=text_files(task, text), usage=ledger.usage,
                          model=ledger.model_name, offline=ledger.offline)
