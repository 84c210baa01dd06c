/**
 * Seeded standard normal numbers for the Monte Carlo engine: xoshiro128** (32-bit integer
 * arithmetic, which JavaScript does natively with Math.imul and shifts) feeding a 128-layer ziggurat
 * (Marsaglia and Tsang 2000). The same seed gives the same sequence on every run.
 *
 * Each 32-bit draw is split: bits 0–6 pick the layer, bit 7 the sign, bits 8–31 (24 bits) the
 * magnitude within the layer, so layer, sign and magnitude never share bits. About 97 % of draws
 * are accepted on the fast path (one draw, one compare, one multiply); the rest go to the wedge or
 * the tail (x > 3.44) and use exp/log. About 5 ns a number here, numpy's ziggurat about 8 ns.
 *
 * A simulation gives each block of scenarios its own stream (docs/adr/0030-monte-carlo-threads.md):
 * block b starts b jumps of 2^64 draws after the seed's state (xoshiro's jump function), so the
 * streams never overlap and do not depend on which thread draws them.
 */

const LAYERS = 128;
const SCALE = 2 ** 24;
/** Right edge of the base layer and the common area of every layer (Marsaglia and Tsang). */
const R = 3.442619855899;
const AREA = 9.91256303526217e-3;

/** The ziggurat's tables for 24-bit magnitudes: accept below k[i], value j × w[i], density f[i]. */
const K = new Uint32Array(LAYERS);
const W = new Float64Array(LAYERS);
const F = new Float64Array(LAYERS);
{
  const q = AREA / Math.exp(-0.5 * R * R);
  K[0] = Math.floor((R / q) * SCALE);
  K[1] = 0;
  W[0] = q / SCALE;
  W[LAYERS - 1] = R / SCALE;
  F[0] = 1;
  F[LAYERS - 1] = Math.exp(-0.5 * R * R);
  let dn = R;
  let tn = R;
  for (let i = LAYERS - 2; i >= 1; i--) {
    dn = Math.sqrt(-2 * Math.log(AREA / dn + Math.exp(-0.5 * dn * dn)));
    K[i + 1] = Math.floor((dn / tn) * SCALE);
    tn = dn;
    F[i] = Math.exp(-0.5 * dn * dn);
    W[i] = dn / SCALE;
  }
}

/**
 * The fast path's tables indexed by layer and sign (bits 0–7): the sign is in the width, so the
 * fast path has no branch on it (a random sign branch mispredicts half the time: 2× slower).
 */
const K_SIGNED = new Int32Array(2 * LAYERS);
const W_SIGNED = new Float64Array(2 * LAYERS);
for (let i = 0; i < 2 * LAYERS; i++) {
  K_SIGNED[i] = K[i & 127]!;
  W_SIGNED[i] = (i & 128 ? -1 : 1) * W[i & 127]!;
}

const TWO_POW_32_INV = 2 ** -32;

/** xoshiro128**'s 128-bit state of a 32-bit seed: splitmix32 spreads the seed (never all zero). */
export function seedState(seed: number): Int32Array {
  const s = new Int32Array(4);
  let x = seed >>> 0;
  for (let i = 0; i < 4; i++) {
    x = (x + 0x9e3779b9) | 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    s[i] = (z ^ (z >>> 16)) | 0;
  }
  if ((s[0]! | s[1]! | s[2]! | s[3]!) === 0) s[0] = 1;
  return s;
}

/** xoshiro128**'s jump polynomial: the state 2^64 draws ahead (Blackman and Vigna). */
const JUMP = [0x8764000b, 0xf542d2d3, 0x6fa035c3, 0x77f2db5b];

