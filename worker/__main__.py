"""`python -m worker` runs the npaflow worker."""

import os
import sys

from temporalio.service import RPCError

from npaflow.errors import UsageError
from npaflow.temporal.errors import rpc_error_text
from worker.main import main

if __name__ == "__main__":
    try:
        main()
        code = 0
    except UsageError as exc:
        sys.stderr.write(f"npaflow worker: error: {exc}\n")
        code = 2
    except RPCError as exc:  # the server refused a start-up call: one line, as `npaflow worker` says it
        sys.stderr.write(f"npaflow worker: error: {rpc_error_text(exc)}\n")
        code = 2
    sys.stdout.flush()
    os._exit(code)
