// A whole-number setting of 0 or more (delays, counts, limits), as version 2's panels show them.
import type { INodeProperties } from 'n8n-workflow';

export const numberField = (
	displayName: string,
	name: string,
	def: number,
	description: string,
): INodeProperties => ({
	displayName,
	name,
	type: 'number',
	default: def,
	typeOptions: { minValue: 0 },
	description,
});
