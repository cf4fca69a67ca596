"""The translator agent: translates documents chunk by chunk into the requested language."""

from __future__ import annotations

from msgspec import structs

from agents.base import TaskContext, TaskResult, TaskSpec
from agents.language import target_language
from agents.model import ModelRequest, lead
from agents.phrases import language_label, say
from agents.requests import TranslateHints
from agents.tasks.calls import Ledger, input_budget, message_excerpt, messages, output_budget
from agents.tasks.hints import doc_facts
from agents.tasks.inputs import base_hints, instructions, language_name, task_documents
from agents.tasks.outputs import TEXT_FORMATS, stem_of, text_files
from agents.toolkit.tokens import chunk_text


class Translator:
    """Translates documents into the language the instructions name (else the user's)."""

    name = "translator"
    formats = TEXT_FORMATS  # what it delivers, for the planner (agents.registry.Registry.formats)
    description = (
        "Translates the given documents into the language named in the instructions "
        "(default: the user's language), keeping their structure; delivers .md/.docx files."
    )

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        ledger = Ledger(context.model)
        target = target_language(task.instructions) or target_language(context.prompt) or context.language
        hints = TranslateHints(**base_hints(task, context, self.name), target_language=target)
        # A translation is as long as its source: a chunk may use only what the answer may use.
        budget = min(input_budget(context.model, self.name), output_budget(context.model, self.name))
        system = instructions(self.name, target, f"Translate the text into {language_name(target)}. "
                              "Keep its paragraphs and Markdown; output only the translation.")
        docs = task_documents(task, context)
        if not docs:
            return TaskResult(text=say("no_documents", context.language), meta={"undelivered": True})
        if context.model.extractive:
            # No file that would only pretend to be a translation: one sentence saying so.
            return TaskResult(text=say("cannot_translate", context.language, doc=", ".join(d.name for d in docs),
                                       target=language_label(target, context.language)), offline=True,
                              meta={"undelivered": True})
        sections = []
        for doc in docs:
            if not doc.text.strip():
                sections.append(say("no_text", context.language, doc=doc.name))
                continue
            chunks = chunk_text(doc.text, budget)
            parts = []
            heading = say("translation_of", context.language, doc=doc.name,
                          target=language_label(target, context.language))
            lead(("\n\n" if sections else "") + f"## {heading}\n\n")  # streamed with the translation
            for index, chunk in enumerate(chunks, 1):
                if index > 1:
                    lead("\n\n")
                request = ModelRequest(
                    purpose="task",
                    messages=messages(system, chunk),
                    agent=self.name,
                    hints=structs.replace(hints, documents=(doc_facts(doc, text=chunk, part=index,
                                                                      parts=len(chunks)),)),
                    max_tokens=output_budget(context.model, self.name),
                )
                parts.append((await ledger.ask(request)).text)
            sections.append(f"## {heading}\n\n" + "\n\n".join(parts))
        full = "\n\n".join(sections)
        default = [f"{stem_of(docs[0].name)}.{target}.md"] if len(docs) == 1 else [f"translation.{target}.md"]
        files = await text_files(task, full, defaults=default)
        text = await message_excerpt(full)
        if text != full:
            text += "\n\n" + say("full_text_in", context.language, files=", ".join(f.name for f in files))
        return TaskResult(text=text, files=files, usage=ledger.usage, model=ledger.model_name,
                          offline=ledger.offline)
