//# allFunctionsCalledOnLoad
// The side panel (check's incidents, the selected range's statistics, the followed
// task, the critical path with its sentence to quote, the colour key with the Figure 9
// legend) and the hover tooltip. Plain DOM.

import { count, cpuSet, duration, escapeHtml, exactTime, percent, placeText, ranges, seconds } from './format.js';
import { HEAT_CSS, STATES, stateNamed } from './draw.js';

const KIND_COLORS = {
  'work-conservation': '#d9480f',
  'wakeup-placement': '#1c7ed6',
  'kthread-preemption': '#7048e8',
  'migration-cascade': '#0ca678',
  overload: '#868e96',
};

const TABS = [
  ['incidents', 'Incidents'],
  ['selection', 'Selection'],
  ['task', 'Task'],
  ['path', 'Path'],
  ['legend', 'Legend'],
];

/** The critical path's causes, as `schedlens critical-path` names them, with their colours. */
const CAUSES = [
  ['running_ns', 'running', '#317d31'],
  ['scheduler_ns', 'runnable, an allowed core idle (scheduler)', '#e62828'],
  ['pinning_ns', 'runnable, only forbidden cores idle (pinning)', '#f08c00'],
  ['contention_ns', 'runnable, every core busy (contention)', '#99ba36'],
  ['other_task_ns', "on another program's task", '#7048e8'],
  ['blocked_ns', 'blocked, no task waker (interrupt, timer, I/O)', '#bfc5cc'],
  ['unknown_ns', 'unknown', '#e2e2e2'],
];

/** The swatches of the state track, as a key. */
function stateKey() {
  return STATES.map((s) => `<span class="state-swatch${s.hatch ? ' hatched' : ''}${s.line ? ' lined' : ''}" style="--fill:${s.css};--mark:${s.hatch || s.line || s.css}"></span>${escapeHtml(s.label)}`).join(' ');
}

/** Who held the CPU a wait waited for, as `latency --task` lists them (k: kernel thread). */
function holdersHtml(wait, limit) {
  if (!wait.heldBy.length) return '<span class="muted">nobody: the CPU idled or its state is unknown</span>';
  const rows = wait.heldBy
    .slice(0, limit)
    .map((h) => `<tr><td class="k">${h.kernelThread ? 'k' : ''}</td><td>${escapeHtml(h.comm)}:${h.pid}</td><td>${duration(h.held)}</td></tr>`)
    .join('');
  const more = wait.holderCount > limit ? `<tr><td></td><td colspan="2" class="muted">…and ${wait.holderCount - limit} more</td></tr>` : '';
  return `<table class="holders">${rows}${more}</table>`;
}

/** A wait on one line: how long, where, and its three longest holders. */
function waitLine(wait) {
  const why = { wakeup: 'woken', newtask: 'new task', preempted: 'preempted' }[wait.cause] || wait.cause;
  const where = wait.cpus.length ? ` on CPU ${ranges(wait.cpus)}` : '';
  const held = wait.heldBy.slice(0, 3).map((h) => `${h.kernelThread ? '<b class="k">k</b> ' : ''}${escapeHtml(h.comm)}:${h.pid} ${duration(h.held)}`);
  if (wait.holderCount > 3) held.push(`+${wait.holderCount - 3} more`);
  return `waited ${duration(wait.end - wait.start)}${where} (${why}); ${held.length ? `who held the CPU: ${held.join(', ')}` : 'nobody held the CPU'}`;
}

/** A wait, where, and who held the CPU meanwhile. */
function waitHtml(wait) {
  const why = { wakeup: 'after a wakeup', newtask: 'as a new task', preempted: 'after a preemption' }[wait.cause] || wait.cause;
  const where = wait.cpus.length ? ` on CPU ${ranges(wait.cpus)}` : '';
  const ended = wait.ran ? '' : ' (its end is unknown: lost events, an unrecorded switch or the trace’s end)';
  return `<div>waited ${duration(wait.end - wait.start)}${where}, ${why}${ended}; who held the CPU meanwhile <span class="muted">(k: kernel thread)</span>:</div>${holdersHtml(wait, 5)}`;
}

