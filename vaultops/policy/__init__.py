"""The approval policy: one table that answers worker REQUEST lines and Claude Code's tool calls
(docs/architecture.md, "Approvals: the policy").

Pure logic only — values in, values out — so that ``vaultops hook`` can import it in a few milliseconds:

- ``tags``   parses the workers' tagged lines (``[REQUEST:action] k=v``, ``[STATUS:…]``, ``[DONE:…]``, …);
- ``table``  the policy table: action → approve | escalate | deny, its defaults and the config overrides;
- ``lexer``, ``bash``  split a shell command into the simple commands it would run;
- ``paths``  where a path really points, and whether that is inside the job's worktree;
- ``judge``, ``rules/``, ``commands``  map one simple command (argv, redirections) to actions, one rule per
  program, grouped by kind (files, network, programs, git, system);
- ``tools``  maps a Claude Code tool call (Bash, Edit, Write, MCP, …) to actions;
- ``decide`` applies the table to every action of a call or a request; the most restrictive verdict wins.
"""
