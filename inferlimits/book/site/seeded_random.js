// For the slide exports (inferlimits/book/export.py), not the site: plotly.js names each figure's clip
// paths and traces with Math.random, so two exports of one figure would differ in those names
// alone. Loaded after plotly.js on kaleido's page, this gives Math.random a fixed sequence
// (mulberry32 from a fixed seed); kaleido reloads the page before every figure, so every export
// starts it again and names its parts alike.
(function () {
  "use strict";
  let state = 0x1f4e79;
  Math.random = function () {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();