export class Panels {
  constructor(app, element) {
    this.app = app;
    this.element = element;
    this.tab = 'incidents';
    this.selectionStats = null;
    this.legendStats = null;
    this.message = null;
    element.innerHTML = `<nav>${TABS.map(([id, name]) => `<button data-tab="${id}">${name}</button>`).join('')}</nav><div class="body"></div>`;
    this.body = element.querySelector('.body');
    element.querySelector('nav').addEventListener('click', (e) => {
      const tab = e.target.dataset && e.target.dataset.tab;
      if (tab) {
        this.show(tab);
        this.render();
      }
    });
    this.body.addEventListener('click', (e) => this.onClick(e));
  }

  show(tab) {
    if (tab === 'selection' && this.app.state.selection) this.loadSelection();
    if (tab === 'legend') this.loadLegend();
    this.tab = tab;
  }

  error(message) {
    this.message = message;
    this.render();
  }

  /** The window moved: the legend's table follows it. */
  windowChanged() {
    if (this.tab === 'legend') this.loadLegend();
  }

  async loadSelection() {
    const sel = this.app.state.selection;
    if (!sel) return;
    const key = sel.join(',') + (this.app.state.forked ? 'f' : '');
    if (this.selectionStats && this.selectionStats.key === key) return;
    this.selectionStats = { key, traces: [] };
    const traces = await Promise.all(
      this.app.views.map(async (view) => {
        const start = Math.max(sel[0], view.meta.start);
        const end = Math.min(sel[1], view.meta.end);
        if (end <= start) return null;
        try {
          return await this.app.source.stats(view.index, start, end, this.app.state.forked);
        } catch (error) {
          return { error: error.message };
        }
      }),
    );
    if (this.selectionStats.key === key) {
      this.selectionStats.traces = traces;
      this.render();
    }
  }

  async loadLegend() {
    const [a, b] = this.app.state.window;
    const key = `${a},${b},${this.app.state.forked}`;
    if (this.legendStats && this.legendStats.key === key) return;
    clearTimeout(this.legendTimer);
    this.legendTimer = setTimeout(async () => {
      const traces = await Promise.all(
        this.app.views.map(async (view) => {
          const start = Math.max(a, view.meta.start);
          const end = Math.min(b, view.meta.end);
          if (end <= start) return null;
          try {
            return await this.app.source.stats(view.index, start, end, this.app.state.forked);
          } catch (error) {
            return { error: error.message };
          }
        }),
      );
      this.legendStats = { key, traces };
      if (this.tab === 'legend') this.render();
    }, 200);
  }

  render() {
    for (const button of this.element.querySelectorAll('nav button')) button.classList.toggle('active', button.dataset.tab === this.tab);
    const html = { incidents: () => this.incidentsHtml(), selection: () => this.selectionHtml(), task: () => this.taskHtml(), path: () => this.pathHtml(), legend: () => this.legendHtml() }[this.tab]();
    const message = this.message ? `<p class="error">${escapeHtml(this.message)}</p>` : '';
    this.body.innerHTML = message + html;
    this.message = null;
  }

  incidentsHtml() {
    const app = this.app;
    const selected = app.state.incident;
    return app.views
      .map((view) => {
        const answer = app.incidents[view.index];
        const title = app.views.length > 1 ? `<h3>${escapeHtml(view.meta.name)}</h3>` : '';
        if (!answer || answer.status === 'computing') return `${title}<p class="muted">Checking the trace for scheduler pathologies…</p>`;
        if (answer.status === 'error') return `${title}<p class="error">${escapeHtml(answer.error)}</p>`;
        if (!answer.incidents.length) return `${title}<p class="muted">No incidents of 4 ms or more: no task waited long while a core idled, no migration cascade, no overload.</p>`;
        const more = answer.total > answer.incidents.length ? `<p class="muted">…and ${answer.total - answer.incidents.length} more.</p>` : '';
        const items = answer.incidents
          .map((inc) => {
            const active = selected && selected.trace === view.index && selected.rank === inc.rank ? ' active' : '';
            const lost = inc.lostCpuNs ? ` · lost ${duration(inc.lostCpuNs)}` : '';
            const cpus = inc.cpus.length ? ` · ${cpuSet(inc.cpus, view.meta.places)}` : '';
            return `<li class="incident${active}" data-trace="${view.index}" data-rank="${inc.rank}" title="${escapeHtml(inc.explanation)}">
              <div class="head"><span class="rank">${inc.rank}</span><span class="kind" style="--kind:${KIND_COLORS[inc.kind] || '#555'}">${escapeHtml(inc.kind)}</span><span class="when">${seconds(inc.start, 1e3)} s</span></div>
              <div class="detail">${duration(inc.end - inc.start)}${lost}${cpus}${inc.possiblyPinned ? ' · possibly pinned' : ''}</div>
              <div class="why">${escapeHtml(inc.explanation)}</div></li>`;
          })
          .join('');
        return `${title}<ol class="incidents">${items}</ol>${more}`;
      })
      .join('');
  }

