"""``python -m dpviz``: the command line (:mod:`dpviz.cli`)."""

import sys

from dpviz.cli import main

if __name__ == "__main__":
    sys.exit(main())
