import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { onStopSignals, SAME_SIGNAL_MS, stopSignalAction } from '../lib/stop-signals.ts';

describe('stop signals of npm start and npm run topology', () => {
  it('the first signal stops in order; one within SAME_SIGNAL_MS of it is the same keypress; a later one exits', () => {
    assert.equal(stopSignalAction(undefined, 5_000), 'stop');
    assert.equal(stopSignalAction(5_000, 5_000), 'same');
    assert.equal(stopSignalAction(5_000, 5_000 + SAME_SIGNAL_MS), 'same');
    assert.equal(stopSignalAction(5_000, 5_000 + SAME_SIGNAL_MS + 1), 'exit');
    assert.equal(stopSignalAction(5_000, 5_100, 50), 'exit');
  });

  it('SIGINT and SIGTERM alike: stop once, ignore the echo of the same keypress, exit on a later signal, and nothing once removed', () => {
    const source = new EventEmitter();
    let clock = 1_000;
    const calls: string[] = [];
    const remove = onStopSignals({ stop: () => calls.push('stop'), exit: () => calls.push('exit'), now: () => clock, source });
    source.emit('SIGINT');
    clock += 10;
    source.emit('SIGTERM');
    assert.deepEqual(calls, ['stop']);
    clock += SAME_SIGNAL_MS;
    source.emit('SIGTERM');
    source.emit('SIGINT');
    assert.deepEqual(calls, ['stop', 'exit', 'exit']);
    remove();
    source.emit('SIGINT');
    assert.equal(source.listenerCount('SIGINT') + source.listenerCount('SIGTERM'), 0);
    assert.deepEqual(calls, ['stop', 'exit', 'exit']);
  });
});