  selectionHtml() {
    const sel = this.app.state.selection;
    if (!sel) return '<p class="muted">Shift-drag across the timeline (or drag on the time axis) to select a range: its statistics per command and per CPU, and the incidents inside it, show here.</p>';
    const head = `<p class="range"><b>${exactTime(sel[0])}</b> to <b>${exactTime(sel[1])}</b><br>${duration(sel[1] - sel[0])} <button data-action="zoom-selection">Zoom to it</button> <button data-action="clear-selection">Clear</button></p>`;
    const stats = this.selectionStats && this.selectionStats.key.startsWith(sel.join(',')) ? this.selectionStats.traces : null;
    if (!stats) {
      this.loadSelection();
      return `${head}<p class="muted">Computing…</p>`;
    }
    const parts = this.app.views.map((view, i) => {
      const title = this.app.views.length > 1 ? `<h3>${escapeHtml(view.meta.name)}</h3>` : '';
      const s = stats[i];
      if (!s) return `${title}<p class="muted">No data of this trace in the range.</p>`;
      if (s.error) return `${title}<p class="error">${escapeHtml(s.error)}</p>`;
      return title + commandTable(s, 15) + cpuTable(s) + this.incidentsIn(view.index, sel);
    });
    return head + parts.join('');
  }

  incidentsIn(trace, [a, b]) {
    const answer = this.app.incidents[trace];
    if (!answer || !answer.incidents) return '';
    const inside = answer.incidents.filter((i) => i.start < b && i.end > a);
    if (!inside.length) return '<h4>Incidents</h4><p class="muted">None in this range.</p>';
    const items = inside
      .slice(0, 30)
      .map((inc) => `<li class="incident" data-trace="${trace}" data-rank="${inc.rank}"><div class="head"><span class="rank">${inc.rank}</span><span class="kind" style="--kind:${KIND_COLORS[inc.kind] || '#555'}">${escapeHtml(inc.kind)}</span><span class="when">${seconds(inc.start, 1e3)} s</span></div><div class="why">${escapeHtml(inc.explanation)}</div></li>`)
      .join('');
    return `<h4>Incidents (${inside.length})</h4><ol class="incidents">${items}</ol>`;
  }

