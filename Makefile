# Two commands do everything on a fresh machine:
#   make book   create .venv, install the pinned requirements, write the HTML (chapters show their
#               committed outputs; chapter 13, which measures this machine, is executed)
#   make student  the student edition, every solution left out: its site in _build/student/_build/html
#               and its PDF in _build/student/book.pdf, the solution-free notebooks in
#               _build/student/notebooks, and the student branch's tree in _build/student/branch
#   make test   the same set-up and both builds, then every test (unit, property, nbval, coverage, build)
# Others: make outputs (re-execute chapters in place after a deliberate change, and export their
# figures again), make lab (JupyterLab on the chapters), make figures
# (slide-ready SVG/PNG exports into figures/, and 16:9 ones into figures/16x9/), make slides
# (a 16:9 reveal.js deck and its PDF for each session, in _build/slides), make pdf (the whole
# book as one PDF), make homework SEED=N (each session's assigned homework with numbers of its
# own for seed N: sheets and keys, HTML and PDF, in _build/homework/seed-N; SEED defaults to 1;
# or ROSTER=roster.csv SALT=word: each student's sheets and one CSV of keys), make quiz (each
# session's quiz: a sheet without keys and a key, HTML and PDF, in _build/quiz), make serve,
# make bench, make clean.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/uv/bin/uv
STAMP  := $(VENV)/.installed-$(shell cat requirements.txt pyproject.toml package-requirements.txt | cksum | cut -d' ' -f1)
JOBS   ?= 2

.PHONY: setup ready book student test test-measures test-the-rest test-beside-the-build chromium outputs figures slides pdf homework quiz serve lab bench clean

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml package-requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@test -x $(UV) || $(PY) -m pip install --quiet --disable-pip-version-check --target $(VENV)/uv uv
	$(UV) pip install --quiet --python $(PY) --compile-bytecode --upgrade pip -r requirements.txt
	npm install --prefix $(VENV)/npm --no-audit --no-fund --silent $(shell cat package-requirements.txt)
	@rm -f $(VENV)/.installed-*
	@touch $@

book: $(STAMP)
	$(VENV)/bin/jupyter-book build . -W -n --keep-going
	@echo
	@echo "The book is built. Open $(CURDIR)/_build/html/index.html, or run 'make serve'."

STUDENT := _build/student
student: $(STAMP) chromium
	rm -rf $(STUDENT)/_build/html/_sources   # what an earlier build of another edition may have left
	@# the full book's execution of the measuring chapter, where there is one: both editions show
	@# one measurement of this machine, and the chapter runs once
	@if [ -d _build/.jupyter_cache ]; then mkdir -p $(STUDENT)/_build && rm -rf $(STUDENT)/_build/.jupyter_cache \
	  && cp -r _build/.jupyter_cache _build/.inferlimits-digest $(STUDENT)/_build/; fi
	INFERLIMITS_EDITION=student $(VENV)/bin/jupyter-book build . --path-output $(STUDENT) -W -n --keep-going
	$(PY) -m inferlimits.book.pdf --html $(STUDENT)/_build/html --out $(STUDENT)/book.pdf
	$(PY) -m inferlimits.book.student
	@echo
	@echo "The student edition is built: $(CURDIR)/$(STUDENT)/_build/html/index.html and $(CURDIR)/$(STUDENT)/book.pdf;"
	@echo "its notebooks, with no solutions, are in $(CURDIR)/$(STUDENT)/notebooks"

# make test: after the set-up, the full book (its run of chapter 13 times this machine), then the
# tests marked 'measures' (chapter 13 under nbval and the tests that execute it), alone, since the
# relations they check hold on a quiet machine; then, side by side, the tests marked
# 'beside_the_build' (which need nothing built: see conftest.py) on one core and, on the other, the
# student edition, after which the rest of the tests join them on both cores. That run keeps each
# test file on one worker, except the browser and mutation tests, which tests/conftest.py spreads
# over both (the browser tests one by one, the mutation tests a chapter at a time).
PYTEST := $(PY) -m pytest tests chapters --nbval --nbval-current-env
# REPORT=DIR: each pytest run also writes DIR/<target>.xml (JUnit), as benchmarks/run.py asks
JUNIT   = $(if $(REPORT),--junitxml=$(abspath $(REPORT))/$@.xml)
BESIDE := $(VENV)/beside-the-build.log

