"""The CLI's exit codes: each means one thing, so scripts can branch on them."""

EXIT_FAILED = 1  # the run failed (any failure class but capacity)
EXIT_USAGE = 2  # usage or validation error: nothing was started
EXIT_ALREADY_RUNNING = 3  # submit: the run id is already running (use --attach to follow it)
EXIT_INTERRUPTED = 4  # Ctrl-C stopped the command; nothing was cancelled (a followed run continues)
EXIT_OUTPUT = 74  # the output could not be written: a full disk or quota (EX_IOERR)
EXIT_CAPACITY = 75  # the run failed for lack of capacity only (EX_TEMPFAIL: try again later)
EXIT_CANCELLED = 130  # the run was cancelled
EXIT_CLOSED_PIPE = 141  # the output's reader went away (128 + SIGPIPE, as a shell reports git's)


class StoppedFollowing(Exception):
    """Ctrl-C on `submit --wait` / `status --watch`: the command stops, the run goes on."""

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"stopped following run {run_id}; the run continues (follow it: npaflow status "
            f"{run_id} --watch; cancel it: npaflow cancel {run_id})"
        )
