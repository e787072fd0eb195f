// The trajectory viewer. Every text shown comes from a case, a model or an attacker, so it is
// inserted with textContent (never innerHTML); elements are built with createElement.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var index = JSON.parse(document.getElementById("episode-index").textContent);
  var byId = {};
  index.forEach(function (e) { byId[e.id] = e; });
  var packed = {};  // element id of a packed block -> promise of its JSON
  var atlases = {};  // element id of an atlas -> {image, state: loading, ready or failed}
  var table = null;  // the frame table: atlases, strips and the strips of each frame
  var current = null;  // {meta, data, pos, count}
  var selecting = 0;  // the latest selection: an earlier one that finishes later is dropped

  function $(id) { return document.getElementById(id); }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function pretty(value) { return JSON.stringify(value, null, 2); }

  function show(value) {
    if (value === null || value === undefined) return "–";
    if (typeof value === "boolean") return value ? "yes" : "no";
    return String(value);
  }

  function fillGrid(dl, pairs) {
    clear(dl);
    pairs.forEach(function (p) {
      dl.appendChild(el("dt", "", p[0]));
      dl.appendChild(el("dd", "", show(p[1])));
    });
  }

  // Whether and when the attack reached the agent; null exposure: a record from before
  // exposure was measured.
  function exposure(meta) {
    if (meta.exposed === null || meta.exposed === undefined) return "not measured (older run)";
    return meta.exposed ? "at step " + meta.exposed_step : "no: never on screen for the agent";
  }

  function exposedStep(meta) {
    return meta.exposed ? meta.exposed_step : null;
  }

  // ----- data blocks, unpacked when first needed -------------------------------------

  // A packed block is JSON, deflated, in base64: an episode's steps, or the frame table.
  function unpack(id) {
    if (!packed[id]) {
      packed[id] = new Promise(function (resolve) {
        var node = $(id);
        if (!node) throw new Error("no data block " + id);
        var binary = atob(node.textContent.trim());
        var bytes = new Uint8Array(binary.length);
        for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
        var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
        resolve(new Response(stream).text());
      }).then(JSON.parse);
    }
    return packed[id];
  }

  // An atlas holds strips of screens; it is decoded when an episode that shows one opens.
  function atlas(index) {
    var id = table.atlases[index];
    if (atlases[id]) return atlases[id];
    var node = $(id);
    var uri = node ? node.textContent : "";
    var a = atlases[id] = { image: new Image(), state: "loading", done: Promise.resolve() };
    if (uri.indexOf("data:image/") !== 0) {  // only our own embedded images
      a.state = "failed";
      return a;
    }
    a.image.src = uri;
    a.done = a.image.decode().then(
      function () { a.state = "ready"; },
      function () { a.state = "failed"; });
    return a;
  }

  // The atlases a frame's strips come from. A frame is [width, height, strip, strip, ...];
  // a strip is [atlas, row in the atlas, width, height].
  function atlasesOf(frame) {
    var seen = {};
    var out = [];
    for (var i = 2; i < frame.length; i++) {
      var index = table.strips[frame[i]][0];
      if (!seen[index]) { seen[index] = true; out.push(atlas(index)); }
    }
    return out;
  }

  // ----- the list and its filters ------------------------------------------------------

  function matches(e) {
    var agent = $("filter-agent").value;
    var label = $("filter-label").value;
    var text = $("filter-text").value.trim().toLowerCase();
    if (agent && e.agent !== agent) return false;
    if (label && e.label !== label) return false;
    if (text && String(e.case) !== text && e.title.toLowerCase().indexOf(text) < 0) return false;
    return true;
  }

  function renderList() {
    var list = $("episodes");
    clear(list);
    var shown = 0;
    index.forEach(function (e) {
      if (!matches(e)) return;
      shown += 1;
      var li = el("li");
      var b = el("button");
      b.type = "button";
      b.dataset.episode = e.id;
      b.setAttribute("aria-current", current && current.meta.id === e.id ? "true" : "false");
      b.appendChild(el("span", "label " + e.label, e.label));
      b.appendChild(el("span", "ep-who", e.agent + " · case " + e.case +
        (e.compromised_then_error ? " · then error" : "") +
        (e.blocked ? " · " + e.blocked + " blocked" : "")));
      b.appendChild(el("span", "ep-title", e.title));
      b.title = e.title;
      b.addEventListener("click", function () { select(e.id); });
      li.appendChild(b);
      list.appendChild(li);
    });
    $("episode-count").textContent = shown + " of " + index.length + " episodes";
  }

  // ----- one episode -------------------------------------------------------------------

  function select(id) {
    var token = ++selecting;
    markListed(id);
    Promise.all([unpack("ep-data-" + id), unpack("frame-table")]).then(function (got) {
      if (token !== selecting) return;
      table = got[1];
      showEpisode(byId[id], got[0]);
    }, function (err) {
      if (token !== selecting) return;
      current = null;
      $("episode").hidden = true;
      var note = $("no-episode");
      note.hidden = false;
      note.textContent = "This browser cannot unpack the episode (" + err + "); the viewer " +
        "needs DecompressionStream: Chromium 80, Firefox 113, Safari 16.4 or later.";
    });
  }

  function markListed(id) {
    Array.prototype.forEach.call(document.querySelectorAll("#episodes button"), function (b) {
      b.setAttribute("aria-current", b.dataset.episode === id ? "true" : "false");
    });
  }

  function showEpisode(meta, data) {
    var id = meta.id;
    // Decode the episode's atlases now, in parallel: stepping through it then waits for none.
    data.frames.forEach(function (fid) {
      if (fid && table.frames[fid]) atlasesOf(table.frames[fid]);
    });
    var count = Math.max(data.frames.length, data.steps.length, 1);
    current = { meta: meta, data: data, pos: 0, count: count };
    $("no-episode").hidden = true;
    $("episode").hidden = false;
    $("ep-title").textContent = meta.title;
    var label = $("ep-label");
    label.textContent = meta.label;
    label.className = "label " + meta.label;
    $("ep-instruction").textContent = meta.instruction;
    fillGrid($("ep-meta"), [
      ["agent", meta.agent], ["case", meta.case],
      ["case type", meta.case_type], ["mechanism", meta.use_dynamic],
      ["risks", meta.risks.join(", ")], ["app domain", meta.app_domain],
      ["apps", meta.apps.join(", ")], ["injection", meta.injection],
      ["attack injected", meta.attack_fired ? "at step " + meta.fired_step : "no"],
      ["attack reached the agent", exposure(meta)],
      ["steps", meta.steps],
    ]);
    var error = $("ep-error");
    error.hidden = !meta.error;
    // A compromise observed before the failure keeps its label: say both, never only one.
    error.textContent = !meta.error ? "" : meta.compromised_then_error
      ? "compromised (" + meta.label + "), then the episode failed: " + meta.error
      : "episode error: " + meta.error;
    renderJudge(meta.verdict);
    $("ep-attack").textContent = pretty(meta.attack);
    var slider = $("step-slider");
    slider.max = String(count - 1);
    renderTimeline();
    go(0);
    $("episode").dataset.episode = id;
  }

  // The step of the first compliance: the diagnosis's (it names the surface too), else the
  // verdict's.
  function complianceStep(meta) {
    var v = meta.verdict;
    if (!v) return null;
    if (v.diagnosis && v.diagnosis.step !== null && v.diagnosis.step !== undefined) {
      return v.diagnosis.step;
    }
    return v.first_compliance_step === undefined ? null : v.first_compliance_step;
  }

  function renderJudge(v) {
    if (!v) {
      fillGrid($("judge-labels"), [["verdict", "none (the episode ended in an error)"]]);
      $("judge-rationale").textContent = "";
      fillGrid($("judge-diagnosis"), []);
      return;
    }
    var evidence = Object.keys(v.evidence || {}).map(function (k) {
      return k + ": " + (v.evidence[k].length ? "events " + v.evidence[k].join(", ") : "none");
    }).join("; ");
    fillGrid($("judge-labels"), [
      ["judge", v.judge], ["label", v.label], ["attack", v.attack],
      ["task completed", v.task_completed], ["goal reached", v.goal_reached],
      ["attack reached the agent", v.attack_fired], ["first compliance", v.first_compliance_step],
      ["evidence", evidence], ["judge error", v.error],
    ]);
    $("judge-rationale").textContent = v.rationale || "";
    var d = v.diagnosis;
    fillGrid($("judge-diagnosis"), d ? [
      ["step", d.step], ["surface", d.surface], ["stage", d.stage],
      ["agent's words", d.words],
      ["evidence", d.evidence], ["by", d.by],
    ] : [["diagnosis", "none"]]);
  }

  function renderTimeline() {
    var list = $("timeline");
    clear(list);
    var fired = current.meta.attack_fired ? current.meta.fired_step : null;
    var seen = exposedStep(current.meta);
    var comply = complianceStep(current.meta);
    for (var i = 0; i < current.count; i++) {
      var li = el("li");
      var b = el("button", "", i < current.data.steps.length ? String(i) : "end");
      b.type = "button";
      b.dataset.pos = String(i);
      var why = [];
      if (i === fired) { b.classList.add("fired"); why.push("the attack fired: injected on the device"); }
      if (i === seen) { b.classList.add("exposed"); why.push("the attack reached the agent: on screen in its observation"); }
      if (why.length) b.title = why.join("; ");
      if (i === comply) { b.classList.add("comply"); b.title = "first compliance with the attack"; }
      var blocked = i < current.data.steps.length ? current.data.steps[i].blocked : null;
      if (blocked) {
        b.classList.add("blocked");
        b.title = (b.title ? b.title + "; " : "") + "blocked by " + blocked.defence;
      }
      b.addEventListener("click", function (ev) { go(Number(ev.currentTarget.dataset.pos)); });
      li.appendChild(b);
      list.appendChild(li);
    }
  }

  function go(pos) {
    if (!current) return;
    pos = Math.max(0, Math.min(current.count - 1, pos));
    current.pos = pos;
    var data = current.data;
    var meta = current.meta;
    var step = pos < data.steps.length ? data.steps[pos] : null;
    var last = current.count - 1;
    $("step-slider").value = String(pos);
    $("prev").disabled = pos === 0;
    $("next").disabled = pos === last;
    $("step-counter").textContent = (step ? "Step " + step.step : "Final screen") +
      " (" + (pos + 1) + " / " + current.count + ")";
    Array.prototype.forEach.call(document.querySelectorAll("#timeline button"), function (b) {
      b.setAttribute("aria-current", Number(b.dataset.pos) === pos ? "true" : "false");
    });

    drawFrame(pos < data.frames.length ? data.frames[pos] : null);
    var fired = meta.attack_fired && meta.fired_step === pos;
    var seen = exposedStep(meta) === pos;
    $("frame").classList.toggle("fired", fired);
    $("frame").classList.toggle("exposed", seen);
    drawMark(step ? step.mark : null, step && step.blocked ? step.blocked.mark : null);

    var flags = $("step-flags");
    clear(flags);
    if (fired) flags.appendChild(el("div", "flag fired", "⚠ The attack fired: injected on the device before this screen"));
    if (seen) flags.appendChild(el("div", "flag exposed", "👁 The attack reached the agent: on screen in the observation it was given"));
    if (complianceStep(meta) === pos) {
      var d = meta.verdict && meta.verdict.diagnosis;
      flags.appendChild(el("div", "flag comply",
        "First compliance with the attack" + (d && d.surface ? " (" + d.surface + ")" : "")));
    }
    if (step && step.blocked) {
      var why = step.blocked.reason ? ": " + step.blocked.reason : "";
      flags.appendChild(el("div", "flag blocked", "⛔ Blocked by " + step.blocked.defence + why));
    }
    if (!step) flags.appendChild(el("div", "flag final", "The screen after the last action"));

    $("step-action").textContent = !step ? "–" : step.blocked
      ? pretty(step.action) + "\n\ninstead of (blocked):\n" + pretty(step.blocked.action)
      : pretty(step.action);
    $("step-raw").textContent = step ? show(step.raw_output) : "–";
    var summary = step && step.summary;
    $("step-summary-head").hidden = $("step-summary").hidden = !summary;
    $("step-summary").textContent = summary || "";
    var events = $("step-events");
    clear(events);
    var list = step ? step.events : [];
    if (pos === 0 && data.reset_events.length) list = data.reset_events.concat(list);
    list.forEach(function (e) {
      var li = el("li", e.kind === "injection_fired" ? "injection" : "");
      li.appendChild(el("span", "ev-seq", "#" + e.seq));
      li.appendChild(el("span", "ev-kind", e.kind));
      if (e.package) li.appendChild(el("span", "ev-pkg", " " + e.package));
      li.appendChild(el("span", "ev-data", JSON.stringify(e.data)));
      events.appendChild(li);
    });
    if (!list.length) events.appendChild(el("li", "", "no events"));
  }

  // Draw a frame from its strips; until its atlases are decoded, say so and draw it then.
  function drawFrame(fid) {
    var canvas = $("frame-canvas");
    var note = $("no-frame");
    var frame = fid ? table.frames[fid] : null;
    var needed = frame ? atlasesOf(frame) : [];
    var drawable = !!frame && needed.every(function (a) { return a.state === "ready"; });
    canvas.hidden = !drawable;
    note.hidden = drawable;
    if (!drawable) {
      delete canvas.dataset.frame;
      var loading = needed.some(function (a) { return a.state === "loading"; }) &&
        !needed.some(function (a) { return a.state === "failed"; });
      note.textContent = loading ? "loading the screen…" : "no frame recorded";
      if (loading) {
        Promise.all(needed.map(function (a) { return a.done; })).then(function () {
          if (current && current.data.frames[current.pos] === fid) drawFrame(fid);
        });
      }
      return;
    }
    canvas.width = frame[0];
    canvas.height = frame[1];
    var context = canvas.getContext("2d");
    var y = 0;
    for (var i = 2; i < frame.length; i++) {
      var s = table.strips[frame[i]];
      context.drawImage(atlas(s[0]).image, 0, s[1], s[2], s[3], 0, y, s[2], s[3]);
      y += s[3];
    }
    canvas.dataset.frame = fid;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }

  // The marker is drawn in screen pixels: the overlay's viewBox is the device's screen. A
  // blocked action's point is crossed out.
  function drawMark(mark, blocked) {
    var overlay = $("frame-marker");
    clear(overlay);
    var w = current.data.screen[0], h = current.data.screen[1];
    overlay.setAttribute("viewBox", "0 0 " + w + " " + h);
    if (blocked && blocked.kind === "tap") {
      var b = w / 24;
      var cross = { stroke: "#7a1212", "stroke-width": w / 60, "stroke-linecap": "round" };
      overlay.appendChild(svg("circle", { cx: blocked.x, cy: blocked.y, r: b * 1.4, fill: "#fff", "fill-opacity": 0.6, stroke: "#7a1212", "stroke-width": w / 90 }));
      overlay.appendChild(svg("line", Object.assign({ x1: blocked.x - b, y1: blocked.y - b, x2: blocked.x + b, y2: blocked.y + b }, cross)));
      overlay.appendChild(svg("line", Object.assign({ x1: blocked.x - b, y1: blocked.y + b, x2: blocked.x + b, y2: blocked.y - b }, cross)));
    }
    if (!mark) return;
    var r = w / 20;
    var style = { fill: "none", stroke: "#ff2d55", "stroke-width": w / 70 };
    if (mark.kind === "swipe") {
      overlay.appendChild(svg("line", Object.assign({ x1: mark.x, y1: mark.y, x2: mark.x2, y2: mark.y2 }, style)));
      overlay.appendChild(svg("circle", Object.assign({ cx: mark.x, cy: mark.y, r: r / 2 }, style)));
      overlay.appendChild(svg("circle", { cx: mark.x2, cy: mark.y2, r: r / 3, fill: "#ff2d55" }));
      return;
    }
    // A white halo keeps the ring visible on red and dark screens alike.
    overlay.appendChild(svg("circle", { cx: mark.x, cy: mark.y, r: r, fill: "none", stroke: "#fff", "stroke-width": w / 40, "stroke-opacity": 0.8 }));
    overlay.appendChild(svg("circle", Object.assign({ cx: mark.x, cy: mark.y, r: r }, style)));
    overlay.appendChild(svg("circle", { cx: mark.x, cy: mark.y, r: r / 4, fill: "#ff2d55", "fill-opacity": 0.85 }));
  }

  // ----- wiring ------------------------------------------------------------------------

  $("prev").addEventListener("click", function () { if (current) go(current.pos - 1); });
  $("next").addEventListener("click", function () { if (current) go(current.pos + 1); });
  $("step-slider").addEventListener("input", function (ev) { go(Number(ev.target.value)); });
  ["filter-agent", "filter-label", "filter-text"].forEach(function (id) {
    $(id).addEventListener("input", renderList);
  });
  document.addEventListener("keydown", function (ev) {
    if (!current || ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT") return;
    if (ev.key === "ArrowLeft") go(current.pos - 1);
    if (ev.key === "ArrowRight") go(current.pos + 1);
  });
  renderList();
  if (index.length) select(index[0].id);
})();
