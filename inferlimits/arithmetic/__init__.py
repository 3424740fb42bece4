"""The arithmetic: every formula the book uses, once, as a pure function of the data."""
