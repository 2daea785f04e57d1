// Lectern reader: draws a paper's PDF with pdf.js (vendored by make build under
// /static/vendor/pdfjs/, loaded from this origin only), opens it at the cited page
// and marks the cited words there.
//
// Each page is a canvas under pdf.js's text layer (transparent spans, one per run
// of text). The cited words are found in the text layer with matching that
// ignores case, spaces, hyphens at line ends and ligatures (both sides are reduced
// to their letters and digits, NFKC-folded), and the matching parts of the spans
// are wrapped in <mark class="reader-hl">. Pages are drawn when they come near the
// viewport. Keys: Page Down / Page Up, Home / End, + and − to zoom, 0 to fit the
// width.
"use strict";

const root = document.getElementById("reader");
const pagesEl = root && root.querySelector("[data-reader-pages]");

// ---- matching the cited words ---------------------------------------------

const wordChar = /[\p{L}\p{N}]/u;

// fold reduces text to the letters and digits it reads as, lower-cased and
// NFKC-folded (ligatures become their letters), calling emit(char, offset, length)
// for each one with where it came from in the original.
function fold(text, emit) {
  let off = 0;
  for (const ch of text) {
    for (const c of ch.normalize("NFKC").toLowerCase()) {
      if (wordChar.test(c)) emit(c, off, ch.length);
    }
    off += ch.length;
  }
}

function foldString(text) {
  let out = "";
  fold(text, function (c) { out += c; });
  return out;
}

const gram = 8; // anchor length, in letters and digits

// matchBlocks finds the parts of needle that occur in hay, in order: anchored on
// gram-long pieces and extended as far as both agree, each after the previous one.
// What the PDF has in between (a running header, a footnote mark) is skipped.
function matchBlocks(needle, hay) {
  if (needle.length < gram * 2) {
    const at = hay.indexOf(needle);
    return needle && at >= 0 ? [[at, at + needle.length]] : [];
  }
  const index = new Map();
  for (let p = 0; p + gram <= hay.length; p++) {
    const g = hay.substr(p, gram);
    const list = index.get(g);
    if (list) list.push(p); else index.set(g, [p]);
  }
  const blocks = [];
  let i = 0, from = 0;
  while (i + gram <= needle.length) {
    const cands = index.get(needle.substr(i, gram));
    let best = -1, bestLen = 0;
    if (cands) {
      for (const p of cands) {
        if (p < from) continue;
        let l = gram;
        while (i + l < needle.length && p + l < hay.length && needle[i + l] === hay[p + l]) l++;
        if (l > bestLen) { best = p; bestLen = l; }
      }
    }
    if (best < 0) { i++; continue; }
    blocks.push([best, best + bestLen]);
    i += bestLen;
    from = best + bestLen;
  }
  // A short piece alone is chance; it counts only next to a long one.
  const long = blocks.map(function (b) { return b[1] - b[0] >= gram * 2; });
  const kept = blocks.filter(function (b, k) {
    return long[k] || (k > 0 && long[k - 1] && b[0] - blocks[k - 1][1] <= 40) ||
      (k + 1 < blocks.length && long[k + 1] && blocks[k + 1][0] - b[1] <= 40);
  });
  // Small gaps between pieces (a footnote mark, a changed letter) are bridged.
  const merged = [];
  for (const b of kept) {
    const last = merged[merged.length - 1];
    if (last && b[0] - last[1] <= 6) last[1] = b[1]; else merged.push([b[0], b[1]]);
  }
  return merged;
}

// highlight marks needle's words in a rendered text layer; it returns how many
// letters it marked.
function highlight(spans, needle) {
  if (!needle) return 0;
  let hay = "";
  const where = []; // per letter of hay: [span index, offset, length]
  spans.forEach(function (span, s) {
    fold(span.textContent, function (c, off, len) { hay += c; where.push([s, off, len]); });
  });
  const blocks = matchBlocks(needle, hay);
  const bySpan = new Map();
  let marked = 0;
  for (const [a, b] of blocks) {
    marked += b - a;
    let k = a;
    while (k < b) {
      const s = where[k][0];
      const startOff = where[k][1];
      while (k + 1 < b && where[k + 1][0] === s) k++;
      const endOff = where[k][1] + where[k][2];
      const list = bySpan.get(s) || [];
      list.push([startOff, endOff]);
      bySpan.set(s, list);
      k++;
    }
  }
  if (marked < Math.min(needle.length, 24)) return 0;
  bySpan.forEach(function (ranges, s) { wrap(spans[s], ranges); });
  return marked;
}

