"""`npaflow quota` and the quota checks of `submit`: GPU quota pools from the command line.

- `handler.py`: `quota status | set | delete`, through the pool workflows.
- `release.py`: `quota release`, a lease given back by hand (verified ended jobs only).
- `check.py`: before `submit` and `schedule create`: the named pool exists and can hold every wave.
- `text.py`: a pool's status as text.
- `closed_holders.py`: which holds belong to runs that already ended (a describe per holding run).

The command's parser is npaflow/cli/commands/quota.py; the pool's book is npaflow/quota/.
"""
