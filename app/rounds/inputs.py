"""What a round's steps read and store: its input, documents, history and output files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from agents.base import DocumentText, OutputFile
from agents.round import RoundInput, Runner
from app.clock import now
from app.contract.filenames import clean_name, split_name
from app.errors import NotFoundError
from app.rounds.documents import Documents, read_document
from app.rounds.journal import Journal
from app.rounds.memory import Memory
from app.rounds.reading import RoundReader
from app.store.filestore import BlobStore
from app.store.records import NewDocument, NewLog, RoundRequest, stored_items
from app.store.repository import Repository
from app.store.repository.messages import user_message_key
from app.store.tables import FileRow
from extractors.base import ContentItem


class RoundData:
    """Loads and stores the data of rounds; caches each running round's input in memory."""

    def __init__(self, repo: Repository, storage: BlobStore, documents: Documents, journal: Journal,
                 runner: Runner) -> None:
        self.repo = repo
        self.runner = runner  # what a round reads of earlier rounds is its (`Runner.recollect`)
        self.memory = Memory(repo)
        self.storage = storage
        self.documents = documents
        self.journal = journal
        self._inputs: dict[tuple[str, int], RoundInput] = {}
        self._started: dict[tuple[str, int], RoundRequest] = {}  # what rounds started here were given
        self._pending: Counter[str] = Counter()  # stored bytes of new files whose write is on its way
        self._reviews: dict[tuple[str, int], str] = {}  # what `prepare` read: whether the plan waits for review
        self._bytes: dict[str, bytes] = {}  # those bytes, to store again should a delete release them meanwhile

    def started(self, workflow_id: str, round_no: int, prompt: str, file_ids: list[int],
                passwords: dict[str, str], review: str = "", flow: dict[str, Any] | None = None) -> None:
        """The round was just started in this process with this request: its first step need not read it back."""
        if len(self._started) > 1000:
            self._started.clear()
        self._started[(workflow_id, round_no)] = RoundRequest(prompt, file_ids, passwords, review, flow)

    async def flow_of(self, workflow_id: str, round_no: int) -> dict[str, Any] | None:
        """The flow the round runs ({id, version, hash, inputs}), None for a planned round; what a round
        started here was given, else read once and kept for its first step."""
        spec = self._started.get((workflow_id, round_no))
        if spec is None:
            spec = await self.repo.workflows.round_input(workflow_id, round_no)
            if spec is None:
                return None
            self._started[(workflow_id, round_no)] = spec
        return spec.flow

    async def prepare(self, workflow_id: str, round_no: int,
                      then: Sequence[NewLog] = ()) -> tuple[RoundInput, bool] | None:
        """Extract the round's files into its user message (written by the start), logging each one.

        `then` are logs of what follows, written once every file is read. Returns the round's
        input, built from what was just extracted and kept for the round's later steps, so they
        do not read back what this step wrote, and whether this is a replay (the round's first
        log was written before: a round resumed after a crash). None when the round no longer runs.
        """
        spec = self._started.pop((workflow_id, round_no), None)
        if spec is None:  # started by another process, or resumed after a crash
            spec = await self.repo.workflows.round_input(workflow_id, round_no)
        if spec is None:
            return None
        self._reviews[(workflow_id, round_no)] = spec.review
        files = await self.repo.files.files_by_id(spec.file_ids)
        key = f"{workflow_id}:{round_no}:prepare"
        present: list[tuple[int, FileRow, int | None]] = [(position, files[fid], None)
                                                          for position, fid in enumerate(spec.file_ids) if fid in files]
        present += await self._cut(workflow_id, round_no, len(spec.file_ids), set(spec.file_ids))
        started = NewLog(f"{key}:log", "Workflow processing started", agent_name="system", progress=0)
        # With no file to read in between, what follows is written in the same transaction.
        written = await self.journal.append(workflow_id, round_no, logs=[started, *(then if not present else ())])
        if written is None:  # stopped or deleted since the start
            return None
        then = then if present else ()
        reader = RoundReader(self.documents, self.journal, workflow_id, round_no, len(present))
        texts: list[DocumentText] = []
        for index, (position, file, earlier) in enumerate(present):  # a file deleted since the start is skipped
            contents = await reader.read(position, index, file, spec.passwords.get(str(file.id)), earlier)
            if earlier is None:  # an earlier round's file is read back with its round by `conversation`
                doc = await read_document(file, contents, round_no=round_no)
                if doc.problem == "encrypted" and spec.passwords.get(str(file.id)):
                    doc.problem = "wrong_password"  # told apart from a password not given at all
                texts.append(doc)
        if then:
            await self.journal.append(workflow_id, round_no, logs=list(then))
        if spec.passwords:
            await self.repo.workflows.forget_passwords(workflow_id, round_no)
        inp = self._keep(workflow_id, round_no, await self.conversation(workflow_id, round_no, spec.prompt, texts))
        return inp, not written.log_ids

    async def _cut(self, workflow_id: str, round_no: int, first: int,
                   mine: set[int]) -> list[tuple[int, FileRow, int | None]]:
        """Files of earlier rounds whose reading a stop cut (their documents have no contents yet), with
        the message each belongs to: this round reads them, so no round ever sees them empty."""
        if round_no <= 1:
            return []
        earlier = await self.repo.messages.with_documents(workflow_id, round_no)
        cut = [(m.id, d.file_id) for m, docs in earlier if m.role == "user" for d in docs
               if not d.contents and d.file_id not in mine]
        files = await self.repo.files.files_by_id(sorted({fid for _, fid in cut}))
        return [(first + n, files[fid], message_id) for n, (message_id, fid) in enumerate(cut) if fid in files]

    async def round_input(self, workflow_id: str, round_no: int) -> RoundInput:
        """The round's prompt, its documents and the conversation so far."""
        cached = self._inputs.get((workflow_id, round_no))
        if cached is not None:
            return cached
        # A round resumed after a crash: read back what its first step wrote.
        spec = await self.repo.workflows.round_input(workflow_id, round_no)
        first = await self.repo.messages.round_messages(workflow_id, round_no, user_message_key(workflow_id, round_no))
        mine = [d for _, docs in first for d in docs]
        files = await self.repo.files.files_by_id(sorted({d.file_id for d in mine}))
        current = [await read_document(files[d.file_id], stored_items(d.contents), round_no=round_no)
                   for d in mine if d.file_id in files]
        inp = await self.conversation(workflow_id, round_no, spec.prompt if spec else "", current)
        return self._keep(workflow_id, round_no, inp)

    async def conversation(self, workflow_id: str, round_no: int, prompt: str,
                           current: list[DocumentText]) -> RoundInput:
        """The round's input: the request, every document of the workflow (this round's uploads
        first, then earlier rounds', newest first; none whose message was deleted or that was
        removed from its message), the earlier rounds in reach (`app.rounds.memory`) and the texts
        their steps delivered."""
        earlier = await self.repo.messages.with_documents(workflow_id, round_no)
        files = await self.repo.files.files_by_id(sorted({d.file_id for _, docs in earlier for d in docs}))
        seen: set[int | None] = set()
        documents = []
        for doc in current:
            if doc.file_id not in seen:
                seen.add(doc.file_id)
                documents.append(doc)
        for message, docs in sorted(earlier, key=lambda md: (-md[0].round, md[0].id)):
            for d in docs:
                if d.file_id in files and d.file_id not in seen:
                    seen.add(d.file_id)
                    documents.append(await read_document(files[d.file_id], stored_items(d.contents), round_no=message.round,
                                                            new=False))
        recollection = await self.runner.recollect(self.memory.of(workflow_id), round_no, prompt)
        # Earlier steps' texts are inputs the planner can name like documents ("the summary of round 2").
        documents += recollection.documents
        turns = recollection.turns
        return RoundInput(prompt=prompt, documents=_unique(documents), history=[(t.role, t.text) for t in turns],
                          turns=turns, previous=recollection.previous, round=round_no)

    def _keep(self, workflow_id: str, round_no: int, inp: RoundInput) -> RoundInput:
        if len(self._inputs) > 1000:
            self._inputs.clear()
        self._inputs[(workflow_id, round_no)] = inp
        return inp

    def review_of(self, workflow_id: str, round_no: int) -> str:
        """Whether the round's plan waits for the user's review ("plan"), as its start said (read by `prepare`)."""
        return self._reviews.pop((workflow_id, round_no), "")

    def forget(self, workflow_id: str, round_no: int) -> None:
        self._reviews.pop((workflow_id, round_no), None)
        self._inputs.pop((workflow_id, round_no), None)
        self._started.pop((workflow_id, round_no), None)

    async def outputs_of(self, depends_on: Sequence[str], delivered: dict[str, Any]) -> dict[str, list[DocumentText]]:
        """The output documents of the tasks a task `depends_on`, read for it (`Runner.run_task`); `delivered`
        are the outcomes of the tasks that delivered, with their text and file ids."""
        outputs: dict[str, list[DocumentText]] = {}
        wanted = {d: delivered[d].files for d in depends_on if d in delivered and delivered[d].files}
        found = await self.repo.files.files_by_id([fid for ids in wanted.values() for fid in ids])
        for dep, ids in wanted.items():
            outputs[dep] = [await read_document(file, contents)
                            for file, contents in await self.contents_of([found[i] for i in ids if i in found])]
        return outputs

    async def owner(self, workflow_id: str) -> FileRow:
        """A file of the workflow's owner, to make new files from."""
        row = await self.repo.workflows.workflow(None, workflow_id)
        if row is None:  # deleted while its round ran: the round is being stopped
            raise NotFoundError(f"There is no workflow {workflow_id!r}.", code="workflow_not_found")
        return FileRow(mandate_id=row.mandate_id, user_id=row.user_id, name="", ext="", mime="", size=0, sha256="",
                       origin="agent", created_at=now())

    async def store(self, owner: FileRow | None, outputs: list[OutputFile]) -> list[NewDocument]:
        """An agent's documents as new files of the workflow's owner, to be written with the task's
        message (none without an owner: a task that made no files); their bytes are stored now, and
        `settle` says whether the write kept them."""
        documents: list[NewDocument] = []
        if owner is None:
            return documents
        for out in outputs:
            sha = await self.storage.put(out.data)
            self._pending[sha] += 1
            self._bytes[sha] = out.data
            # The plan's name, cleaned as an upload's is: a model's or a protocol's "../../x.md" is "x.md".
            name, ext = split_name(clean_name(out.name, fallback="document"))
            row = owner.model_copy(update=dict(name=name, ext=ext, mime=out.mime, size=len(out.data), sha256=sha))
            documents.append(NewDocument(file=row))
        return documents

    async def fill(self, documents: list[NewDocument]) -> None:
        """The content items of the new files, as the wire shows them."""
        for document, (_, contents) in zip(documents, await self.contents_of([d.file for d in documents])):
            document.contents = contents

    async def settle(self, documents: list[NewDocument], kept: bool) -> None:
        """The task's write of its new files is over: when it wrote nothing (the round ended first),
        their stored bytes are removed unless a file, or another write still on its way, uses them."""
        shas = [d.file.sha256 for d in documents if d.file is not None]
        data = {sha: self._bytes[sha] for sha in shas}
        for sha in shas:
            self._pending[sha] -= 1
        self._pending = +self._pending  # drop what is no longer pending
        for sha in set(shas) - set(self._pending):
            del self._bytes[sha]
        for sha in sorted(set(shas)):
            if kept:  # a workflow deleted meanwhile with the same bytes may have released them
                await self.storage.keep(sha, data[sha])
            elif not self._pending[sha]:
                await self.storage.release(sha)

    async def contents_of(self, files: Iterable[FileRow]) -> list[tuple[FileRow, list[ContentItem]]]:
        """Each file with its content items (extracted once per content hash)."""
        return [(file, (await self.documents.extract(file)).items) for file in files]


def _unique(documents: list[DocumentText]) -> list[DocumentText]:
    # Two uploads named alike would shadow each other in the planner's eyes: number the later ones.
    seen: dict[str, int] = {}
    for doc in documents:
        if doc.name in seen:
            seen[doc.name] += 1
            stem, dot, ext = doc.name.rpartition(".")
            doc.name = f"{stem or ext} ({seen[doc.name]}){dot}{ext if stem else ''}"
        else:
            seen[doc.name] = 1
    return documents
