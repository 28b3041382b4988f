"""`python -m npaflow` runs the CLI."""

from npaflow.cli import main

if __name__ == "__main__":
    main()
