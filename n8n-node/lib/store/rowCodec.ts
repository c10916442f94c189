// Rows travel through the stores as `<version>|<json>` strings (Redis) or version + jsonb
// (Postgres). The version stays readable without parsing JSON, so compare-and-set is cheap.
import type { ProviderView, Writes } from '../engine';

export const KINDS = ['breaker', 'gate', 'in_flight'] as const;
export type Kind = (typeof KINDS)[number];

export function encode(row: { version: number }): string {
	return `${row.version}|${JSON.stringify(row)}`;
}

export function decode(value: string | null | undefined): { version: number } | undefined {
	if (!value) return undefined;
	const bar = value.indexOf('|');
	return JSON.parse(value.slice(bar + 1));
}

/** The rows a Writes object carries, with the version each expects to replace. */
export function rowsOf(
	writes: Writes,
): { kind: Kind; expected: number; row: { version: number } }[] {
	const out: { kind: Kind; expected: number; row: { version: number } }[] = [];
	for (const kind of KINDS) {
		const row = writes[kind];
		if (row) out.push({ kind, expected: row.version - 1, row });
	}
	return out;
}

export function emptyView(): ProviderView {
	return {};
}
