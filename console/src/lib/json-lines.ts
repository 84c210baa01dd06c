import { pointerStep } from './diff.ts';

/** One line of pretty-printed JSON and the JSON Pointer of the value it shows. */
export type JsonLine = { depth: number; text: string; path: string };

/**
 * `JSON.stringify(value, null, 2)` cut into lines that each know the pointer of their value, so
 * that the entity page can highlight the lines of changed fields. Pure.
 */
export function jsonLines(value: unknown): JsonLine[] {
  const lines: JsonLine[] = [];
  const walk = (v: unknown, path: string, depth: number, prefix: string, comma: string) => {
    if (Array.isArray(v) && v.length > 0) {
      lines.push({ depth, text: `${prefix}[`, path });
      v.forEach((item, i) => walk(item, `${path}/${i}`, depth + 1, '', i < v.length - 1 ? ',' : ''));
      lines.push({ depth, text: `]${comma}`, path });
    } else if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0) {
      const entries = Object.entries(v);
      lines.push({ depth, text: `${prefix}{`, path });
      entries.forEach(([key, item], i) => walk(item, `${path}/${pointerStep(key)}`, depth + 1, `${JSON.stringify(key)}: `, i < entries.length - 1 ? ',' : ''));
      lines.push({ depth, text: `}${comma}`, path });
    } else {
      lines.push({ depth, text: `${prefix}${JSON.stringify(v) ?? 'null'}${comma}`, path });
    }
  };
  walk(value, '', 0, '', '');
  return lines;
}
