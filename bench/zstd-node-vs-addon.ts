/**
 * Node's own ZSTD (node:zlib, Node 22.15 and later) against the
 * @toondepauw/node-zstd addon the project used while Node 20 had none, on
 * Arrow-like column buffers, interleaved in one run, both at level 1 (what
 * the ZSTD codec uses): compress and decompress time, and the size.
 * A one-off measurement for native-notes.md ("zstd"); not part of `npm run bench`.
 * The addon stays a devDependency for this script alone; the package no longer ships it.
 *
 *   node dist/bench/zstd-node-vs-addon.js [reps]
 */
import { createRequire } from 'node:module';
import zlib from 'node:zlib';

interface Addon {
  Encoder: new (level: number) => { encodeSync(data: Buffer): Buffer };
  Decoder: new () => { decodeSync(data: Buffer): Buffer };
}

const LEVEL = 1;
const reps = Number(process.argv[2] ?? 7);
const addon = createRequire(import.meta.url)('@toondepauw/node-zstd') as Addon;
const encoder = new addon.Encoder(LEVEL);
const decoder = new addon.Decoder();
const params = { [zlib.constants.ZSTD_c_compressionLevel]: LEVEL };

/** Column buffers shaped like the bench dataset's: floats, ids, a low-cardinality text column's bytes. */
function columns(): Record<string, Buffer> {
  const n = 1_000_000;
  const floats = new Float64Array(n).map(() => Math.round(Math.random() * 1e6) / 100);
  const ids = Int32Array.from({ length: n }, (_, i) => i);
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
  const text = Buffer.from(Array.from({ length: n }, (_, i) => words[i % 7 === 0 ? 5 : i % 5]).join(''));
  return { 'float64 x 1M': Buffer.from(floats.buffer), 'int32 x 1M': Buffer.from(ids.buffer), 'utf8 bytes': text };
}

function time(fn: () => unknown): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

console.log(`node ${process.version}, level ${LEVEL}, ${reps} interleaved reps, median ms`);
console.log('| buffer | MB | zlib size | addon size | zlib compress | addon compress | ratio | zlib decompress | addon decompress | ratio |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const [name, bytes] of Object.entries(columns())) {
  const t = { zc: [] as number[], ac: [] as number[], zd: [] as number[], ad: [] as number[] };
  let zSize = 0;
  let aSize = 0;
  for (let i = 0; i < reps; i += 1) {
    let z: Buffer = Buffer.alloc(0);
    let a: Buffer = Buffer.alloc(0);
    t.zc.push(time(() => (z = zlib.zstdCompressSync(bytes, { params }))));
    t.ac.push(time(() => (a = encoder.encodeSync(bytes))));
    t.zd.push(time(() => zlib.zstdDecompressSync(a)));
    t.ad.push(time(() => decoder.decodeSync(z)));
    zSize = z.length;
    aSize = a.length;
    if (!zlib.zstdDecompressSync(a).equals(bytes) || !decoder.decodeSync(z).equals(bytes)) throw new Error('round trip differs');
  }
  const [zc, ac, zd, ad] = [median(t.zc), median(t.ac), median(t.zd), median(t.ad)];
  const mb = (x: number) => (x / 1e6).toFixed(2);
  console.log(
    `| ${name} | ${mb(bytes.length)} | ${mb(zSize)} | ${mb(aSize)} | ${zc.toFixed(1)} | ${ac.toFixed(1)} | ${(zc / ac).toFixed(2)}x | ${zd.toFixed(1)} | ${ad.toFixed(1)} | ${(zd / ad).toFixed(2)}x |`,
  );
}
