"""The per-program rules, one module per kind of program; importing them fills ``judge.HANDLERS``."""

from vaultops.policy.rules import files, git, network, programs, shell, system

MODULES = (files, network, programs, git, system, shell)
