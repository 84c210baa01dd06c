/**
 * Quantiles of one date's scenario values with linear interpolation between order statistics
 * (numpy's default, Hyndman–Fan type 7): for N values and probability p, h = (N − 1)·p and
 * q = x₍⌊h⌋₎ + (h − ⌊h⌋)·(x₍⌊h⌋+1₎ − x₍⌊h⌋₎).
 *
 * Values are non-negative (portfolio values floored at 0), and the high 32 bits of a non-negative
 * double grow with its value. So the order statistics are found without comparisons on the whole
 * array: a histogram of the high words (cut to at most 4096 buckets over the date's range) tells
 * which bucket holds each wanted rank; a second pass gathers only those buckets' values, which are
 * sorted (a few dozen each). Both passes are branch-free for almost every value, about 10× faster
 * than selection by partitioning, which mispredicts a branch per comparison.
 */

const BUCKET_BITS = 12;
const BUCKETS = 1 << BUCKET_BITS;
/** Index of the high 32-bit word of a double in an Int32Array view (little-endian: 1). */
const HIGH = new Uint8Array(Float64Array.of(1).buffer)[7] === 0x3f ? 1 : 0;

/** Buffers reused from date to date of one simulation. */
export class QuantileWork {
  readonly counts = new Int32Array(BUCKETS);
  readonly slotOf = new Int32Array(BUCKETS);
  readonly gathered: Float64Array;
  readonly ranks: Int32Array;
  readonly bucket: Int32Array;
  readonly below: Int32Array;
  readonly slotStart: Int32Array;
  readonly slotFill: Int32Array;

  constructor(
    readonly n: number,
    /** Probabilities, ascending, in (0, 1). */
    readonly probabilities: Float64Array,
  ) {
    this.gathered = new Float64Array(n);
    // Two ranks per probability: ⌊h⌋ and ⌊h⌋ + 1.
    const ranks: number[] = [];
    for (const p of probabilities) {
      const lo = Math.floor((n - 1) * p);
      ranks.push(lo, Math.min(lo + 1, n - 1));
    }
    this.ranks = Int32Array.from(ranks);
    this.bucket = new Int32Array(ranks.length);
    this.below = new Int32Array(ranks.length);
    this.slotStart = new Int32Array(ranks.length + 1);
    this.slotFill = new Int32Array(ranks.length + 1);
  }
}

/** Writes the quantiles of `values` (left unchanged) for `work.probabilities` into `out` from `offset`. */
export function quantilesInto(values: Float64Array, work: QuantileWork, out: Float64Array, offset: number): void {
  const n = values.length;
  const high = new Int32Array(values.buffer, values.byteOffset, 2 * n);
  let min = high[HIGH]!;
  let max = min;
  for (let s = 1; s < n; s++) {
    const h = high[2 * s + HIGH]!;
    min = h < min ? h : min;
    max = h > max ? h : max;
  }
  if (min < 0) return sortedQuantiles(values, work, out, offset);

  let shift = 0;
  while ((max - min) >>> shift >= BUCKETS) shift++;
  const counts = work.counts;
  counts.fill(0);
  for (let s = 0; s < n; s++) counts[(high[2 * s + HIGH]! - min) >>> shift]!++;

  // The bucket of each wanted rank (ranks ascending), and how many values lie in lower buckets.
  const { ranks, bucket, below, slotOf, slotStart, slotFill, gathered } = work;
  let b = 0;
  let cumulative = 0;
  let slots = 0;
  slotStart[0] = 0;
  for (let r = 0; r < ranks.length; r++) {
    while (cumulative + counts[b]! <= ranks[r]!) cumulative += counts[b++]!;
    bucket[r] = b;
    below[r] = cumulative;
    if (slotOf[b] === 0) {
      slotOf[b] = ++slots;
      slotStart[slots] = slotStart[slots - 1]! + counts[b]!;
    }
  }
  for (let k = 0; k < slots; k++) slotFill[k + 1] = slotStart[k]!;
  for (let s = 0; s < n; s++) {
    const slot = slotOf[(high[2 * s + HIGH]! - min) >>> shift]!;
    if (slot !== 0) gathered[slotFill[slot]!++] = values[s]!;
  }
  for (let k = 1; k <= slots; k++) gathered.subarray(slotStart[k - 1]!, slotStart[k]!).sort();

  const rank = (r: number) => gathered[slotStart[slotOf[bucket[r]!]! - 1]! + ranks[r]! - below[r]!]!;
  const probabilities = work.probabilities;
  for (let q = 0; q < probabilities.length; q++) {
    const h = (n - 1) * probabilities[q]!;
    const low = rank(2 * q);
    out[offset + q] = low + (h - Math.floor(h)) * (rank(2 * q + 1) - low);
  }
  for (let r = 0; r < ranks.length; r++) slotOf[bucket[r]!] = 0;
}

/** Any values (also negative ones): sort a copy. */
function sortedQuantiles(values: Float64Array, work: QuantileWork, out: Float64Array, offset: number): void {
  const sorted = work.gathered;
  sorted.set(values);
  sorted.sort();
  const probabilities = work.probabilities;
  for (let q = 0; q < probabilities.length; q++) {
    const h = (values.length - 1) * probabilities[q]!;
    const lo = Math.floor(h);
    const hi = Math.min(lo + 1, values.length - 1);
    out[offset + q] = sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
  }
}
