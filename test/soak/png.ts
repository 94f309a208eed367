/**
 * A line chart as a PNG, with no dependency: an RGB pixel buffer, lines drawn with Bresenham, and
 * the PNG container (IHDR, one deflated IDAT, IEND) written by hand. Enough for the soak's plot:
 * one panel per series, each scaled from 0 to its own maximum, with a grid line per tenth.
 */
import { crc32, deflateSync } from 'node:zlib';

export interface Series {
  /** Values in sample order (x is the index). */
  values: number[];
  color: [number, number, number];
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

export function renderChart(series: Series[], width = 900, panelHeight = 240): Buffer {
  const height = panelHeight * series.length;
  const px = Buffer.alloc(width * height * 3, 255);
  const set = (x: number, y: number, [r, g, b]: [number, number, number]) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const i = (y * width + x) * 3;
    px[i] = r;
    px[i + 1] = g;
    px[i + 2] = b;
  };
  const line = (x0: number, y0: number, x1: number, y1: number, c: [number, number, number]) => {
    const dx = Math.abs(x1 - x0);
    const dy = -Math.abs(y1 - y0);
    const sx = x0 < x1 ? 1 : -1;
    const sy = y0 < y1 ? 1 : -1;
    let err = dx + dy;
    for (;;) {
      set(x0, y0, c);
      set(x0, y0 + 1, c);
      if (x0 === x1 && y0 === y1) return;
      const e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sy;
      }
    }
  };
  const margin = 20;
  series.forEach((s, p) => {
    const top = p * panelHeight + margin;
    const bottom = (p + 1) * panelHeight - margin;
    const max = Math.max(1, ...s.values) * 1.1;
    for (let t = 0; t <= 10; t++) {
      const y = Math.round(bottom - ((bottom - top) * t) / 10);
      for (let x = margin; x < width - margin; x++) set(x, y, t === 0 ? [0, 0, 0] : [225, 225, 225]);
    }
    for (let y = top; y <= bottom; y++) set(margin, y, [0, 0, 0]);
    const xOf = (i: number) =>
      Math.round(margin + ((width - 2 * margin) * i) / Math.max(1, s.values.length - 1));
    const yOf = (v: number) => Math.round(bottom - ((bottom - top) * v) / max);
    for (let i = 1; i < s.values.length; i++)
      line(xOf(i - 1), yOf(s.values[i - 1] as number), xOf(i), yOf(s.values[i] as number), s.color);
  });
  // Scanlines, each behind filter byte 0 (none).
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) px.copy(raw, y * (width * 3 + 1) + 1, y * width * 3, (y + 1) * width * 3);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