  taskHtml() {
    const follow = this.app.state.follow;
    if (!follow) return '<p class="muted">Click a run to follow its task: all its runs stay in colour across the cores, its moves between CPUs are drawn as arrows and its wakeups as dashed lines from the waker.</p>';
    const view = this.app.views[follow.trace];
    const t = view && view.task;
    if (!t || t.task !== follow.task) return '<p class="muted">Loading the task…</p>';
    const swatch = this.app.state.color === 'command' ? t.commandColor : t.pidColor;
    const parent = t.parent ? `<a href="#" data-action="follow" data-trace="${follow.trace}" data-task="${t.parent.task}">${escapeHtml(t.parent.comm)}:${t.parent.pid}</a>` : '—';
    const names = t.names.length > 1 ? `<tr><th>names</th><td>${t.names.map(escapeHtml).join(' → ')}</td></tr>` : '';
    const wakeups = t.wakeups
      .slice(0, 25)
      .map((w) => {
        const waker = w.waker ? `<a href="#" data-action="follow" data-trace="${follow.trace}" data-task="${w.waker.task}">${escapeHtml(w.waker.comm)}:${w.waker.pid}</a>` : 'an interrupt';
        const ran = w.ran ? `ran ${duration(w.ran.t - w.t)} later on CPU ${w.ran.cpu}` : 'did not run in the trace';
        const where = w.wakerCpu !== null ? ` on CPU ${w.wakerCpu}` : '';
        const prev = w.prevCpu !== null && w.prevCpu !== w.targetCpu ? ` (last ran on CPU ${w.prevCpu})` : '';
        return `<li><span class="when">${seconds(w.t, 1e3)} s</span> by ${waker}${where} → CPU ${w.targetCpu}${prev}; ${ran}</li>`;
      })
      .join('');
    const more = t.wakeupsInRange > 25 ? `<p class="muted">…${t.wakeupsInRange - 25} more wakeups in the window.</p>` : '';
    return `<div class="task-head"><span class="swatch" style="background:${swatch}"></span><b>${escapeHtml(t.comm)}</b>:${t.pid} <span class="muted">task #${t.task}</span> <button data-action="unfollow">Stop following</button></div>
      <table class="facts">
        ${names}
        <tr><th>parent</th><td>${parent}${t.forked ? ' (forked in the trace)' : ''}</td></tr>
        <tr><th>runs</th><td>${count(t.runs)} on CPU ${ranges(t.cpusUsed)}</td></tr>
        <tr><th>run time</th><td>${duration(t.runtime)}</td></tr>
        <tr><th>first / last run</th><td>${t.firstRun !== null ? seconds(t.firstRun, 1e3) : '—'} / ${t.lastRun !== null ? seconds(t.lastRun, 1e3) : '—'} s</td></tr>
        <tr><th>waited</th><td>${duration(t.waited)} in ${count(t.waits)} waits</td></tr>
        <tr><th>migrations</th><td>${count(t.migrations)}; ${t.moves.length} moves in the window</td></tr>
        ${t.exit !== null ? `<tr><th>exit</th><td>${seconds(t.exit, 1e3)} s</td></tr>` : ''}
      </table>
      <p class="key">Its state track, under the timeline (hover: the state, its start and length; who held the CPU it waited for): ${stateKey()}</p>
      <p><button data-action="task-path">Its critical path</button></p>
      <h4>Wakeups in the window (${t.wakeupsInRange})</h4><ul class="wakeups">${wakeups || '<li class="muted">none</li>'}</ul>${more}
      <p class="key"><span class="k-arrow"></span> move to another CPU <span class="k-dash"></span> wakeup, from the waker's CPU</p>`;
  }

  /** The critical path: the sentence to quote, the breakdown, the largest stretches of scheduler cost. */
  pathHtml() {
    const which = this.app.state.path;
    if (!which) return '<p class="muted">Choose a critical path above (of the traced command, or of the followed task, as <code>schedlens critical-path</code> walks it): where the wall time went and how much of it the scheduler cost at most; its hops are drawn as arrows, its stretches of scheduler cost boxed in red.</p>';
    return this.app.views
      .map((view) => {
        const title = this.app.views.length > 1 ? `<h3>${escapeHtml(view.meta.name)}</h3>` : '';
        const p = view.path;
        if (!p) return `${title}<p class="muted">${which === 'task' ? 'Follow a task (click a run) for its critical path.' : 'No path.'}</p>`;
        if (p.loading) return `${title}<p class="muted">Walking the critical path…</p>`;
        if (p.error) return `${title}<p class="error">${escapeHtml(p.error)}</p>`;
        const wall = p.end - p.start;
        const rows = CAUSES.map(([key, name, color]) => `<tr><td><span class="swatch" style="background:${color}"></span>${name}</td><td>${duration(p.breakdown[key])}</td><td>${percent(p.breakdown[key], wall)}</td></tr>`).join('');
        const bar = CAUSES.map(([key, , color]) => `<span style="background:${color};width:${((100 * p.breakdown[key]) / Math.max(1, wall)).toFixed(2)}%"></span>`).join('');
        const top = p.top
          .map((c) => {
            const waited = c.waitedOn !== null ? ` on CPU ${c.waitedOn}'s runqueue` : '';
            const idle = c.idleCpu !== null ? ` while CPU ${c.idleCpu} idled` : '';
            return `<li data-action="zoom-range" data-start="${c.start}" data-end="${c.end}"><span class="when">${seconds(c.start, 1e3)} s</span> <b>${duration(c.scheduler)}</b>: ${escapeHtml(c.comm)}:${c.pid} waited${waited}${idle}</li>`;
          })
          .join('');
        const sampled = p.hopsInRange > p.hops.length ? ` (${p.hops.length} of them drawn)` : '';
        const what = p.target === 'command' ? 'the traced command' : 'the task';
        return `${title}<blockquote class="quote">${escapeHtml(p.sentence)}</blockquote>
          <p class="muted">Critical path of ${what} ${escapeHtml(p.task.comm)}:${p.task.pid}, ${seconds(p.start, 1e3)}–${seconds(p.end, 1e3)} s: ${count(p.hopCount)} hops, ${count(p.hopsInRange)} in the window${sampled}; allowed CPUs ${p.affinity}.</p>
          <div class="breakdown-bar">${bar}</div>
          <table class="stats path">${rows}</table>
          <h4>Largest stretches of scheduler cost</h4>${top ? `<ol class="costs">${top}</ol>` : '<p class="muted">none</p>'}
          <p class="key"><span class="k-hop"></span> hop: the waker woke the next task on the path <span class="k-cost"></span> scheduler cost, on the runqueue's CPU</p>`;
      })
      .join('');
  }

