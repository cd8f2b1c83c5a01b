/**
 * Zod 3 or Zod 4, whichever the embedder writes its schemas in. The MCP SDK
 * (1.23+) takes either, but not both in one object shape, so the parameters
 * s2sp adds to a tool's own shape are built in the flavour of that shape.
 * Both flavours load from one installed zod (3.25+ and 4 ship `zod/v3` and
 * `zod/v4`), the embedder's own copy: zod is a peer dependency.
 */
import * as z3 from 'zod/v3';
import * as z4 from 'zod/v4';
import type * as z4core from 'zod/v4/core';

/** One zod schema, Zod 3 or Zod 4 (classic or mini). */
export type AnySchema = z3.ZodTypeAny | z4core.$ZodType;

/** A raw shape (`{ name: z.string() }`) in either flavour, as a tool's `inputSchema`. */
export type ZodRawShapeCompat = Record<string, AnySchema>;

/** What one schema parses to. */
export type SchemaOutput<S> = S extends z3.ZodTypeAny ? z3.infer<S> : S extends z4core.$ZodType ? z4core.output<S> : never;

/** What a raw shape parses to: each key's schema output. */
export type ShapeOutput<Shape extends ZodRawShapeCompat> = { [K in keyof Shape]: SchemaOutput<Shape[K]> };

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

/** A zod object schema (`z.object(shape)`, Zod 3 or Zod 4), as SDK v2 style tools declare their input. */
export interface ZodObjectOf<Shape extends ZodRawShapeCompat> {
  readonly shape: Shape;
}

/**
 * The raw shape of a tool's input schema: the shape itself, or the shape of
 * a zod object (its other settings, strictness say, are not kept: s2sp adds
 * parameters and hands the SDK a shape, the form both SDK lines take).
 */
export function rawShapeOf(schema: ZodRawShapeCompat | ZodObjectOf<ZodRawShapeCompat> | undefined): ZodRawShapeCompat {
  if (schema === undefined) return {};
  const candidate = schema as { _zod?: { def?: { type?: unknown } }; _def?: { typeName?: unknown }; shape?: unknown };
  const isObject = candidate._zod?.def?.type === 'object' || candidate._def?.typeName === 'ZodObject';
  return isObject ? (candidate.shape as ZodRawShapeCompat) : (schema as ZodRawShapeCompat);
}
