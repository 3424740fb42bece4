"""Measuring the machine the book runs on: timed matrix products and a small numpy decoder."""
