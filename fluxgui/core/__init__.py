"""Pure-Python core: the message model, errors and formatting. No Qt, no drivers."""
