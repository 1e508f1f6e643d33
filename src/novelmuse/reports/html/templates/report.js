{% raw %}
"use strict";
(function () {
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };

  // ---- overview: filter rows by review status ----
  $$(".filters button").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var f = btn.getAttribute("data-filter");
      $$(".filters button").forEach(function (b) { b.setAttribute("aria-pressed", String(b === btn)); });
      var shown = 0;
      $$("table.chapters tbody tr").forEach(function (tr) {
        var ok = f === "all" || tr.getAttribute("data-review") === f || (f === "errors" && tr.getAttribute("data-errors") !== "0");
        tr.hidden = !ok;
        if (ok) shown++;
      });
      var empty = $(".empty-filter");
      if (empty) empty.hidden = shown > 0;
    });
  });

  // ---- chapter page: texts, highlights and findings linked both ways ----
  function showVersion(key) {
    if (!key) return;
    $$("section.version").forEach(function (s) { s.hidden = s.id !== key; });
    $$(".tabs button").forEach(function (b) { b.setAttribute("aria-selected", String(b.getAttribute("data-version") === key)); });
  }
  function segmentsOf(id) {
    return $$(".hl").filter(function (el) { return (" " + el.getAttribute("data-m") + " ").indexOf(" " + id + " ") >= 0; });
  }
  function flash(els) {
    els.forEach(function (el) { el.classList.add("flash"); });
    setTimeout(function () { els.forEach(function (el) { el.classList.remove("flash"); }); }, 1600);
  }
  function goToMark(id, version) {
    var anchor = document.getElementById("m-" + id);
    if (!anchor) return false;
    var section = anchor.closest("section.version");
    showVersion(version || (section && section.id));
    var segs = segmentsOf(id);
    var target = segs[0] || anchor;
    target.scrollIntoView({ block: "center" });
    flash(segs);
    $$(".finding.active").forEach(function (f) { f.classList.remove("active"); });
    var item = findingOf(id);
    if (item) item.classList.add("active");
    history.replaceState(null, "", "#m-" + id);
    return true;
  }
  function findingOf(id) {
    return $$(".finding").filter(function (li) {
      return (" " + li.getAttribute("data-marks") + " ").indexOf(" " + id + " ") >= 0;
    })[0];
  }
  $$(".tabs button").forEach(function (b) {
    b.addEventListener("click", function () { showVersion(b.getAttribute("data-version")); });
  });
  $$("a.go").forEach(function (a) {
    a.addEventListener("click", function (ev) {
      if (goToMark(a.getAttribute("data-mark"), a.getAttribute("data-version"))) ev.preventDefault();
    });
  });
  $$(".hl").forEach(function (el) {
    el.addEventListener("click", function () {
      var ids = (el.getAttribute("data-m") || "").split(" ").filter(Boolean);
      var item = null;
      for (var i = 0; i < ids.length && !item; i++) item = findingOf(ids[i]);
      if (!item) return;
      $$(".finding.active").forEach(function (f) { f.classList.remove("active"); });
      item.classList.add("active");
      var details = item.closest("details");
      if (details) details.open = true;
      item.scrollIntoView({ block: "nearest" });
      flash(segmentsOf(ids[0]));
    });
  });
  $$(".kinds input[type=checkbox]").forEach(function (cb) {
    cb.addEventListener("change", function () {
      document.body.classList.toggle("hide-" + cb.getAttribute("data-kind"), !cb.checked);
    });
  });
  if (location.hash.indexOf("#m-") === 0) {
    var first = location.hash.slice(3);
    window.addEventListener("load", function () { goToMark(first, null); });
  }

  // ---- memory page: cards as of the chosen chapter ----
  var data = $("#cards-data");
  if (data) {
    var cards = JSON.parse(data.textContent);
    var holder = $("#cards");
    var range = $("#asof"), num = $("#asof-n"), out = $("#asof-out"), filter = $("#card-filter");
    var el = function (tag, cls, text) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined) e.textContent = text;
      return e;
    };
    var stateAt = function (card, ch) {
      var found = null;
      card.states.forEach(function (s) { if (s.from <= ch) found = s; });
      return found || { attrs: [], rels: [] };
    };
    var row = function (tbody, cells, since, source, link, ch) {
      var tr = el("tr", since === ch ? "changed" : "");
      cells.forEach(function (c) { tr.appendChild(el("td", "", c)); });
      tr.appendChild(el("td", "num", "since " + since));
      var td = el("td", "src");
      if (link) { var a = el("a", "", source); a.href = link; td.appendChild(a); } else { td.textContent = source; }
      tr.appendChild(td);
      tbody.appendChild(tr);
    };
    var render = function () {
      var ch = parseInt(range.value, 10);
      num.value = ch; out.textContent = ch;
      var q = (filter.value || "").trim();
      holder.textContent = "";
      Object.keys(cards).forEach(function (id) {
        var c = cards[id];
        var hay = [c.name, id].concat(c.aliases).join(" ");
        if (q && hay.indexOf(q) < 0) return;
        var box = el("article", "cardbox");
        box.appendChild(el("h3", "", c.name));
        box.appendChild(el("p", "aka", c.type + (c.aliases.length ? " · " + c.aliases.join("、") : "") + " · " + c.file));
        var st = stateAt(c, ch);
        var table = el("table"), tbody = el("tbody");
        st.attrs.forEach(function (a) { row(tbody, [a[0], a[1]], a[2], a[3], a[4], ch); });
        st.rels.forEach(function (r) { row(tbody, [r[0], "→ " + r[1]], r[2], r[3], r[4], ch); });
        if (!st.attrs.length && !st.rels.length) box.appendChild(el("p", "muted", "no value holds at this chapter"));
        table.appendChild(tbody); box.appendChild(table);
        holder.appendChild(box);
      });
    };
    range.addEventListener("input", render);
    num.addEventListener("change", function () { range.value = num.value; render(); });
    filter.addEventListener("input", render);
    render();
  }
})();
{% endraw %}
