// Rows in the domain's words: a schema's camelCase fields are read from and written to the table's snake_case
// columns, so each repository states its shapes once (the domain's schema, or a struct of a domain interface) and
// needs neither a row schema of its own nor a mapper.
import { Schema, String as Str } from "effect"

/** `createdAt` → `created_at`: String.camelToSnake at the type level. */
type Snake<S extends string> = S extends `${infer C}${infer Rest}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${Snake<Rest>}`
  : S

type Fields = Schema.Struct.Fields
type Irregular<F extends Fields> = { readonly [K in keyof F]?: string }
type ColumnNames<F extends Fields, I> = { readonly [K in keyof F]: K extends keyof I ? I[K] & string : Snake<K & string> }

/**
 * `schema` as the table's columns. `irregular` names the columns the rule does not give (`memoryMiB` is stored as
 * `memory_mib`, not `memory_mi_b`).
 */
export const snakeColumns = <
  S extends Schema.Top & { readonly fields: Fields },
  const I extends Irregular<S["fields"]> = {}
>(schema: S, irregular?: I) => {
  const names: Record<string, string> = {}
  for (const field of Object.keys(schema.fields)) {
    names[field] = (irregular as Record<string, string> | undefined)?.[field] ?? Str.camelToSnake(field)
  }
  return schema.pipe(Schema.encodeKeys(names as ColumnNames<S["fields"], I>))
}
