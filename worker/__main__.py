"""`python -m worker` runs the npaflow worker."""

import os
import sys

from worker.main import main

if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)
