"""Activates gnnscope's auto-instrumentation in a command run by `gnnscope run`.

Python imports this module at start-up because `gnnscope run` puts its folder
first on PYTHONPATH. It does nothing unless GNNSCOPE_JOURNAL is set and
GNNSCOPE_AUTO is "1", and it never fails or prints.
"""

import os

if os.environ.get("GNNSCOPE_JOURNAL") and os.environ.get("GNNSCOPE_AUTO") == "1":
    try:
        import gnnscope.auto  # noqa: F401
    except Exception:
        pass
