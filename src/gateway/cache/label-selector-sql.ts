/**
 * Translates a parsed Kubernetes label selector into a SQL condition on the jsonb `labels` column. Equality uses
 * containment (`@>`, served by the GIN index); existence uses `jsonb_exists()` rather than the `?` operator, which
 * some drivers mistake for a parameter placeholder. Negative requirements match objects without the label, as in
 * Kubernetes.
 */
import { and, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { LabelRequirement } from '../../shared/label-selector.js';

/** The SQL condition for all requirements, or undefined when there are none (everything matches). */
export function labelSelectorToSql(labels: AnyPgColumn, requirements: LabelRequirement[]): SQL | undefined {
  return and(...requirements.map((r) => requirementToSql(labels, r)));
}

function requirementToSql(labels: AnyPgColumn, r: LabelRequirement): SQL {
  const value = sql`(${labels} ->> ${r.key})`;
  const valueList = sql.join(
    r.values.map((v) => sql`${v}`),
    sql`, `,
  );
  switch (r.operator) {
    case 'Equals':
      return sql`${labels} @> ${JSON.stringify({ [r.key]: r.values[0] ?? '' })}::jsonb`;
    case 'NotEquals':
      return sql`not (${labels} @> ${JSON.stringify({ [r.key]: r.values[0] ?? '' })}::jsonb)`;
    case 'In':
      return r.values.length === 0 ? sql`false` : sql`${value} in (${valueList})`;
    case 'NotIn':
      return r.values.length === 0 ? sql`true` : sql`(${value} is null or ${value} not in (${valueList}))`;
    case 'Exists':
      return sql`jsonb_exists(${labels}, ${r.key})`;
    case 'DoesNotExist':
      return sql`not jsonb_exists(${labels}, ${r.key})`;
  }
}
