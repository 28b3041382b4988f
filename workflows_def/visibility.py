"""What a run shows with no worker running: search attributes, memo and current details."""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import SearchAttributeKey

from npaflow.runtime.contract import SearchAttribute
from npaflow.runtime.run_state import RunState

#: The run phase, so suspended or paused runs can be found with no worker up.
PHASE_ATTRIBUTE = SearchAttributeKey.for_keyword(SearchAttribute.PHASE.value)


def publish(state: RunState) -> None:
    """Mirror the phase into search attributes, memo and the UI's current details."""
    workflow.upsert_search_attributes([PHASE_ATTRIBUTE.value_set(state.phase.value)])
    workflow.upsert_memo({"phase": state.phase.value, "current_states": state.current_states,
                          "ledger_uri": state.ledger_uri})
    workflow.set_current_details(f"**phase** {state.phase.value}  \n**states** "
                                 f"{', '.join(state.current_states) or '-'}  \n"
                                 f"**ledger** {state.ledger_uri or '-'}")
