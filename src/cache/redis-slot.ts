/**
 * The Redis Cluster slot of a key (CRC16/XMODEM of its hash tag, modulo
 * 16384), as the cluster specification defines it. RedisStore needs it
 * before any node is asked: to place its accounting shards on evenly spaced
 * slots (so they spread over the masters), and to know whether the master
 * that serves a key has replicas to wait for.
 */

/** Slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16384;

/** CRC16 table for the polynomial 0x1021 (XMODEM), built once. */
const CRC16 = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/** The slot of `key`: only the part between the first `{` and the next `}` counts when that part is not empty. */
export function slotOf(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const hashed = Buffer.from(close > open + 1 ? key.slice(open + 1, close) : key);
  let crc = 0;
  for (const byte of hashed) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ byte) & 0xff];
  return crc % CLUSTER_SLOTS;
}