// wrap puts the [start, end) ranges of span's text in marks.
function wrap(span, ranges) {
  const text = span.textContent;
  span.textContent = "";
  let at = 0;
  for (const [a, b] of ranges) {
    if (a > at) span.append(text.slice(at, a));
    const m = document.createElement("mark");
    m.className = "reader-hl";
    m.textContent = text.slice(a, b);
    span.append(m);
    at = b;
  }
  if (at < text.length) span.append(text.slice(at));
}

function unwrapAll() {
  pagesEl.querySelectorAll("mark.reader-hl").forEach(function (m) {
    const parent = m.parentNode;
    m.replaceWith(m.textContent);
    parent.normalize();
  });
}

// ---- the viewer -------------------------------------------------------------

const state = {
  pdfjs: null, doc: null, pages: [], scale: 1, fit: true, current: 1,
  target: Number(root.dataset.page) || 1, last: Number(root.dataset.pageEnd) || 0,
  needle: foldString(root.dataset.cited || ""), found: false, reported: false, userMoved: false,
};

function say(el, text) { if (el) el.textContent = text; }

function showError(e) {
  const box = root.querySelector("[data-reader-error]");
  const loading = root.querySelector("[data-reader-loading]");
  if (loading) loading.hidden = true;
  let what = "The PDF could not be shown.", todo = "Reload the page, or download the PDF with the link above.";
  const name = e && e.name;
  if (name === "InvalidPDFException") what = "The stored PDF is damaged, so it cannot be shown.";
  else if (name === "ResponseException" && e.status === 404) {
    what = "Lectern no longer has this paper's PDF."; todo = "Upload it again on the paper page.";
  } else if (name === "ViewerLoad") what = "The PDF viewer could not be loaded.";
  if (window.console) console.error("reader:", e);
  root.dataset.error = String(e && e.message || e);
  if (!box) return;
  box.hidden = false;
  say(box.querySelector(".what"), what);
  say(box.querySelector(".do"), todo);
}

async function start() {
  const base = root.dataset.viewer, v = "?v=" + encodeURIComponent(root.dataset.viewerVersion || "");
  try {
    state.pdfjs = await import(base + "pdf.min.mjs" + v);
  } catch (e) {
    const err = new Error(String(e)); err.name = "ViewerLoad"; throw err;
  }
  const pdfjs = state.pdfjs;
  pdfjs.GlobalWorkerOptions.workerSrc = base + "pdf.worker.min.mjs" + v;
  state.doc = await pdfjs.getDocument({
    url: root.dataset.pdf,
    cMapUrl: base + "cmaps/", cMapPacked: true,
    standardFontDataUrl: base + "standard_fonts/", wasmUrl: base + "wasm/",
    enableXfa: false,
  }).promise;
  const n = state.doc.numPages;
  const all = await Promise.all(Array.from({ length: n }, function (_, i) { return state.doc.getPage(i + 1); }));
  pagesEl.textContent = "";
  state.pages = all.map(function (page, i) {
    const div = document.createElement("div");
    div.className = "reader-page";
    div.dataset.page = String(i + 1);
    div.setAttribute("role", "region");
    div.setAttribute("aria-label", "Page " + (i + 1));
    const label = document.createElement("span");
    label.className = "page-label";
    label.textContent = String(i + 1);
    div.append(label);
    pagesEl.append(div);
    return { num: i + 1, page: page, div: div, drawn: 0, task: null, text: null };
  });
  state.target = Math.min(Math.max(state.target, 1), n);
  state.last = Math.min(Math.max(state.last, state.target), n);
  const tools = root.querySelector("[data-reader-tools]");
  tools.hidden = false;
  say(tools.querySelector("[data-page-count]"), String(n));
  tools.querySelector("[data-page-input]").max = String(n);
  wireTools(tools);
  fitHeight();
  layout();
  observe();
  goTo(state.target, false);
  pagesEl.addEventListener("scroll", onScroll, { passive: true });
  window.addEventListener("resize", debounce(function () { fitHeight(); if (state.fit) layout(); }, 150));
  ["wheel", "touchstart"].forEach(function (t) { pagesEl.addEventListener(t, function () { state.userMoved = true; }, { passive: true }); });
  if (!state.needle) say(root.querySelector("[data-reader-status]"), "");
  root.dataset.ready = "true";
}