test: ready
	@$(MAKE) --no-print-directory book
	@$(MAKE) --no-print-directory test-measures
	@$(MAKE) --no-print-directory -k -j2 test-beside-the-build test-the-rest

test-measures:
	$(PYTEST) -p no:xdist -m measures $(JUNIT)

test-the-rest: student
	$(PYTEST) -n $(JOBS) --dist loadfile -m "not measures and not beside_the_build" $(JUNIT)

# what it prints is shown when it ends, not among the other run's lines
test-beside-the-build: RUN = $(PYTEST) -p no:xdist -m "beside_the_build and not measures" $(JUNIT)
test-beside-the-build:
	@echo '$(RUN)   (shown when it ends)'
	@$(RUN) >$(BESIDE) 2>&1; rc=$$?; cat $(BESIDE); exit $$rc

# Debian's chromium for the browser tests and the figure exports (as root, as on CI); playwright
# and kaleido never download one. apt's account of its work is kept in a file, shown only when it fails.
chromium:
	@command -v chromium >/dev/null || { echo "installing Debian's chromium (apt-get, about half a minute)"; \
	  log=$$(mktemp); { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	  >$$log 2>&1 || { cat $$log; rm -f $$log; exit 1; }; rm -f $$log; }

# the set-up and chromium side by side: both wait mostly on downloads and the disk
ready:
	@$(MAKE) --no-print-directory -j2 setup chromium

outputs: $(STAMP) chromium
	$(PY) -m inferlimits.book.execute chapters/*.ipynb
	$(PY) -m inferlimits.book.export

figures: $(STAMP) chromium
	$(PY) -m inferlimits.book.export

# one deck per session of the course (nbconvert's reveal.js slides, reveal.js from npm, the 16:9
# figures of figures/16x9/), printed by Debian's chromium into a PDF of 16:9 pages
slides: $(STAMP) chromium
	$(PY) -m inferlimits.book.slides

pdf: book chromium
	$(PY) -m inferlimits.book.pdf

serve: book
	@echo "Serving http://127.0.0.1:8000/ (Ctrl-C to stop)"
	$(PY) -m http.server 8000 --bind 127.0.0.1 --directory _build/html

# JupyterLab on the chapters, on this machine only; --allow-root when run as root (as in containers)
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 $(if $(filter 0,$(shell id -u)),--allow-root) chapters/01_two_speeds.ipynb

bench: book
	$(PY) benchmarks/run.py

# the homework for one seed (a whole number, 0 or more): each session's sheet and key, in
# _build/homework/seed-N; python -m inferlimits.book.homework says which SEED it cannot use. With
# ROSTER=path/to/roster.csv (a header 'student_id', optionally 'name') and SALT=a-word-of-your-own:
# each student's sheets, seeded from their id and the salt, in _build/homework/roster/<student_id>/,
# and every key, for grading, in _build/homework/roster-keys/keys.csv (the exercises set from the book
# too, as their solutions state them); a roster run first clears those two folders, and only those
SEED ?= 1
ROSTER ?=
SALT ?=
homework: $(STAMP) chromium
	$(PY) -m inferlimits.book.homework $(if $(ROSTER),--roster "$(ROSTER)" --salt "$(SALT)",--seed "$(SEED)")

# each session's quiz from chapters/quiz.ipynb (published in neither edition): a sheet to hand out,
# with no keys, and the instructor's key, HTML and PDF (printed by Debian's chromium), in _build/quiz
quiz: $(STAMP) chromium
	$(PY) -m inferlimits.book.quiz

clean:
	rm -rf _build .jupyter_cache
