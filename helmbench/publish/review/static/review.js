// Keyboard shortcuts of the review page: 1–9 pick an option, L/M/H confidence, N note, Enter save.
// Served from this server only (the Content-Security-Policy allows no inline script).
(function () {
  "use strict";
  function form() { return document.getElementById("verdict"); }
  function submit(f) {
    if (f.requestSubmit) { f.requestSubmit(); } else { f.submit(); }
  }
  document.addEventListener("keydown", function (e) {
    var f = form();
    if (!f || e.altKey || e.metaKey) { return; }
    var t = e.target;
    var typing = t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type === "text"));
    if (typing) {
      if (e.key === "Escape") { t.blur(); e.preventDefault(); }
      else if (e.key === "Enter" && e.ctrlKey) { submit(f); e.preventDefault(); }
      return;
    }
    if (e.ctrlKey) { return; }
    var key = e.key.toLowerCase();
    if (key === "enter") {
      if (t && (t.tagName === "BUTTON" || t.tagName === "A")) { return; }
      submit(f); e.preventDefault(); return;
    }
    if (key === "n") { document.getElementById("note").focus(); e.preventDefault(); return; }
    // Compared as text, never pasted into a selector: a key such as " or \ would make the selector
    // invalid and querySelector throw.
    var input = null;
    var inputs = f.querySelectorAll("input[data-key]");
    for (var i = 0; i < inputs.length; i++) {
      if (key !== "" && inputs[i].getAttribute("data-key") === key) { input = inputs[i]; break; }
    }
    if (input) {
      if (input.type === "checkbox") { input.checked = !input.checked; } else { input.checked = true; }
      input.focus();
      e.preventDefault();
    }
  });
})();
