// The book's figures in the hosted book, where no kernel runs. The build (inferlimits/book/sitepages.py)
// leaves each figure as JSON, {data, layout, config}, beside its empty plot div; this script draws
// it with plotly.js and makes it usable by every reader:
//  - a <figure> named by the figure's title and described from its own axes, series and controls;
//  - HTML controls for plotly's dropdowns and sliders (a <select>, a range input), which run the
//    same precomputed states and answer the keyboard; plotly's own controls, which the figure
//    carries for a notebook opened without a kernel, are hidden here (one set of controls, not two);
//  - "Data of this figure": a table of what is drawn, rebuilt after every change;
//  - a layout that fits its width: the title wrapped, and labels that would leave the figure moved
//    back inside; on a narrow screen also smaller type and the legend under the plot.
// Nothing here knows a particular figure: every figure the chapters draw gets all of it.
//
// plotly.js (1.2 MB) does not load with the page, which paints and loads without it: the page
// declares it in a <template class="il-plotly">, and it is loaded when a figure comes within
// NEAR of the screen, or the page is printed. The figures near the screen are drawn first; once
// the page has loaded, the others, one at a time while the browser is idle, so that each is
// drawn by the time a reader scrolls to it. Until then a figure's place shows its title and what
// it plots.
(function () {
  "use strict";

  const NARROW = 640;       // px: a figure narrower than this gets the narrow layout
  const NARROW_FONT = 11;   // px: its type size
  const PLOTLY_FONT = 12;   // px: plotly's own type size, where a figure sets none
  const figures = [];

  const clone = (x) => JSON.parse(JSON.stringify(x));
  const textOf = (t) => (t == null ? "" : typeof t === "object" ? t.text || "" : String(t));

  function plain(s) {
    const d = document.createElement("div");
    d.innerHTML = textOf(s).replace(/<br\s*\/?>/gi, " ");
    return d.textContent.replace(/\s+/g, " ").trim();
  }

  function number(v) {
    if (typeof v !== "number") return v == null ? "" : plain(v);
    return v.toLocaleString("en-US", { maximumSignificantDigits: 4 });
  }

  /** Break ``s`` (plotly text, maybe with <br>) into lines of at most ``chars`` characters. */
  function wrap(s, chars) {
    return textOf(s).split(/<br\s*\/?>/i).map((line) => {
      const out = [];
      let cur = "";
      for (const word of line.split(" ")) {
        if (cur && (cur + " " + word).replace(/<[^>]+>/g, "").length > chars) {
          out.push(cur);
          cur = word;
        } else cur = cur ? cur + " " + word : word;
      }
      return out.concat(cur ? [cur] : []).join("<br>");
    }).join("<br>");
  }

  function setText(obj, key, fn) {
    if (!obj || obj[key] == null) return;
    if (typeof obj[key] === "object") obj[key].text = fn(obj[key].text);
    else obj[key] = fn(obj[key]);
  }

  const axisKeys = (layout) => Object.keys(layout).filter((k) => /^[xy]axis\d*$/.test(k)).sort();
  const axisOf = (trace, letter) => letter + "axis" + ((trace[letter + "axis"] || letter).slice(1));

  // ---- the narrow layout -------------------------------------------------------------------

  /** The figure laid out for a plot ``width`` px wide and ``height`` px high. */
  function narrowSpec(spec, width, height) {
    const data = clone(spec.data);
    const L = clone(spec.layout);
    const chars = Math.max(20, Math.floor((width - 24) / (NARROW_FONT * 0.58)));
    const scale = NARROW_FONT / ((L.font && L.font.size) || 14);
    L.font = Object.assign({}, L.font, { size: NARROW_FONT });
    setText(L, "title", (t) => wrap(t, chars - 4));
    if (typeof L.title === "object") L.title.font = Object.assign({}, L.title.font, { size: NARROW_FONT + 2 });
    for (const k of axisKeys(L)) {
      const a = L[k];
      setText(a, "title", (t) => wrap(t, k[0] === "x" ? chars : Math.floor(height / (NARROW_FONT * 0.62))));
      a.automargin = true;
    }
    const titleLines = (textOf(L.title).match(/<br>/g) || []).length + 1;
    L.margin = Object.assign({}, L.margin, {
      l: Math.min((L.margin || {}).l ?? 80, 40), r: Math.min((L.margin || {}).r ?? 80, 10),
      t: 24 + titleLines * 17, b: Math.min((L.margin || {}).b ?? 80, 60),
    });
    if (L.legend || L.showlegend) {
      // under the plot, or where the figure already puts it when that is lower (below an axis title)
      const own = (L.legend || {}).y;
      L.legend = Object.assign({}, L.legend, { orientation: "h", x: 0, xanchor: "left",
                                               y: typeof own === "number" && own < -0.12 ? own : -0.12,
                                               yanchor: "top", font: { size: NARROW_FONT - 1 } });
    }
    for (const a of L.annotations || []) {
      setText(a, "text", (t) => wrap(t, Math.floor(chars / 2)));
      a.font = Object.assign({}, a.font, { size: Math.round(((a.font || {}).size || 14) * scale) });
    }
    for (const t of data) {
      if (t.text == null || !/text/.test(t.mode || (t.type === "bar" ? "text" : ""))) continue;
      const size = (t.textfont || {}).size;
      t.textfont = Object.assign({}, t.textfont, { size: Math.round((typeof size === "number" ? size : 14) * scale) });
      // a block of text alone in its own panel may take the width; a label beside data, half of it
      const block = t.mode === "text" && (L[axisOf(t, "x")] || {}).visible === false;
      const w = (s) => (typeof s === "string" ? wrap(s, block ? chars - 4 : Math.floor(chars / 2)) : s);
      t.text = Array.isArray(t.text) ? t.text.map(w) : w(t.text);
    }
    return { data, layout: L };
  }

  /** Where the clip-path ``rect`` cuts ``clipped`` (whose user space the rect is in), on screen. */
  function clipBox(rect, clipped) {
    const m = clipped.getScreenCTM();
    const x = rect.x.baseVal.value, y = rect.y.baseVal.value;
    const a = new DOMPoint(x, y).matrixTransform(m);
    const b = new DOMPoint(x + rect.width.baseVal.value, y + rect.height.baseVal.value).matrixTransform(m);
    return { left: Math.min(a.x, b.x), right: Math.max(a.x, b.x), top: Math.min(a.y, b.y), bottom: Math.max(a.y, b.y) };
  }

  /** Texts drawn outside the figure, or outside the region that clips them. */
  function escaping(gd) {
    const box = gd.getBoundingClientRect();
    const out = [];
    for (const el of gd.querySelectorAll("svg text")) {
      const r = el.getBoundingClientRect();
      if (!el.textContent.trim() || r.width === 0 || getComputedStyle(el).visibility === "hidden") continue;
      const limits = [box];
      const clipped = el.closest("[clip-path]");
      const id = clipped && /url\(["']?#([^"')]+)/.exec(clipped.getAttribute("clip-path"));
      const rect = id && document.getElementById(id[1]) && document.getElementById(id[1]).querySelector("rect");
      if (rect) limits.push(clipBox(rect, clipped));
      const outside = (b) => r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1;
      if (limits.some(outside)) {
        out.push(el);
      }
    }
    return out;
  }

  //: where a data label may go, in the order tried
  const PLACES = ["middle right", "middle left", "top center", "bottom center",
                  "top left", "top right", "bottom left", "bottom right", "middle center"];

  /** One pass of moving escaping labels back inside: a data label tries the next place it has not
   *  tried (a bar's label goes inside its bar), a legend or other text gets smaller type; a
   *  block of text in a panel of its own is left alone (the browser tests would report it).
   *  Resolves to whether it changed anything. */
  function refit(gd, tried) {
    const restyles = new Map();
    const layout = {};
    for (const el of escaping(gd)) {
      const point = el.closest(".textpoint, .point");
      const trace = el.closest(".trace");
      const t = trace && trace.__data__ && trace.__data__[0].trace;
      if (t && t.mode === "text" && (gd.layout[axisOf(t, "x")] || {}).visible === false) {
        continue;   // a block of text in its own panel stays where its figure puts it
      } else if (point && t && point.__data__) {
        const i = point.__data__.i;
        const own = gd.data[t.index].textposition;
        const pos = restyles.get(t.index) || (Array.isArray(own) ? own.slice()
          : new Array(t._length || 1).fill(own || (t.type === "bar" ? "outside" : "middle center")));
        const key = `${t.index}/${i}`;
        const done = tried.get(key) || new Set([pos[i]]);
        const next = t.type === "bar" ? (done.has("inside") ? null : "inside") : PLACES.find((p) => !done.has(p));
        if (next == null) {
          layout[`font.size`] = ((gd.layout.font || {}).size || PLOTLY_FONT) - 1;
          continue;
        }
        done.add(next);
        tried.set(key, done);
        pos[i] = next;
        restyles.set(t.index, pos);
      } else if (el.closest(".legend")) {
        layout["legend.font.size"] = (((gd.layout.legend || {}).font || {}).size || (gd.layout.font || {}).size || PLOTLY_FONT) - 1;
      } else if (el.closest(".g-gtitle")) {
        layout["title.font.size"] = ((gd.layout.title.font || {}).size || ((gd.layout.font || {}).size || PLOTLY_FONT) + 2) - 1;
      } else {
        layout["font.size"] = ((gd.layout.font || {}).size || PLOTLY_FONT) - 1;
      }
    }
    const steps = [...restyles].map(([i, pos]) => Plotly.restyle(gd, { textposition: [pos] }, [i]));
    if (Object.keys(layout).length) steps.push(Plotly.relayout(gd, layout));
    return Promise.all(steps).then(() => steps.length > 0);
  }

  async function fit(gd) {
    const tried = new Map();
    for (let round = 0; round < PLACES.length + 2; round++) if (!(await refit(gd, tried))) return;
  }

  // ---- name, description and data ----------------------------------------------------------

  // (``fig`` below is what is drawn, plotly's div, or before that the figure's spec: both have
  // ``data`` and ``layout``)
  const shown = (fig) => fig.data.filter((t) => t.visible !== false && t.visible !== "legendonly");

  function axisWords(a) {
    const log = a.type === "log";
    let words = plain(a.title) || "unnamed";
    if (a.type === "category") return words;
    if (Array.isArray(a.range)) {
      const [lo, hi] = a.range.map((v) => (log ? 10 ** v : v));
      words += ` (${log ? "logarithmic, " : ""}${number(lo)} to ${number(hi)})`;
    } else if (log) words += " (logarithmic)";
    return words;
  }

  function describe(gd, controls) {
    const L = gd.layout;
    const kinds = new Set(shown(gd).map((t) => (t.type === "bar" ? "bars"
      : /lines/.test(t.mode || "lines") ? "lines" : /markers/.test(t.mode) ? "points" : "labels")));
    const names = [...new Set(shown(gd).map((t) => plain(t.name)).filter(Boolean))];
    const axes = axisKeys(L).filter((k) => L[k].visible !== false && plain(L[k].title))
      .map((k) => `${k[0] === "x" ? "across" : "up"}: ${axisWords(L[k])}`);
    const parts = [`A chart of ${[...kinds].join(" and ")}`];
    if (axes.length) parts.push(`Axes, ${axes.join("; ")}`);
    if (names.length) parts.push(`Series: ${names.slice(0, 10).join(", ")}${names.length > 10 ? `, and ${names.length - 10} more` : ""}`);
    if (controls.length) parts.push(`Controls above it: ${controls.map((c) => c.words).join("; ")}`);
    parts.push("Its numbers are in the table \u201cData of this figure\u201d below it.");
    return parts.join(". ").replace(/\.\./g, ".");
  }

  function dataTable(gd) {
    const groups = new Map();
    for (const t of shown(gd)) {
      const key = `${axisOf(t, "x")} ${axisOf(t, "y")}`;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(t);
    }
    const frag = document.createDocumentFragment();
    for (const [key, traces] of groups) {
      const [xk, yk] = key.split(" ");
      const labelled = traces.some((t) => t.text != null);
      const table = document.createElement("table");
      table.className = "table il-data";
      const head = ["series", plain((gd.layout[xk] || {}).title) || "x", plain((gd.layout[yk] || {}).title) || "y"]
        .concat(labelled ? ["label"] : []);
      const thead = table.createTHead().insertRow();
      for (const h of head) {
        const th = document.createElement("th");
        th.scope = "col";
        th.textContent = h;
        thead.appendChild(th);
      }
      const body = table.createTBody();
      for (const t of traces) {
        const xs = t.x || [], ys = t.y || [];
        for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
          if (xs[i] == null && ys[i] == null) continue;
          const label = Array.isArray(t.text) ? t.text[i] : t.text;
          const row = body.insertRow();
          for (const v of [plain(t.name) || "", number(xs[i]), number(ys[i])].concat(labelled ? [plain(label)] : [])) {
            row.insertCell().textContent = v;
          }
        }
      }
      const wrapper = document.createElement("div");
      wrapper.className = "il-scroll";
      wrapper.tabIndex = 0;
      wrapper.setAttribute("role", "region");
      wrapper.setAttribute("aria-label", `data: ${head.slice(1, 3).join(" and ")}`);
      wrapper.appendChild(table);
      frag.appendChild(wrapper);
    }
    return frag;
  }

  // ---- controls ----------------------------------------------------------------------------

  /** Run one of plotly's button or slider-step commands, then mark it active in plotly's own control. */
  function run(gd, item, active) {
    const a = item.args || [];
    const done = item.method === "restyle" ? Plotly.restyle(gd, a[0], a[1])
      : item.method === "relayout" ? Plotly.relayout(gd, a[0])
      : item.method === "update" ? Plotly.update(gd, a[0], a[1], a[2]) : Promise.resolve();
    return Promise.resolve(done).then(() => Plotly.relayout(gd, active));
  }

  function controls(fig) {
    const { gd, spec } = fig;
    const L = spec.layout;
    const list = [];
    (L.updatemenus || []).forEach((menu, m) => {
      const id = `${gd.id}-menu-${m}`;
      const name = plain(menu.name) || "show";
      const label = Object.assign(document.createElement("label"), { htmlFor: id, textContent: name });
      const select = Object.assign(document.createElement("select"), { id, className: "form-select form-select-sm" });
      menu.buttons.forEach((b, i) => select.add(new Option(plain(b.label), String(i))));
      select.value = String(menu.active || 0);
      select.addEventListener("change", () => {
        fig.state[`m${m}`] = +select.value;
        if (fig.drawn) run(gd, menu.buttons[+select.value], { [`updatemenus[${m}].active`]: +select.value });
        else soon(fig);   // drawn with the reader's choice
      });
      const set = (i) => { select.value = String(i); fig.state[`m${m}`] = i; };
      list.push({ el: [label, select], words: `${name} (${menu.buttons.length} choices)`, menu: m, set,
                  replay: (i) => run(gd, menu.buttons[i], { [`updatemenus[${m}].active`]: i }) });
    });
    (L.sliders || []).forEach((slider, s) => {
      const id = `${gd.id}-slider-${s}`;
      const name = plain(slider.name) || plain((slider.currentvalue || {}).prefix).replace(/:\s*$/, "") || "step";
      const steps = slider.steps;
      const label = Object.assign(document.createElement("label"), { htmlFor: id, textContent: name });
      const range = Object.assign(document.createElement("input"), { id, type: "range", min: 0, max: steps.length - 1,
                                                                      step: 1, className: "form-range" });
      const out = Object.assign(document.createElement("output"), { htmlFor: id });
      const show = (i) => {
        range.value = String(i);
        out.textContent = plain(steps[i].label);
        range.setAttribute("aria-valuetext", plain(steps[i].label));
        fig.state[`s${s}`] = i;
      };
      show(slider.active || 0);
      range.addEventListener("input", () => {
        const i = +range.value;
        show(i);
        if (fig.drawn) run(gd, steps[i], { [`sliders[${s}].active`]: i });
        else soon(fig);
      });
      list.push({ el: [label, range, out], words: `${name} (${steps.length} stops)`, slider: s, set: show,
                  replay: (i) => run(gd, steps[i], { [`sliders[${s}].active`]: i }) });
    });
    return list;
  }

  // ---- one figure --------------------------------------------------------------------------

  /** The figure as drawn at ``width`` px, not narrow: its title and its blocks of text wrapped
   *  to the width, and the room plotly's dropdown took above the plot given back. */
  function wideSpec(spec, width) {
    const out = clone(spec);
    const L = out.layout;
    const size = ((L.title || {}).font || {}).size || 17;
    setText(L, "title", (t) => wrap(t, Math.floor((width - 40) / (size * 0.55))));
    const lines = (textOf(L.title).match(/<br>/g) || []).length + 1;
    for (const t of out.data) {   // a block of text alone in its own panel wraps to the width
      if (t.mode !== "text" || (L[axisOf(t, "x")] || {}).visible !== false || t.text == null) continue;
      const chars = Math.floor((width - 60) / ((((t.textfont || {}).size) || (L.font || {}).size || PLOTLY_FONT) * 0.58));
      t.text = Array.isArray(t.text) ? t.text.map((x) => (typeof x === "string" ? wrap(x, chars) : x)) : wrap(t.text, chars);
    }
    if ((L.updatemenus || []).length) {   // the dropdown sat above the plot
      L.margin = Object.assign({}, L.margin, { t: Math.min((L.margin || {}).t ?? 100, 30 + lines * (size + 6)) });
    }
    return out;
  }

  function layoutFor(fig) {
    const width = fig.gd.parentElement.clientWidth;
    fig.narrow = width < NARROW;
    const spec = fig.narrow ? narrowSpec(fig.spec, width, fig.gd.parentElement.clientHeight) : wideSpec(fig.spec, width);
    for (const m of spec.layout.updatemenus || []) m.visible = false;    // the HTML controls take over
    for (const s of spec.layout.sliders || []) s.visible = false;
    spec.layout.dragmode = false;   // a drag scrolls the page; the axes stay as the chapter set them
    return spec;
  }

  function refresh(fig) {
    const { gd } = fig;
    // plotly's drawing is for the eye: the figure's name, description and table speak for it
    // (its mode bar stays: a labelled "download" button)
    for (const svg of gd.querySelectorAll("svg.main-svg")) svg.setAttribute("aria-hidden", "true");
    fig.name.textContent = plain(gd.layout.title) || gd.id.replace(/^fig-/, "").replace(/-/g, " ");
    fig.description.textContent = describe(gd, fig.controls);
    fig.table.replaceChildren(dataTable(gd));
  }

  /** Plotly.react keeps the width it had; take the box's, where that has changed since. */
  function fitWidth(gd) {
    return Math.abs(gd.parentElement.clientWidth - gd._fullLayout.width) > 1 ? Plotly.Plots.resize(gd) : Promise.resolve();
  }

  async function draw(fig) {
    const spec = layoutFor(fig);
    await Plotly.react(fig.gd, spec.data, spec.layout, fig.spec.config);
    await fitWidth(fig.gd);
    for (const c of fig.controls) {   // a redraw starts from the spec: replay what the reader chose
      const i = fig.state[c.menu != null ? `m${c.menu}` : `s${c.slider}`];
      const first = c.menu != null ? fig.spec.layout.updatemenus[c.menu].active || 0
        : fig.spec.layout.sliders[c.slider].active || 0;
      if (i != null && i !== first) await c.replay(i);
    }
    await fit(fig.gd);
    refresh(fig);
    fig.gd.dataset.layout = fig.narrow ? "narrow" : "wide";
  }

  /** The figure's frame, before plotly.js is there: its controls, its name and description, its
   *  (still empty) data table, and in the plot's place its title and what it plots. */
  function setup(script) {
    const gd = document.getElementById(script.dataset.for);
    const box = gd.parentElement;
    const fig = { gd, spec: JSON.parse(script.textContent), state: {}, drawn: false };
    const figure = document.createElement("figure");
    figure.className = "il-figure";
    box.parentElement.insertBefore(figure, box);
    fig.controls = controls(fig);
    if (fig.controls.length) {
      const bar = document.createElement("div");
      bar.className = "il-controls";
      for (const c of fig.controls) {
        const group = document.createElement("div");
        group.append(...c.el);
        bar.appendChild(group);
      }
      figure.appendChild(bar);
    }
    figure.appendChild(box);
    const caption = document.createElement("figcaption");
    fig.name = Object.assign(document.createElement("span"), { id: `${gd.id}-name`, className: "visually-hidden" });
    const details = document.createElement("details");
    details.className = "il-data";
    details.appendChild(Object.assign(document.createElement("summary"), { textContent: "Data of this figure" }));
    fig.description = Object.assign(document.createElement("p"), { id: `${gd.id}-description` });
    fig.table = document.createElement("div");
    details.append(fig.description, fig.table);
    details.addEventListener("toggle", () => {   // opened before the figure is drawn: the spec's numbers
      if (details.open && !fig.drawn && !fig.table.childElementCount) fig.table.replaceChildren(dataTable(fig.spec));
    });
    caption.append(fig.name, details);
    figure.appendChild(caption);
    figure.setAttribute("aria-labelledby", fig.name.id);
    figure.setAttribute("aria-describedby", fig.description.id);
    fig.name.textContent = plain(fig.spec.layout.title) || gd.id.replace(/^fig-/, "").replace(/-/g, " ");
    fig.description.textContent = describe(fig.spec, fig.controls);
    // in the plot's place until it is drawn (the figure's name and description speak for it)
    fig.placeholder = document.createElement("div");
    fig.placeholder.className = "il-placeholder";
    fig.placeholder.setAttribute("aria-hidden", "true");
    fig.placeholder.append(Object.assign(document.createElement("strong"), { textContent: fig.name.textContent }),
                           Object.assign(document.createElement("span"), {
                             textContent: fig.description.textContent.replace(/ Its numbers are in .*$/, "") }));
    gd.appendChild(fig.placeholder);
    figures.push(fig);
    return fig;
  }

  /** Draw ``fig`` for the first time (plotly.js loaded). */
  function first(fig) {
    const { gd } = fig;
    fig.placeholder.remove();
    return draw(fig).then(() => {
      gd.on("plotly_sliderchange", (e) => {
        const c = fig.controls.find((k) => k.slider === e.slider._index);
        if (c) c.set(e.slider.steps.indexOf(e.step));
      });
      gd.on("plotly_buttonclicked", (e) => {
        const c = fig.controls.find((k) => k.menu === e.menu._index);
        if (c) c.set(e.active);
      });
      for (const event of ["plotly_restyle", "plotly_relayout", "plotly_update"]) {
        gd.on(event, () => requestAnimationFrame(() => refresh(fig)));
      }
      fig.drawn = true;
      gd.dataset.ready = "true";
      watcher.observe(gd.parentElement);
    });
  }

  // ---- when each figure is drawn -----------------------------------------------------------

  const NEAR = "1000px 0px";      // a figure this far above or below the screen is drawn now
  const near = new Set();         // the figures within NEAR of the screen, and those a reader used
  let everyFigure = false;        // true once the page has loaded
  let printing = false;           // true once the page is printed: every figure, at once
  let plotly = null;              // plotly.js, loading or loaded
  let drawing = false;

  function loadPlotly() {
    if (!plotly) {
      plotly = window.Plotly ? Promise.resolve() : new Promise((resolve, reject) => {
        const declared = document.querySelector("template.il-plotly").content.querySelector("script");
        const script = document.createElement("script");
        script.src = declared.getAttribute("src");
        script.onload = resolve;
        script.onerror = () => reject(new Error(`plotly.js did not load from ${script.src}`));
        document.body.appendChild(script);
      });
    }
    return plotly;
  }

  let wake = () => {};            // ends the wait for idle time: a figure has come near
  const idle = () => new Promise((resolve) => {
    wake = resolve;
    if (window.requestIdleCallback) requestIdleCallback(resolve, { timeout: 1000 });
    else setTimeout(resolve, 50);
  });

  function nextFigure() {
    const waiting = figures.filter((f) => !f.started);
    return waiting.find((f) => printing || near.has(f)) || (everyFigure ? waiting[0] : undefined);
  }

  /** Draw the figures that should be drawn, nearest first, one at a time. */
  async function drawWaiting() {
    if (drawing) return;
    drawing = true;
    try {
      for (let fig = nextFigure(); fig; fig = nextFigure()) {
        if (!printing && !near.has(fig)) await idle();   // not needed yet: when the browser has time
        await loadPlotly();
        fig = nextFigure();   // chosen now: the reader may have scrolled to another meanwhile
        if (!fig) break;
        fig.started = true;
        await first(fig);
      }
    } finally {
      drawing = false;
    }
  }

  function soon(fig) {
    near.add(fig);
    wake();
    drawWaiting();
  }

  function drawEveryFigure() {
    everyFigure = true;
    drawWaiting();
  }

  // A figure follows its own box, not the window: the page's columns settle after the window
  // changes, so a figure drawn for the window's first width would keep a width its box no longer has.
  const settling = new Map();
  const watcher = new ResizeObserver((entries) => {
    for (const entry of entries) {
      const fig = figures.find((f) => f.gd.parentElement === entry.target);
      if (!fig || fig.gd.dataset.ready !== "true") continue;
      clearTimeout(settling.get(fig));
      settling.set(fig, setTimeout(() => {
        const width = fig.gd.parentElement.clientWidth;
        if ((width < NARROW) !== fig.narrow) draw(fig);
        else fitWidth(fig.gd).then(() => fit(fig.gd));
      }, 150));
    }
  });

  // On paper a figure is at most as wide as the printed text. A browser's print lays the page out
  // anew for the paper, but plotly's drawing keeps the width it was drawn at: before printing, a
  // figure wider than PRINT_WIDTH is drawn again at that width (A4 and US Letter are wider, with
  // the browsers' default margins), and after printing as before. (The book's PDF,
  // inferlimits/book/pdf.py, opens each page in print media at the printed width: its figures are
  // drawn for the paper from the start.)
  const PRINT_WIDTH = 680;  // px
  const printMedia = matchMedia("print");
  printMedia.addEventListener("change", () => printMedia.matches && drawPrinted());
  function drawPrinted() {   // printed (the book's PDF opens each page as print): every figure, now
    printing = true;
    wake();
    drawEveryFigure();
  }
  window.addEventListener("beforeprint", () => {
    drawPrinted();
    for (const fig of figures) {
      const box = fig.gd.parentElement;
      if (fig.gd.dataset.ready !== "true" || box.clientWidth <= PRINT_WIDTH) continue;
      fig.printing = true;
      box.style.width = `${PRINT_WIDTH}px`;
      Plotly.relayout(fig.gd, { width: PRINT_WIDTH });   // drawn at once, before the page is laid out
    }
  });
  window.addEventListener("afterprint", () => {
    for (const fig of figures.filter((f) => f.printing)) {
      fig.printing = false;
      fig.gd.parentElement.style.width = "100%";
      draw(fig);
    }
  });

  document.querySelectorAll("script.il-figure-data").forEach(setup);
  const approach = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const fig = figures.find((f) => f.gd.parentElement === entry.target);
      if (fig && entry.isIntersecting) near.add(fig);
      else if (fig) near.delete(fig);
    }
    if (near.size) wake();
    drawWaiting();
  }, { rootMargin: NEAR });
  for (const fig of figures) approach.observe(fig.gd.parentElement);
  if (printMedia.matches) drawPrinted();
  if (document.readyState === "complete") drawEveryFigure();
  else window.addEventListener("load", drawEveryFigure);
})();
