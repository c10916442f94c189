// Reading one item's parameter values, each checked: JSON that must parse (and not be huge), an
// object that must be one, a whole number that must be whole, a switch that must be a boolean.
// Bad input is a NodeOperationError naming the item, the place and the field, never a silent
// default; ranges are the engine's to check (it names the field too).
import { type IDataObject, type IExecuteFunctions, NodeOperationError } from 'n8n-workflow';

const MAX_JSON = 1_000_000;

export type Fail = (message: string, description?: string) => never;

export interface FieldReader {
	fail: Fail;
	/** JSON text (or a value already parsed); empty: undefined when `allowEmpty`, else {}. */
	json(field: string, raw: unknown, where: string, allowEmpty: boolean): unknown;
	/** A JSON object (text or value); empty: {}. */
	object(field: string, raw: unknown, where: string): IDataObject;
	/** A number (whole unless `whole` is false); empty: undefined. */
	num(v: unknown, field: string, where: string, whole?: boolean): number | undefined;
	/** A switch; empty: undefined. */
	bool(v: unknown, field: string, where: string): boolean | undefined;
	/** A text; empty: undefined. */
	text(v: unknown): string | undefined;
}

export function fieldReader(ctx: IExecuteFunctions, i: number): FieldReader {
	// getNode() copies the node: only when there is an error to report (this runs per item).
	const fail: Fail = (message, description) => {
		throw new NodeOperationError(ctx.getNode(), message, { itemIndex: i, description });
	};
	const json: FieldReader['json'] = (field, raw, where, allowEmpty) => {
		if (raw === undefined || raw === null) return allowEmpty ? undefined : {};
		if (typeof raw === 'object') return raw;
		const text = String(raw).trim();
		if (text === '') return allowEmpty ? undefined : {};
		if (text.length > MAX_JSON) fail(`${where}: "${field}" is larger than 1 MB`);
		try {
			return JSON.parse(text);
		} catch (e) {
			return fail(`${where}: "${field}" is not valid JSON`, (e as Error).message);
		}
	};
	return {
		fail,
		json,
		object(field, raw, where) {
			const v = json(field, raw, where, false);
			if (typeof v !== 'object' || v === null || Array.isArray(v))
				fail(`${where}: "${field}" must be a JSON object`);
			return v as IDataObject;
		},
		num(v, field, where, whole = true) {
			if (v === undefined || v === '' || v === null) return undefined;
			const n =
				typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
			if (!Number.isFinite(n) || (whole && !Number.isSafeInteger(n))) {
				fail(
					`${where}: "${field}" must be ${whole ? 'a whole number' : 'a number'}, got ${JSON.stringify(String(v).slice(0, 50))}`,
				);
			}
			return n;
		},
		bool(v, field, where) {
			if (v === undefined || v === '' || v === null) return undefined;
			if (typeof v !== 'boolean')
				fail(
					`${where}: "${field}" must be true or false, got ${JSON.stringify(String(v).slice(0, 50))}`,
				);
			return v as boolean;
		},
		text: (v) => (v === undefined || v === null || v === '' ? undefined : String(v)),
	};
}
