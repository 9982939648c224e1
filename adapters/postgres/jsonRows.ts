// Rows that hold documents: a schema's JSON form (dates as ISO strings) spread over snake_case columns, some of them
// jsonb. Writing encodes to that form; reading turns the driver's Dates back into strings and decodes.
import { Effect, Schema, String as Str } from "effect"

const toJsonValue = (value: unknown): unknown => value instanceof Date ? value.toISOString() : value

/** The schema's JSON form as column → value; the `jsonb` fields are sent as JSON text (the column types them). */
export const rowOf = <S extends Schema.Top & { readonly EncodingServices: never }>(schema: S, jsonb: ReadonlyArray<string>) => {
  const encode = Schema.encodeSync(Schema.toCodecJson(schema))
  return (value: S["Type"]): Record<string, unknown> => {
    const encoded = encode(value) as Record<string, unknown>
    return Object.fromEntries(
      Object.entries(encoded).map(([field, v]) => [Str.camelToSnake(field), jsonb.includes(field) ? JSON.stringify(v) : v])
    )
  }
}

/** A row back into the schema's type (columns the schema does not name are ignored). */
export const fromRow = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(Schema.toCodecJson(schema))
  return (row: Record<string, unknown>): Effect.Effect<S["Type"], Schema.SchemaError> =>
    decode(Object.fromEntries(Object.entries(row).map(([column, v]) => [Str.snakeToCamel(column), toJsonValue(v)])))
}
