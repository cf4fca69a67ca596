"""A round resumed after a crash goes on with the plan its planning message carries."""

from __future__ import annotations

from agents.base import OutputSpec, Plan, TaskSpec
from agents.planning.manager import render_plan_message
from app.rounds.records import plan_of
from app.store.tables import MessageRow


def test_the_plan_read_back_from_its_message_is_the_plan_that_was_made() -> None:
    plan = Plan(
        language="de", answer="Ich fasse den Bericht zusammen und erstelle die Tabelle.\n\nZwei Schritte.",
        final_documents=[OutputSpec("bericht.xlsx", "xlsx", "Die Tabelle")],
        tasks=[TaskSpec("t1", "summarizer", "Fasse den Bericht zusammen.", inputs=["bericht.pdf"]),
               TaskSpec("t2", "data_extractor", "Tabellen als Excel.", inputs=["bericht.pdf"],
                        outputs=[OutputSpec("bericht.xlsx", "xlsx", "Die Tabelle")], depends_on=["t1"])],
    )
    message = MessageRow(workflow_id="w", key="w:1:plan:message", round=1, sequence_no=1, status="step",
                         role="assistant", content=render_plan_message(plan),
                         meta={"language": plan.language, "plan": plan.record()})
    assert plan_of(message) == plan
