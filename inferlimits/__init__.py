"""inferlimits: the arithmetic, data, figures and number checks behind the book
"When is LLM inference memory-bound?".

Data flows one way: data tables (``data/``) -> hardware and model objects (``hardware``,
``models``) -> arithmetic (``roofline``, ``generation``, ``kvcache``) -> figures, tables and checks
(``figures``, ``widgets``, ``tables``, ``checks``) -> chapters.
"""
