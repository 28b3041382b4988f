"""Why `load_spec` refuses to start or resume a run where its ledger says it must not."""

from __future__ import annotations

from npaflow.errors import SpecError, SpecIssue
from npaflow.plan_diff import PlanDiff
from npaflow.runtime.contract import spec_file_uri
from npaflow.runtime.ledger import RuntimeLedger
from npaflow.runtime.loaded import LoadSpecInput


def another_runs_ledger(run_id: str, source: str, ledger_uri: str, ledger: RuntimeLedger) -> SpecError:
    """The refusal to start where another run's ledger lives: writing there would lose its record.

    (The reference overwrites it: a static `config.prefix` shared by two runs left
    only the newest run's ledger, and an earlier failed run could no longer resume.)
    """
    return SpecError(
        [
            SpecIssue(
                file=source,
                field="config.prefix",
                message=f"run '{run_id}' would write its ledger to {ledger_uri}, which holds the ledger of "
                f"run '{ledger.run_id}' ({ledger.status.value}); nothing was started",
                hint="give each run its own prefix, e.g. config.prefix: 'team/{{run.id}}' "
                "(or leave config.prefix unset: the run id is the prefix)",
            )
        ]
    )


def changed_plan_error(
    request: LoadSpecInput, source: str, ledger_uri: str, was: str, now: str, diff: PlanDiff | None
) -> SpecError:
    """The refusal to resume onto an edited spec, listing the change and how to accept it."""
    lines = (
        diff.text_lines()
        if diff is not None
        else [f"(the recorded spec {spec_file_uri(ledger_uri)} could not be read to compare)"]
    )
    acceptable = diff is not None and not diff.affected_completed_waves
    return SpecError(
        [
            SpecIssue(
                file=source,
                message=f"refusing to resume run '{request.run_id}': its plan changed since it ran "
                f"(fingerprint {was} -> {now})" + "".join(f"\n  {line}" for line in lines),
                hint="resume with the spec and --var values the run started with"
                + (
                    ", or accept the change: npaflow resume RUN_ID --spec NEW.yaml --accept-changes"
                    if acceptable
                    else "; the change touches completed waves, so run it under a new run id"
                ),
            )
        ]
    )