// fitHeight makes the pages a scrolling pane that ends at the window's bottom, so
// the title, the cited words and the tools stay in view; at least 60 % of the
// window's height.
function fitHeight() {
  const top = pagesEl.getBoundingClientRect().top + window.scrollY;
  pagesEl.style.height = Math.max(window.innerHeight - top - 12, window.innerHeight * 0.6) + "px";
}

// layout sizes every page for the current scale (fit width, or the chosen zoom).
function layout() {
  if (state.fit) {
    const avail = pagesEl.clientWidth - 24;
    const widest = Math.max.apply(null, state.pages.map(function (p) { return p.page.getViewport({ scale: 1 }).width; }));
    state.scale = Math.max(0.25, Math.min(4, avail / widest));
  }
  for (const p of state.pages) {
    const vp = p.page.getViewport({ scale: state.scale });
    p.div.style.width = Math.floor(vp.width) + "px";
    p.div.style.height = Math.floor(vp.height) + "px";
    p.div.style.setProperty("--scale-factor", String(state.scale));
  }
  say(root.querySelector("[data-zoom-label]"), Math.round(state.scale * 100) + " %");
  schedule();
}

function observe() {
  const io = new IntersectionObserver(function (entries) {
    for (const e of entries) {
      const p = state.pages[Number(e.target.dataset.page) - 1];
      p.visible = e.isIntersecting;
    }
    schedule();
  }, { root: pagesEl, rootMargin: "600px 0px" });
  for (const p of state.pages) io.observe(p.div);
}

// schedule draws the pages near the view one at a time, the one nearest the page
// shown first: on a busy machine the cited page is not slowed by its neighbours.
let drawing = false;
async function schedule() {
  if (drawing) return;
  drawing = true;
  try {
    for (;;) {
      const next = state.pages.filter(function (p) { return p.visible && p.drawn !== state.scale; })
        .sort(function (a, b) { return Math.abs(a.num - state.current) - Math.abs(b.num - state.current); })[0];
      if (!next) break;
      await draw(next);
    }
  } finally {
    drawing = false;
  }
}

// draw renders a page's canvas and text layer at the current scale, once.
async function draw(p) {
  if (p.drawn === state.scale) return;
  const scale = state.scale;
  p.drawn = scale;
  if (p.task) p.task.cancel();
  if (p.text) p.text.cancel();
  const vp = p.page.getViewport({ scale: scale });
  const ratio = window.devicePixelRatio || 1;
  const canvas = document.createElement("canvas");
  canvas.width = Math.floor(vp.width * ratio);
  canvas.height = Math.floor(vp.height * ratio);
  canvas.setAttribute("aria-hidden", "true");
  p.task = p.page.render({ canvas: canvas, viewport: vp, transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : null });
  try {
    await p.task.promise;
  } catch (e) {
    if (e && e.name === "RenderingCancelledException") return;
    throw e;
  }
  if (p.drawn !== scale) return;
  const old = p.div.querySelector("canvas");
  if (old) old.replaceWith(canvas); else p.div.prepend(canvas);
  const layer = document.createElement("div");
  layer.className = "textLayer";
  p.text = new state.pdfjs.TextLayer({ textContentSource: p.page.streamTextContent(), container: layer, viewport: vp });
  try {
    await p.text.render();
  } catch (e) {
    return; // cancelled by a newer drawing
  }
  if (p.drawn !== scale) return;
  const prev = p.div.querySelector(".textLayer");
  if (prev) prev.replaceWith(layer); else p.div.append(layer);
  markPage(p, layer);
}

// markPage highlights the cited words on a page of the cited range and reports
// the outcome for the cited page.
function markPage(p, layer) {
  if (!state.needle || p.num < state.target || p.num > state.last) return;
  const spans = Array.from(layer.querySelectorAll("span")).filter(function (s) {
    return !s.classList.contains("markedContent") && s.getAttribute("role") !== "img";
  });
  const n = highlight(spans, state.needle);
  if (n > 0) {
    state.found = true;
    p.div.dataset.highlighted = "true";
  }
  if (p.num !== state.target || state.reported) return;
  state.reported = true;
  const status = root.querySelector("[data-reader-status]");
  if (state.found) {
    if (status) status.dataset.found = "true";
    say(status, "Highlighted on page " + p.num + ".");
    const first = p.div.querySelector("mark.reader-hl");
    if (first && !state.userMoved) {
      const box = pagesEl.getBoundingClientRect();
      pagesEl.scrollTop += first.getBoundingClientRect().top - box.top - pagesEl.clientHeight / 3;
    }
  } else {
    if (status) status.dataset.found = "false";
    say(status, "These words could not be matched on page " + p.num + " of the PDF (the page may be a scan, or laid out unusually); they are quoted above.");
  }
  root.dataset.highlighted = String(state.found);
}

