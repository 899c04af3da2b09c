-- The one script of wlrun report's page, written for it (no library): a click (or Enter) on a
-- header of a table.sortable sorts its rows by that column, ascending then descending; numbers
-- by their data-v, other cells by their text (numerically where they hold digits); in either
-- direction numbers come first, then text (a failure's reason in a column of times), then
-- empty cells; ties keep their order. A location ending in #sort=TABLE.COLUMN[.desc] opens sorted
-- that way (a link to a sorted view; clicking sets it). The page is whole without it. It holds
-- no data: the page's Content Security Policy allows it by its hash (wlrun.html.page).
return [[
(function () {
  "use strict";
  function cellAt(row, col) {
    var at = 0;
    for (var i = 0; i < row.cells.length; i++) {
      var c = row.cells[i];
      if (col < at + c.colSpan) return at === col ? c : null;
      at += c.colSpan;
    }
    return null;
  }
  function key(cell) {
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    if (v !== null && v !== "" && !isNaN(Number(v))) return Number(v);
    return cell.textContent.trim();
  }
  // numbers, then text, then empty cells, whichever the direction
  function rank(k) { return typeof k === "number" ? 0 : k === "" ? 2 : 1; }
  function compare(a, b) {
    if (typeof a === "number") return a - b;
    return a.localeCompare(b, undefined, { numeric: true });
  }
  function sort(table, col, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.map.call(body.rows, function (row, i) {
      return { row: row, key: key(cellAt(row, col)), i: i };
    });
    rows.sort(function (x, y) {
      var rx = rank(x.key), ry = rank(y.key);
      if (rx !== ry) return rx - ry;
      var c = compare(x.key, y.key);
      return (descending ? -c : c) || x.i - y.i;
    });
    rows.forEach(function (x) { body.appendChild(x.row); });
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) heads[i].removeAttribute("aria-sort");
    heads[col].setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  function byHeader(table, col) {
    var descending = table.tHead.rows[0].cells[col].getAttribute("aria-sort") === "ascending";
    sort(table, col, descending);
    try {
      history.replaceState(null, "", "#sort=" + table.id + "." + col + (descending ? ".desc" : ""));
    } catch (e) { /* a location that cannot be changed: the table is sorted all the same */ }
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      th.title = "sort by this column";
      th.addEventListener("click", function () { byHeader(table, col); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); byHeader(table, col); }
      });
    });
  });
  var m = /^#sort=([\w-]+)\.(\d+)(\.desc)?$/.exec(location.hash);
  var table = m && document.getElementById(m[1]);
  if (table && table.classList.contains("sortable") && Number(m[2]) < table.tHead.rows[0].cells.length) {
    sort(table, Number(m[2]), !!m[3]);
  }
  document.documentElement.setAttribute("data-sortable", String(tables.length));
})();
]]
