"""Errors that reach the person.  Each carries one sentence that says what is wrong and what to do."""

from __future__ import annotations


class VaultopsError(Exception):
    """An error the CLI prints as one line and turns into a non-zero exit."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(VaultopsError):
    exit_code = 2


class VaultError(VaultopsError):
    exit_code = 2


class LockBusy(VaultopsError):
    """Another vaultops pass holds the vault; try again later (EX_TEMPFAIL)."""

    exit_code = 75


class UnsafePath(VaultopsError):
    exit_code = 2
