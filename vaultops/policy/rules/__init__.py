"""The per-program rules, one module per kind of program; importing them fills ``judge.HANDLERS``."""

from vaultops.policy.rules import archives, build, files, git, installers, network, programs, shell, system

MODULES = (files, archives, network, programs, installers, build, git, system, shell)
