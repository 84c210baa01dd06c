// Response compression: the content coding a client accepts (zstd, br, gzip), for large bodies.
import { promisify } from 'node:util';
import zlib from 'node:zlib';

export type ContentCoding = 'zstd' | 'br' | 'gzip';

/** Bodies smaller than this are sent as they are: the coding would save less than it costs. */
export const COMPRESSION_MIN_BYTES = 1024;

type Compress = (body: Buffer) => Promise<Buffer>;

// zstd is in node:zlib from Node.js 22.15 on (in every supported version, docs/adr/0056-node-versions.md);
// it is still looked for rather than assumed, so that an older Node.js answers with br or gzip.
const hasZstd = typeof zlib.zstdCompress === 'function' && zlib.constants.ZSTD_c_compressionLevel !== undefined;

/**
 * The fastest level of each coding (docs/adr/0029-arrow-and-compression.md): on the 25 MB JSON universe
 * export, gzip level 1 and brotli quality 1 came within 14 % and 9 % of the bytes of gzip 6 and
 * brotli 5 in 72 % and 5 % of their time; an answer is compressed for each request.
 */
const CODERS: Partial<Record<ContentCoding, Compress>> = {
  ...(hasZstd ? { zstd: (body: Buffer) => promisify(zlib.zstdCompress)(body, { params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 } }) } : {}),
  br: (body) =>
    promisify(zlib.brotliCompress)(body, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  gzip: (body) => promisify(zlib.gzip)(body, { level: 1 }),
};

/** The codings this Node.js offers, preferred first when a client weighs several alike. */
export const availableCodings: readonly ContentCoding[] = (['zstd', 'br', 'gzip'] as const).filter((c) => CODERS[c] !== undefined);

/**
 * The coding to answer with for an `Accept-Encoding` header (RFC 9110 §12.5.3), or undefined for
 * the body as it is: no header, nothing acceptable that is offered, or `identity` weighted above
 * every offered coding. q-values are honoured (`q=0` refuses, `*` stands for every coding not
 * named); among equal weights the server's order (`offered`) decides. Parts that do not parse are
 * ignored, so a malformed header still gets an answer.
 */
export function chooseCoding(header: string | undefined, offered: readonly ContentCoding[] = availableCodings): ContentCoding | undefined {
  if (!header) return undefined;
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!name || !/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) continue;
    let q = 1;
    let valid = true;
    for (const param of params) {
      const [key, value] = param.split('=').map((s) => s.trim());
      if (key !== 'q') continue;
      if (value !== undefined && /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value)) q = Number(value);
      else valid = false;
    }
    if (valid) weights.set(name, Math.max(q, weights.get(name) ?? 0));
  }
  const star = weights.get('*');
  let best: ContentCoding | undefined;
  let bestQ = 0;
  for (const coding of offered) {
    const q = weights.get(coding) ?? (coding === 'gzip' ? weights.get('x-gzip') : undefined) ?? star ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  const identity = weights.get('identity');
  return identity !== undefined && identity > bestQ ? undefined : best;
}

const COMPRESSED_TYPES = /^(image\/(?!svg)|audio\/|video\/|font\/woff2?|application\/(zip|gzip|x-gzip|zstd|x-bzip2|x-xz|x-7z-compressed|vnd\.rar)\b)/i;

/** Whether a body of this Content-Type is worth compressing (not an image, archive, … already compressed). */
export const compressibleType = (contentType: string): boolean => !COMPRESSED_TYPES.test(contentType);

/**
 * The body to send: compressed with the coding the client accepts when it is large enough, of a
 * compressible type and not encoded yet, otherwise as it is. `vary` is true when the form of the
 * answer depended on `Accept-Encoding` (the answer then says `Vary: Accept-Encoding`).
 */
export async function compressResponse(
  acceptEncoding: string | undefined,
  body: Buffer,
  contentType: string,
  alreadyEncoded: boolean,
): Promise<{ body: Buffer; coding?: ContentCoding; vary: boolean }> {
  if (alreadyEncoded || !compressibleType(contentType) || body.length < COMPRESSION_MIN_BYTES) return { body, vary: false };
  const coding = chooseCoding(acceptEncoding);
  if (!coding) return { body, vary: true };
  return { body: await CODERS[coding]!(body), coding, vary: true };
}

/** `body` compressed with `coding`, as an answer would be (for measurements and tests). */
export const compressWith = (coding: ContentCoding, body: Buffer): Promise<Buffer> => {
  const coder = CODERS[coding];
  if (!coder) throw new Error(`${coding} is not available in Node.js ${process.version}`);
  return coder(body);
};
