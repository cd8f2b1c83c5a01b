/**
 * Where a sync-mode body travels on a protocol 2026-07-28 call: in the tool
 * result's `_meta` under this key, as the body rows' exact JSON text, for
 * the agent's S2SP SDK (the dispatcher) only. Hosts do not show a result's
 * `_meta` to models; the text block and `structuredContent` carry the
 * envelope without the body. (A 2025-era call keeps the reference's shape:
 * the body inside the text block.)
 */
export const SYNC_BODY_META_KEY = 's2sp/body';
