"""`python -m payconform.receiver --url URL --secret whsec_... [--state-url URL] [--report-dir DIR]`."""

import sys

from .cli import main

sys.exit(main())
