"""`npaflow schedule create | list | describe | delete | backfill`: runs on a cron or interval.

- `handler.py`: the actions, through Temporal Schedules.
- `backfill.py`: runs for a past window, each once.
- `view.py`: a schedule as text.

The command's parser is npaflow/cli/commands/schedule.py; `cron.py` beside it parses cron lines.
"""
