import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULTS, formatState, parseState } from '../js/state.js';

test('a state survives its URL', () => {
  const state = { ...DEFAULTS, window: [100, 2500], color: 'target', target: 'hack bench', forked: true, socket: true, rw: false, follow: { trace: 1, task: 42 }, path: 'task', selection: [200, 300], incident: { trace: 0, rank: 3 } };
  const hash = formatState(state);
  assert.equal(hash, '#w=100,2500&c=target&tg=hack%20bench&fk=1&so=1&rw=0&f=1.42&cp=task&sel=200,300&inc=0.3');
  assert.deepEqual(parseState(hash), state);
});

test('defaults stay out of the URL', () => {
  assert.equal(formatState({ ...DEFAULTS, window: [0, 10] }), '#w=0,10');
  assert.equal(formatState({ ...DEFAULTS }), '');
  const defaults = { ...DEFAULTS, forked: true };
  assert.equal(formatState({ ...defaults, forked: false }, defaults), '#fk=0');
  assert.equal(parseState('#fk=0', defaults).forked, false);
});

test('what cannot be read is ignored', () => {
  const state = parseState('#w=5,1&c=rainbow&f=x.2&sel=1,2,3&inc=&rw=maybe&cp=everything');
  assert.deepEqual(state, { ...DEFAULTS });
  assert.equal(parseState('#c=target').color, 'pid', 'a target needs a prefix');
});

test('the critical path of the command survives its URL', () => {
  assert.equal(formatState({ ...DEFAULTS, path: 'command' }), '#cp=command');
  assert.equal(parseState('#cp=command').path, 'command');
});
