"""``python -m inferlimits.book.homework --seed N``: what ``make homework SEED=N`` runs."""
import sys

from inferlimits.book.homework.render import main

sys.exit(main())
