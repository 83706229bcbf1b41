"""``python -m urgym.commands COMMAND ...``: the umbrella command without its script."""

import sys

from urgym.commands.main import main

sys.exit(main())
