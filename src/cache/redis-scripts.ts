/**
 * The Lua scripts that make RedisStore's single use, leases, TTL and budget
 * atomic across replicas: each runs whole on the Redis server, so two
 * replicas can never both lease one token, and a body's bytes are counted
 * once however many replicas put it.
 *
 * Key layout (`P` is the store's key prefix, `B` a body id, `H` a token hash):
 *
 *   {P:b:B}:m        hash   the body's metadata: bytes, chunks, rows
 *   {P:b:B}:c:<i>    string chunk i of the body's Arrow IPC stream
 *   {P:b:B}:ts       set    hashes of the tokens pointing at the body
 *   {P:b:B}:t:H      string a live token ("1"), PX = its TTL
 *   {P:b:B}:l:H      string the lease on that token (a lease id), PX = lease timeout
 *   P:i:H            string token hash -> body id, PX = the token's TTL (single-key commands only)
 *   {P:a:S}:sizes    hash   body id -> bytes, and "@used": this account's total
 *   {P:a:S}:bodies   zset   body id -> when its last token expires (server ms)
 *   {P:a:S}:tokens   zset   token hash -> when it expires (server ms)
 *
 * Everything of one body shares the hash tag {P:b:B}, so a Redis Cluster keeps
 * a body on one node and the per-body scripts touch one slot. The chunk keys
 * are derived from the metadata key inside the scripts (same slot). The byte
 * budget is kept in ACCOUNT_SHARDS accounts, `S` naming one (its tag is picked
 * so that the accounts sit on evenly spaced slots, hence on every master); a
 * body is counted in the account its id picks, and the store's total is the
 * sum of the accounts (redis-store.ts says when that sum is read). So every
 * script touches the keys of one tag only: CROSSSLOT cannot happen, on a
 * cluster or on one node alike. Every key carries a TTL, so once the last
 * token of a body expires, Redis holds nothing of it. The token itself is
 * never stored: only its SHA-256.
 */
import { defineScript, type CommandParser } from '@redis/client';

/** Accounts the byte budget is kept in (see the key layout). */
export const ACCOUNT_SHARDS = 16;

/** Milliseconds on the Redis server's clock (one clock for every replica). */
const NOW = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Sets a key's TTL to `ms` unless it already lives longer (a key without TTL gets one). */
const EXTEND = `local function extend(key, ms) local left = redis.call('PTTL', key); if left >= -1 and left < ms then redis.call('PEXPIRE', key, ms) end end`;

/**
 * Accounting in one account (keys: sizes, bodies, tokens; args: bodyId, bytes, ttlMs, maxBytes, tokenHash).
 * Forgets bodies and tokens whose time passed, then reserves `bytes` for a
 * body not counted yet, or refuses when this account alone would pass the budget. Returns {1, used, expired} when reserved now,
 * {2, used, expired} when the body was already counted, {0, used, expired} when
 * it does not fit; `expired` counts the tokens forgotten now because their time
 * passed (consumed and revoked ones left the zset already), for metrics.
 */
const RESERVE = `${NOW}
local ttl = tonumber(ARGV[3])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  local b = redis.call('HGET', KEYS[1], id)
  if b then redis.call('HINCRBY', KEYS[1], '@used', -tonumber(b)); redis.call('HDEL', KEYS[1], id) end
  redis.call('ZREM', KEYS[2], id)
end
local expired = redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local used = tonumber(redis.call('HGET', KEYS[1], '@used') or '0')
local state = 2
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  if used + tonumber(ARGV[2]) > tonumber(ARGV[4]) then return {0, used, expired} end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  used = redis.call('HINCRBY', KEYS[1], '@used', tonumber(ARGV[2]))
  state = 1
end
local until_ = now + ttl
local current = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not current or tonumber(current) < until_ then redis.call('ZADD', KEYS[2], until_, ARGV[1]) end
redis.call('ZADD', KEYS[3], until_, ARGV[5])
local last = until_
for _, k in ipairs({KEYS[2], KEYS[3]}) do
  local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')
  if top[2] and tonumber(top[2]) > last then last = tonumber(top[2]) end
end
for _, k in ipairs(KEYS) do redis.call('PEXPIREAT', k, last) end
return {state, used, expired}`;

/**
 * Accounting, when a body's last token went early (keys: sizes, bodies; args: bodyId).
 */
const FORGET_BODY = `
local b = redis.call('HGET', KEYS[1], ARGV[1])
if b then redis.call('HINCRBY', KEYS[1], '@used', -tonumber(b)); redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('HLEN', KEYS[1]) <= 1 and redis.call('ZCARD', KEYS[2]) == 0 then redis.call('DEL', KEYS[1]) end
return 1`;

/**
 * One account for health and for the budget's total (keys: sizes, bodies, tokens):
 * forgets what expired, returns {tokens, bodies, used, expired} (`expired` as in RESERVE).
 */
