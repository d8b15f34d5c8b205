"""Telling the person: notices rendered from facts (``message``), kept in state.db until they are out
(``outbox``), sent through apprise and the Telegram bot (``send``), and the person's Telegram replies read
back (``telegram``, parsed by ``replies``); ``check`` is what ``vaultops doctor`` asks of them.

Nothing here writes into notes: the pipeline decides what a reply means for a request.
"""
