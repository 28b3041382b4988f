"""npaflow's Temporal client: one package the CLI, the worker and the activities share.

- `target.py`: which server and namespace (flags, environment, the CLI's profiles).
- `client.py`: connect (with patience for a dev server still starting), ask whether a
  worker polls a queue, read a run's start request and its summary.
- `serving.py`: whether a worker that can move a run polls its queue (none at all,
  none of the build the run is pinned to, or, for a new run, none of its deployment's
  current build), and the line that says so.
- `deployments.py`: a Worker Deployment as the server sees it (its current build).
- `pending.py`: a run's open activity calls, from Temporal's description of it.
- `run_standing.py`: how a run's newest execution stands (open, or how it ended).
- `errors.py`: Temporal's RPC errors in one line a user can act on.
- `data_converter.py`: the payload converter every client and worker uses.
- `helper_runs.py`: the attributes and versioning of helper and coordinator workflows.
- `pools.py`: the quota pools' client (set, status, names, delete).
- `dev_marker.py`: the marker `npaflow dev` leaves while its server starts.
- `dev_server.py`: the flags every dev server npaflow starts carries (its one shard's read rates).
- `tracing.py`: OpenTelemetry interceptors when tracing is configured.

Nothing here parses command lines: a worker or an activity imports this package, never
`npaflow/cli/`.
"""
