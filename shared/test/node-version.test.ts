import assert from 'node:assert/strict';
import { SUPPORTED_NODE_RANGE, exitUnlessSupportedNode, isSupportedNode, unsupportedNodeMessage } from '../src/node-version.ts';

describe('the supported Node.js versions', () => {
  it('states them as the npm range of engines.node', () => {
    assert.equal(SUPPORTED_NODE_RANGE, '^22.19.0 || >=24');
  });

  it('takes 22 from 22.19.0, no 23, and 24 and every later major', () => {
    for (const version of ['v22.19.0', 'v22.19.1', 'v22.20.0', 'v22.23.3', 'v24.0.0', 'v24.11.1', 'v26.12.1', '30.0.0']) {
      assert.equal(isSupportedNode(version), true, version);
    }
    for (const version of ['v20.20.2', 'v20.19.0', 'v21.7.3', 'v22.0.0', 'v22.14.0', 'v22.18.9', 'v23.11.0', 'v18.20.8', 'v0.12.18']) {
      assert.equal(isSupportedNode(version), false, version);
    }
  });

  it('refuses a version it cannot read rather than guessing', () => {
    for (const version of ['', 'v22', 'v22.19', 'latest', 'vx.y.z']) assert.equal(isSupportedNode(version), false, JSON.stringify(version));
  });

  it('tells an unsupported version how to get a supported one, and says nothing to a supported one', () => {
    assert.equal(unsupportedNodeMessage('data-service', 'v22.19.0'), undefined);
    const message = unsupportedNodeMessage('data-service', 'v20.20.2');
    assert.ok(message, 'Node.js 20 is refused');
    assert.match(message, /^data-service needs Node\.js \^22\.19\.0 \|\| >=24; this is Node\.js v20\.20\.2\./);
    assert.match(message, /npm ci/);
    assert.match(message, /npm start/);
    assert.match(message, /install Node\.js 22\.19 or later/);
  });

  it('stops the process with code 1 only when the version is unsupported', () => {
    const exits: number[] = [];
    const lines: string[] = [];
    const proc = (version: string) => ({
      version,
      exit: (code: number): never => {
        exits.push(code);
        // A real exit does not return: neither may the stand-in, or the caller would carry on.
        throw new Error(`exit ${code}`);
      },
    });
    exitUnlessSupportedNode('cli', proc('v24.1.0'), (line) => lines.push(line));
    assert.deepEqual({ exits, lines }, { exits: [], lines: [] });
    assert.throws(() => exitUnlessSupportedNode('cli', proc('v22.18.0'), (line) => lines.push(line)), /exit 1/);
    assert.deepEqual(exits, [1]);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^cli needs Node\.js .*this is Node\.js v22\.18\.0\./);
  });
});
