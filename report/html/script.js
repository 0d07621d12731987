// lockbench report: what needs a script. Series toggle from the legend; drag across a time
// chart to zoom its range (every chart of its group follows), double-click or "reset zoom"
// to undo. The page is complete without it.
(function () {
  "use strict";
  var first = document.querySelector("svg"), NS = first ? first.namespaceURI : "";
  function num(v) { return Math.round(v * 100) / 100; }

  document.querySelectorAll("button.key").forEach(function (b) {
    b.addEventListener("click", function () {
      var fig = b.closest("figure");
      var g = fig.querySelector('g.series[data-series="' + b.dataset.series + '"]');
      if (!g) return;
      g.classList.toggle("off");
      b.classList.toggle("off", g.classList.contains("off"));
    });
  });

  // Zoom: pixel positions are remapped from the ones written in the page, kept on first use.
  function orig(el, attr) {
    var k = "o" + attr.replace("-", "");
    if (el.dataset[k] === undefined) el.dataset[k] = el.getAttribute(attr);
    return el.dataset[k];
  }
  function niceStep(span) {
    var raw = span / 5, p = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = [1, 2, 2.5, 5, 10].find(function (m) { return raw <= m * p * 1.0000001; });
    return m * p;
  }
  function apply(fig, a, b) {
    var x0 = +fig.dataset.x0, x1 = +fig.dataset.x1, p0 = +fig.dataset.px0, p1 = +fig.dataset.px1;
    var pa = p0 + (a - x0) / (x1 - x0) * (p1 - p0), pb = p0 + (b - x0) / (x1 - x0) * (p1 - p0);
    var k = (p1 - p0) / (pb - pa);
    function f(X) { return num(p0 + (X - pa) * k); }
    var svg = fig.querySelector("svg");
    svg.querySelectorAll("g.plot polyline").forEach(function (el) {
      el.setAttribute("points", orig(el, "points").split(" ").map(function (xy) {
        var c = xy.split(","); return f(+c[0]) + "," + c[1];
      }).join(" "));
    });
    svg.querySelectorAll("g.plot circle").forEach(function (el) { el.setAttribute("cx", f(+orig(el, "cx"))); });
    svg.querySelectorAll("g.plot rect").forEach(function (el) {
      var x = +orig(el, "x"), w = +orig(el, "width");
      if (el.classList.contains("span")) {
        el.setAttribute("x", f(x)); el.setAttribute("width", Math.max(num(w * k), 0.5));
      } else {
        el.setAttribute("x", num(f(x + w / 2) - w / 2));
      }
    });
    svg.querySelectorAll("g.vmark line").forEach(function (el) {
      var x = f(+orig(el, "x1")); el.setAttribute("x1", x); el.setAttribute("x2", x);
    });
    svg.querySelectorAll("g.vmark text").forEach(function (el) { el.setAttribute("x", f(+orig(el, "x"))); });
    var ticks = svg.querySelector("g.xticks"), y0 = +svg.querySelector("g.axes path").getAttribute("d").split("V")[1].split("H")[0];
    while (ticks.firstChild) ticks.removeChild(ticks.firstChild);
    var step = niceStep(b - a);
    for (var v = Math.ceil(a / step) * step; v <= b + step * 1e-9; v += step) {
      var X = num(p0 + (v - a) / (b - a) * (p1 - p0));
      var l = document.createElementNS(NS, "line");
      l.setAttribute("x1", X); l.setAttribute("x2", X); l.setAttribute("y1", y0); l.setAttribute("y2", y0 + 4);
      var t = document.createElementNS(NS, "text");
      t.setAttribute("x", X); t.setAttribute("y", y0 + 16); t.setAttribute("text-anchor", "middle");
      t.textContent = (+v.toPrecision(6)) + "s";
      ticks.appendChild(l); ticks.appendChild(t);
    }
    fig.dataset.zoomed = a === x0 && b === x1 ? "" : num(a) + "-" + num(b);
  }
  function zoomGroup(group, a, b) {
    document.querySelectorAll('figure[data-zoom="' + group + '"]').forEach(function (fig) {
      apply(fig, a === null ? +fig.dataset.x0 : a, b === null ? +fig.dataset.x1 : b);
    });
  }

  document.querySelectorAll("figure[data-zoom]").forEach(function (fig) {
    var svg = fig.querySelector("svg"), group = fig.dataset.zoom;
    var reset = document.createElement("button");
    reset.type = "button"; reset.className = "reset"; reset.textContent = "reset zoom";
    reset.addEventListener("click", function () { zoomGroup(group, null, null); });
    fig.querySelector("figcaption").appendChild(reset);
    // cur is the data range shown now, to map a drag inside a zoomed chart.
    function cur() {
      var z = fig.dataset.zoomed;
      if (!z) return [+fig.dataset.x0, +fig.dataset.x1];
      var i = z.indexOf("-", 1); return [+z.slice(0, i), +z.slice(i + 1)];
    }
    function svgX(ev) {
      var pt = svg.createSVGPoint(); pt.x = ev.clientX; pt.y = ev.clientY;
      return pt.matrixTransform(svg.getScreenCTM().inverse()).x;
    }
    var start = null, sel = null;
    svg.addEventListener("pointerdown", function (ev) {
      if (ev.button !== 0) return;
      start = svgX(ev);
      sel = document.createElementNS(NS, "rect");
      sel.setAttribute("class", "sel"); sel.setAttribute("y", 0); sel.setAttribute("height", svg.viewBox.baseVal.height);
      sel.setAttribute("x", start); sel.setAttribute("width", 0);
      svg.appendChild(sel);
      svg.setPointerCapture(ev.pointerId);
    });
    svg.addEventListener("pointermove", function (ev) {
      if (start === null) return;
      var x = svgX(ev);
      sel.setAttribute("x", Math.min(x, start)); sel.setAttribute("width", Math.abs(x - start));
    });
    svg.addEventListener("pointerup", function (ev) {
      if (start === null) return;
      var x = svgX(ev), lo = Math.min(x, start), hi = Math.max(x, start);
      svg.removeChild(sel); start = null;
      if (hi - lo < 6) return;
      var p0 = +fig.dataset.px0, p1 = +fig.dataset.px1, r = cur();
      function d(X) { return r[0] + (Math.min(Math.max(X, p0), p1) - p0) / (p1 - p0) * (r[1] - r[0]); }
      if (d(hi) - d(lo) > 0) zoomGroup(group, d(lo), d(hi));
    });
    svg.addEventListener("dblclick", function () { zoomGroup(group, null, null); });
  });
  document.body.dataset.scriptOk = String(document.querySelectorAll("figure.chart").length);
})();
