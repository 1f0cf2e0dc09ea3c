// course serve --follow: draws the round trips the server pushes on /api/follow as the log
// grows (internal/serve/follow.go computes them; this only draws). One row per tool call.
(function () {
  'use strict';

  var box = document.getElementById('live-calls');
  if (!box || !window.EventSource) { return; }
  var T = JSON.parse(document.getElementById('view-data').textContent).texts;
  var status = document.getElementById('live-status');
  var earlierNote = document.getElementById('live-earlier');
  var MAX_ROWS = 100;
  var earlier = 0;

  function fill(text, vars) {
    return text.replace(/\{(\w+)\}/g, function (_, k) { return k in vars ? String(vars[k]) : '{' + k + '}'; });
  }

  function h(tag, attrs) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (attrs[k] !== null && attrs[k] !== undefined) { el.setAttribute(k, attrs[k]); }
    });
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) { continue; }
      el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return el;
  }

  function cut(n) { return n ? fill(T['live.cut'], { n: n }) : ''; }

  function row(r) {
    var steps = h('ol', { class: 'steps' });
    for (var i = 1; i <= 6; i++) {
      steps.appendChild(h('li', { class: i <= r.stage ? 'reached' : null, title: T['live.step' + i] }, String(i) + ' ' + T['live.step' + i]));
    }
    return h('li', { id: 'live-' + r.key, class: 'round stage-' + r.stage, 'data-stage': String(r.stage) },
      h('span', { class: 'name' }, r.name + ' · ' + r.callId), steps,
      h('p', { class: 'args' }, r.args + cut(r.argsCut)),
      h('span', { class: 'state' }, (r.isError ? T['live.error'] + ' · ' : '') + fill(T['live.state' + r.stage], r)),
      r.seq >= 0 ? h('a', { class: 'open', href: '/?call=' + r.seq }, T['live.open']) : null,
      r.result >= 0 ? h('p', { class: 'output' + (r.isError ? ' error' : '') }, r.output + cut(r.outputCut)) : null);
  }

  function showEarlier() {
    earlierNote.hidden = earlier === 0;
    earlierNote.textContent = earlier ? fill(T['live.earlier'], { n: earlier }) : '';
  }

  function upsert(r) {
    var old = document.getElementById('live-' + r.key);
    if (old) { box.replaceChild(row(r), old); return; }
    box.appendChild(row(r));
    while (box.children.length > MAX_ROWS) { box.removeChild(box.firstChild); earlier++; }
  }

  function stopped(text) {
    status.textContent = T['live.stopped'] + text;
    status.classList.add('stopped');
  }

  var source = new EventSource('/api/follow');
  source.addEventListener('start', function () {
    // A stream (re)starts from the log's start: what was drawn is drawn again.
    while (box.firstChild) { box.removeChild(box.firstChild); }
    earlier = 0;
    showEarlier();
    status.classList.remove('stopped');
    status.textContent = T['live.none'];
  });
  source.addEventListener('rounds', function (ev) {
    var push = JSON.parse(ev.data);
    earlier += push.earlier || 0;
    push.rounds.forEach(upsert);
    showEarlier();
    status.textContent = fill(T['live.events'], { n: push.events });
    document.body.setAttribute('data-live-events', String(push.events));
  });
  source.addEventListener('problem', function (ev) {
    var p = JSON.parse(ev.data);
    source.close();
    stopped(p.what + ' ' + p.repair);
  });
  source.addEventListener('changed', function (ev) {
    source.close();
    stopped(JSON.parse(ev.data));
  });
  source.addEventListener('error', function () {
    if (source.readyState !== EventSource.CLOSED) { status.textContent = T['live.lost']; }
  });
}());
