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
// a job's page: follow its events (server-sent), show each step, the spend, the end
(function () {
  var state = document.getElementById("job-state");
  if (!state || !window.EventSource) return;
  var steps = document.getElementById("job-steps"), spent = document.getElementById("job-spent");
  var end = document.getElementById("job-end");
  steps.textContent = "";
  var source = new EventSource(state.getAttribute("data-events"));
  var add = function (e) {
    var ev = JSON.parse(e.data);
    var li = document.createElement("li");
    li.textContent = ev.text;
    steps.appendChild(li);
    if (ev.spent !== undefined) spent.textContent = ev.spent === null ? "unknown (no price)" : ev.spent.toFixed(4);
  };
  source.addEventListener("plan", add);
  source.addEventListener("step", add);
  source.addEventListener("end", function (e) {
    var ev = JSON.parse(e.data);
    source.close();
    state.textContent = ev.outcome === "ok" ? "finished" : ev.outcome;
    state.className = "job-state " + ev.outcome;
    if (ev.spent !== undefined) spent.textContent = ev.spent === null ? "unknown (no price)" : ev.spent.toFixed(4);
    end.hidden = false;
    end.textContent = ev.text + " ";
    if (ev.draft) {
      var a = document.createElement("a");
      a.href = "/drafts#draft-" + ev.draft.charAt(0) + ev.draft.slice(-6);
      a.className = "btn";
      a.textContent = "Open the draft";
      end.appendChild(a);
    }
    var actions = document.getElementById("job-actions");
    if (actions) actions.hidden = true;
  });
})();
