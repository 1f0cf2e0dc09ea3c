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

  function eventLink(seq) { return link('events', 'event-' + seq, fill(T['goto.event'], { seq: seq })); }

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
    var ol = clear(document.getElementById('history'));
    st.history.forEach(function (m) {
      var li = h('li', { class: 'msg role-' + m.role + (m.pending ? ' pending' : ''), id: m.pending ? 'msg-pending' : 'msg-' + m.seq },
        h('span', { class: 'role' }, m.role === 'toolResult' ? 'tool' : m.role));
      var body = h('div', { class: 'body' });
      m.blocks.forEach(function (b) { body.appendChild(h('div', { class: 'block ' + b.kind }, b.text)); });
      li.appendChild(body);
      li.appendChild(m.pending ? h('span', { class: 'badge' }, T.pending) : eventLink(m.seq));
      ol.appendChild(li);
    });
  }

  function renderEvents(st) {
    var box = clear(document.getElementById('events'));
    data.events.forEach(function (e) {
      var s = st.states[e.seq];
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
      var details = h('details', { open: e.focus ? true : null }, h('summary', null, T.payload), h('pre', null, e.payload));
      box.appendChild(h('article', { id: 'event-' + e.seq, class: 'event state-' + s + (e.focus ? ' focus' : '') + ' actor-' + e.actor },
        head, h('p', { class: 'summary' }, e.summary), links, details));
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
      if (r.section !== section) {
        section = r.section;
        table.appendChild(h('tr', { class: 'section' }, h('th', { colspan: '4' }, section)));
      }
      var mark = i === data.compare.first ? '▶' : (r.differs ? '≠' : '');
      table.appendChild(h('tr', { id: 'row-' + (i + 1), class: (i === data.compare.first ? 'first ' : '') + (r.differs ? 'differs' : '') },
        h('td', { class: 'mark' }, mark), h('td', { class: 'num' }, String(i + 1)),
        h('td', null, h('code', null, r.learner)), h('td', null, h('code', null, r.reference))));
    });
  }

  function render() {
    var st = stages[state.stage];
    renderStages();
    renderHistory(st);
    renderEvents(st);
    renderDuties(st);
  }

  function setStage(i) {
    state.stage = Math.max(0, Math.min(stages.length - 1, i));
    render();
  }

  function setView(v) {
    state.view = v;
    ['history', 'events', 'duties'].forEach(function (name) {
      document.getElementById('view-' + name).hidden = name !== v;
      var tab = document.getElementById('tab-' + name);
      tab.setAttribute('aria-selected', name === v ? 'true' : 'false');
      tab.classList.toggle('active', name === v);
    });
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
    tab.addEventListener('click', function () { setView(tab.getAttribute('data-view')); });
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
      case '1': setView('history'); break;
      case '2': setView('events'); break;
      case '3': setView('duties'); break;
      default: return;
    }
    ev.preventDefault();
  });

  renderCompare();
  setView('history');
  setStage(0);
  document.body.setAttribute('data-ready', 'true');
}());
