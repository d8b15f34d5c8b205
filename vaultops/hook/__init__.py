"""The policy gate in front of every tool call of every agent vaultops starts.

``job`` names what a gate guards (the vault, the request, the claim, the folder it may change);
``answer`` turns one Claude Code hook event into the policy's decision; ``server`` answers those events
over a private Unix socket for the life of one job; ``client`` is the thin hook Claude Code runs, which
fails closed when it cannot reach the server; ``claude`` writes the job's ``--settings`` and puts them on
the command line.  Imports only the standard library, ``vaultops.policy`` and ``vaultops.store.asked``.
"""
