// Dictionary encoding of a Utf8 column's buffers: distinct values once, a small index per row.

export type DictionaryBuffers = {
  /** Per row: the position of its value in the dictionary (0 for a null row). */
  indices: Int8Array | Int16Array | Int32Array;
  /** The distinct values in order of first appearance, as Utf8 buffers. */
  valueOffsets: Int32Array;
  data: Uint8Array;
};

/**
 * Dictionary-encodes Utf8 buffers by their bytes (FNV-1a hashes into an open-addressing table,
 * equal bytes compared on a hit), without making JS strings. The index type is the narrowest
 * signed one that holds every position: Int8 up to 127 values, Int16 up to 32,767, Int32 beyond.
 * Null rows (`valid` false) get index 0 and add nothing to the dictionary.
 */
export function dictionaryEncode(valueOffsets: Int32Array, data: Uint8Array, valid: (row: number) => boolean): DictionaryBuffers {
  const length = valueOffsets.length - 1;
  const wide = new Int32Array(length);
  let slots = new Int32Array(64).fill(-1);
  let hashes: number[] = [];
  const firstRow: number[] = [];
  const sameBytes = (a: number, b: number): boolean => {
    const start = valueOffsets[a]!;
    const other = valueOffsets[b]!;
    const size = valueOffsets[a + 1]! - start;
    if (valueOffsets[b + 1]! - other !== size) return false;
    for (let k = 0; k < size; k++) if (data[start + k] !== data[other + k]) return false;
    return true;
  };
  const grow = () => {
    slots = new Int32Array(slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    hashes.forEach((h, entry) => {
      let s = h & mask;
      while (slots[s] !== -1) s = (s + 1) & mask;
      slots[s] = entry;
    });
  };
  for (let row = 0; row < length; row++) {
    if (!valid(row)) continue;
    let h = 0x811c9dc5;
    for (let k = valueOffsets[row]!, end = valueOffsets[row + 1]!; k < end; k++) h = Math.imul(h ^ data[k]!, 0x01000193);
    h >>>= 0;
    const mask = slots.length - 1;
    let s = h & mask;
    let entry = slots[s]!;
    while (entry !== -1 && !(hashes[entry] === h && sameBytes(firstRow[entry]!, row))) {
      s = (s + 1) & mask;
      entry = slots[s]!;
    }
    if (entry === -1) {
      entry = hashes.length;
      hashes.push(h);
      firstRow.push(row);
      slots[s] = entry;
      if (hashes.length * 2 > slots.length) grow();
    }
    wide[row] = entry;
  }
  hashes = [];
  const dictOffsets = new Int32Array(firstRow.length + 1);
  firstRow.forEach((row, entry) => (dictOffsets[entry + 1] = dictOffsets[entry]! + valueOffsets[row + 1]! - valueOffsets[row]!));
  const dictData = new Uint8Array(dictOffsets[firstRow.length]!);
  firstRow.forEach((row, entry) => dictData.set(data.subarray(valueOffsets[row]!, valueOffsets[row + 1]!), dictOffsets[entry]!));
  const indices = firstRow.length <= 127 ? new Int8Array(length) : firstRow.length <= 32767 ? new Int16Array(length) : wide;
  if (indices !== wide) indices.set(wide);
  return { indices, valueOffsets: dictOffsets, data: dictData };
}