  legendHtml() {
    const state = this.app.state;
    const colours = {
      pid: 'each pid its colour',
      command: 'each command its colour (table below: the paper’s Figure 9 legend for the window)',
      target: `commands starting with “${escapeHtml(state.target)}” by pid; other tasks black`,
    }[state.color];
    const heat = HEAT_CSS.map((c, i) => `<span class="heat" style="background:${c}"></span>${i === HEAT_CSS.length - 1 ? `${i}+` : i}`).join(' ');
    let table = '';
    if (state.color === 'command') {
      const stats = this.legendStats && this.legendStats.traces;
      if (!stats) {
        this.loadLegend();
        table = '<p class="muted">Computing…</p>';
      } else {
        table = this.app.views
          .map((view, i) => {
            const title = this.app.views.length > 1 ? `<h3>${escapeHtml(view.meta.name)}</h3>` : '';
            const s = stats[i];
            if (!s) return `${title}<p class="muted">No data in the window.</p>`;
            if (s.error) return `${title}<p class="error">${escapeHtml(s.error)}</p>`;
            return title + legendTable(s);
          })
          .join('');
      }
    }
    return `<ul class="legend">
      <li><span class="swatch" style="background:#fff;border:1px solid #bbb"></span>idle</li>
      <li><span class="swatch" style="background:#e2e2e2"></span>unknown (lost events, unrecorded switches)</li>
      <li><span class="swatch rainbow"></span>${colours}${state.forked ? '; only tasks created during the trace' : ''}</li>
      <li><span class="line running"></span>running <span class="line total"></span>running + waiting <span class="line cores"></span>cores</li>
      <li><span class="swatch" style="background:rgb(255,214,150)"></span>a task waits while a core idles</li>
      <li>runqueue length: ${heat}</li>
      <li><span class="line marker"></span>trace marker (trace_marker text)</li>
      <li>a followed task's state: ${stateKey()}</li>
      <li><span class="k-hop"></span> critical path hop <span class="k-cost"></span> its scheduler cost</li>
    </ul>${table}`;
  }

  onClick(event) {
    const target = event.target.closest('[data-action], li.incident');
    if (!target) return;
    event.preventDefault();
    const app = this.app;
    if (target.matches('li.incident')) {
      const trace = Number(target.dataset.trace);
      const rank = Number(target.dataset.rank);
      const incident = app.incidents[trace].incidents.find((i) => i.rank === rank);
      if (incident) app.selectIncident(trace, incident);
      return;
    }
    const action = target.dataset.action;
    if (action === 'zoom-selection') app.zoomToSelection();
    if (action === 'clear-selection') app.select(null);
    if (action === 'unfollow') app.follow(0, null);
    if (action === 'task-path') app.showPath('task');
    if (action === 'zoom-range') {
      const [start, end] = [Number(target.dataset.start), Number(target.dataset.end)];
      const margin = Math.max(end - start, 1000) * 2;
      app.setWindow([start - margin, end + margin]);
    }
    if (action === 'follow') app.follow(Number(target.dataset.trace), Number(target.dataset.task));
  }
}

