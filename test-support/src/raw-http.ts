// HTTP answers as they travel: headers and bytes undecoded (fetch would undo a Content-Encoding), and their decoding.
import { request } from 'node:http';
import zlib from 'node:zlib';

export type RawAnswer = { status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer };

/** One request over node:http; the answer's body exactly as sent. */
export function rawRequest(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A body as a client gets it back from `coding`. */
export function decompress(coding: string, body: Buffer): Buffer {
  if (coding === 'gzip') return zlib.gunzipSync(body);
  if (coding === 'br') return zlib.brotliDecompressSync(body);
  if (coding === 'zstd') return zlib.zstdDecompressSync(body);
  throw new Error(`no decoder for ${coding}`);
}
