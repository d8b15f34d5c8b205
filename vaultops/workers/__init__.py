"""Long-lived worker sessions: spawn, list, inject, terminate, logs, and their tagged reports
(docs/architecture.md, "Workers and the bus").

One concept per module:

- ``registry``: the ``workers`` table of state.db, and whether a recorded process is still the worker;
- whether two workers' file sets overlap is ``vaultops.decide.files`` (the gate asks it too);
- ``logs``: a worker's rotating log, and reading it back;
- ``control``: starting, nudging and stopping a worker (the I/O edge: processes, FIFOs, signals);
- ``supervise``: the small process that owns a worker's pipes (its log, its liveness, its answers);
- ``reports``: tagged lines decided by the policy, and the answers written back.

This package imports nothing heavy at the top, so that ``worker list`` and the supervisor start fast.
"""