/** The line of a hover that says where a CPU sits (core, socket, node, SMT siblings), when the topology is known. */
function where(view, cpu) {
  const text = placeText(cpu, view.meta.places);
  return text ? `<div class="muted">${text}</div>` : '';
}


function commandTable(s, limit) {
  const span = s.end - s.start;
  const rows = s.commands
    .slice(0, limit)
    .map((c) => `<tr><td><span class="swatch" style="background:${c.color}"></span>${escapeHtml(c.comm)}</td><td>${c.pids}</td><td>${duration(c.runtime)}</td><td>${percent(c.runtime, span)}</td><td>${count(c.switches)}</td><td>${duration(c.wait)}</td><td>${count(c.migrations)}</td></tr>`)
    .join('');
  const more = s.commandCount > limit ? `<p class="muted">…and ${s.commandCount - limit} more commands.</p>` : '';
  return `<h4>Per command</h4><table class="stats"><thead><tr><th>command</th><th>pids</th><th>run time</th><th title="of one CPU's time">share</th><th>switches</th><th>waited</th><th>migr.</th></tr></thead><tbody>${rows}</tbody></table>${more}`;
}

function cpuTable(s) {
  const span = s.end - s.start;
  const rows = s.cpus
    .map((c) => {
      const bar = (v, cls) => `<span class="${cls}" style="width:${((100 * v) / span).toFixed(1)}%"></span>`;
      return `<tr><td>${c.cpu}</td><td class="bar">${bar(c.busy, 'busy')}${bar(c.idle, 'idle')}${bar(c.uncertain, 'unknown')}</td><td>${percent(c.busy, span)}</td><td>${percent(c.waiting, span)}</td></tr>`;
    })
    .join('');
  return `<h4>Per CPU</h4><table class="stats cpus"><thead><tr><th>CPU</th><th>busy · idle · unknown</th><th>busy</th><th title="time with a task waiting in its runqueue">queued</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** The paper's Figure 9 legend: per command, first and last run, run time, switches, pids. */
function legendTable(s) {
  const rows = s.commands
    .filter((c) => c.runtime > 0)
    .slice(0, 30)
    .map((c) => `<tr><td><span class="swatch" style="background:${c.color}"></span>${escapeHtml(c.comm)}</td><td>${c.firstRun !== null ? seconds(c.firstRun, 1e3) : '-'}</td><td>${c.lastRun !== null ? seconds(c.lastRun, 1e3) : '-'}</td><td>${(c.runtime / 1e9).toFixed(6)}</td><td>${c.switches}</td><td>${c.pids}</td></tr>`)
    .join('');
  return `<table class="stats legend-table"><thead><tr><th>command</th><th>first run (s)</th><th>last run (s)</th><th>run time (s)</th><th>switches</th><th>pids</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export class Tooltip {
  constructor(element) {
    this.element = element;
  }

  place(event) {
    const e = this.element;
    e.hidden = false;
    const pad = 14;
    const width = e.offsetWidth;
    const height = e.offsetHeight;
    let x = event.clientX + pad;
    let y = event.clientY + pad;
    if (x + width > window.innerWidth - 4) x = event.clientX - width - pad;
    if (y + height > window.innerHeight - 4) y = event.clientY - height - pad;
    e.style.left = `${Math.max(4, x)}px`;
    e.style.top = `${Math.max(4, y)}px`;
  }

  show(html, event) {
    this.element.innerHTML = html;
    this.place(event);
  }

  hide() {
    this.element.hidden = true;
  }

  showRun(view, run, event, state) {
    const color = state.color === 'command' ? run.commandColor : run.pidColor;
    const moved = run.nextCpu !== null && run.nextCpu !== undefined ? (run.nextCpu === run.cpu ? `; next ran on the same CPU` : `; <b>migrated</b>: next ran on CPU ${run.nextCpu}`) : '';
    let wait = '<tr><th>before</th><td>no wait recorded (already running, or switched in without a wakeup)</td></tr>';
    if (run.wait) {
      const w = run.wait;
      let why = { wakeup: 'after a wakeup', newtask: 'as a new task', preempted: 'after being preempted' }[w.cause] || w.cause;
      if (w.wakeup) {
        const waker = w.wakeup.waker ? `${escapeHtml(w.wakeup.waker.comm)}:${w.wakeup.waker.pid}` : 'an interrupt';
        const where = w.wakeup.wakerCpu !== null ? ` on CPU ${w.wakeup.wakerCpu}` : '';
        const prev = w.wakeup.prevCpu !== null && w.wakeup.prevCpu !== run.cpu ? `; it last ran on CPU ${w.wakeup.prevCpu}` : '';
        why = `woken by ${waker}${where}${prev}`;
      }
      wait = `<tr><th>waited</th><td>${duration(w.end - w.start)} in the runqueue, ${why}</td></tr>`;
    }
    this.show(
      `<div class="tip-head"><span class="swatch" style="background:${color}"></span><b>${escapeHtml(run.comm)}</b>:${run.pid}<span class="muted"> · CPU ${run.cpu}</span></div>${where(view, run.cpu)}
       <table>
         <tr><th>start</th><td>${exactTime(run.start)}</td></tr>
         <tr><th>ran</th><td>${duration(run.end - run.start)}</td></tr>
         <tr><th>ended</th><td>${escapeHtml(run.ended)}${moved}</td></tr>
         ${wait}
       </table><div class="muted hint">click to follow this task</div>`,
      event,
    );
  }

  showIdle(view, hit, event) {
    this.show(`<b>CPU ${hit.cpu}</b> idle${where(view, hit.cpu) || '<br>'}<span class="muted">${exactTime(hit.t)}</span>`, event);
  }

  showCounts(view, hit, values, event) {
    if (!values || !values.total) return this.hide();
    const range = ([a, b]) => (a === b ? String(a) : `${a}–${b}`);
    const wasted = values.wasted > 0 ? `<br>a task waited while a core idled for ${percent(values.wasted, 1)} of this pixel` : '';
    this.show(`<b>${range(values.running)}</b> running, <b>${range(values.total)}</b> running + waiting of ${view.meta.cpus} cores${wasted}<br><span class="muted">${exactTime(hit.t)}</span>`, event);
  }

  /** A runqueue strip: its length from the tiles; with `queue` (/api/queue) the waits there and who held the CPU. */
  showQueue(view, hit, values, event, queue) {
    const length = values && values.queue !== undefined ? values.queue : '…';
    let waits = '';
    if (queue) {
      const shown = queue.waiting.slice(0, 4);
      const items = shown.map((w) => `<li><b>${escapeHtml(w.task.comm)}</b>:${w.task.pid} ${waitLine(w.wait)}</li>`).join('');
      const more = queue.waitingCount > shown.length ? `<div class="muted">…and ${queue.waitingCount - shown.length} more waits (k: kernel thread)</div>` : '<div class="muted">k: kernel thread</div>';
      waits = items ? `<ul class="queued">${items}</ul>${more}` : '<div class="muted">no task waited here</div>';
    }
    this.show(`<b>CPU ${hit.cpu}</b>: up to ${length} task${length === 1 ? '' : 's'} running or waiting here${waits}<span class="muted">${exactTime(hit.t)}</span>`, event);
  }

  /** The followed task's state under the mouse; a runnable one with who held the CPU it waited for. */
  showState(view, state, event) {
    const look = stateNamed(state.state);
    const wait = state.wait ? waitHtml(state.wait) : '';
    this.show(
      `<div class="tip-head"><span class="state-swatch${look.hatch ? ' hatched' : ''}${look.line ? ' lined' : ''}" style="--fill:${look.css};--mark:${look.hatch || look.line || look.css}"></span><b>${escapeHtml(look.label)}</b></div>
       <table>
         <tr><th>start</th><td>${exactTime(state.start)}</td></tr>
         <tr><th>for</th><td>${duration(state.end - state.start)}</td></tr>
       </table>${wait}`,
      event,
    );
  }

  showMarker(marker, event) {
    const who = marker.comm ? `${escapeHtml(marker.comm)}:${marker.pid}` : `pid ${marker.pid}`;
    this.show(`<div class="tip-head"><b>marker</b> <span class="muted">${who} · CPU ${marker.cpu}</span></div><pre>${escapeHtml(marker.text)}</pre><span class="muted">${exactTime(marker.t)}</span>`, event);
  }
}
