"""``python -m payconform.cli``: the same as the ``payconform`` console script."""

import sys

from . import main

sys.exit(main())
