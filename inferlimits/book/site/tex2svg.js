// TeX to SVG for the built book, with MathJax (the npm package the site used to load in the
// browser): reads one JSON request per line on stdin, {"tex": "...", "display": true}, and writes
// one JSON line per request, {"svg": "<mjx-container ...>"} or {"error": "..."}; the request
// {"css": true} answers {"css": "..."}, the stylesheet these SVGs need (it hides the MathML copy). Each SVG carries
// its own glyphs and a hidden MathML copy for screen readers: a page needs no script and no font.
const es5 = process.argv[2];   // the es5 folder of the npm package mathjax
const readline = require("readline");

require(es5 + "/node-main.js").init({
  loader: { paths: { mathjax: es5 }, load: ["input/tex", "output/svg", "a11y/assistive-mml"] },
  svg: { fontCache: "local" },
  startup: { typeset: false },
}).then((MathJax) => {
  const adaptor = MathJax.startup.adaptor;
  readline.createInterface({ input: process.stdin }).on("line", (line) => {
    let out;
    try {
      const req = JSON.parse(line);
      out = req.css ? { css: adaptor.textContent(MathJax.svgStylesheet()) }
        : { svg: adaptor.outerHTML(MathJax.tex2svg(req.tex, { display: req.display })) };
    } catch (e) {
      out = { error: String((e && e.message) || e) };
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  });
});