/** Moves `state` (4 words from `offset`) 2^64 draws ahead. */
export function jump(state: Int32Array<ArrayBufferLike>, offset = 0): void {
  let [j0, j1, j2, j3] = [0, 0, 0, 0];
  let [s0, s1, s2, s3] = [state[offset]!, state[offset + 1]!, state[offset + 2]!, state[offset + 3]!];
  for (const word of JUMP) {
    for (let b = 0; b < 32; b++) {
      if ((word >>> b) & 1) {
        j0 ^= s0;
        j1 ^= s1;
        j2 ^= s2;
        j3 ^= s3;
      }
      const t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >>> 21);
    }
  }
  state[offset] = j0;
  state[offset + 1] = j1;
  state[offset + 2] = j2;
  state[offset + 3] = j3;
}

/** The starting states of `blocks` streams of one seed, 4 words each: block b is b jumps after the seed's state. */
export function blockStates(seed: number, blocks: number, out: Int32Array<ArrayBufferLike> = new Int32Array(4 * blocks)): Int32Array<ArrayBufferLike> {
  out.set(seedState(seed));
  for (let b = 1; b < blocks; b++) {
    out.copyWithin(4 * b, 4 * (b - 1), 4 * b);
    jump(out, 4 * b);
  }
  return out;
}

/**
 * A generator of standard normals; `fill` writes the next `count` into `out`. Made from a seed, or
 * on a state it advances in place (4 words, e.g. one block's in memory shared between threads).
 */
export class NormalSource {
  /** xoshiro128**'s state: an Int32Array keeps the words unboxed between calls. */
  private readonly s: Int32Array;

  constructor(seedOrState: number | Int32Array) {
    this.s = typeof seedOrState === 'number' ? seedState(seedOrState) : seedOrState;
  }

  /** Writes `count` standard normals into `out` from index 0. */
  fill(out: Float64Array, count = out.length): void {
    const state = this.s;
    let s0 = state[0]!;
    let s1 = state[1]!;
    let s2 = state[2]!;
    let s3 = state[3]!;
    for (let n = 0; n < count; n++) {
      // xoshiro128**
      const m = Math.imul(s1, 5);
      const u = Math.imul((m << 7) | (m >>> 25), 9);
      const t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >>> 21);
      const i = u & 255;
      const j = u >>> 8;
      if (j < K_SIGNED[i]!) {
        out[n] = j * W_SIGNED[i]!;
      } else {
        // The slow path (about 3 % of draws) in a method of its own, so that this loop stays
        // simple and the state stays in registers.
        state[0] = s0;
        state[1] = s1;
        state[2] = s2;
        state[3] = s3;
        out[n] = this.slow(u);
        s0 = state[0]!;
        s1 = state[1]!;
        s2 = state[2]!;
        s3 = state[3]!;
      }
    }
    state[0] = s0;
    state[1] = s1;
    state[2] = s2;
    state[3] = s3;
  }

  /** The next 32-bit draw (as a signed integer). */
  private next(): number {
    const s = this.s;
    let [s0, s1, s2, s3] = [s[0]!, s[1]!, s[2]!, s[3]!];
    const m = Math.imul(s1, 5);
    const u = Math.imul((m << 7) | (m >>> 25), 9);
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = (s3 << 11) | (s3 >>> 21);
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
    return u;
  }

  /** A uniform in (0, 1). */
  private uniform(): number {
    return ((this.next() >>> 0) + 0.5) * TWO_POW_32_INV;
  }

  /** A normal from the draw `u` that missed the fast path: its tail or wedge test, else new draws. */
  private slow(u: number): number {
    for (;;) {
      const i = u & 127;
      if (i === 0) {
        // The tail beyond R (Marsaglia 1964).
        let x: number;
        let y: number;
        do {
          x = -Math.log(this.uniform()) / R;
          y = -Math.log(this.uniform());
        } while (y + y < x * x);
        return u & 128 ? -(R + x) : R + x;
      }
      const x = (u >>> 8) * W[i]!;
      if (F[i]! + this.uniform() * (F[i - 1]! - F[i]!) < Math.exp(-0.5 * x * x)) return u & 128 ? -x : x;
      u = this.next();
      const j = u >>> 8;
      if (j < K_SIGNED[u & 255]!) return j * W_SIGNED[u & 255]!;
    }
  }
}

/** A seed for a run that did not ask for one. */
export function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}
