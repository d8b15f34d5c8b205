"""The documentation site's build helpers (mkdocs.yml names ``docsite/hooks.py``)."""
