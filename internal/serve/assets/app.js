// course serve: draws the View that the Go server computed (internal/serve). Nothing here
// interprets the log; every stage, state and history comes from the JSON in #view-data.
(function () {
  'use strict';

  var data = JSON.parse(document.getElementById('view-data').textContent);
  var T = data.texts;
  var stages = data.stages;
  var state = { stage: 0, view: 'history', timer: null };
  var PLAY_MS = 1400;

  function fill(text, vars) {
    return text.replace(/\{(\w+)\}/g, function (_, k) { return k in vars ? String(vars[k]) : '{' + k + '}'; });
  }

  // h builds an element: h('p', {class: 'x'}, 'text', child, ...).
  function h(tag, attrs) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (attrs[k] === null || attrs[k] === undefined || attrs[k] === false) { return; }
      el.setAttribute(k, attrs[k] === true ? '' : attrs[k]);
    });
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) { continue; }
      el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return el;
  }

  function clear(el) { while (el.firstChild) { el.removeChild(el.firstChild); } return el; }

  function actorName(id) {
    for (var i = 0; i < data.actors.length; i++) {
      if (data.actors[i].id === id) { return data.actors[i].name; }
    }
    return id;
  }

  // A link to another view's entry: a click switches the view and highlights the target.
  function link(view, target, text) {
    return h('a', { href: '#' + target, class: 'goto', 'data-view': view, 'data-target': target }, text);
  }

  // The seqs of the events the page shows: a link to another event would lead nowhere.
  var shownSeq = {};
  data.events.forEach(function (e) { shownSeq[e.seq] = true; });

  function eventLink(seq) {
    var text = fill(T['goto.event'], { seq: seq });
    return shownSeq[seq] ? link('events', 'event-' + seq, text) : h('span', { class: 'unshown' }, text);
  }

  // A text cut by the server, with how much was left out.
  function cutNote(n) { return n ? h('span', { class: 'cut' }, ' ' + fill(T.cut, { n: n })) : null; }

  function renderStages() {
    var ol = clear(document.getElementById('stages'));
    stages.forEach(function (st, i) {
      var cls = 'stage actor-' + st.actor + (i < state.stage ? ' done' : '') + (st.missing ? ' missing' : '');
      var b = h('button', { type: 'button', id: 'stage-' + st.n, class: cls, 'aria-current': i === state.stage ? 'step' : null },
        h('span', { class: 'num' }, (st.n < 10 ? '0' : '') + st.n), h('span', { class: 'name' }, st.title));
      b.addEventListener('click', function () { stop(); setStage(i); });
      ol.appendChild(h('li', null, b));
    });
    var st = stages[state.stage];
    document.getElementById('stage-counter').textContent = fill(T['stage.of'], { n: state.stage + 1, total: stages.length });
    document.getElementById('stage-title').textContent = st.title + (st.missing ? ' · ' + T.missing : '');
    document.getElementById('stage-caption').textContent = st.caption;
    document.getElementById('prev').disabled = state.stage === 0;
    document.getElementById('next').disabled = state.stage === stages.length - 1;
  }

  function renderHistory(st) {
    document.getElementById('history-note').textContent = st.historyNote;
    // After a compaction its summary stays first: the messages left out come after it.
    var summaryFirst = st.history.length > 0 && st.history[0].summary;
    var hidden = document.getElementById('history-hidden');
    hidden.hidden = !st.historyHidden || summaryFirst;
    hidden.textContent = st.historyHidden && !summaryFirst ? fill(T['hidden.history'], { n: st.historyHidden }) : '';
    var ol = clear(document.getElementById('history'));
    st.history.forEach(function (m, i) {
      var li = h('li', { class: 'msg role-' + m.role + (m.pending ? ' pending' : '') + (m.summary ? ' summary' : ''), id: m.pending ? 'msg-pending' : 'msg-' + m.seq },
        h('span', { class: 'role' }, m.role === 'toolResult' ? 'tool' : m.role));
      var body = h('div', { class: 'body' }, m.summary ? h('p', { class: 'summary-label' }, m.label) : null);
      m.blocks.forEach(function (b) { body.appendChild(h('div', { class: 'block ' + b.kind }, b.text, cutNote(b.cut))); });
      if (m.hiddenBlocks) { body.appendChild(h('div', { class: 'cut' }, fill(T['hidden.blocks'], { n: m.hiddenBlocks }))); }
      li.appendChild(body);
      li.appendChild(m.pending ? h('span', { class: 'badge' }, T.pending) : eventLink(m.seq));
      ol.appendChild(li);
      if (i === 0 && summaryFirst && st.historyHidden) {
        ol.appendChild(h('li', { class: 'gap', id: 'history-gap' }, fill(T['hidden.history'], { n: st.historyHidden })));
      }
    });
  }

  // A list of a compaction's files, with how many were left out.
  function fileNames(names, hidden) {
    return h('span', null, names.length ? names.join(', ') : T.none,
      hidden ? ' ' + fill(T['compaction.more'], { n: hidden }) : null);
  }

  // The fields of a compaction event, under its summary line.
  function compactionDetails(c) {
    var dl = h('dl', { class: 'compaction' });
    function row(label, value) { dl.appendChild(h('dt', null, label)); dl.appendChild(h('dd', null, value)); }
    row(T['compaction.reason'], c.reason);
    row(T['compaction.tokens'], String(c.tokensBefore));
    row(T['compaction.kept'], eventLink(c.firstKeptSeq));
    row(T['compaction.summary'], h('span', { class: 'text' }, c.summary, cutNote(c.summaryCut)));
    row(T['compaction.read'], fileNames(c.readFiles, c.readHidden));
    row(T['compaction.changed'], fileNames(c.changedFiles, c.changedHidden));
    return dl;
  }

  function gap(n, text) { return h('p', { class: 'gap' }, fill(text, { n: n })); }

  function renderEvents(st) {
    var box = clear(document.getElementById('events'));
    data.events.forEach(function (e, i) {
      var s = st.states[i];
      if (e.hiddenBefore) { box.appendChild(gap(e.hiddenBefore, T['hidden.events'])); }
      var head = h('header', null,
        h('span', { class: 'seq' }, String(e.seq)),
        h('span', { class: 'type' }, e.type),
        e.focus ? h('span', { class: 'badge focus' }, T['focus.' + e.focus]) : null,
        e.firstDifference ? h('span', { class: 'badge firstdiff' }, '▶ ' + T.firstdiff) : null,
        e.ignorable ? h('span', { class: 'badge' }, T.ignorable) : null,
        h('span', { class: 'state' }, T['state.' + s]));
      var links = h('p', { class: 'links' },
        link('duties', 'actor-' + e.actor, fill(T['goto.actor'], { actor: actorName(e.actor) })),
        h('span', { class: 'line' }, fill(T.line, { line: e.line })));
      (e.sourceEventSeqs || []).forEach(function (src) {
        links.appendChild(h('span', null, T.source + ' '));
        links.appendChild(eventLink(src));
      });
      var details = h('details', { open: e.focus && e.focus !== 'sibling' ? true : null }, h('summary', null, T.payload),
        h('pre', null, e.payload, cutNote(e.payloadCut)));
      box.appendChild(h('article', { id: 'event-' + e.seq, class: 'event state-' + s + (e.focus ? ' focus' : '') + ' actor-' + e.actor },
        head, h('p', { class: 'summary' }, e.summary), e.compaction ? compactionDetails(e.compaction) : null, links, details));
    });
    if (data.hiddenAfter) { box.appendChild(gap(data.hiddenAfter, T['hidden.events'])); }
  }

  function batchState(c, st) {
    if (c.result >= 0 && c.result < st.committed) { return 'committed'; }
    if (c.start >= 0 && c.start < st.committed) { return 'started'; }
    if (c.seq < st.committed) { return 'registered'; }
    return 'planned';
  }

  // The calls of the chosen call's batch at this stage, and the commit cursor among them.
  function renderBatch(st) {
    if (!data.batch) { return; }
    document.getElementById('batch-cursor').textContent = fill(T['batch.cursor'], { n: st.cursor, total: data.batchSize });
    var ol = clear(document.getElementById('batch-calls'));
    var cursorDrawn = false;
    data.batch.forEach(function (c) {
      var state = batchState(c, st);
      if (!cursorDrawn && state !== 'committed') {
        ol.appendChild(h('li', { class: 'cursor-mark', id: 'batch-cursor-mark' }, '▸ ' + fill(T['batch.cursor'], { n: st.cursor, total: data.batchSize })));
        cursorDrawn = true;
      }
      ol.appendChild(h('li', { id: 'batch-' + c.seq, class: 'batch-call state-' + state + (c.chosen ? ' chosen' : '') },
        h('span', { class: 'name' }, c.name + ' · ' + c.callId), ' ', eventLink(c.seq), ' ',
        h('span', { class: 'state' }, T['batch.' + state]),
        c.chosen ? ' ' : null, c.chosen ? h('span', { class: 'badge' }, T['batch.chosen']) : null));
    });
  }

  function renderDuties(st) {
    var box = clear(document.getElementById('actors'));
    data.actors.forEach(function (a) {
      var active = a.id === st.actor;
      var card = h('article', { id: 'actor-' + a.id, class: 'actor actor-' + a.id + (active ? ' active' : '') },
        h('h3', null, a.name, active ? h('span', { class: 'badge' }, T.active) : null),
        h('p', { class: 'about' }, a.about));
      if (active) { card.appendChild(h('p', { class: 'duty' }, T.duty + st.duty)); }
      var evs = h('p', { class: 'owns' }, T['actor.events'] + ' ');
      if (a.events.length === 0) { evs.appendChild(document.createTextNode(T.none)); }
      a.events.forEach(function (seq) { evs.appendChild(eventLink(seq)); evs.appendChild(document.createTextNode(' ')); });
      card.appendChild(evs);
      box.appendChild(card);
    });
  }

  function renderCompare() {
    if (!data.compare) { return; }
    document.getElementById('compare-summary').textContent = data.compare.summary;
    var table = clear(document.getElementById('compare-rows'));
    table.appendChild(h('tr', null, h('th', null, ''), h('th', null, '#'), h('th', null, T.learner), h('th', null, T.reference)));
    var section = '';
    data.compare.rows.forEach(function (r, i) {
      if (r.hiddenBefore) {
        table.appendChild(h('tr', { class: 'gap' }, h('td', { colspan: '4' }, fill(T['hidden.rows'], { n: r.hiddenBefore }))));
      }
      if (r.section !== section) {
        section = r.section;
        table.appendChild(h('tr', { class: 'section' }, h('th', { colspan: '4' }, section)));
      }
      var mark = i === data.compare.first ? '▶' : (r.differs ? '≠' : '');
      table.appendChild(h('tr', { id: 'row-' + r.n, class: (i === data.compare.first ? 'first ' : '') + (r.differs ? 'differs' : '') },
        h('td', { class: 'mark' }, mark), h('td', { class: 'num' }, String(r.n)),
        h('td', null, h('code', null, r.learner)), h('td', null, h('code', null, r.reference))));
    });
  }

  function render() {
    var st = stages[state.stage];
    renderStages();
    renderBatch(st);
    renderHistory(st);
    renderEvents(st);
    renderDuties(st);
  }

  // Brings the chosen call into view in the current view: its event among the payloads, its
  // result (or the entry waiting for it) in the history.
  function showChosen() {
    if (!data.call) { return; }
    var el = null;
    if (state.view === 'events') {
      el = document.getElementById('event-' + data.call.seq);
    } else if (state.view === 'history') {
      var items = document.querySelectorAll('#history .msg');
      el = items.length ? items[items.length - 1] : null;
    }
    if (el) { el.scrollIntoView({ block: 'center' }); }
  }

  function setStage(i) {
    state.stage = Math.max(0, Math.min(stages.length - 1, i));
    render();
  }

  function setView(v, scroll) {
    state.view = v;
    ['history', 'events', 'duties'].forEach(function (name) {
      document.getElementById('view-' + name).hidden = name !== v;
      var tab = document.getElementById('tab-' + name);
      tab.setAttribute('aria-selected', name === v ? 'true' : 'false');
      tab.classList.toggle('active', name === v);
    });
    if (scroll) { showChosen(); }
  }

  function playButton() {
    var b = document.getElementById('play');
    b.textContent = state.timer ? '❚❚ ' + b.getAttribute('data-pause') : '▶ ' + b.getAttribute('data-play');
    b.setAttribute('aria-pressed', state.timer ? 'true' : 'false');
  }

  function stop() {
    if (state.timer) { clearInterval(state.timer); state.timer = null; playButton(); }
  }

  function play() {
    if (state.timer) { stop(); return; }
    if (state.stage === stages.length - 1) { setStage(0); }
    state.timer = setInterval(function () {
      if (state.stage >= stages.length - 1) { stop(); return; }
      setStage(state.stage + 1);
      if (state.stage === stages.length - 1) { stop(); }
    }, PLAY_MS);
    playButton();
  }

  document.getElementById('prev').addEventListener('click', function () { stop(); setStage(state.stage - 1); });
  document.getElementById('next').addEventListener('click', function () { stop(); setStage(state.stage + 1); });
  document.getElementById('play').addEventListener('click', play);
  document.querySelectorAll('.tabs [data-view]').forEach(function (tab) {
    tab.addEventListener('click', function () { setView(tab.getAttribute('data-view'), true); });
  });
  var select = document.getElementById('call');
  if (select) {
    select.addEventListener('change', function () { window.location.search = '?call=' + encodeURIComponent(select.value); });
  }

  // Links between views: switch the view, then mark and show the target.
  document.addEventListener('click', function (ev) {
    var a = ev.target.closest ? ev.target.closest('a.goto') : null;
    if (!a) { return; }
    ev.preventDefault();
    setView(a.getAttribute('data-view'));
    document.querySelectorAll('.target').forEach(function (el) { el.classList.remove('target'); });
    var target = document.getElementById(a.getAttribute('data-target'));
    if (target) {
      target.classList.add('target');
      if (target.tagName === 'ARTICLE') {
        var d = target.querySelector('details');
        if (d) { d.open = true; }
      }
      target.scrollIntoView({ block: 'nearest' });
    }
  });

  document.addEventListener('keydown', function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
    var tag = ev.target && ev.target.tagName;
    if (tag === 'SELECT' || tag === 'INPUT' || tag === 'TEXTAREA') { return; }
    switch (ev.key) {
      case 'ArrowRight': stop(); setStage(state.stage + 1); break;
      case 'ArrowLeft': stop(); setStage(state.stage - 1); break;
      case 'Home': stop(); setStage(0); break;
      case 'End': stop(); setStage(stages.length - 1); break;
      case ' ': play(); break;
      case '1': setView('history', true); break;
      case '2': setView('events', true); break;
      case '3': setView('duties', true); break;
      default: return;
    }
    ev.preventDefault();
  });

  // Counts of what the server left out of a long log.
  function setCount(id, text) {
    var el = document.getElementById(id);
    if (el) { el.textContent = text; }
  }
  setCount('calls-count', fill(T['calls.count'], { n: data.callCount }));
  setCount('events-count', fill(T[data.call ? 'events.count' : 'events.count.whole'], { shown: data.events.length, total: data.eventCount }));
  if (data.notice) { setCount('notice-shown', fill(T[data.eventCount === 1 ? 'notice.shown.one' : 'notice.shown'], { n: data.eventCount })); }
  if (data.batch) {
    var asker = data.events.filter(function (e) { return e.focus === 'assistant'; });
    var about = fill(T['batch.about'], { n: data.batchSize, seq: asker.length ? asker[0].seq : '?' });
    if (data.batch.length < data.batchSize) { about += ' ' + fill(T['batch.more'], { shown: data.batch.length }); }
    setCount('batch-about', about);
  }

  renderCompare();
  setView('history');
  setStage(0);
  if (/[?&]call=/.test(window.location.search)) { showChosen(); }
  document.body.setAttribute('data-ready', 'true');
}());
