"""The CLI's exit codes: each means one thing, so scripts can branch on them."""

EXIT_OK = 0
EXIT_FAILED = 1  # the run failed (any failure class but capacity)
EXIT_USAGE = 2  # usage or validation error: nothing was started
EXIT_ALREADY_RUNNING = 3  # submit: the run id is already running (use --attach to follow it)
EXIT_CAPACITY = 75  # the run failed for lack of capacity only (EX_TEMPFAIL: try again later)
EXIT_CANCELLED = 130  # the run was cancelled, or the command interrupted
