// Long tables in the hosted book. A chapter's output marks a table with the class "il-sortable"
// (inferlimits/figures/scoreboard.py writes one); the build adds this script to the pages that hold
// such a table (inferlimits/book/sitepages.py), and it gives each of them:
//  - a filter above it: a search box that keeps the rows holding every word typed (in any
//    column), and says how many rows it keeps, which a screen reader announces;
//  - sortable columns: each header becomes a button that sorts the rows by its column, ascending
//    first, then descending; a header marked data-type="number" sorts by the number each cell
//    shows (thousands separators, signs and units aside), the others by their text. The header says how the rows are sorted (aria-sort).
// Without this script the table is whole and readable as it is; print hides the controls.
(function () {
  "use strict";

  const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });
  let tables = 0;

  function filterBox(table, rows) {
    const id = `il-filter-${++tables}`;
    const tools = document.createElement("div");
    tools.className = "il-table-tools";
    const label = Object.assign(document.createElement("label"), { htmlFor: id, textContent: "Filter the rows" });
    const input = Object.assign(document.createElement("input"), {
      id, type: "search", className: "form-control form-control-sm", autocomplete: "off", spellcheck: false,
      placeholder: "e.g. H100 FP8",
    });
    const status = document.createElement("output");
    status.setAttribute("for", id);
    status.setAttribute("aria-live", "polite");
    const texts = rows.map((r) => `${r.textContent} ${r.dataset.categories || ""}`.toLowerCase());
    const show = () => {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      let kept = 0;
      rows.forEach((row, i) => {
        row.hidden = !words.every((w) => texts[i].includes(w));
        kept += !row.hidden;
      });
      status.textContent = `${kept} of ${rows.length} rows`;
    };
    input.addEventListener("input", show);
    show();
    tools.append(label, input, status);
    const region = table.closest(".il-scroll") || table;
    region.parentElement.insertBefore(tools, region);
  }

  function sortable(table, rows) {
    const body = table.tBodies[0];
    const headers = [...table.tHead.rows[0].cells];
    let column = -1;
    let ascending = true;
    const key = (row, i, numeric) => {
      const cell = row.cells[i];
      if (!cell) return numeric ? -Infinity : "";
      return numeric ? parseFloat(cell.textContent.replace(/[^0-9.eE+-]/g, "")) : cell.textContent.trim();
    };
    headers.forEach((th, i) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "il-sort";
      button.append(...th.childNodes);
      th.appendChild(button);
      button.addEventListener("click", () => {
        ascending = column === i ? !ascending : true;
        column = i;
        const numeric = th.dataset.type === "number";
        const order = rows.map((row, at) => ({ row, at, k: key(row, i, numeric) }));
        order.sort((a, b) => {
          const c = numeric ? (a.k > b.k) - (a.k < b.k) || (isNaN(a.k) - isNaN(b.k)) : collator.compare(a.k, b.k);
          return (ascending ? c : -c) || a.at - b.at;
        });
        body.append(...order.map((o) => o.row));
        for (const h of headers) h.removeAttribute("aria-sort");
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      });
    });
  }

  for (const table of document.querySelectorAll("table.il-sortable")) {
    if (!table.tHead || !table.tBodies.length) continue;
    const rows = [...table.tBodies[0].rows];
    filterBox(table, rows);
    sortable(table, rows);
  }
})();
