"""vaultops: an Obsidian vault synced with git, used as a safe job queue for AI agents."""

__version__ = "0.1.0"
