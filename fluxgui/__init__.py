"""fluxgui: browse and edit the conversation histories AI agents keep in session stores."""

__version__ = "0.1.0"
