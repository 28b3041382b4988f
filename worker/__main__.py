"""`python -m worker` runs the npaflow worker."""

import os
import sys

from npaflow.errors import UsageError
from worker.main import main

if __name__ == "__main__":
    try:
        main()
        code = 0
    except UsageError as exc:
        sys.stderr.write(f"npaflow worker: error: {exc}\n")
        code = 2
    sys.stdout.flush()
    os._exit(code)
