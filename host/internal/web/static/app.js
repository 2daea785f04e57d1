// Lectern dashboard: a little script on top of pages that work without it.
// Uploads (one or several) show their progress and then the reading job's, and the library's rows
// follow them; rows can be ticked for export; job progress bars follow
// the job's event stream; questions stream their answer; review takes keys 1-4;
// the Pulse deck rates in place and takes j/k/u/d/s/x/o/?.
"use strict";

(function () {
  var terminal = { succeeded: 1, failed: 1, cancelled: 1 };

  // Messages for the API error codes a script meets; other errors show the API's
  // own sentence, which is written for people.
  var known = {
    not_a_pdf: ["The file is not a PDF.", "Choose a PDF file and upload it again."],
    too_large: ["The file is too large (the limit is 50 MB).", "Compress or split the PDF, then upload it again."],
    not_authenticated: ["You are not signed in, or your session has ended.", "Reload the page and sign in again."],
    validation_error: [null, "Correct what you entered and try again."],
    rate_limited: ["Too many attempts in a short time.", "Wait a minute, then try again."],
    api_unreachable: ["The dashboard cannot reach the Lectern API.", "Check that Lectern is running, then try again."]
  };

  function describe(status, body) {
    var code = body && body.code, detail = body && body.detail;
    var m = known[code];
    if (m) return [m[0] || detail || "The request was refused.", m[1]];
    if (status >= 500 || !status) return ["Something went wrong on the server.", "Try again. If it keeps happening, the operator can look in the server log."];
    if (status === 404) return ["This was not found. It may have been deleted, or it is not yours.", "Reload the page."];
    return [detail || "The request was refused.", "Check what you entered and try again."];
  }

  function showError(box, pair) {
    if (!box) return;
    box.hidden = false;
    box.querySelector(".what").textContent = pair[0];
    box.querySelector(".do").textContent = pair[1];
  }

  function errorBox(near) {
    var box = document.createElement("div");
    box.className = "error";
    box.setAttribute("role", "alert");
    box.innerHTML = '<p class="what"></p><p class="do"></p>';
    box.hidden = true;
    near.appendChild(box);
    return box;
  }

  // ---- job progress -------------------------------------------------------
  function applyJob(root, env) {
    var bar = root.querySelector("progress"), badge = root.querySelector(".badge"), text = root.querySelector(".job-msg .text");
    var p = env.progress || env;
    if (bar && p && typeof p.current === "number") {
      bar.max = p.total > 0 ? p.total : 1;
      bar.value = Math.min(p.current, bar.max);
    }
    if (env.state) {
      root.dataset.state = env.state;
      if (badge) { badge.textContent = env.state; badge.className = "badge state-" + env.state; }
      if (env.state === "succeeded" && bar) bar.value = bar.max;
    }
    if (text) {
      if (env.error && env.error.message) text.textContent = env.error.message;
      else if (env.state === "succeeded") text.textContent = "Finished.";
      else if (p && p.message) text.textContent = p.message;
    }
  }

  function followJob(id, root, onDone) {
    var es = new EventSource("/api/jobs/" + encodeURIComponent(id) + "/stream");
    var parse = function (e) { try { return JSON.parse(e.data); } catch (_) { return null; } };
    es.addEventListener("progress", function (e) { var d = parse(e); if (d) applyJob(root, d); });
    es.addEventListener("state", function (e) { var d = parse(e); if (d) applyJob(root, d); });
    es.addEventListener("done", function (e) {
      es.close();
      var d = parse(e);
      if (d) applyJob(root, d);
      if (onDone) onDone(d);
    });
    es.onerror = function () { if (es.readyState === EventSource.CLOSED && onDone) onDone(null); };
    return es;
  }

  document.querySelectorAll("[data-job-stream]").forEach(function (el) {
    var job = el.querySelector(".job");
    if (!job || terminal[job.dataset.state] || el.hasAttribute("data-finished")) return;
    followJob(el.getAttribute("data-job-stream"), job, function () {
      if (el.hasAttribute("data-reload-on-done")) window.setTimeout(function () { window.location.reload(); }, 400);
    });
  });

  // ---- several uploads ----------------------------------------------------
  // Files chosen together or dropped on the library's form get one row each: they
  // are sent one after another, each row showing its bytes sent, then its reading
  // job (the same stream as a single upload), then its outcome in words.
  function rowSay(li, outcome, text, href, linkText) {
    li.dataset.outcome = outcome;
    var t = li.querySelector(".text");
    t.textContent = text;
    if (href) {
      var a = document.createElement("a");
      a.href = href; a.textContent = linkText;
      t.appendChild(document.createTextNode(" "));
      t.appendChild(a);
    }
  }

  // refusal is the sentence for a file the API refused: the API's own for the
  // upload rate limit (it says when to try again), the dashboard's for the rest.
  function refusal(status, body) {
    if (body && body.code === "rate_limited" && body.detail) return body.detail;
    return describe(status, body).join(" ");
  }

  function uploadRow(list, file) {
    var li = document.createElement("li");
    li.className = "job";
    li.dataset.outcome = "waiting";
    li.innerHTML = '<strong class="name"></strong><progress max="100" value="0"></progress>' +
      '<p class="job-msg"><span class="badge"></span> <span class="text">Waiting to upload</span></p>';
    li.querySelector(".name").textContent = file.name;
    list.appendChild(li);
    return li;
  }

  // ---- the library list ---------------------------------------------------
  // refreshLibrary fetches the page again and swaps in its list of papers, so a
  // paper uploaded here shows up (and then its title, authors and state once it is
  // read) without a reload. The rows ticked for export stay ticked. One fetch at a
  // time; a call during one makes one more after it.
  var refreshing = false, refreshAgain = false;
  function refreshLibrary() {
    var list = document.querySelector("[data-library-list]");
    if (!list || !window.fetch || !window.DOMParser) return;
    if (refreshing) { refreshAgain = true; return; }
    refreshing = true;
    var finish = function () {
      refreshing = false;
      if (refreshAgain) { refreshAgain = false; refreshLibrary(); }
    };
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (resp) { return resp.ok ? resp.text() : null; })
      .then(function (html) {
        var fresh = html && new DOMParser().parseFromString(html, "text/html").querySelector("[data-library-list]");
        if (fresh) {
          var ticked = {};
          list.querySelectorAll("[data-select-row]:checked").forEach(function (c) { ticked[c.value] = true; });
          list.innerHTML = fresh.innerHTML;
          list.querySelectorAll("[data-select-row]").forEach(function (c) { c.checked = !!ticked[c.value]; });
          syncSelectAll();
          list.dispatchEvent(new CustomEvent("library:refreshed", { bubbles: true }));
        }
        finish();
      }, finish);
  }

  // "Select all on this page" ticks every row; a row unticked unticks it again.
  function syncSelectAll() {
    var all = document.querySelector("[data-select-all]"), rows = document.querySelectorAll("[data-select-row]");
    if (!all) return;
    var n = 0;
    rows.forEach(function (c) { if (c.checked) n++; });
    all.checked = rows.length > 0 && n === rows.length;
  }
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t.matches && t.matches("[data-select-all]")) {
      document.querySelectorAll("[data-select-row]").forEach(function (c) { c.checked = t.checked; });
    } else if (t.matches && t.matches("[data-select-row]")) {
      syncSelectAll();
    }
  });

  function sendRow(file, li, next) {
    var bar = li.querySelector("progress"), text = li.querySelector(".text");
    var data = new FormData();
    data.append("file", file);
    var xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/papers/upload");
    xhr.setRequestHeader("Accept", "application/json");
    li.dataset.outcome = "uploading";
    text.textContent = "Uploading";
    xhr.upload.onprogress = function (e) {
      if (e.lengthComputable) { bar.value = Math.round(100 * e.loaded / e.total); text.textContent = bar.value + " % uploaded"; }
    };
    xhr.onerror = function () { rowSay(li, "refused", describe(0, null).join(" ")); next(); };
    xhr.onload = function () {
      var body = null;
      try { body = JSON.parse(xhr.responseText); } catch (_) { /* not JSON */ }
      if ((xhr.status !== 200 && xhr.status !== 202) || !body || !body.paper_id) {
        rowSay(li, "refused", refusal(xhr.status, body));
        next();
        return;
      }
      var paper = "/papers/" + encodeURIComponent(body.paper_id), job = body.job;
      if (!job || !job.id) {
        bar.value = bar.max;
        rowSay(li, "existing", "Already in your library.", paper, "Open its paper");
        refreshLibrary();
        next();
        return;
      }
      li.dataset.outcome = "reading";
      li.dataset.state = job.state;
      applyJob(li, job);
      var end = function (d) {
        if (((d && d.state) || li.dataset.state) === "succeeded") {
          rowSay(li, "ready", "Ready.", paper, "Open its paper");
        } else {
          rowSay(li, "failed", (d && d.error && d.error.message) || "The PDF could not be read.",
            "/jobs/" + encodeURIComponent(job.id), "See why");
        }
        refreshLibrary(); // the row now reads as the PDF says (or is gone)
      };
      refreshLibrary(); // the new row shows up, being read
      if (terminal[job.state]) end(job); else followJob(job.id, li, end);
      next();
    };
    xhr.send(data);
  }

  function uploadMany(list, files) {
    var queue = Array.prototype.slice.call(files), rows = queue.map(function (f) { return uploadRow(list, f); }), i = 0;
    var next = function () { if (i < queue.length) { i++; sendRow(queue[i - 1], rows[i - 1], next); } };
    next();
  }

  document.querySelectorAll("form[data-upload-many]").forEach(function (form) {
    var list = form.parentNode.querySelector("[data-upload-rows]"), zone = form.querySelector("[data-drop-zone]");
    if (!list) return;
    if (zone) zone.hidden = false;
    form.addEventListener("dragover", function (e) { e.preventDefault(); form.classList.add("dropping"); });
    form.addEventListener("dragleave", function () { form.classList.remove("dropping"); });
    form.addEventListener("drop", function (e) {
      e.preventDefault();
      form.classList.remove("dropping");
      if (e.dataTransfer && e.dataTransfer.files.length) uploadMany(list, e.dataTransfer.files);
    });
    form.addEventListener("submit", function (ev) {
      var input = form.querySelector('input[type="file"]');
      if (input.files.length < 2) return; // one file: the single upload below
      ev.preventDefault();
      ev.stopImmediatePropagation();
      uploadMany(list, input.files);
      input.value = "";
    });
  });

  // ---- uploads ------------------------------------------------------------
  document.querySelectorAll("form[data-upload]").forEach(function (form) {
    var box = form.querySelector("[data-upload-progress]");
    var bar = box.querySelector("progress"), msg = box.querySelector("[data-upload-msg]"), label = box.querySelector("label");
    var err = errorBox(form);
    form.addEventListener("submit", function (ev) {
      var input = form.querySelector('input[type="file"]');
      if (!input.files.length) return;
      ev.preventDefault();
      err.hidden = true;
      var data = new FormData();
      data.append("file", input.files[0]);
      var xhr = new XMLHttpRequest();
      xhr.open("POST", "/api/papers/upload");
      xhr.setRequestHeader("Accept", "application/json");
      box.hidden = false;
      label.textContent = "Uploading " + input.files[0].name;
      bar.max = 100; bar.value = 0;
      form.querySelector("button[type=submit]").disabled = true;
      xhr.upload.onprogress = function (e) {
        if (e.lengthComputable) { bar.value = Math.round(100 * e.loaded / e.total); msg.textContent = bar.value + " % uploaded"; }
      };
      xhr.onerror = function () {
        form.querySelector("button[type=submit]").disabled = false;
        showError(err, describe(0, null));
      };
      xhr.onload = function () {
        var body = null;
        try { body = JSON.parse(xhr.responseText); } catch (_) { /* not JSON */ }
        if (xhr.status !== 202 || !body || !body.paper_id) {
          form.querySelector("button[type=submit]").disabled = false;
          box.hidden = true;
          showError(err, describe(xhr.status, body));
          return;
        }
        var job = body.job;
        label.textContent = "Reading the PDF";
        box.classList.add("job");
        box.dataset.state = job.state;
        msg.innerHTML = '<span class="badge"></span> <span class="text"></span>';
        applyJob(box, job);
        var go = function () { window.location.href = "/papers/" + encodeURIComponent(body.paper_id) + "?job=" + encodeURIComponent(job.id); };
        if (terminal[job.state]) { go(); return; }
        followJob(job.id, box, go);
      };
      xhr.send(data);
    });
  });

  // ---- questions with streamed, cited answers -----------------------------
  // readerURL is the reader at a citation: its page, its passage and the cited
  // words' rune offsets in it (web.ReaderURL builds the same address).
  function readerURL(c) {
    var u = "/papers/" + encodeURIComponent(c.paper_id) + "/read?page=" + Math.max(c.page || 1, 1);
    if (c.chunk_id) {
      u += "&passage=" + encodeURIComponent(c.chunk_id);
      if (c.end > c.start && c.start >= 0) u += "&start=" + c.start + "&end=" + c.end;
    }
    return u;
  }

  function renderAnswer(el, text, cites) {
    var known = {};
    (cites || []).forEach(function (c) { known[c.marker] = c; });
    el.textContent = "";
    var re = /\[(S\d{1,3})\]/g, last = 0, m;
    // While the answer streams its citations are not known yet: number the
    // markers in the order they appear, as the server will ([S4] cited first
    // reads [1]), so a reader never sees the model's marker names.
    var order = {}, next = 1;
    while ((m = re.exec(text)) !== null) {
      if (!order[m[1]]) order[m[1]] = next++;
    }
    re.lastIndex = 0;
    while ((m = re.exec(text)) !== null) {
      el.appendChild(document.createTextNode(text.slice(last, m.index)));
      if (!cites || !cites.length) {
        el.appendChild(document.createTextNode("[" + order[m[1]] + "]"));
      } else if (known[m[1]]) {
        var a = document.createElement("a");
        a.className = "cite"; a.href = readerURL(known[m[1]]); a.textContent = "[" + (known[m[1]].number || m[1]) + "]";
        a.title = (known[m[1]].title || "Untitled paper") + (known[m[1]].page ? ", page " + known[m[1]].page : "");
        el.appendChild(a);
      } else {
        el.appendChild(document.createTextNode(m[0]));
      }
      last = re.lastIndex;
    }
    el.appendChild(document.createTextNode(text.slice(last)));
  }

  function renderSources(list, heading, cites) {
    list.textContent = "";
    heading.hidden = !cites.length;
    cites.forEach(function (c) {
      var li = document.createElement("li");
      li.id = "cite-" + c.marker;
      var mk = document.createElement("span");
      mk.className = "marker"; mk.textContent = "[" + (c.number || c.marker) + "] ";
      var a = document.createElement("a");
      a.href = readerURL(c); a.textContent = (c.title || "Untitled paper") + (c.page ? ", page " + c.page : "");
      li.appendChild(mk); li.appendChild(a);
      li.appendChild(document.createTextNode(c.section ? " (" + c.section + ") · " : " · "));
      var paper = document.createElement("a");
      paper.className = "meta"; paper.href = "/papers/" + encodeURIComponent(c.paper_id); paper.textContent = "paper";
      li.appendChild(paper);
      if (c.verified === false) {
        var badge = document.createElement("span");
        badge.className = "badge unverified"; badge.textContent = "unverified";
        badge.title = "A sentence citing this passage is not found in it word for word: a paraphrase, to check against the paper";
        li.appendChild(document.createTextNode(" ")); li.appendChild(badge);
      }
      list.appendChild(li);
    });
  }

  // fallbackText is the note of an answer the builtin method gave because the
  // assigned model failed (ask.go, fallback.Text, says the same).
  // fallbackText is the API's sentence on an assigned model that failed.
  function fallbackText(f) {
    return (f && f.message) || "The model assigned to answers failed, so the builtin extractive method answered.";
  }

  // readEvents parses a text/event-stream body and calls onEvent(name, data).
  async function readEvents(resp, onEvent) {
    var reader = resp.body.getReader(), dec = new TextDecoder(), buf = "";
    for (;;) {
      var r = await reader.read();
      if (r.done) break;
      buf += dec.decode(r.value, { stream: true }).replace(/\r\n?/g, "\n");
      var i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        var block = buf.slice(0, i); buf = buf.slice(i + 2);
        var name = "message", data = [];
        block.split("\n").forEach(function (line) {
          if (line.startsWith(":")) return;
          var c = line.indexOf(":"), field = c < 0 ? line : line.slice(0, c), val = c < 0 ? "" : line.slice(c + 1).replace(/^ /, "");
          if (field === "event") name = val; else if (field === "data") data.push(val);
        });
        if (data.length) onEvent(name, data.join("\n"));
      }
    }
  }

  document.querySelectorAll("form[data-ask]").forEach(function (form) {
    var live = form.parentNode.querySelector("[data-answer]");
    if (!live) return;
    var textEl = live.querySelector("[data-answer-text]"), list = live.querySelector("[data-answer-sources]"),
        heading = live.querySelector("[data-answer-sources-h]"), meta = live.querySelector("[data-answer-meta]"),
        err = live.querySelector("[data-answer-error]"), button = form.querySelector("button[type=submit]"),
        fell = live.querySelector("[data-answer-fallback]");
    form.addEventListener("submit", async function (ev) {
      var fd = new FormData(form), question = (fd.get("question") || "").trim();
      if (!question) return;
      ev.preventDefault();
      var body = { question: question, scope: form.dataset.scope || fd.get("scope") || "library" };
      if (form.dataset.paperId) body.paper_ids = [form.dataset.paperId];
      if (body.scope === "project") body.project_id = fd.get("project_id");
      form.parentNode.querySelectorAll(".answer:not(.live)").forEach(function (old) { old.remove(); });
      live.hidden = false; err.hidden = true; fell.hidden = true; meta.textContent = ""; list.textContent = ""; heading.hidden = true;
      textEl.textContent = ""; live.setAttribute("aria-busy", "true"); button.disabled = true;
      var text = "", cites = [];
      try {
        var resp = await fetch("/api/rag/ask", {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
          body: JSON.stringify(body)
        });
        if (!resp.ok) {
          var eb = null;
          try { eb = await resp.json(); } catch (_) { /* not JSON */ }
          showError(err, describe(resp.status, eb));
          return;
        }
        await readEvents(resp, function (name, data) {
          var d; try { d = JSON.parse(data); } catch (_) { return; }
          if (name === "token") { text += d.text || ""; renderAnswer(textEl, text, cites); }
          // The assigned model failed after its text began: withdraw it; the
          // builtin answer follows, and done says why.
          else if (name === "reset") { text = ""; cites = []; renderAnswer(textEl, text, cites); }
          else if (name === "citations") { cites = d.citations || []; renderAnswer(textEl, text, cites); renderSources(list, heading, cites); }
          else if (name === "error") { showError(err, [d.message || "The answer could not be finished.", "Try again, or ask in other words."]); }
          else if (name === "done") {
            if (!text) textEl.textContent = "No answer was found in the passages searched.";
            var fb = d.fallback;
            if (fb) { fell.querySelector("p").textContent = fallbackText(fb); fell.hidden = false; }
            meta.textContent = fb ? "" : d.method === "extractive"
              ? "Quoted from the papers by the builtin extractive method: no language model wrote this answer."
              : d.method ? "Written by the model " + (d.model || "assigned to answers") + " from the passages cited." : "";
            live.dataset.done = "true";
          }
        });
      } catch (e) {
        showError(err, describe(0, null));
      } finally {
        live.removeAttribute("aria-busy"); button.disabled = false;
      }
    });
  });

  // ---- review: Space shows the answer, then keys 1-4 answer; U undoes -------
  // The rating buttons sit inside the answer's disclosure, so they show only
  // once the answer does, with or without this script. A page brought back from
  // the browser's cache (the back button after a rating) is fetched again, so it
  // shows the queue as it is and the undo, never the rated card to rate twice.
  window.addEventListener("pageshow", function (e) {
    if (e.persisted && document.querySelector("[data-review], [data-undo], [data-next-due]")) window.location.reload();
  });
  var ratings = document.querySelector("[data-ratings]"), undo = document.querySelector("form[data-undo]");
  var reveal = document.querySelector("[data-reveal]");
  if (ratings || undo) {
    var started = Date.now();
    if (ratings) ratings.addEventListener("submit", function () {
      var d = ratings.querySelector("[data-duration]");
      if (d) d.value = String(Date.now() - started);
    });
    document.addEventListener("keydown", function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      var t = e.target.tagName;
      if (t === "INPUT" || t === "TEXTAREA" || t === "SELECT") return;
      if (e.key === " " && reveal && !reveal.open && t !== "BUTTON" && t !== "SUMMARY") {
        e.preventDefault(); reveal.open = true;
        var first = ratings && ratings.querySelector("[data-key]");
        if (first) first.focus({ preventScroll: true });
        return;
      }
      if ((e.key === "u" || e.key === "U") && undo) { e.preventDefault(); undo.requestSubmit(); return; }
      if (!ratings || !reveal || !reveal.open) return; // no rating before the answer is shown
      var b = ratings.querySelector('[data-key="' + e.key + '"]');
      if (b) { e.preventDefault(); b.click(); }
    });
  }
  // Only cards on a learning step remain: show the next when its step is over.
  var waiting = document.querySelector("[data-next-due]");
  if (waiting) {
    var ms = parseInt(waiting.dataset.waitMs, 10);
    if (ms >= 0 && ms < 24 * 3600 * 1000) setTimeout(function () { window.location.reload(); }, ms + 500);
  }

  // ---- time zone names ----------------------------------------------------
  // The profile's time zone field offers the tz database's names (zones.txt,
  // fetched once and cached), so a city typed finds its zone.
  document.querySelectorAll("datalist[data-zones]").forEach(function (list) {
    fetch(list.dataset.zones, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (text) {
        text.split("\n").forEach(function (name) {
          if (!name) return;
          var o = document.createElement("option");
          o.value = name;
          list.appendChild(o);
        });
        list.dataset.loaded = "";
      })
      .catch(function () { /* the field still takes a typed name */ });
  });

  // ---- Pulse: today's deck ------------------------------------------------
  // The rating buttons post to the API in place (the forms post to the
  // dashboard without this script), and the keys act on the current card:
  // j/k move, u up, d down, s save, x dismiss, o open, ? help.
  var deck = document.querySelector("[data-pulse-deck]");
  if (deck) {
    var cards = Array.prototype.slice.call(deck.querySelectorAll("[data-card]"));
    var help = document.querySelector("[data-deck-help]"), helpToggle = document.querySelector("[data-deck-help-toggle]");
    var current = -1;
    var select = function (i, scroll) {
      if (!cards.length) return;
      i = Math.max(0, Math.min(cards.length - 1, i));
      if (current >= 0) cards[current].classList.remove("current");
      current = i;
      cards[i].classList.add("current");
      deck.dataset.current = cards[i].dataset.card;
      if (scroll) { cards[i].focus({ preventScroll: true }); cards[i].scrollIntoView({ block: "nearest" }); }
    };
    var markRated = function (card, button) {
      var action = button.dataset.action;
      card.dataset.rated = action;
      card.className = card.className.replace(/\brated(-\w+)?\b/g, "").trim() + " rated rated-" + action;
      card.querySelectorAll("[data-action]").forEach(function (b) { b.removeAttribute("aria-pressed"); });
      button.setAttribute("aria-pressed", "true");
      card.querySelector("[data-card-status]").textContent = button.dataset.done || "";
    };
    var rate = function (paperID, action) {
      return fetch("/api/pulse/rate", {
        method: "POST", credentials: "same-origin", keepalive: true,
        headers: { "Content-Type": "application/json", "Accept": "application/json" },
        body: JSON.stringify({ paper_id: paperID, action: action })
      });
    };
    cards.forEach(function (card, i) {
      var err = errorBox(card);
      card.addEventListener("click", function () { if (current !== i) select(i, false); });
      card.querySelectorAll("form[data-rate]").forEach(function (form) {
        form.addEventListener("submit", function (ev) {
          ev.preventDefault();
          var button = form.querySelector("[data-action]");
          err.hidden = true;
          button.disabled = true;
          rate(card.dataset.card, button.dataset.action).then(function (resp) {
            if (resp.ok) { markRated(card, button); return; }
            return resp.json().catch(function () { return null; }).then(function (body) { showError(err, describe(resp.status, body)); });
          }, function () { showError(err, describe(0, null)); })
            .then(function () { button.disabled = false; });
        });
      });
      var link = card.querySelector("[data-open]");
      if (link) link.addEventListener("click", function () { rate(card.dataset.card, "open").catch(function () {}); });
    });
    var keys = { u: "up", d: "down", s: "save", x: "dismiss" };
    var toggleHelp = function (show) {
      if (!help) return;
      help.hidden = show === undefined ? !help.hidden : !show;
      if (helpToggle) helpToggle.setAttribute("aria-expanded", String(!help.hidden));
      if (!help.hidden) help.focus({ preventScroll: true });
      else if (current >= 0) cards[current].focus({ preventScroll: true });
    };
    var keysLine = document.querySelector("[data-deck-keys]");
    if (keysLine) keysLine.hidden = false; // the keys work only with this script
    if (helpToggle) helpToggle.addEventListener("click", function () { toggleHelp(); });
    if (cards.length) select(0, false);
    document.addEventListener("keydown", function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      var t = e.target.tagName;
      if (t === "INPUT" || t === "TEXTAREA" || t === "SELECT") return;
      if (e.key === "?") { e.preventDefault(); toggleHelp(); return; }
      if (e.key === "Escape" && help && !help.hidden) { toggleHelp(false); return; }
      if (!cards.length) return;
      if (e.key === "j") { e.preventDefault(); select(current + 1, true); return; }
      if (e.key === "k") { e.preventDefault(); select(current - 1, true); return; }
      var card = cards[current];
      if (e.key === "o") {
        var a = card.querySelector("[data-open]");
        if (a) { e.preventDefault(); a.click(); }
        return;
      }
      var action = keys[e.key];
      if (!action) return;
      var b = card.querySelector('[data-action="' + action + '"]');
      if (b) { e.preventDefault(); b.click(); }
    });
  }

  // ---- Pulse: weights -----------------------------------------------------
  // Each weight's slider follows its number, and the number its slider.
  document.querySelectorAll("[data-weight-range]").forEach(function (range) {
    var num = document.getElementById(range.dataset.weightRange);
    if (!num) return;
    range.hidden = false;
    range.addEventListener("input", function () { num.value = range.value; });
    num.addEventListener("input", function () { if (num.value !== "" && !isNaN(num.value)) range.value = num.value; });
  });

  // ---- confirmations and focus --------------------------------------------
  document.querySelectorAll("form[data-confirm]").forEach(function (f) {
    f.addEventListener("submit", function (e) { if (!window.confirm(f.dataset.confirm)) e.preventDefault(); });
  });
  var banner = document.getElementById("error");
  if (banner) banner.focus();
})();
