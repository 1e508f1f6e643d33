"use strict";
// muse studio: small enhancements over plain forms and links (every page works without them).
(function () {
  // memory page: releasing the cards' chapter slider reloads the page as of that chapter (ledger ages too)
  var range = document.getElementById("asof");
  if (range && document.body.classList.contains("page-memory")) {
    var go = function () {
      var url = new URL(window.location.href);
      url.searchParams.set("as_of", range.value);
      url.hash = "";
      window.location.assign(url.toString());
    };
    range.addEventListener("change", go);
    var num = document.getElementById("asof-n");
    if (num) num.addEventListener("change", go);
  }
  // buttons that post: disable on submit so a double click does not run an action twice
  Array.prototype.forEach.call(document.querySelectorAll("form[method=post]"), function (f) {
    f.addEventListener("submit", function () {
      Array.prototype.forEach.call(f.querySelectorAll("button"), function (b) { b.disabled = true; });
    });
  });
})();
