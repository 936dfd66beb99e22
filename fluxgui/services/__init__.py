"""asyncio use-cases over the adapters, shared by the CLI and the window. No Qt."""
