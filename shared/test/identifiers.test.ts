import assert from 'node:assert/strict';
import { checkIdentifier, emailKey } from '../src/identifiers.ts';

const refused = (raw: string) => {
  const result = checkIdentifier(raw);
  assert.equal(result.ok, false, `${JSON.stringify(raw)} should be refused`);
  return result.ok ? '' : result.msg;
};
const accepted = (raw: string) => {
  const result = checkIdentifier(raw);
  assert.equal(result.ok, true, `${JSON.stringify(raw)} should be accepted: ${result.ok ? '' : result.msg}`);
  return result.ok ? result.value : '';
};

describe('identifiers', () => {
  it('are stored in NFC: a decomposed é becomes the composed one', () => {
    const nfd = 'cafe\u0301';
    const stored = accepted(nfd);
    assert.equal(stored, 'caf\u00e9');
    assert.equal(accepted('caf\u00e9'), stored);
  });

  it('keep plain ASCII as sent, case included', () => {
    assert.equal(accepted('crm-X'), 'crm-X');
    assert.equal(accepted('CRM-X'), 'CRM-X');
    assert.equal(accepted('acc 2024 0042'), 'acc 2024 0042');
  });

  it('refuse compatibility characters, naming the one to send instead', () => {
    assert.match(refused('\uff43\uff52\uff4d-1'), /compatibility character 'ｃ' \(U\+FF43\) at character 0; send 'c'/);
    assert.match(refused('pro\ufb01le'), /'ﬁ' \(U\+FB01\) at character 3; send 'fi'/);
    assert.match(refused('m\u00b2'), /U\+00B2/);
    assert.match(refused('crm\u00a01'), /space U\+00A0/);
  });

  it('refuse invisible and control characters with their code point and position', () => {
    assert.match(refused('crm\u200b-1'), /invisible or control character U\+200B, found at character 3/);
    for (const ch of ['\u200d', '\u200c', '\ufeff', '\u202e', '\u2066', '\u2028', '\u2029', '\u0007', '\u00ad', '\u3164', '\ue000', '\u{e0001}']) {
      assert.match(refused(`a${ch}b`), new RegExp(`U\\+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`), JSON.stringify(ch));
    }
  });

  it('refuse white space at either end', () => {
    assert.match(refused('crm-1 '), /must not start or end with white space \(U\+0020 at character 5\)/);
    assert.match(refused(' crm-1'), /at character 0/);
    assert.match(refused('crm-1\t'), /U\+0009/);
    assert.match(refused('crm-1\u3000'), /U\+3000/);
  });

  it('refuse letters of scripts that are not used together', () => {
    assert.match(refused('\u0441rm-1'), /must not mix scripts: Cyrillic 'с' \(U\+0441\) with Latin 'r' \(U\+0072\)/);
    assert.match(refused('crm-\u0441'), /Latin 'c' \(U\+0063\) with Cyrillic 'с' \(U\+0441\)/);
    assert.match(refused('crm-\u0391'), /Greek/);
  });

  it('accept one script, and Latin with Japanese, Korean or Chinese', () => {
    assert.equal(accepted('\u0441\u0440\u043c-1'), 'срм-1');
    assert.equal(accepted('crm-東京-ひらがな-カタカナ'), 'crm-東京-ひらがな-カタカナ');
    assert.equal(accepted('kunde-서울'), 'kunde-서울');
    assert.equal(accepted('Müller-Straße'), 'Müller-Straße');
    // Characters shared by several scripts (Script_Extensions): the long-vowel mark of hiragana and katakana, the Devanagari danda.
    assert.equal(accepted('\u3072\u3089\u30fc-\u30ab\u30fc'), 'ひらー-カー');
    assert.equal(accepted('\u0915\u0916\u0964'), 'कख।');
    assert.match(refused('\u0915\u0964\u0b95'), /must not mix scripts/);
  });

  it('compare e-mails without case', () => {
    assert.equal(emailKey('Eve.S@EX.com'), emailKey('eve.S@ex.com'));
    assert.notEqual(emailKey('eve.t@ex.com'), emailKey('eve.s@ex.com'));
  });
});
