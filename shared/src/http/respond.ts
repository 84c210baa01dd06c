import type { Request, Response } from 'express';
import type { HandlerResult } from './app-options.ts';
import { COMPRESSION_MIN_BYTES, compressResponse } from './compression.ts';

/** Writes a handler's result: small JSON directly, anything else typed and compressed as the client accepts. */
export async function sendResult(req: Request, res: Response, result: HandlerResult): Promise<void> {
  if (result.stream) return sendStream(res, result, result.stream);
  const json = isPlainJson(result) ? JSON.stringify(result.body) : undefined;
  if (json !== undefined && Buffer.byteLength(json) < COMPRESSION_MIN_BYTES) {
    // Too small to be compressed: what express's status/set/type/send write for a JSON value, written
    // directly (docs/adr/0031-http-hot-path.md); Node adds the Content-Length of a body given to end().
    res.statusCode = result.status;
    if (result.headers) for (const name in result.headers) res.setHeader(name, result.headers[name]!);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(json);
    return;
  }
  res.status(result.status).set(result.headers ?? {});
  if (result.body === undefined) {
    res.end();
    return;
  }
  const { body } = result;
  // A Buffer view of the bytes, not a copy (cached answers run to megabytes).
  const bytes =
    body instanceof Uint8Array
      ? Buffer.isBuffer(body)
        ? body
        : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
      : Buffer.from(json ?? JSON.stringify(body), 'utf8');
  res.type(result.contentType ?? (body instanceof Uint8Array ? 'application/octet-stream' : 'application/json'));
  // Large answers go compressed when the client asks (docs/adr/0029-arrow-and-compression.md).
  const encoded = await compressResponse(req.get('accept-encoding'), bytes, res.get('content-type') ?? '', res.get('content-encoding') !== undefined);
  if (encoded.vary) res.vary('Accept-Encoding');
  if (encoded.coding) res.set('Content-Encoding', encoded.coding);
  res.send(encoded.body);
}

/** Writes a streamed body: each piece as it comes, waiting for the socket to drain so memory stays bounded. */
async function sendStream(res: Response, result: HandlerResult, stream: AsyncIterable<string | Uint8Array>): Promise<void> {
  res.status(result.status).set(result.headers ?? {});
  res.type(result.contentType ?? 'application/json');
  try {
    for await (const piece of stream) {
      if (res.destroyed) break;
      if (!res.write(piece)) await drained(res);
    }
  } catch (error) {
    // Headers and part of the body are gone: cutting the connection is the only honest answer left.
    res.destroy(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
  if (!res.destroyed) res.end();
}

const drained = (res: Response) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });

/** A JSON value as the default answer, of a status that has a body (express strips those of 204 and 304), without its own Content-Encoding. */
const isPlainJson = (result: HandlerResult) =>
  result.stream === undefined &&
  result.body !== undefined &&
  !Object.keys(result.headers ?? {}).some((name) => name.toLowerCase() === 'content-encoding') &&
  result.contentType === undefined &&
  !Buffer.isBuffer(result.body) &&
  !(result.body instanceof Uint8Array) &&
  Number.isInteger(result.status) &&
  result.status >= 200 &&
  result.status <= 599 &&
  result.status !== 204 &&
  result.status !== 304;
