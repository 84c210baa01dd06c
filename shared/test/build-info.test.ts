import assert from 'node:assert/strict';
import { answerVersionFlag, buildInfo } from '../src/build-info.ts';

describe('build info', () => {
  it('takes the version and revision the image sets, and the Node.js version without its v', () => {
    assert.deepEqual(buildInfo({ PLATFORM_VERSION: '3.4.5', PLATFORM_REVISION: '0a1b2c3' }, 'v22.23.3'), {
      version: '3.4.5',
      revision: '0a1b2c3',
      node: '22.23.3',
    });
  });

  it('outside an image: the package version and an unknown revision', () => {
    assert.deepEqual(buildInfo({}, 'v20.1.0'), { version: '0.1.0', revision: 'unknown', node: '20.1.0' });
  });

  it('answers --version only as the first argument, in one JSON line', () => {
    const lines: string[] = [];
    const proc = (argv: string[]) => ({ argv: ['node', 'main.js', ...argv], env: { PLATFORM_REVISION: 'deadbee' }, version: 'v22.0.0' });
    assert.equal(
      answerVersionFlag(proc(['data', 'sample', '--version']), (l) => lines.push(l)),
      false,
    );
    assert.equal(
      answerVersionFlag(proc([]), (l) => lines.push(l)),
      false,
    );
    assert.equal(lines.length, 0);
    assert.equal(
      answerVersionFlag(proc(['--version']), (l) => lines.push(l)),
      true,
    );
    assert.deepEqual(
      lines.map((l) => JSON.parse(l) as unknown),
      [{ version: '0.1.0', revision: 'deadbee', node: '22.0.0' }],
    );
  });
});
