"""What one simple command does, as policy actions: ``rm -rf /etc`` → modify_outside_worktree, ``gh pr merge``
→ merge_pr, ``pytest -q`` → run_tests.

Each known program has a small rule (``vaultops.policy.rules``) that reads its arguments the way the
program does: which are paths it writes, which it only reads, which subcommand runs.  Redirections are judged
for every command.  A program no rule knows is ``unknown`` (escalated), so a gap in the rules can make the
policy ask too often, never let something through.
"""

from __future__ import annotations

from vaultops.policy.bash import SimpleCommand
from vaultops.policy.judge import Judge
from vaultops.policy.paths import Scope
from vaultops.policy.rules import MODULES
from vaultops.policy.table import Action

RULES = MODULES  # importing them registered every program's rule with the judge


def command_actions(cmd: SimpleCommand, scope: Scope, base_cwd: str) -> list[Action]:
    """The policy actions of one simple command run from ``base_cwd``."""
    return Judge(cmd, scope, base_cwd).judge()
