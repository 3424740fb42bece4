"""``python -m inferlimits.book.homework --seed N`` (or ``--roster roster.csv --salt WORD``): what
``make homework SEED=N`` (or ``ROSTER=... SALT=...``) runs."""
import sys

from inferlimits.book.homework.render import main

sys.exit(main())
