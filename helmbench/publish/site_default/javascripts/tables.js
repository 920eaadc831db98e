// Sortable tables: attach the vendored Tablesort to every table with class "sortable".
// Material's instant navigation swaps pages without a reload, so re-attach on each page
// (document$ emits once per page view); fall back to DOMContentLoaded without it.
// Keyboard: Tablesort makes each sortable header focusable and sorts on Enter; Space sorts
// too, as on a button. Screen readers hear the sort state from `aria-sort`, kept on one
// header at a time (the column the table is sorted by, e.g. Rank before any click).
(function () {
  function attach() {
    if (typeof Tablesort === "undefined") return;
    var tables = document.querySelectorAll("table.sortable");
    for (var i = 0; i < tables.length; i++) {
      var table = tables[i];
      if (table.hasAttribute("data-tablesort")) continue;
      table.setAttribute("data-tablesort", "");
      var sorter = new Tablesort(table);
      table.addEventListener("afterSort", (function (sorter, table) {
        return function () {  // by click or key, the header just sorted is sorter.current
          var all = table.querySelectorAll("thead th[aria-sort]");
          for (var k = 0; k < all.length; k++) if (all[k] !== sorter.current) all[k].removeAttribute("aria-sort");
        };
      })(sorter, table));
      var heads = table.querySelectorAll("thead th[role=columnheader]");
      for (var j = 0; j < heads.length; j++) {
        if (heads[j].getAttribute("data-sort-method") === "none") continue;
        heads[j].addEventListener("keydown", function (e) {
          if (e.key === " " || e.key === "Spacebar") { e.preventDefault(); this.click(); }
        });
      }
    }
  }
  if (typeof document$ !== "undefined" && document$.subscribe) {
    document$.subscribe(attach);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", attach);
  } else {
    attach();
  }
})();
