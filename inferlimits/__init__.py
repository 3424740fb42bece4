"""inferlimits: the data, arithmetic, figures and number checks behind the book
"When is LLM inference memory-bound?". Its folders are its layers, and each imports only from
the layers before it (``tests/test_package.py`` holds them to that):

- ``data``: the TOML tables with their sources, and the objects read from them (accelerators,
  models, published measurements, units and their validators);
- ``arithmetic``: the formulas, one per function (roofline, bytes and FLOPs of a step, the KV
  cache, precision, several GPUs, speculative decoding, serving, cost, overhead, how close the
  measurements come, the index card);
- ``checks``: the number checks the chapters call, the coverage test's reading of the prose, and
  the worked example's claims judged by the same rule;
- ``machine``: measuring the machine the book runs on (matrix products, a small numpy decoder);
- ``figures``: the figures and their controls in both modes, and the tables the chapters show;
- ``book``: the book's own tooling (the Sphinx extension, executing chapters, slide exports, the
  PDF, the local server, page weight).

Chapters import from any layer; nothing in the package imports a chapter.
"""