function goTo(num, smooth) {
  const p = state.pages[Math.min(Math.max(num, 1), state.pages.length) - 1];
  if (!p) return;
  pagesEl.scrollTo({ top: p.div.offsetTop - 8, behavior: smooth ? "smooth" : "auto" });
  setCurrent(p.num);
}

function setCurrent(num) {
  state.current = num;
  const input = root.querySelector("[data-page-input]");
  if (input && document.activeElement !== input) input.value = String(num);
}

function onScroll() {
  const line = pagesEl.getBoundingClientRect().top + pagesEl.clientHeight / 3;
  for (const p of state.pages) {
    const r = p.div.getBoundingClientRect();
    if (r.top <= line && r.bottom > line) { if (p.num !== state.current) setCurrent(p.num); return; }
  }
}

function zoom(factor) {
  state.fit = factor === 0;
  if (!state.fit) state.scale = Math.max(0.25, Math.min(5, state.scale * factor));
  const keep = state.current;
  layout();
  goTo(keep, false);
}

function wireTools(tools) {
  const acts = {
    prev: function () { state.userMoved = true; goTo(state.current - 1, false); },
    next: function () { state.userMoved = true; goTo(state.current + 1, false); },
    "zoom-in": function () { zoom(1.2); },
    "zoom-out": function () { zoom(1 / 1.2); },
    fit: function () { zoom(0); },
  };
  tools.addEventListener("click", function (e) {
    const b = e.target.closest("button[data-act]");
    if (b) acts[b.dataset.act]();
  });
  const input = tools.querySelector("[data-page-input]");
  input.addEventListener("change", function () { state.userMoved = true; goTo(Number(input.value) || 1, false); });
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target.tagName;
    if (t === "INPUT" || t === "TEXTAREA" || t === "SELECT") return;
    const keys = {
      PageDown: acts.next, PageUp: acts.prev,
      Home: function () { state.userMoved = true; goTo(1, false); },
      End: function () { state.userMoved = true; goTo(state.pages.length, false); },
      "+": acts["zoom-in"], "=": acts["zoom-in"], "-": acts["zoom-out"], "0": acts.fit,
    };
    const f = keys[e.key];
    if (f) { e.preventDefault(); f(); }
  });
  root.querySelectorAll("a[data-toc-page]").forEach(function (a) {
    a.addEventListener("click", function (e) {
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
      e.preventDefault();
      openPassage(a).catch(function () { window.location.href = a.href; });
    });
  });
}

// openPassage shows another passage of the table of contents without reloading
// the PDF: its words replace the highlight, and the address follows.
async function openPassage(a) {
  const url = new URL(a.href, window.location.href);
  const id = url.searchParams.get("passage");
  const resp = await fetch("/api/papers/" + encodeURIComponent(root.dataset.paper) + "/passages/" + encodeURIComponent(id),
    { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!resp.ok) throw new Error("passage " + resp.status);
  const pt = await resp.json();
  unwrapAll();
  pagesEl.querySelectorAll("[data-highlighted]").forEach(function (d) { delete d.dataset.highlighted; });
  state.target = Math.min(Math.max(pt.page_start, 1), state.pages.length);
  state.last = Math.min(Math.max(pt.page_end, state.target), state.pages.length);
  state.needle = foldString(pt.content);
  state.found = false; state.reported = false; state.userMoved = false;
  const fig = root.querySelector(".reader-cited");
  if (fig) {
    fig.hidden = false;
    say(fig.querySelector("figcaption"), "Cited passage" + (pt.section ? " from " + pt.section : "") + ", page " + state.target);
    say(fig.querySelector("blockquote"), pt.content.split(/\s+/).join(" "));
  }
  root.querySelectorAll("a[data-toc-page][aria-current]").forEach(function (x) { x.removeAttribute("aria-current"); });
  a.setAttribute("aria-current", "location");
  history.pushState(null, "", url.pathname + url.search);
  goTo(state.target, false);
  for (const p of state.pages) {
    const layer = p.div.querySelector(".textLayer");
    if (layer && p.drawn === state.scale) markPage(p, layer);
  }
}

function debounce(f, ms) {
  let t = 0;
  return function () { clearTimeout(t); t = setTimeout(f, ms); };
}

if (root && pagesEl && root.dataset.viewer) {
  start().catch(function (e) { showError(e); });
}
