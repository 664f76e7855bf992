//# allFunctionsCalledOnLoad
// The view's state, and its form in the URL's fragment, so a link reproduces what one
// sees: the window, the colouring and filters, which tracks are shown, the followed
// task, the critical path shown, the selected range and incident.
//
//   #w=START,END&c=pid|command|target&tg=PREFIX&fk=1&so=1&rw=0&q=0&f=TRACE.TASK
//    &cp=command|task&sel=START,END&inc=TRACE.RANK  (times: integer ns from each trace's origin)

export const DEFAULTS = Object.freeze({
  window: null,
  color: 'pid',
  target: '',
  forked: false,
  socket: false,
  rw: true,
  queue: true,
  follow: null,
  path: null, // the critical path drawn: null, 'command' or 'task' (the followed task's)
  selection: null,
  incident: null,
});

/** Reads a state from a fragment ("#..." or ""), ignoring what it cannot read. */
export function parseState(hash, defaults = DEFAULTS) {
  const state = { ...defaults };
  const params = new URLSearchParams(String(hash || '').replace(/^#/, ''));
  const range = (text) => {
    const parts = String(text).split(',').map(Number);
    return parts.length === 2 && parts.every(Number.isSafeInteger) && parts[0] < parts[1] ? parts : null;
  };
  const pair = (text) => {
    const m = /^(\d+)\.(\d+)$/.exec(String(text));
    return m ? [Number(m[1]), Number(m[2])] : null;
  };
  if (params.has('w')) state.window = range(params.get('w')) ?? state.window;
  if (['pid', 'command', 'target'].includes(params.get('c'))) state.color = params.get('c');
  if (params.has('tg')) state.target = params.get('tg');
  if (state.color === 'target' && !state.target) state.color = 'pid';
  const flag = (key, name) => {
    if (params.get(key) === '1') state[name] = true;
    if (params.get(key) === '0') state[name] = false;
  };
  flag('fk', 'forked');
  flag('so', 'socket');
  flag('rw', 'rw');
  flag('q', 'queue');
  const follow = params.has('f') ? pair(params.get('f')) : null;
  if (follow) state.follow = { trace: follow[0], task: follow[1] };
  if (['command', 'task'].includes(params.get('cp'))) state.path = params.get('cp');
  if (params.has('sel')) state.selection = range(params.get('sel'));
  const incident = params.has('inc') ? pair(params.get('inc')) : null;
  if (incident) state.incident = { trace: incident[0], rank: incident[1] };
  return state;
}

/** The fragment for a state (only what differs from the defaults, besides the window). */
export function formatState(state, defaults = DEFAULTS) {
  const parts = [];
  const add = (key, value) => parts.push(`${key}=${encodeURIComponent(value)}`);
  if (state.window) add('w', state.window.map(Math.round).join(','));
  if (state.color !== defaults.color) add('c', state.color);
  if (state.color === 'target' && state.target) add('tg', state.target);
  for (const [key, name] of [['fk', 'forked'], ['so', 'socket'], ['rw', 'rw'], ['q', 'queue']]) {
    if (state[name] !== defaults[name]) add(key, state[name] ? '1' : '0');
  }
  if (state.follow) add('f', `${state.follow.trace}.${state.follow.task}`);
  if (state.path) add('cp', state.path);
  if (state.selection) add('sel', state.selection.map(Math.round).join(','));
  if (state.incident) add('inc', `${state.incident.trace}.${state.incident.rank}`);
  return parts.length ? `#${parts.join('&').replace(/%2C/g, ',')}` : '';
}