const STATS = `${NOW}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  local b = redis.call('HGET', KEYS[1], id)
  if b then redis.call('HINCRBY', KEYS[1], '@used', -tonumber(b)); redis.call('HDEL', KEYS[1], id) end
  redis.call('ZREM', KEYS[2], id)
end
local expired = redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
return {redis.call('ZCARD', KEYS[3]), redis.call('ZCARD', KEYS[2]), tonumber(redis.call('HGET', KEYS[1], '@used') or '0'), expired}`;

/**
 * Adds a token to a stored body (keys: meta, tokenSet, token; args: tokenHash, ttlMs).
 * Every key of the body then lives at least as long as the token. Returns 0
 * when the body is not (or no longer) complete in Redis, 1 when done.
 */
const ADD_TOKEN = `${EXTEND}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[3], '1', 'PX', ttl)
redis.call('SADD', KEYS[2], ARGV[1])
extend(KEYS[1], ttl)
extend(KEYS[2], ttl)
local base = string.sub(KEYS[1], 1, -2)
local chunks = tonumber(redis.call('HGET', KEYS[1], 'chunks'))
for i = 0, chunks - 1 do extend(base .. 'c:' .. i, ttl) end
return 1`;

/**
 * Takes the lease of a token (keys: token, lease, meta; args: leaseId, leaseMs).
 * Returns {1, bytes, chunks, rows, chunkBytes}; {0} when the token or its body is gone;
 * {-1} when another transfer holds the lease.
 */
const LEASE = `
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[3]) == 0 then return {0} end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', tonumber(ARGV[2])) then return {-1} end
local m = redis.call('HMGET', KEYS[3], 'bytes', 'chunks', 'rows', 'chunk')
return {1, tonumber(m[1]), tonumber(m[2]), tonumber(m[3]), tonumber(m[4])}`;

/** Extends a lease still held (keys: token, lease; args: leaseId, leaseMs). Returns 1, or 0 when lost. */
const RENEW = `
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]))
return 1`;

/** Ends a lease without consuming the token (keys: lease; args: leaseId). */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`;

/**
 * Consumes or revokes a token (keys: token, lease, tokenSet, meta; args: leaseId, tokenHash, force).
 * A commit (force 0) whose lease timed out and was taken by another transfer
 * does nothing and returns {-1}; otherwise the token goes, and when it was
 * the body's last live token, every key of the body goes too.
 * Returns {existed (0/1), bodyFreed (0/1)}. For a commit, existed 1 means this
 * transfer is the token's one complete transfer: the token was live, or its
 * TTL passed under this very lease (nobody else could have taken it; a
 * revoke drops the lease too), as MemoryStore lets such a transfer finish.
 */
const CONSUME = `
local holder = redis.call('GET', KEYS[2])
if ARGV[3] == '0' and holder and holder ~= ARGV[1] then return {-1, 0} end
local existed = redis.call('DEL', KEYS[1])
if existed == 0 and ARGV[3] == '0' and holder == ARGV[1] then existed = 1 end
if holder and (holder == ARGV[1] or ARGV[3] == '1') then redis.call('DEL', KEYS[2]) end
redis.call('SREM', KEYS[3], ARGV[2])
local base = string.sub(KEYS[4], 1, -2)
local live = 0
for _, h in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  if redis.call('EXISTS', base .. 't:' .. h) == 1 then live = live + 1 else redis.call('SREM', KEYS[3], h) end
end
if live > 0 then return {existed, 0} end
local chunks = tonumber(redis.call('HGET', KEYS[4], 'chunks') or '0')
for i = 0, chunks - 1 do redis.call('DEL', base .. 'c:' .. i) end
redis.call('DEL', KEYS[4], KEYS[3])
return {existed, 1}`;

/**
 * A script as @redis/client declares it: called with its keys and its
 * arguments, sent as EVALSHA (EVAL once when the server answers NOSCRIPT),
 * routed on a cluster by the slot of its first key (every key of a script
 * shares that slot).
 */
function storeScript(source: string) {
  return defineScript({
    SCRIPT: source,
    parseCommand(parser: CommandParser, keys: readonly string[], args: ReadonlyArray<string | number>) {
      parser.pushKeysLength([...keys]);
      parser.push(...args.map(String));
    },
    transformReply: (reply: unknown) => reply,
  });
}

/**
 * Every script of RedisStore, declared once, for the single-node client and
 * the cluster client alike (both take them as their `scripts` option). The
 * names are the methods they become on a client, prefixed so that none
 * shadows a Redis command.
 */
export const STORE_SCRIPTS = {
  s2spReserve: storeScript(RESERVE),
  s2spForgetBody: storeScript(FORGET_BODY),
  s2spStats: storeScript(STATS),
  s2spAddToken: storeScript(ADD_TOKEN),
  s2spLease: storeScript(LEASE),
  s2spRenew: storeScript(RENEW),
  s2spRelease: storeScript(RELEASE),
  s2spConsume: storeScript(CONSUME),
};

/** The name of one of RedisStore's scripts. */
export type StoreScriptName = keyof typeof STORE_SCRIPTS;
