import assert from 'node:assert/strict';
import { fromNumber, parseDecimal, sum, toText } from '../src/decimal.ts';

describe('decimal money', () => {
  it('adds 0.1 and 0.2 exactly', () => {
    assert.equal(toText(sum([parseDecimal('0.1'), parseDecimal('0.2')])), '0.3');
    assert.notEqual(0.1 + 0.2, 0.3);
  });

  it('keeps large amounts and many decimals exact', () => {
    assert.equal(toText(parseDecimal('12345678901234567890.123456789').plus(parseDecimal('0.000000001'))), '12345678901234567890.12345679');
    assert.equal(toText(sum(Array.from({ length: 1000 }, () => parseDecimal('0.01')))), '10');
  });

  it('converts JSON numbers as they are written', () => {
    assert.equal(toText(fromNumber(0.1)), '0.1');
    assert.throws(() => fromNumber(Number.NaN), RangeError);
  });

  it('refuses text that is not a plain decimal', () => {
    for (const bad of ['', ' 1', '1e3', '0x10', '1.', '.5', '01', 'NaN', '1,5']) {
      assert.throws(() => parseDecimal(bad), RangeError, bad);
    }
  });
});
