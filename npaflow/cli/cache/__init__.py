"""`npaflow cache list | explain | purge`: the command's handler and its text (`handler.py`).

The command's parser is npaflow/cli/commands/cache.py; the stage cache itself is
npaflow/cache/ (key, entry) and npaflow/runtime/cache/ (what a run says of it).
"""
