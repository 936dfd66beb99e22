"""``python -m fluxgui`` runs the command line (and the window with no subcommand)."""

from fluxgui.cli import main

raise SystemExit(main())
