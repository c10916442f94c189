// How the row texts the engine returns sit in a store: Redis keeps `<version>|<json>` in one
// string (one GET returns both; the CAS script compares the prefix without parsing JSON).
import type { RowWrite } from '../engine';
import { ROW_KINDS } from '../engineConstants';

export const KINDS = ROW_KINDS;
export type Kind = (typeof ROW_KINDS)[number];

export function versioned(row: RowWrite): string {
	return `${row.version}|${row.json}`;
}
