// Sortable tables: attach the vendored Tablesort to every table with class "sortable".
// Material's instant navigation swaps pages without a reload, so re-attach on each page
// (document$ emits once per page view); fall back to DOMContentLoaded without it.
(function () {
  function attach() {
    if (typeof Tablesort === "undefined") return;
    var tables = document.querySelectorAll("table.sortable");
    for (var i = 0; i < tables.length; i++) {
      if (!tables[i].hasAttribute("data-tablesort")) {
        tables[i].setAttribute("data-tablesort", "");
        new Tablesort(tables[i]);
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
