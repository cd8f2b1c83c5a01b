/**
 * Zod 3 or Zod 4, whichever the embedder writes its schemas in. The MCP SDK
 * (1.23+) takes either, but not both in one object shape, so the parameters
 * s2sp adds to a tool's own shape are built in the flavour of that shape.
 * Both flavours load from one installed zod (3.25+ and 4 ship `zod/v3` and
 * `zod/v4`), the embedder's own copy: zod is a peer dependency.
 */
import type { AnySchema, ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import * as z3 from 'zod/v3';
import * as z4 from 'zod/v4';

/** The two zod APIs, for builders that spell a schema once for both. */
export const ZOD_FLAVOURS = { v3: z3, v4: z4 } as const;
/** `v3` or `v4`. */
export type ZodFlavour = keyof typeof ZOD_FLAVOURS;

/** True for a Zod 4 schema (classic or mini): they carry `_zod`, Zod 3 schemas do not. */
export function isZod4Schema(schema: AnySchema): boolean {
  return typeof schema === 'object' && schema !== null && '_zod' in schema;
}

/**
 * The flavour of a raw shape: v3 when its schemas are Zod 3, else v4 (also
 * for an empty shape, as the SDK defaults to).
 */
export function flavourOf(shape: ZodRawShapeCompat): ZodFlavour {
  const schemas = Object.values(shape);
  return schemas.length > 0 && !schemas.some(isZod4Schema) ? 'v3' : 'v4';
}
